"""Precision rules of issue 36's second round (cohort 2026-12-07d scored as train): what F15/F23/F24 need beyond
their words.

Every log here is COMPOSED for the test in the tool's own words (the message the tool prints, with made-up paths
and names around it); none is a copy of a cohort log.
"""

from __future__ import annotations

from envmgr.buildlog.rules.loader import separate_only
from tests.logtext import decisive


def test_a_cudnn_or_tensorrt_library_alone_names_no_catalog_id(tmp_path):
    # CTranslate2's loader words (its own "Could not load library X. Error: <dlerror>"), made-up library versions
    so = "Could not load library {lib}. Error: {lib}: cannot open shared object file: No such file or directory\n"
    assert decisive(so.format(lib="libcudnn_cnn_infer.so.8"), tmp_path) == (None, None)
    # the toolkit's own runtime library in the same words stays F23
    assert decisive(so.format(lib="libcublasLt.so.12"), tmp_path)[0] == "F23"
    # CPython's loader words on Windows (os.add_dll_directory / ctypes), and TensorRT's trtexec
    dll = "FileNotFoundError: Could not find module 'C:\\app\\lib\\{dll}' (or one of its dependencies).\n"
    assert decisive(dll.format(dll="cudnn_ops64_9.dll"), tmp_path) == (None, None)
    assert decisive(dll.format(dll="cublas64_12.dll"), tmp_path)[0] == "F15"
    assert decisive("[E] Uncaught exception: Unable to open library: nvinfer_plugin_10.dll\n", tmp_path) == (
        None,
        None,
    )
    # torch's loader words with Windows' code, cuDNN's DLL the only one named
    torch = 'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\v\\torch\\lib\\{d}"\n'
    assert decisive(torch.format(d="cudnn_adv_infer64_8.dll"), tmp_path) == (None, None)
    assert decisive(torch.format(d="c10_cuda.dll"), tmp_path)[0] == "F15"


def test_separate_only_needs_every_library_named_to_be_cudnn_or_tensorrt():
    assert separate_only("cannot open libcudnn.so.9 and libnvinfer.so.10")
    assert not separate_only("cannot open libcudnn.so.9 and libcudart.so.12")
    assert not separate_only("no library on this line")
    assert separate_only("Could not locate zlibwapi.dll. Please make sure it is in your library path!")


def test_a_dll_tracer_line_is_no_load_failure(tmp_path):
    # a loader trace (one "LoadLibrary <path>" line per DLL loaded, as DLL tracers print them) beside a compiler error
    log = (
        "main.c\n"
        "C:\\tmp\\x\\main.c(3): fatal error C1083: Cannot open include file: 'Python.h': No such file or directory,\n"
        "LoadLibrary C:\\Windows\\System32\\apphelp.dll\n"
        "LoadLibrary C:\\Windows\\System32\\DriverStore\\FileRepository\\nv.inf_amd64_1\\nvcuda64.dll\n"
        "LoadLibrary C:\\Windows\\System32\\shlwapi.dll\n"
    )
    assert decisive(log, tmp_path)[0] != "F15"
    # LoadLibrary's failure words still count
    failed = "LoadLibrary failed with error 126 for nvcuda.dll\n"
    assert decisive(failed, tmp_path)[0] == "F15"


def test_a_host_compiler_missing_cuda_h_without_the_toolkit_in_view_is_the_toolkit_not_found(tmp_path):
    # gcc's words (an extension's setup compiling a .cpp that includes the toolkit's cuda.h), paths made up
    gcc = "src/cpp/dev.hpp:14:10: fatal error: cuda.h: No such file or directory\ncompilation terminated.\n"
    linux = "/home/dev/.venvs/x/bin/python setup.py build_ext\n"
    assert decisive(linux + gcc, tmp_path)[0] == "F22"
    # MSVC's words for the same on Windows (the engine's platform rule: F07 where the log does not show Linux)
    cl = (
        "C:\\Users\\dev\\AppData\\Local\\Temp\\pip-install-x\\pkg\\src\\cpp\\dev.hpp(14): fatal error C1083: "
        "Cannot open include file: 'cuda.h': No such file or directory\n"
    )
    assert decisive(cl, tmp_path)[0] == "F07"
    # the toolkit found and used: its include folder on the compile line, nvcc compiling, or a .cu file: F24
    inc = "gcc -O2 -I/usr/local/cuda-12.4/include -c src/cpp/dev.cpp -o build/dev.o\n"
    assert decisive(linux + inc + gcc, tmp_path)[0] == "F24"
    cu = "kernels/scan.cu:3:10: fatal error: cuda_runtime.h: No such file or directory\n"
    assert decisive(linux + cu, tmp_path)[0] == "F24"
    nvcc = "/usr/local/cuda/bin/nvcc -c kernels/scan.cu -o scan.o\n"
    assert decisive(linux + nvcc + gcc, tmp_path)[0] == "F24"


def test_a_package_folder_named_like_cuda_is_no_toolkit_include():
    from envmgr.buildlog.rules.toolkit import FACTS

    rx = next(f.regex for f in FACTS if f.kind == "cuda_include")
    assert rx.search('cl /I"C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\include" /c x.cpp')
    assert rx.search("g++ -isystem /opt/cuda/targets/x86_64-linux/include -c x.cpp")
    assert not rx.search("gcc -Isrc/cpp -I/tmp/pycuda-2024.1/include -c x.cpp")


def test_theanos_nvcc_not_found_words_are_nvcc_missing(tmp_path):
    # Theano's CUDA back end's own words (theano/sandbox/cuda/__init__.py), composed with a Linux path
    log = (
        "/home/dev/venv/bin/python train.py\n"
        "ERROR (theano.sandbox.cuda): nvcc compiler not found on $PATH. Check your nvcc installation and try again.\n"
    )
    assert decisive(log, tmp_path)[0] == "F22"
    # with no platform in view, the engine's rule gives F07 (as for setup.py's locate_cuda words, below)
    assert decisive(log.split("\n", 1)[1], tmp_path)[0] == "F07"
    locate = (
        "OSError: The nvcc binary could not be located in your $PATH. Either add it to your path, or set $CUDAHOME\n"
    )
    assert decisive(locate, tmp_path)[0] == "F07"


def test_a_library_search_that_names_its_next_folder_goes_on(tmp_path):
    # bitsandbytes' older cuda_setup words (0.35): the runtime not on the library path, then the folder it searches
    log = (
        "CUDA_SETUP: WARNING! libcudart.so not found in any environmental path. Searching /usr/local/cuda/lib64...\n"
        "CUDA SETUP: CUDA runtime path found: /usr/local/cuda/lib64/libcudart.so\n"
    )
    assert decisive(log, tmp_path) == (None, None)
    # the library missing in a loader's words stays F23
    missing = "OSError: libcudart.so.12: cannot open shared object file: No such file or directory\n"
    assert decisive(missing, tmp_path)[0] == "F23"


def test_a_linux_cpu_library_on_a_windows_path_is_a_release_without_a_windows_build(tmp_path):
    # bitsandbytes' cuda_setup words (its 0.3x/0.4x releases), with made-up Windows and Linux paths
    win = (
        "CUDA SETUP: Loading binary C:\\Users\\dev\\venv\\lib\\site-packages\\bitsandbytes\\libbitsandbytes_cpu.so...\n"
        "argument of type 'WindowsPath' is not iterable\n"
    )
    assert decisive(win, tmp_path) == (None, None)
    linux = "CUDA SETUP: Loading binary /home/dev/venv/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cpu.so...\n"
    assert decisive(linux, tmp_path)[0] == "F19"


def test_onnxruntimes_provider_warning_is_f19_only_with_a_gpu_in_view(tmp_path):
    # onnxruntime's own warning (onnxruntime_inference_collection.py), paths made up
    warn = (
        "/home/dev/venv/lib/python3.10/site-packages/onnxruntime/capi/onnxruntime_inference_collection.py:69: "
        "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names.Available "
        "providers: 'CPUExecutionProvider'\n"
    )
    assert decisive(warn, tmp_path) == (None, None)
    # an NVIDIA GPU in view (nvidia-smi's header line): the CPU package is why it went unused
    smi = "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |\n"
    assert decisive(smi + warn, tmp_path)[0] == "F19"


def test_pytorchs_cmake_finding_two_cudas_is_mixed_versions(tmp_path):
    # PyTorch's cmake/public/cuda.cmake message (its words, wrapped as CMake prints it; versions made up)
    log = (
        "CMake Error at cmake/public/cuda.cmake:44 (message):\n"
        "  FindCUDA says CUDA version is 11.8 (usually determined by nvcc), but the CUDA\n"
        "  headers say the version is 12.1.  This often occurs when you set both\n"
        "  CUDA_HOME and CUDA_NVCC_EXECUTABLE to non-standard locations, without also\n"
    )
    assert decisive(log, tmp_path) == ("F08", "findcuda-nvcc-vs-headers")
    # the version FindCUDA gives may be empty (no nvcc version read)
    assert decisive(log.replace(" 11.8 ", " "), tmp_path)[0] == "F08"


def test_opencvs_config_refusing_another_cuda_is_mixed_versions(tmp_path):
    # OpenCVConfig.cmake's FATAL_ERROR (its words, wrapped as CMake prints it; path and versions made up)
    log = (
        "CMake Error at /usr/lib/cmake/opencv4/OpenCVConfig.cmake:108 (message):\n"
        "  OpenCV static library was compiled with CUDA 11.8 support.  Please, use the\n"
        "  same version or rebuild OpenCV with CUDA 12.2\n"
    )
    assert decisive(log, tmp_path) == ("F08", "opencv-built-with-other-cuda")


def test_windows_bad_image_for_a_linux_shared_object_is_no_f15(tmp_path):
    # a package without a Windows build loading its Linux .so: Windows' loader answers 193 (bitsandbytes' cuda_setup
    # and CPython's words; paths made up)
    so = (
        "CUDA SETUP: Loading binary C:\\Users\\dev\\venv\\Lib\\site-packages\\pkg\\libpkg_cuda.so...\n"
        "[WinError 193] %1 is not a valid Win32 application\n"
    )
    assert decisive(so, tmp_path)[0] != "F15"
    # the same code for a DLL stays F15
    dll = (
        "Loading C:\\Users\\dev\\venv\\Lib\\site-packages\\pkg\\pkg_cuda.dll\n"
        "OSError: [WinError 193] %1 is not a valid Win32 application\n"
    )
    assert decisive(dll, tmp_path)[0] == "F15"
