"""Causes recognised by the tools' own messages, read from the tools' sources (issue 23, generality by construction).

Each sample below is a message as the tool prints it, composed from the format string in the tool's source
(named, with its URL, on each case): these are not log excerpts, and no held-out log was read to write them.
A few negative cases keep the anchors to what the cause is (the same words for another program or without
the context that makes them this failure).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envmgr.buildlog.scan import scan_path

CMAKE = "https://github.com/Kitware/CMake/blob/master/"

# (expected id, source of the text, the message as the tool prints it)
CASES = [
    (
        "F01",
        CMAKE + "Source/cmGlobalVisualStudio10Generator.cxx",
        "CMake Error at CMakeLists.txt:2 (project):\n  Generator\n\n    Visual Studio 17 2022\n\n  given toolset\n\n"
        "    cuda=C:/cuda/12.4\n\n  cannot detect Visual Studio integration files in path\n\n"
        "    C:/cuda/12.4/extras/visual_studio_integration/MSBuildExtensions\n",
    ),
    (
        "F03",
        CMAKE + "Source/cmGlobalVisualStudio10Generator.cxx",
        "CMake Error at CMakeLists.txt:2 (project):\n  Generator\n\n    Visual Studio 17 2022\n\n"
        "  given toolset and version specification\n\n    v143,version=14.36\n\n  does not seem to be installed at\n\n"
        "    C:/Program Files/Microsoft Visual Studio/2022/Community/VC/Auxiliary/Build/14.36/"
        "Microsoft.VCToolsVersion.14.36.props\n",
    ),
    # MSB8037 as VS 2022's Microsoft.Cpp.WindowsSDK.targets prints it (https://github.com/ni/VireoSDK/pull/705)
    (
        "F03",
        "https://github.com/ni/VireoSDK/pull/705",
        "C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise\\MSBuild\\Microsoft\\VC\\v170\\"
        "Microsoft.Cpp.WindowsSDK.targets(49,5): error MSB8037: The Windows SDK version 10.0.20348.0 for Desktop C++ "
        "Win32 Apps was not found.\n",
    ),
    (
        "F07",
        CMAKE + "Source/cmGlobalGenerator.cxx",
        "CMake Error at CMakeLists.txt:3 (project):\n  The CMAKE_CUDA_COMPILER:\n\n    nvcc\n\n"
        "  is not a full path and was not found in the PATH.\n",
    ),
    (
        "F07",
        CMAKE + "Source/cmGlobalGenerator.cxx",
        "CMake Error at CMakeLists.txt:3 (project):\n  The CMAKE_CUDA_COMPILER:\n\n    /usr/local/cuda-12.4/bin/nvcc\n\n"
        "  is not a full path to an existing compiler tool.\n",
    ),
    # CMake 4.3's wording (commit 108d86f28d); the older one is in train logs
    (
        "F07",
        CMAKE + "Modules/CMakeDetermineCUDACompiler.cmake",
        "CMake Error at /usr/share/cmake-4.3/Modules/CMakeDetermineCUDACompiler.cmake:29 (message):\n"
        "  Could not find the compiler specified in the environment variable CUDACXX:\n\n  /usr/local/cuda/bin/nvcc.\n",
    ),
    (
        "F07",
        CMAKE + "Modules/Internal/CMakeCUDAFindToolkit.cmake",
        "CMake Error at /usr/share/cmake-3.27/Modules/Internal/CMakeCUDAFindToolkit.cmake:149 (message):\n"
        "  Couldn't find CUDA library root.\n",
    ),
    ("F07", CMAKE + "Modules/FindCUDA.cmake", "-- CUDA_TOOLKIT_ROOT_DIR not found or specified\n"),
    (
        "F10",
        CMAKE + "Modules/Internal/CMakeCUDAArchitecturesValidate.cmake",
        "CMake Error at /usr/share/cmake-3.28/Modules/Internal/CMakeCUDAArchitecturesValidate.cmake:9 (message):\n"
        '  CMAKE_CUDA_ARCHITECTURES contains literal quotes:\n\n    "86"\n',
    ),
    (
        "F10",
        CMAKE + "Source/cmake.cxx",
        "CMake Error: -D must be followed with VAR=VALUE.\nCMake Error: Run 'cmake --help' for all supported options.\n",
    ),
    # scikit-build-core splits CMAKE_ARGS with shlex.split (src/scikit_build_core/builder/builder.py); shlex's error
    (
        "F10",
        "https://github.com/python/cpython/blob/main/Lib/shlex.py",
        'set CMAKE_ARGS=-DGGML_CUDA=on -DCUDAToolkit_ROOT="C:/cuda\n  File "shlex.py", line 191, in read_token\n'
        '    raise ValueError("No closing quotation")\nValueError: No closing quotation\n',
    ),
    (
        "F20",
        "Azure Pipelines' agent (quoted in public pipeline docs)",
        "##[error]The job running on agent Hosted Agent ran longer than the maximum time of 60 minutes. For more "
        "information, see https://go.microsoft.com/fwlink/?linkid=2077134\n",
    ),
    (
        "F20",
        "https://gitlab.com/gitlab-org/gitlab-runner (its job timeout)",
        "Pulling docker image gitlab/gitlab-runner-helper:x86_64-58d8360f ...\n"
        "ERROR: Job failed: execution took longer than 1h0m0s seconds\n",
    ),
    (
        "F20",
        "https://github.com/jenkinsci/build-timeout-plugin",
        "+ make -j2\nBuild timed out (after 60 minutes). Marking the build as aborted.\n",
    ),
    (
        "F20",
        "https://github.com/travis-ci/worker",
        "No output has been received in the last 10m0s, this potentially indicates a stalled build or something "
        "wrong with the build itself.\n",
    ),
    # EDG's front end in nvcc/NVRTC (https://docs.cupy.dev/en/latest/install.html quotes it for cuda_fp16.h)
    (
        "F24",
        "https://docs.cupy.dev/en/latest/install.html",
        'kernel.cu(3): catastrophic error: cannot open source file "cublas_v2.h"\n  #include <cublas_v2.h>\n',
    ),
    # cmd.exe's German message (SCons' own tests expect it: https://github.com/SCons/scons test/Errors)
    (
        "F07",
        "https://github.com/SCons/scons",
        'C:\\src>nvcc --version\nDer Befehl "nvcc" ist entweder falsch geschrieben oder\n'
        "konnte nicht gefunden werden.\n",
    ),
    (
        "F06",
        "cmd.exe's Japanese message, as users quote it in public code",
        "C:\\src>cl\n'cl' は、内部コマンドまたは外部コマンド、\n"
        "操作可能なプログラムまたはバッチ ファイルとして認識されていません。\n",
    ),
]


def decisive(text: str, tmp_path: Path) -> str | None:
    path = tmp_path / "build.log"
    path.write_bytes(text.encode("utf-8"))
    found = scan_path(path)
    return found.decisive.id if found.decisive else None


@pytest.mark.parametrize(("fid", "source", "text"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_the_tools_own_message_names_its_cause(fid, source, text, tmp_path):
    assert decisive(text, tmp_path) == fid, source


def test_an_unbalanced_quote_is_f10_only_in_a_build_given_cmake_arguments(tmp_path):
    text = '  File "shlex.py", line 191, in read_token\nValueError: No closing quotation\n'
    assert decisive(text, tmp_path) is None


def test_a_source_file_of_the_project_edg_cannot_open_is_no_missing_component(tmp_path):
    text = '"nanoXOR.cpp", line 4: catastrophic error: cannot open source file "gate.h"\n  #include "gate.h"\n'
    assert decisive(text, tmp_path) != "F24"


def test_a_c_compiler_that_is_not_a_full_path_on_linux_is_not_a_cuda_failure(tmp_path):
    text = (
        "CMake Error at CMakeLists.txt:3 (project):\n  The CMAKE_C_COMPILER:\n\n    gcc-13\n\n"
        "  is not a full path and was not found in the PATH.\n-- Configuring incomplete, errors occurred!\n"
        'See also "/home/u/b/CMakeFiles/CMakeOutput.log".\n'
    )
    assert decisive(text, tmp_path) not in ("F07", "F22")
