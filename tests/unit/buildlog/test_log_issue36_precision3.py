"""Rules of issue 36's third round (cohort 2026-12-07e scored as train, after its first sight was recorded).

Every log here is COMPOSED for the test in the tool's own words (the message the tool prints, with made-up paths,
versions and names around it); none is a copy of a cohort log.
"""

from __future__ import annotations

from tests.logtext import decisive


def test_a_provider_library_that_needs_cudnn_is_no_f23_but_one_that_needs_the_toolkits_library_is(tmp_path):
    # onnxruntime's provider bridge (provider_bridge_ort.cc) passes dlerror on: the missing library is the last one
    line = (
        "[E:onnxruntime:Default, provider_bridge_ort.cc:1700 TryGetProviderInfo_CUDA] Failed to load library "
        "libonnxruntime_providers_cuda.so with error: {lib}: cannot open shared object file: No such file or directory\n"
    )
    assert decisive(line.format(lib="libcudnn_adv.so.9"), tmp_path) == (None, None)
    assert decisive(line.format(lib="libcublasLt.so.12"), tmp_path)[0] == "F23"


def test_cuda_error_35_by_its_number_is_the_driver_too_old(tmp_path):
    # the CUDA_CHECK macros that print the code alone: "CUDA error %d at %s:%d"
    assert decisive("CUDA error 35 at C:\\src\\ggml-cuda.cu:4410: \n", tmp_path)[0] == "F17"
    assert decisive("CUDA error: 35 at /src/kernels.cu:88\n", tmp_path)[0] == "F17"
    # another code, or 35 as part of a longer number, is not
    assert decisive("CUDA error 2 at /src/ggml-cuda.cu:4410: out of memory\n", tmp_path)[0] != "F17"
    assert decisive("CUDA error 350 at /src/x.cu:1\n", tmp_path)[0] != "F17"
    assert decisive("CUDA error 35.5 at /src/x.cu:1\n", tmp_path)[0] != "F17"


def test_cmakes_notfound_nvcc_run_as_a_command_and_cuda_path_not_set_are_the_toolkit_not_found(tmp_path):
    log = "-- Executing NVCC-NOTFOUND --version resulted in error: 1\nCMake Error at ports/cuda/portfile.cmake:9:\n"
    assert decisive(log, tmp_path)[0] == "F07"
    # a script's own check of the installer's variable (no system in view: F07, the either-platform form)
    assert decisive("ERROR: CUDA_PATH environment variable not set or directory does not exist.\n", tmp_path)[0] == (
        "F07"
    )
    assert decisive("CUDA_PATH is not defined, cannot build the CUDA filters\n", tmp_path)[0] == "F07"
    # the variable set and printed is no failure
    assert decisive("-- CUDA_PATH = C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.4\n", tmp_path) == (
        None,
        None,
    )


def test_a_module_missing_right_after_its_native_library_failed_is_that_library(tmp_path):
    # a package's import that tries its compiled module, then a fallback name, and lists both errors last
    log = (
        "Error details from previous import attempts:\n"
        "- ImportError: libnvrtc.so.12: cannot open shared object file: No such file or directory\n"
        "- ModuleNotFoundError: No module named 'fast_ops'\n"
    )
    assert decisive(log, tmp_path)[0] == "F23"
    # a module missing on its own (no native library failed above it) still stops the log outside the catalog
    far = "libnvrtc.so.12 found in /opt/x\n" + "step\n" * 20 + "ModuleNotFoundError: No module named 'fast_ops'\n"
    assert decisive(far, tmp_path) == (None, None)


def test_a_cpu_fallback_after_cudnn_failed_to_load_is_no_f18(tmp_path):
    # onnxruntime's provider bridge, then its session's own words for the providers it kept
    fail = (
        "[E:onnxruntime:Default, provider_bridge_ort.cc:1700 TryGetProviderInfo_CUDA] Failed to load library "
        "libonnxruntime_providers_cuda.so with error: {lib}: cannot open shared object file: No such file or directory\n"
    )
    tail = "NVIDIA GeForce RTX 3090 found\nApplied providers: ['CPUExecutionProvider'], with options: {}\n"
    assert decisive(fail.format(lib="libcudnn.so.9") + tail, tmp_path) == (None, None)
    assert decisive(fail.format(lib="libcublasLt.so.12") + tail, tmp_path)[0] == "F23"


def test_torchs_compiler_version_warning_for_cl_is_cl_missing_only_when_cl_did_not_run(tmp_path):
    warn = "C:\\py\\lib\\site-packages\\torch\\utils\\cpp_extension.py:380: UserWarning: Error checking compiler version for cl: {why}\n"
    assert decisive(warn.format(why="[WinError 2] The system cannot find the file specified"), tmp_path)[0] == "F06"
    # cl ran, and its output in another locale's code page was not UTF-8: a warning about the check only
    why = "'utf-8' codec can't decode byte 0xd3 in position 0: invalid continuation byte"
    assert decisive(warn.format(why=why), tmp_path) == (None, None)


def test_a_build_line_that_already_says_error_is_no_build_still_running(tmp_path):
    # pip's two lines joined into one by an excerpt: the build ended, in an error
    joined = "Building wheels for collected packages: pkg Building wheel for pkg (pyproject.toml) ... error\n"
    assert decisive(joined, tmp_path)[0] != "F20"


def test_cuda_home_holding_a_list_is_f22(tmp_path):
    # torch's cpp_extension prints the CUDA_HOME it uses, and joins it into nvcc's path
    warn = "No CUDA runtime is found, using CUDA_HOME=':/usr/local/cuda-11.8'\n"
    assert decisive(warn + "error: command ':/usr/local/cuda-11.8/bin/nvcc' failed\n", tmp_path)[0] == "F22"
    step = "[3/9] :/usr/local/cuda/bin/nvcc -DWITH_CUDA -I/src/csrc -c /src/csrc/op.cu -o /b/op.o\nFAILED: /b/op.o\n"
    assert decisive(step, tmp_path)[0] == "F22"
    # one folder is fine
    assert decisive("using CUDA_HOME='/usr/local/cuda-11.8'\n", tmp_path) == (None, None)


def test_cannot_find_cuda_home_is_the_toolkit_not_found(tmp_path):
    line = "RuntimeError: Cannot find CUDA_HOME. CUDA must be available to build the package.\n"
    assert decisive(line, tmp_path)[0] == "F07"  # no system in view
    assert decisive('  File "/home/u/src/setup.py", line 9\n' + line, tmp_path)[0] == "F22"


def test_a_torch_extension_op_not_compiled_with_gpu_is_a_cpu_only_build(tmp_path):
    line = "RuntimeError: Not compiled with GPU support (nms_rotated at /src/csrc/nms_rotated/nms_rotated.h:56)\n"
    assert decisive(line, tmp_path)[0] == "F18"


def test_invalid_device_function_is_the_kernel_image_missing_but_not_on_hip(tmp_path):
    # Caffe-style CHECK on the runtime's return code, and a tool's own "Cuda error" print
    caffe = (
        "F0101 10:00:00.000 1 relu_layer.cu:26] Check failed: error == cudaSuccess (8 vs. 0)  invalid device function\n"
    )
    assert decisive(caffe, tmp_path)[0] == "F14"
    assert decisive("Failed: Cuda error ./src/ops.cu:120 'invalid device function'\n", tmp_path)[0] == "F14"
    # AMD's HIP words its error the same way: no NVIDIA failure
    hip = "RuntimeError: HIP error: invalid device function\nHIP kernel errors might be asynchronously reported\n"
    assert decisive(hip, tmp_path)[0] != "F14"


def test_nvcc_rejecting_an_arch_value_in_typographic_quotes_is_f13(tmp_path):
    assert decisive("nvcc fatal   : Value ‘SM_30‘ is not defined for option ‘gpu-name‘\n", tmp_path)[0] == "F13"
    assert decisive("nvcc fatal   : Value 'sm_20' is not defined for option 'gpu-architecture'\n", tmp_path)[0] == "F13"
