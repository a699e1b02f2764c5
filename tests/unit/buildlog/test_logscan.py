"""The log scanner on the real build and load logs in tests/corpus (sources: tests/corpus/SOURCES.md).

Variants (CRLF, UTF-16, ANSI colour, MSBuild prefixes and hard wrapping) are made from the real
samples by the transformations below; no failure text is invented here. Every scan goes through
`scan_path`, what `envmgr doctor --log FILE` and `envmgr run --log` run: a variant is written to a file first.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

from envmgr.buildlog.read import stream_text
from envmgr.buildlog.rules import SIGNATURES
from envmgr.buildlog.scan import LogMatch, LogScan, matches_json, render_matches, scan_path
from envmgr.catalog import CATALOG, Failure, ids
from envmgr.errors import InputFileError
from tests.conftest import CORPUS

# file -> ((id, line_no of its first match), ...) in order of first occurrence, and a subset of the
# first match's details. Line numbers count the file's own lines (annotation lines are blanked).
LOGS = {
    "cmake-no-cuda-toolset-found-cmake3.27-cuda11.3-findcudatoolkit-ok.txt": ((("F01", 6),), {}),
    "cmake-no-cuda-toolset-found-vs2019-buildtools-bundled-cmake3.20.txt": ((("F01", 9),), {}),
    "cmake-no-cuda-toolset-found-vs2019-cmake3.24.txt": ((("F01", 4),), {}),
    "msbuild-imported-project-cuda-props-not-found-vs2022.txt": ((("F01", 1),), {"cuda": "12.4", "vc": "v170"}),
    "msbuild-cuda11.8-host_config-unsupported-msvc14.40-vs2022-buildtools-llama-cpp-python-EXCERPT.txt": (
        (("F04", 6),),
        {"cuda": "11.8", "msvc": "14.40", "supported": "2017-2022", "header_line": "153"},
    ),
    "nvcc-host_config-unsupported-msvc-error-cuda12.2.txt": ((("F04", 1),), {"cuda": "12.2", "supported": "2017-2022"}),
    # The error itself is cut off; the log names CUDA 12.2 (compiler id) and MSBuild 17.10 (MSVC 14.40).
    "cmake-check-cuda-compiler-broken-vs2022-buildtools-msbuild17.10-cuda12.2.140-EXCERPT.txt": (
        (("F04", 8),),
        {"inferred": True, "cuda": "12.2", "msvc": "14.40", "msvc_from": "MSBuild"},
    ),
    # CMake's compiler-id output (printed only when identification failed): nvcc 12.2 with -ccbin 14.40.
    "cmake-vs-generator-cuda-compilerid-nvcc-commandline-cuda12.2-msvc14.40-EXCERPT.txt": (
        (("F04", 3),),
        {"inferred": True, "cuda": "12.2", "msvc": "14.40", "msvc_from": "-ccbin"},
    ),
    "nvcc-stl1002-yvals_core-msvc14.42-vscode-cmake-tools-EXCERPT.txt": (
        (("F05", 2),),
        {"cuda_min": "12.4", "msvc": "14.42"},
    ),
    "nvcc-fatal-cannot-find-cl.exe-ffmpeg-configure-EXCERPT.txt": ((("F06", 10),), {}),
    "cmake-no-cmake-cuda-compiler-llama.cpp-linux-EXCERPT.txt": ((("F07", 13),), {}),
    "cmake-cudacxx-not-found-cmake3.18-cutlass-EXCERPT.txt": (
        (("F07", 4),),
        {"path": "$~/miniconda3/envs/int/bin/nvcc"},
    ),
    "cmake-llama.cpp-llama_cuda-deprecated-then-cuda-not-found-linux-EXCERPT.txt": (
        (("F09", 17), ("F07", 34)),
        {"flag": "LLAMA_CUDA"},
    ),
    "cmake-llama_cublas-deprecated-error-llama-cpp-python-EXCERPT.txt": ((("F09", 3),), {"flag": "LLAMA_CUBLAS"}),
    "cmake-nmake-not-found-spanish-windows-llama.cpp-EXCERPT.txt": ((("F03", 2),), {}),
    "pip-llama-cpp-python-skbuild-0.8.2-mingw-makefiles-no-build-program-EXCERPT.txt": (
        (("F03", 13),),
        {"generator": "MinGW Makefiles"},
    ),
    "nvcc-fatal-unsupported-gpu-architecture-compute_120a-pip-EXCERPT.txt": ((("F13", 3),), {"arch": "compute_120a"}),
    "python-import-llama_cpp-failed-to-load-llama.dll-EXCERPT.txt": ((("F15", 9),), {"dll": "llama.dll"}),
    "python-import-llama_cpp-winerror3-stale-cuda_path.txt": (
        (("F16", 2),),
        {"path": "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\11.2\\bin"},
    ),
    "python-import-llama_cpp-add_dll_directory-cuda_path-traceback-EXCERPT.txt": ((("F16", 16),), {"var": "CUDA_PATH"}),
    "nvcc-host_config-unsupported-gnu-version-gcc13-llama.cpp.txt": ((("F21", 2),), {"gcc_max": "13"}),
    "ld-undefined-reference-cuMemCreate-libggml-cuda-llama.cpp-EXCERPT.txt": ((("F23", 3),), {"symbol": "cuMemCreate"}),
    # The real pip log of this machine (CUDA 13.0 without cuBLAS, no GPU): FindCUDAToolkit's status line
    # names the missing header first; CMake's generate step then fails on native archs and CUDA::cublas.
    "pip-llama-cpp-python-0.3.36-cuda13.0-no-cublas-native-no-gpu-linux-cmake3.25.txt": (
        (("F24", 92), ("F12", 163)),
        {"component": "cublas", "header": "cublas_v2.h"},
    ),
    # issue 13 item 6: more real logs from public issues (tests/corpus/SOURCES.md), other tools and wordings
    "cmake-no-cuda-toolset-found-cmake3.16-vs2015-paddle-EXCERPT.txt": ((("F01", 3),), {}),
    "cmake-no-cuda-toolset-found-cmake3.21-project-cuda11.6-instant-ngp-EXCERPT.txt": ((("F01", 6),), {}),
    "cmake-no-cuda-toolset-found-cmake3.28-llama_cublas-powerinfer-EXCERPT.txt": ((("F01", 6),), {}),
    "cmake-no-cuda-toolset-found-cmake3.29-conda-cuda-whisper.cpp-EXCERPT.txt": ((("F01", 5),), {}),
    "cmake-no-cuda-toolset-found-vs2022-msvc19.44-cmake3.23-tensorrt-yolo-EXCERPT.txt": ((("F01", 5),), {}),
    "cuda-driver-insufficient-bandwidthTest-windows-cuda8.0-code35-EXCERPT.txt": ((("F17", 7),), {}),
    "cuda-driver-insufficient-cudaGetDeviceCount-linux-rpg_open_remode-EXCERPT.txt": ((("F17", 5),), {}),
    "cuda-error-35-cudaErrorInsufficientDriver-bladebit-linux-EXCERPT.txt": ((("F17", 4),), {}),
    "ld-cannot-find-CUDA_cublas_LIBRARY-NOTFOUND-findcuda-colmap-EXCERPT.txt": ((("F24", 5),), {"component": "cublas"}),
    "ld-cannot-find-lcublas-cmake-make-instant-ngp-EXCERPT.txt": ((("F24", 3),), {"component": "cublas"}),
    "ld-cannot-find-lcublas-darknet-makefile-EXCERPT.txt": ((("F24", 2),), {"component": "cublas"}),
    "ld-cannot-find-lcublas-opencv-cuda10.1-ubuntu20-EXCERPT.txt": ((("F24", 2),), {"component": "cublas"}),
    "llama-cpp-python-0.3.9-windows-no-kernel-image-rms_norm-EXCERPT.txt": ((("F14", 3),), {}),
    "llama-server-libcublas.so.11-cannot-open-shared-object-llama.cpp-EXCERPT.txt": (
        (("F23", 2),),
        {"lib": "libcublas.so.11"},
    ),
    "llama.cpp-cuda-error-209-no-kernel-image-ggml-cuda-EXCERPT.txt": ((("F14", 2),), {}),
    "nvcc-fatal-unsupported-gpu-architecture-compute_20-findcuda-make-BPA-EXCERPT.txt": (
        (("F13", 3),),
        {"arch": "compute_20"},
    ),
    "nvcc-fatal-unsupported-gpu-architecture-compute_35-findcuda-make-gadgetron-EXCERPT.txt": (
        (("F13", 9),),
        {"arch": "compute_35"},
    ),
    "nvcc-fatal-unsupported-gpu-architecture-compute_89-cuda11.5-setup.py-3detr-EXCERPT.txt": (
        (("F13", 2),),
        {"arch": "compute_89"},
    ),
    "nvcc-host_config-unsupported-gnu-version-gcc11-ninja-EXCERPT.txt": ((("F21", 3),), {"gcc_max": "11"}),
    "nvcc-host_config-unsupported-gnu-version-gcc5-cuda8.0-caffe2-EXCERPT.txt": ((("F21", 2),), {"gcc_max": "5"}),
    "nvcc-host_config-unsupported-gnu-version-gcc6-included-from-cuda_memtest-EXCERPT.txt": (
        (("F21", 5),),
        {"gcc_max": "6"},
    ),
    "nvcc-host_config-unsupported-gnu-version-gcc8-caret-findcuda-tkDNN-EXCERPT.txt": ((("F21", 2),), {"gcc_max": "8"}),
    "ollama-runner-libcublas.so.11-cannot-open-ldd-not-found-EXCERPT.txt": ((("F23", 2),), {"lib": "libcublas.so.11"}),
    "onnxruntime-cuda-failure-35-driver-insufficient-windows-roop-EXCERPT.txt": ((("F17", 2),), {}),
    "python-import-llama_cpp-could-not-find-module-jupyter-json-escaped-EXCERPT.txt": (
        (("F15", 4),),
        {"dll": "llama.dll"},
    ),
    "python-import-llama_cpp-could-not-find-module-llama.dll-timestamp-prefixed-codeproject-EXCERPT.txt": (
        (("F15", 8),),
        {"dll": "llama.dll"},
    ),
    "python-import-llama_cpp-ggml.dll-not-found-cu128-wheel-EXCERPT.txt": ((("F15", 10),), {"dll": "ggml.dll"}),
    "tensorrt-llm-cub-no-kernel-image-gtest-EXCERPT.txt": ((("F14", 8),), {}),
    "torch7-thcudacheck-error-35-driver-insufficient-lua-EXCERPT.txt": ((("F17", 2),), {}),
    "clang-cuda-yvals_core-stl1002-cuda10.1-update2-wrapped-EXCERPT.txt": ((("F05", 7),), {"cuda_min": "10.1"}),
    "nvcc-value-native-not-defined-gpu-architecture-cuda11.5-whisper.cpp-make-EXCERPT.txt": (
        (("F13", 2),),
        {"arch": "native"},
    ),
    "nvcc-warning-cannot-find-valid-gpu-arch-native-whisper.cpp-a100-EXCERPT.txt": ((("F12", 2),), {}),
    "pip-cmake-object-path-max-warning-rife-ncnn-vulkan-EXCERPT.txt": ((("F11", 5),), {}),
    "pip-xformers-ninja-filename-longer-than-260-V-TEMP-EXCERPT.txt": ((("F11", 2),), {}),
    "pip-xformers-ninja-stat-filename-longer-than-260-characters-torch-cpp_extension-EXCERPT.txt": ((("F11", 5),), {}),
    "pycuda-compileerror-nvcc-fatal-cannot-find-cl.exe-EXCERPT.txt": ((("F06", 5),), {}),
    "xmake-devlink-nvcc-fatal-cannot-find-cl.exe-EXCERPT.txt": ((("F06", 2),), {}),
    "xmake-nvcc-fatal-cannot-find-cl.exe-has_flags-EXCERPT.txt": ((("F06", 12),), {}),
    "cmake-generator-vs2019-could-not-find-any-instance-multiline-diligent-EXCERPT.txt": (
        (("F03", 5),),
        {"generator": "Visual Studio 16 2019"},
    ),
    "cmake-generator-vs2019-could-not-find-specified-instance-instant-ngp-EXCERPT.txt": (
        (("F03", 4),),
        {"generator": "Visual Studio 16 2019"},
    ),
    "cmake-generator-vs2022-could-not-find-any-instance-powershell-obs-EXCERPT.txt": (
        (("F03", 6),),
        {"generator": "Visual Studio 17 2022"},
    ),
    "cmake-llama.cpp-llama_cuda-llama_native-deprecated-warnings-EXCERPT.txt": ((("F09", 3),), {"flag": "LLAMA_CUDA"}),
    "llama.cpp-load_tensors-offloaded-0-of-29-layers-cpu-mapped-EXCERPT.txt": ((("F18", 6),), {"layers": "29"}),
    "llava-llm_load_tensors-offloaded-0-of-35-layers-ggml_init_cublas-EXCERPT.txt": ((("F18", 12),), {"layers": "35"}),
    # issue 13 item 6, ids that had fewer than 3 real logs (F02, F10, F05, F12, F16, F18)
    "msbuild-cuda13.1-targets-drive-cuda12.8-nvcc-unsloth-llama.cpp-EXCERPT.txt": (
        (("F02", 3),),
        {"props": "13.1", "nvcc": "12.8"},
    ),
    "cmake-warning-ignoring-extra-path-list-separator-gz-cmake-ci-EXCERPT.txt": (
        (("F10", 3),),
        {"arg": '"/home/jenkins/workspace/gz_cmake-ci-gz-cmake3-noble-amd64/build/install/RelWithDebInfo"'},
    ),
    "cmake-warning-ignoring-extra-path-cmake3.23-glog-test-EXCERPT.txt": (
        (("F10", 3),),
        {"arg": '"${glog_build_dir}/test_package_config/working_config/env"'},
    ),
    "cmake-warning-ignoring-extra-path-unescaped-semicolons-sirf-superbuild-EXCERPT.txt": (
        (("F10", 2),),
        {"arg": '"/opt/SIRF-SuperBuild/builds/ITK/build/hdf5_cpp-shared"'},
    ),
    "cmake-cuda_architectures-native-no-gpu-detected-colmap-ninja-EXCERPT.txt": ((("F12", 3),), {}),
    "cmake-cuda_architectures-native-no-gpu-detected-cuda11.7-fastllm-EXCERPT.txt": ((("F12", 10),), {}),
    "python-import-llama_cpp-add_dll_directory-cuda_path-bin-oobabooga-installer-EXCERPT.txt": (
        (("F16", 16),),
        {"var": "CUDA_PATH"},
    ),
    "llama.cpp-llm_load_tensors-offloaded-0-of-33-layers-langchain-prose-EXCERPT.txt": (
        (("F18", 2),),
        {"layers": "33"},
    ),
    "ninja-stl1002-expected-cuda12.4-slangtorch-zluda-EXCERPT.txt": ((("F05", 5),), {"cuda_min": "12.4"}),
    # F02 in other wordings: a Hungarian MSBuild whose MSB3721 line is cut off (the nvcc run is read from the
    # command echoed above it), and CUDA 13.0's targets finding no toolkit directory of their own
    "msbuild-cuda12.4-targets-vs2017-drive-cuda13.0-nvcc-hungarian-unsloth-studio-EXCERPT.txt": (
        (("F13", 10), ("F02", 13)),
        {"arch": "compute_52"},
    ),
    "msbuild-cuda13.0-targets-cuda-toolkit-directory-empty-vs2022-cuda-mesh-voxelization-EXCERPT.txt": (
        (("F02", 3),),
        {"props": "13.0"},
    ),
    # issue 13 item 1, other tools' wordings: ptxas copies bundled with triton (sm_XXa), NVRTC (no arch named),
    # LLVM's NVPTX backend; torch cpp_extension's own host-compiler check; nvcc's #error in pycuda's bytes repr;
    # the Windows loader as CPython's import (any language) and onnxruntime's LoadLibrary report it
    "triton-ptxas-bundled-value-sm_121a-not-defined-gpu-name-dgx-spark-EXCERPT.txt": (
        (("F13", 4),),
        {"arch": "sm_121a"},
    ),
    "torch-inductor-ptxas-blackwell-value-sm_110a-not-defined-gpu-name-jetson-thor-EXCERPT.txt": (
        (("F13", 14),),
        {"arch": "sm_110a"},
    ),
    "torch-nvrtc-invalid-value-gpu-architecture-cuda11.3-pytorch1.10-maskpls-EXCERPT.txt": (
        (("F13", 2),),
        {"signature": "nvrtc-arch-invalid"},
    ),
    "torch-nvrtc-invalid-value-gpu-architecture-rtx4090-jit-reduction-kernel-nvdiffmodeling-EXCERPT.txt": (
        (("F13", 5),),
        {"signature": "nvrtc-arch-invalid"},
    ),
    "triton-windows-llvm-sm_120-not-a-recognized-processor-rtx5090-comfyui-EXCERPT.txt": (
        (("F13", 2),),
        {"arch": "sm_120"},
    ),
    "pip-torch-cpp_extension-g++13.1-greater-than-maximum-cuda11.7-quant-cuda-EXCERPT.txt": (
        (("F21", 5),),
        {"compiler": "g++", "gcc": "13.1.1", "cuda": "11.7"},
    ),
    "pip-torch-cpp_extension-x86_64-linux-gnu-g++11.3-greater-than-maximum-cuda11.3-torchsparse-EXCERPT.txt": (
        (("F21", 2),),
        {"compiler": "x86_64-linux-gnu-g++", "gcc": "11.3.0", "cuda": "11.3"},
    ),
    "torch-cpp_extension-g++9.3-greater-than-maximum-cuda10.2-deep-hough-EXCERPT.txt": (
        (("F21", 2),),
        {"gcc": "9.3.0", "cuda": "10.2"},
    ),
    "pycuda-stderr-bytes-repr-host_config-unsupported-msvc-cuda11.2-gprmax-EXCERPT.txt": (
        (("F04", 3),),
        {"cuda": "11.2", "supported": "2017-2019", "header_line": "160"},
    ),
    "python3.8-import-pycuda-_driver-dll-load-failed-curand64_10-not-found-EXCERPT.txt": (
        (("F15", 5),),
        {"signature": "dll-load-failed"},
    ),
    "python3.9-import-pycuda-dll-load-failed-while-importing-_driver-cuda11.2-EXCERPT.txt": (
        (("F15", 3),),
        {"module": "_driver"},
    ),
    "python-import-pycuda-dll-load-failed-while-importing-_driver-chinese-windows-EXCERPT.txt": (
        (("F15", 9),),
        {"module": "_driver"},
    ),
    "ipython-import-torch-_C-dll-load-failed-conda-EXCERPT.txt": ((("F15", 14),), {"signature": "dll-load-failed"}),
    "onnxruntime-loadlibrary-error-126-providers_cuda.dll-sd-webui-EXCERPT.txt": (
        (("F15", 2),),
        {"code": "126", "dll": "onnxruntime_providers_cuda.dll"},
    ),
    "dotnet-onnxruntime-loadlibrary-error-126-providers_cuda.dll-onnxstack-EXCERPT.txt": (
        (("F15", 2),),
        {"code": "126", "dll": "onnxruntime_providers_cuda.dll"},
    ),
    # a VS generator name with its Win64 suffix (CMake 3.12 finding no VS 2017; a CMake too old to know it), and
    # MSB4019 as the Chinese VS 2017 Error List prints it (“…” quotes) and for a project whose CUDA version is empty
    "cmake3.12-generator-vs2017-win64-could-not-find-any-instance-vscode-cmake-tools-EXCERPT.txt": (
        (("F03", 4),),
        {"generator": "Visual Studio 15 2017 Win64"},
    ),
    "cmake-could-not-create-named-generator-vs2017-win64-old-cmake-wabt-EXCERPT.txt": (
        (("F03", 3),),
        {"generator": "Visual Studio 15 2017 Win64"},
    ),
    "vs2017-error-list-msb4019-cuda10.0-props-not-found-chinese-EXCERPT.txt": ((("F01", 3),), {"cuda": "10.0"}),
    "msbuild16.10-msb4019-cuda-empty-version-props-not-found-brian2genn-EXCERPT.txt": ((("F01", 6),), {"vc": "v160"}),
    # 'native' passed on by a CMake older than 3.24; CuPy and pygpu meeting the Windows loader (the id names the
    # missing CUDA DLL, not the package)
    "cmake3.22-cuda_architectures-native-compute_native-unsupported-cuda12.3-colmap-EXCERPT.txt": (
        (("F13", 4),),
        {"arch": "compute_native"},
    ),
    "cupy-failed-to-load-nvrtc64_120_0.dll-could-not-find-module-comfyui-gimm-vfi-EXCERPT.txt": (
        (("F15", 2),),
        {"dll": "nvrtc64_120_0.dll"},
    ),
    "cupy-failed-to-load-nvrtc64_112_0.dll-comfyui-gmfss-fortuna-EXCERPT.txt": (
        (("F15", 4),),
        {"dll": "nvrtc64_112_0.dll"},
    ),
    "cupy-failed-to-import-dll-dependencies-cublas64_11-not-found-comfyui-frame-interpolation-EXCERPT.txt": (
        (("F15", 24),),
        {"dll": "cublas64_11.dll"},
    ),
    "pygpu-could-not-load-nvrtc64_70.dll-bytes-repr-theano-libgpuarray-EXCERPT.txt": (
        (("F15", 5),),
        {"dll": "nvrtc64_70.dll"},
    ),
    # Spanish MSBuild 15 around nvcc's older #error ("2012, 2013, 2015 and 2017"), hard-wrapped at 120 columns
    # in too few lines to be re-joined (the CUDA folder is read from the line above), lower-case install path
    "msbuild15-spanish-summary-host_config-unsupported-msvc-cuda9.1-wrapped-xmr-stak-EXCERPT.txt": (
        (("F04", 7),),
        {"cuda": "9.1", "header_line": "135", "supported": "2012-2017"},
    ),
    "msbuild15.6-spanish-host_config-unsupported-msvc-cuda9.1-vs2017-15.6-xmr-stak-EXCERPT.txt": (
        (("F04", 3),),
        {"cuda": "9.1", "header_line": "135", "supported": "2012-2017"},
    ),
    # the loader's text in Russian and Chinese Windows (torch._C; triton's cuda_utils under torch.compile), and
    # a 'Win64' generator name given together with a platform (-A x64)
    "python3.6-import-torch-_C-dll-load-failed-russian-windows-esrgan-EXCERPT.txt": (
        (("F15", 8),),
        {"signature": "dll-load-failed"},
    ),
    "torch-inductor-triton-dll-load-failed-while-importing-cuda_utils-chinese-windows-EXCERPT.txt": (
        (("F15", 4),),
        {"module": "cuda_utils"},
    ),
    "cmake3.9-generator-vs2015-win64-does-not-support-platform-x64-aleth-EXCERPT.txt": (
        (("F03", 5),),
        {"generator": "Visual Studio 14 2015 Win64", "platform": "x64"},
    ),
    # issue 13 item 6, the four ids once thought to have no text: F08 as torch's cpp_extension and apex compare nvcc
    # with torch.version.cuda; F19 as flash-attn's setup.py finding no prebuilt wheel (Linux, Windows, no pip
    # indent); F20 as pip's minute-by-minute 'still running...', a Travis and a Slurm time limit; F22 as make's
    # shell and make itself missing nvcc, torch's CUDA_HOME check, the distro's /usr/bin/nvcc failing
    "torch-cpp_extension-detected-cuda12.1-mismatches-pytorch11.7-pip-groundingdino-EXCERPT.txt": (
        (("F08", 4),),
        {"cuda": "12.1", "torch_cuda": "11.7"},
    ),
    "torch-cpp_extension-detected-cuda12.4-mismatches-pytorch11.8-make.sh-responsible-visual-editing-EXCERPT.txt": (
        (("F08", 4),),
        {"cuda": "12.4", "torch_cuda": "11.8"},
    ),
    "apex-setup.py-nvcc12.3-does-not-match-pytorch-binaries-cuda12.1-EXCERPT.txt": (
        (("F08", 19),),
        {"signature": "apex-cuda-mismatch", "torch_cuda": "12.1"},
    ),
    "cmake-found-cudatoolkit11.8-compiler-identification-nvidia12.0-windows-autoscoper-EXCERPT.txt": (
        (("F08", 15),),
        {"toolkit": "11.8", "nvcc": "12.0"},
    ),
    "pip-flash-attn-2.7.2.post1-precompiled-wheel-not-found-building-from-source-linux-EXCERPT.txt": (
        (("F19", 6),),
        {"signature": "prebuilt-wheel-not-found"},
    ),
    "pip-flash-attn-2.8.3-precompiled-wheel-not-found-win_amd64-exllamav3-EXCERPT.txt": (
        (("F19", 6),),
        {"signature": "prebuilt-wheel-not-found"},
    ),
    "flash-attn-2.6.3-cu123-precompiled-wheel-not-found-building-from-source-mochi-EXCERPT.txt": (
        (("F19", 4),),
        {"signature": "prebuilt-wheel-not-found"},
    ),
    "pip-index-url-whl-cu124-no-llama-cpp-python-0.2.88-index-lags-pypi-EXCERPT.txt": (
        (("F19", 3),),
        {"flavour": "cu124", "requirement": "llama-cpp-python==0.2.88"},
    ),
    "pip-extra-index-url-cublas-wheels-textgen-cu121-no-llama-cpp-python-cuda-0.2.25-windows-EXCERPT.txt": (
        (("F19", 4),),
        {"flavour": "cu121", "requirement": "llama-cpp-python-cuda==0.2.25"},
    ),
    "docker-pip-vllm-wheel-still-running-cuda-container-ci-instructlab-EXCERPT.txt": (
        (("F20", 3),),
        {"package": "vllm"},
    ),
    "travis-job-exceeded-maximum-time-limit-cuda10.1-debug-geosx-EXCERPT.txt": (
        (("F20", 3),),
        {"signature": "travis-time-limit"},
    ),
    "slurm-step-cancelled-due-to-time-limit-cuda-compile-trilinos-panzer-EXCERPT.txt": (
        (("F20", 3),),
        {"signature": "slurm-time-limit"},
    ),
    "azure-pipelines-job-exceeded-maximum-execution-time-360-templatestudio-EXCERPT.txt": (
        (("F20", 3),),
        {"limit": "360"},
    ),
    "make-sh-nvcc-not-found-error-127-chinese-ubuntu20.04-cufinufft-EXCERPT.txt": (
        (("F22", 5),),
        {"signature": "nvcc-not-on-path"},
    ),
    "make-nvcc-command-not-found-error-127-cudamat-deepnet-EXCERPT.txt": (
        (("F22", 9),),
        {"signature": "nvcc-not-on-path"},
    ),
    "pip-torch-cpp_extension-cuda_home-not-set-bmtrain-linux-cpm-live-EXCERPT.txt": (
        (("F22", 20),),
        {"signature": "cuda-home-not-set"},
    ),
    "setup.py-usr-bin-nvcc-unsupported-gpu-architecture-compute_61-cuda10.1-fsdet-EXCERPT.txt": (
        (("F22", 3),),
        {"nvcc": "/usr/bin/nvcc"},
    ),
}

# Logs that are real but hold no failure text: a success, and a head cut off before the error
# (issue #1586: the error is in the msbuild-cuda11.8 excerpt of the same build, see the test below).
CLEAN_LOGS = (
    "cmake-vs2022-generator-cuda-identification-ok-ci-cuda11.7.99.txt",
    "pip-llama-cpp-python-skbuild-0.9.8-cmake3.30-vs2022-buildtools-configure-head-EXCERPT.txt",
)
_ANNOTATION = re.compile(r"^(# SOURCE:|# Context:|\[\.\.\. TRUNCATED)")


def log(name: str) -> str:
    """The sample without the researcher's annotation lines (blanked, so line numbers stay)."""
    text = read(CORPUS / name)  # also proves the log reader copes with every sample (cp437 registry dumps too)
    return "\n".join("" if _ANNOTATION.match(l) else l for l in text.split("\n"))


def read(path: Path) -> str:
    """A log file as the scan reads it: the decoded text stream_text gives scan_path, joined."""
    return "".join(stream_text(path))


def scan(text: str) -> LogScan:
    """`text` written to a UTF-8 file and scanned from there."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "build.log"
        path.write_bytes(text.encode("utf-8"))
        return scan_path(path)


def summary(matches) -> tuple:
    return tuple((m.id, m.line_no) for m in matches)


def other_corpus_files():
    return sorted(
        p.name
        for p in CORPUS.iterdir()
        if p.is_file() and p.name not in LOGS and p.name != "SOURCES.md" and not p.name.startswith("SOURCES")
    )


@pytest.mark.parametrize("name", sorted(LOGS))
def test_real_log_gives_its_failures_in_order(name):
    expected, details = LOGS[name]
    matches = scan(log(name)).matches
    assert summary(matches) == expected
    assert details.items() <= matches[0].details.items()
    assert all(isinstance(m.failure, Failure) and m.failure.id == m.id for m in matches)


@pytest.mark.parametrize("name", other_corpus_files())
def test_other_corpus_files_give_no_failure(name):
    # vswhere/nvcc --version/nvidia-smi/set dumps/registry queries, the success log and the cut-off head.
    assert scan(log(name)).matches == ()


def test_clean_logs_are_in_the_corpus():
    assert set(CLEAN_LOGS) <= set(other_corpus_files())


def test_success_log_gives_nothing():
    assert scan(log("cmake-vs2022-generator-cuda-identification-ok-ci-cuda11.7.99.txt")).matches == ()


@pytest.mark.parametrize("name", sorted(LOGS))
def test_crlf_gives_the_same_result(name):
    lf = scan(log(name)).matches
    crlf = scan(log(name).replace("\n", "\r\n")).matches
    assert summary(crlf) == summary(lf)
    assert [m.details for m in crlf] == [m.details for m in lf]
    assert all("\r" not in m.line for m in crlf)


@pytest.mark.parametrize("name", sorted(LOGS))
def test_ansi_colours_are_ignored(name):
    # ninja/CMake/pip colour whole lines, keywords and clear to end of line (ESC[K); OSC titles too.
    def paint(line: str) -> str:
        line = re.sub(r"(error|fatal|Error|Warning)", "\x1b[1;31m\\1\x1b[0m", line)
        return f"\x1b]0;build\x07\x1b[33m{line}\x1b[0m\x1b[K" if line else line

    coloured = "\n".join(paint(l) for l in log(name).split("\n"))
    matches = scan(coloured).matches
    assert summary(matches) == summary(scan(log(name)).matches)
    assert all("\x1b" not in m.line for m in matches)


@pytest.mark.parametrize("prefix", ["1>", "  2>", "[build] ", "2026-01-05T10:00:00.1234567Z "])
def test_prefixes_of_msbuild_nodes_ides_and_ci_do_not_matter(prefix):
    for name in (
        "msbuild-cuda11.8-host_config-unsupported-msvc14.40-vs2022-buildtools-llama-cpp-python-EXCERPT.txt",
        "cmake-no-cuda-toolset-found-vs2019-cmake3.24.txt",
        "python-import-llama_cpp-failed-to-load-llama.dll-EXCERPT.txt",
    ):
        prefixed = "\n".join(prefix + l for l in log(name).split("\n"))
        assert summary(scan(prefixed).matches) == LOGS[name][0]


def test_hard_wrapped_msbuild_console_lines_are_joined():
    # MSBuild's console logger breaks long lines at the console width and indents the rest.
    name = "msbuild-cuda11.8-host_config-unsupported-msvc14.40-vs2022-buildtools-llama-cpp-python-EXCERPT.txt"
    text = log(name)
    f04_line = next(l for l in text.split("\n") if "host_config.h" in l)
    width, out = f04_line.index("Visual Studio version") + 3, []  # the break falls inside the phrase
    for line in text.split("\n"):
        out.append(line[:width])
        rest = line[width:]
        while rest:
            chunk = "       " + rest[: width - 7]
            out.append(chunk)
            rest = rest[width - 7 :]
    wrapped = "\n".join(out)
    assert "unsupported Microsoft Visual Studio version!" not in wrapped.replace("\n", " ")  # really split
    (m,) = scan(wrapped).matches
    assert (m.id, m.line_no, m.details["cuda"], m.details["supported"]) == ("F04", 6, "11.8", "2017-2022")
    assert "unsupported Microsoft Visual Studio version!" in m.line


def test_two_real_logs_in_a_row_keep_their_order_and_line_numbers():
    a = log("cmake-no-cuda-toolset-found-vs2019-cmake3.24.txt")
    b = log("nvcc-host_config-unsupported-gnu-version-gcc13-llama.cpp.txt")
    n = a.count("\n") + 1
    assert summary(scan(a + "\n" + b).matches) == (("F01", 4), ("F21", n + 2))
    assert summary(scan(b + "\n" + a).matches) == (("F21", 2), ("F01", b.count("\n") + 1 + 4))


def test_same_build_head_and_error_excerpt_give_f04():
    head = log("pip-llama-cpp-python-skbuild-0.9.8-cmake3.30-vs2022-buildtools-configure-head-EXCERPT.txt")
    tail = log("msbuild-cuda11.8-host_config-unsupported-msvc14.40-vs2022-buildtools-llama-cpp-python-EXCERPT.txt")
    (m,) = scan(head + "\n" + tail).matches
    assert m.id == "F04" and m.details["cuda"] == "11.8" and m.details["msvc"] == "14.40"
    assert "inferred" not in m.details


def test_dedup_counts_every_match_of_an_id():
    (m,) = scan(log("ld-undefined-reference-cuMemCreate-libggml-cuda-llama.cpp-EXCERPT.txt")).matches
    assert m.count == 7  # cuMem*/cuDevice* only: cuGetErrorString is not a VMM symbol
    (f07,) = scan(log("cmake-cudacxx-not-found-cmake3.18-cutlass-EXCERPT.txt")).matches
    assert f07.count == 2  # the CUDACXX message and "CMAKE_CUDA_COMPILER not set"


def test_inference_defers_to_stl_check_when_host_check_is_overridden():
    name = "cmake-vs-generator-cuda-compilerid-nvcc-commandline-cuda12.2-msvc14.40-EXCERPT.txt"
    text = log(name).replace("--use-local-env", "--use-local-env -allow-unsupported-compiler")
    (m,) = scan(text).matches
    assert (m.id, m.details["inferred"], m.details["cuda_min"]) == ("F05", True, "12.4")


def test_no_inference_without_a_failure_in_the_log():
    assert (
        scan(
            "-- The CUDA compiler identification is NVIDIA 12.2.140\n"
            "-- The CXX compiler identification is MSVC 19.40.33812.0\n"
        ).matches
        == ()
    )


def test_f02_only_when_targets_and_nvcc_versions_differ():
    same = log("msbuild-cuda11.8-host_config-unsupported-msvc14.40-vs2022-buildtools-llama-cpp-python-EXCERPT.txt")
    assert "F02" not in {m.id for m in scan(same).matches}
    mixed = same.replace("CUDA 11.8.targets", "CUDA 13.1.targets")
    f02 = next(m for m in scan(mixed).matches if m.id == "F02")
    assert (f02.details["props"], f02.details["nvcc"]) == ("13.1", "11.8")


# ---------------------------------------------------------------- reading a log file

F04_LOG = "msbuild-cuda11.8-host_config-unsupported-msvc14.40-vs2022-buildtools-llama-cpp-python-EXCERPT.txt"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-8-sig", "utf-8"])
def test_log_file_decodes_powershell_and_other_encodings(tmp_path, encoding):
    # PowerShell 5's `>` writes UTF-16LE with a BOM; tools piping through .NET may drop the BOM.
    text = log(F04_LOG).replace("\n", "\r\n")
    path = tmp_path / "build.log"
    path.write_bytes(text.encode(encoding))
    assert read(path).lstrip("\ufeff") == text
    assert summary(scan_path(path).matches) == LOGS[F04_LOG][0]


def test_log_file_falls_back_to_cp1252(tmp_path):
    path = tmp_path / "build.log"
    path.write_bytes(
        log("cmake-no-cuda-toolset-found-vs2019-cmake3.24.txt").replace("Code", "C\xf3digo").encode("cp1252")
    )
    assert "Código" in read(path)
    assert summary(scan_path(path).matches) == (("F01", 4),)


def test_log_file_binary_or_missing_is_one_line(tmp_path):
    binary = tmp_path / "llama.dll"
    binary.write_bytes(b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00" * 64)
    with pytest.raises(InputFileError) as e:
        scan_path(binary)
    assert e.value.exit_code == 2 and "\n" not in e.value.message
    with pytest.raises(InputFileError):
        scan_path(tmp_path / "missing.log")
    with pytest.raises(InputFileError):
        scan_path(tmp_path)  # a folder


# ---------------------------------------------------------------- rendering and the catalog


def test_render_and_json():
    matches = scan(log(F04_LOG)).matches
    text = render_matches(matches, lambda s, *styles: s)
    assert "F04" in text and "line 6:" in text and "cuda=11.8" in text
    assert CATALOG["F04"].fix in text and CATALOG["F04"].fix_command in text
    assert render_matches((), lambda s, *styles: s).startswith("no known failure")
    (row,) = matches_json(matches)
    assert row["id"] == "F04" and row["line_no"] == 6 and row["details"]["cuda"] == "11.8"
    assert row["platforms"] == ["windows"] and row["count"] == 1
    import json

    json.dumps(matches_json(scan(log("python-import-llama_cpp-winerror3-stale-cuda_path.txt")).matches))


def test_catalog_is_complete():
    assert ids() == tuple(f"F{i:02d}" for i in range(1, 26))
    for f in CATALOG.values():
        assert f.title and f.cause and f.fix and set(f.platforms) <= {"windows", "linux"}
        assert len(f.cause) < 300 and len(f.fix) < 300  # paraphrases, not copies
    assert CATALOG["F01"].fix_command == "envmgr fix-msbuild"
    assert "--force-reinstall" in CATALOG["F18"].fix_command


def test_every_id_has_a_signature():
    # F08, F19, F20 and F22 too, from real logs; logscan also infers F04/F05 from the versions a log names.
    with_text = {s.id for s in SIGNATURES}
    assert with_text == set(CATALOG)
    assert {"F01", "F04", "F05", "F06", "F07", "F09", "F13"} <= with_text


def test_logmatch_shape():
    (m,) = scan(log(F04_LOG)).matches
    assert isinstance(m, LogMatch)
    assert (m.id, m.line_no, m.failure) == ("F04", 6, CATALOG["F04"])
    assert m.line.startswith("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\include")


# ---------------------------------------------------------------- streaming (issue 13 item 5)

NO_CUBLAS = "pip-llama-cpp-python-0.3.36-cuda13.0-no-cublas-native-no-gpu-linux-cmake3.25.txt"


def _full(scan) -> tuple:
    return tuple((m.id, m.line_no, m.count, m.lines, tuple(sorted(m.details.items()))) for m in scan.matches)


@pytest.mark.parametrize("window", [3, 50, 2000])
def test_small_windows_and_blocks_give_the_same_answer(tmp_path, monkeypatch, window):
    # Every real log, in a row, CRLF-ended, scanned from a file in 1 KiB blocks with tiny windows: the
    # matches, counts, evidence lines and details equal the scan with the default block and window.
    from envmgr.buildlog import engine as logengine
    from envmgr.buildlog import read as logread

    text = "\n".join(log(n) for n in sorted(LOGS)).replace("\n", "\r\n")
    path = tmp_path / "all.log"
    path.write_bytes(text.encode("utf-8"))
    whole = scan_path(path)
    monkeypatch.setattr(logengine, "WINDOW", window)
    monkeypatch.setattr(logread, "BLOCK", 1024)
    from envmgr.buildlog import scan as logscan

    monkeypatch.setattr(logscan, "LogText", lambda p: logread.LogText(p, 1024))
    assert _full(scan_path(path)) == _full(whole)
    assert len(whole.matches) >= len({i for e, _ in LOGS.values() for i, _ in e})


def test_a_repeated_failure_keeps_a_few_lines_and_the_count():
    one = scan_of(NO_CUBLAS)
    many = scan_of(NO_CUBLAS, times=50)
    f24 = next(m for m in many.matches if m.id == "F24")
    assert f24.count == 50 * next(m for m in one.matches if m.id == "F24").count
    assert len(f24.lines) <= 5 and f24.line_no == 92


def scan_of(name: str, times: int = 1) -> LogScan:
    return scan("\n".join([log(name)] * times))


def test_evidence_decisive_line_and_why():
    found = scan_of(NO_CUBLAS)
    assert found.decisive.id == "F24"
    f24, f12 = found.matches
    assert f24.decisive and not f12.decisive
    assert "explains F12" in f24.why and f12.why.startswith("explained by F24")
    assert [n for n, _ in f24.lines] == [92, 171] and "links to:" in f24.lines[1][1]
    assert set(f24.signatures) == {"findcudatoolkit-header-missing", "cmake-target-not-found"}
    from envmgr.buildlog.scan import scan_json

    doc = scan_json(found, "build.log")
    assert doc["decisive"] == "F24" and doc["matches"][0]["evidence"][1]["line_no"] == 171
    assert doc["matches"][1]["why"].startswith("explained by F24")


def test_no_signature_lists_three_near_misses():
    from envmgr.buildlog.scan import render_scan

    # the real configure head of issue #1586 (the error itself was cut off): cl.exe is named
    head = scan(log("pip-llama-cpp-python-skbuild-0.9.8-cmake3.30-vs2022-buildtools-configure-head-EXCERPT.txt"))
    assert head.matches == () and [n.id for n in head.near] == ["F06"] and head.near[0].words == ["cl.exe"]
    many = scan("\n".join(log(n) for n in CLEAN_LOGS) + "\nnative\ncublas\n")
    assert [n.id for n in many.near] == ["F06", "F12", "F24"]
    text = render_scan(head, lambda s, *styles: s)
    assert text.startswith("no known failure signature") and "closest catalog ids" in text


@pytest.mark.parametrize(
    "content,message",
    [
        (b"", "is empty (0 bytes)"),
        (b"MZ\x90\x00\x03\x00\x00\x00" * 512, "not a text log (binary data)"),
    ],
)
def test_bad_logs_are_one_line(tmp_path, content, message):
    path = tmp_path / "build.log"
    path.write_bytes(content)
    with pytest.raises(InputFileError) as e:
        scan_path(path)
    assert message in e.value.message and "\n" not in e.value.message and e.value.exit_code == 2
    with pytest.raises(InputFileError) as e:
        scan_path(tmp_path)
    assert "directory" in e.value.message or "folder" in e.value.message


def test_utf16_and_cp1252_logs_stream(tmp_path):
    text = log(F04_LOG).replace("\n", "\r\n")
    for enc in ("utf-16", "utf-16-le"):
        (tmp_path / "a.log").write_bytes(text.encode(enc))
        assert summary(scan_path(tmp_path / "a.log").matches) == LOGS[F04_LOG][0]
    # valid UTF-8 for the first megabyte, then a cp1252 byte: decoding switches, nothing is lost
    filler = ("-- ok\n" * 200000).encode()
    (tmp_path / "b.log").write_bytes(filler + "C\xf3digo\n".encode("cp1252") + log(F04_LOG).encode())
    (m,) = scan_path(tmp_path / "b.log").matches
    assert m.id == "F04" and m.line_no == 200001 + LOGS[F04_LOG][0][0][1]
