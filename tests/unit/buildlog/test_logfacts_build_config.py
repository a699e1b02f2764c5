"""Build-configuration causes (F01, F07, F12, F22) read from the tools' own messages (issue 23, round 9).

Each sample is a message composed from the format string in the tool's source (named on each case), not a log
excerpt; no held-out or dev log was read to write them. The negative cases keep each anchor to what its cause is:
the same words for another language's GPUs, a list that was found, or another platform.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import logtext

CMAKE = "https://github.com/Kitware/CMake/blob/master/"
TORCH = "https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py"

# (expected id, source of the text, the message as the tool prints it)
CASES = [
    # CMake 3.28 and later (Source/cmGeneratorTarget.cxx, commit b32ea7cff0): "no NVIDIA GPU", 3.24-3.27 "no GPU"
    (
        "F12",
        CMAKE + "Source/cmGeneratorTarget.cxx",
        "-- Configuring done (2.1s)\nCMake Error in ggml/src/ggml-cuda/CMakeLists.txt:\n"
        '  CUDA_ARCHITECTURES is set to "native", but no NVIDIA GPU was detected.\n'
        "-- Generating done (0.1s)\nCMake Generate step failed.  Build files cannot be regenerated correctly.\n",
    ),
    (
        "F12",
        CMAKE + "Modules/Internal/CMakeCUDAArchitecturesValidate.cmake",
        "CMake Error at /usr/share/cmake-3.28/Modules/Internal/CMakeCUDAArchitecturesValidate.cmake:7 (message):\n"
        "  CMAKE_CUDA_ARCHITECTURES must be non-empty if set.\n",
    ),
    # a list in another tool's format (torch's 8.6): CMake's validation of the list
    (
        "F10",
        CMAKE + "Modules/Internal/CMakeCUDAArchitecturesValidate.cmake",
        "CMake Error at /usr/share/cmake-3.28/Modules/Internal/CMakeCUDAArchitecturesValidate.cmake:12 (message):\n"
        "  CMAKE_CUDA_ARCHITECTURES:\n\n    8.6\n\n  is not one of the following:\n\n"
        "    * a semicolon-separated list of integers, each optionally\n      followed by '-real' or '-virtual'\n"
        "    * a special value: all, all-major, native\n",
    ),
    # ggml's status line after CMake's native probe found no GPU (ggml/src/ggml-cuda/CMakeLists.txt)
    (
        "F12",
        "https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-cuda/CMakeLists.txt",
        "-- CUDA Toolkit found\n-- Using CMAKE_CUDA_ARCHITECTURES=native CMAKE_CUDA_ARCHITECTURES_NATIVE=No CUDA devices "
        "found.\n-- CUDA host compiler is GNU 13.3.0\n",
    ),
    # the VS generator given cuda=<folder>: the test project imports that toolkit's MSBuildExtensions props
    (
        "F01",
        CMAKE + "Modules/CMakeDetermineCompilerId.cmake",
        "  C:\\b\\CMakeFiles\\3.29.2\\CompilerIdCUDA\\CompilerIdCUDA.vcxproj(18,5): error MSB4019: The imported project "
        '"D:\\cuda\\extras\\visual_studio_integration\\MSBuildExtensions\\CUDA 12.4.props" was not found. Confirm that '
        "the expression in the Import declaration is correct, and that the file exists on disk.\n",
    ),
    # setup.py's locate_cuda, copied across projects (raised); torch 2.x; DeepSpeed's op_builder
    (
        "F07",
        "setup.py locate_cuda (py-faster-rcnn lineage), on Windows",
        "C:\\src\\lib>python setup.py build_ext --inplace\nTraceback (most recent call last):\n"
        '  File "C:\\src\\lib\\setup.py", line 58, in <module>\n    CUDA = locate_cuda()\n'
        "OSError: The nvcc binary could not be located in your $PATH. Either add it to your path, or set $CUDAHOME\n",
    ),
    (
        "F07",
        TORCH,
        '  File "C:\\Python311\\Lib\\site-packages\\torch\\utils\\cpp_extension.py", line 499, in _check_cuda_version\n'
        "    raise RuntimeError(CUDA_NOT_FOUND_MESSAGE)\nRuntimeError:\nCUDA was not found on the system, please set the "
        "CUDA_HOME or the CUDA_PATH\nenvironment variable or add NVCC to your system PATH. The extension compilation "
        "will fail.\n",
    ),
    (
        "F22",
        "https://github.com/microsoft/DeepSpeed op_builder/builder.py, on Linux",
        '  File "/tmp/pip-install-x/deepspeed/op_builder/builder.py", line 51, in installed_cuda_version\n'
        '    raise MissingCUDAException("CUDA_HOME does not exist, unable to compile CUDA op(s)")\n'
        "op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)\n",
    ),
    # torch's CUDA_HOME message: a Linux cause (F22) where the log is Linux's, the toolkit missing (F07) on Windows
    (
        "F07",
        TORCH,
        '  File "C:\\Users\\u\\venv\\lib\\site-packages\\torch\\utils\\cpp_extension.py", line 2095, in '
        "_join_cuda_home\n"
        "    raise OSError('CUDA_HOME environment variable is not set. '\nOSError: CUDA_HOME environment variable is not "
        "set. Please set it to your CUDA install root.\n",
    ),
    (
        "F22",
        TORCH,
        '  File "/home/u/venv/lib/python3.10/site-packages/torch/utils/cpp_extension.py", line 2095, in '
        "_join_cuda_home\n"
        "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n",
    ),
]


def decisive(text: str, tmp_path: Path) -> str | None:
    return logtext.decisive(text, tmp_path)[0]


@pytest.mark.parametrize(("fid", "source", "text"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_the_tools_own_message_names_its_cause(fid, source, text, tmp_path):
    assert decisive(text, tmp_path) == fid, source


def test_hip_native_without_an_amd_gpu_is_not_a_cuda_arch_failure(tmp_path):
    text = 'CMake Error in CMakeLists.txt:\n  HIP_ARCHITECTURES is set to "native", but no AMD GPU was detected.\n'
    assert decisive(text, tmp_path) != "F12"


def test_a_native_list_that_was_found_is_no_failure(tmp_path):
    text = (
        "-- CUDA Toolkit found\n-- Using CMAKE_CUDA_ARCHITECTURES=native CMAKE_CUDA_ARCHITECTURES_NATIVE=89-real\n"
        "-- Configuring done\n-- Build files have been written to: /home/u/llama.cpp/build\n"
    )
    assert decisive(text, tmp_path) is None


def test_locate_cuda_with_no_platform_shown_is_the_toolkit_not_found(tmp_path):
    # F22 is a Linux cause: without a Linux path, a POSIX temp folder or the shell's 127 it is not claimed
    text = (
        "$ make -j8\npython setup.py build_ext --inplace\nTraceback (most recent call last):\n"
        "OSError: The nvcc binary could not be located in your $PATH. Either add it to your path, or set "
        "$CUDAHOME\n"
        "make: *** [Makefile:2: all] Error 1\n"
    )
    assert decisive(text, tmp_path) == "F07"


def test_make_not_finding_nvcc_with_the_shells_127_is_the_linux_path(tmp_path):
    text = "nvcc -o x main.cu\nmake: nvcc: No such file or directory\nmake: *** [Makefile:2: x] Error 127\n"
    assert decisive(text, tmp_path) == "F22"


def test_the_warning_form_of_locate_cuda_is_no_failure(tmp_path):
    # setup scripts that build without CUDA print the same sentence as a warning, not raised
    text = (
        "WARNING: The nvcc binary could not be located in your $PATH. Either add it to your path, or set "
        "$CUDAHOME to enable CUDA extensions\nrunning build_ext\nSuccessfully installed pkg-1.0\n"
    )
    assert decisive(text, tmp_path) is None
