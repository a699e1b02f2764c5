"""CMake's command line mangled by quoting (F10) told from the failures its words share (issue 23, round 8).

`Could not create named generator X` is F03 when X is a whole generator name CMake lacks, and F10 when X is a
piece of one: the first word of a multi-word name (`-G Unix Makefiles` unquoted), a name led by a space or
carrying the shell's quotes, or one running into the next -D setting. A list of CMake settings passed as one
quoted argument (conda's CMAKE_ARGS) leaves a program's path holding -DCMAKE_ settings. Train logs are read by
name; the other samples are composed from CMake's own generator names (Source/cmake.cxx prints the list).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.logtext import decisive, facts, train_text

TRAIN = [
    ("logs/F10/caffe-builder-31-cmd-unquoted-generator-variable-EXCERPT.txt", "F10", "generator-name-cut"),
    (
        "logs/F10/cmake-build-extension-pr45-generator-passed-with-literal-quotes-EXCERPT.txt",
        "F10",
        "generator-name-cut",
    ),
    ("logs/F10/dynaflow-launcher-148-script-generator-unix-split-EXCERPT.txt", "F10", "generator-name-cut"),
    ("logs/F10/neovim-30218-makefile-unquoted-cmake-generator-unix-EXCERPT.txt", "F10", "generator-name-cut"),
    (
        "logs/F10/opencv-python-1086-powershell-cmake_args-generator-with-spaces-split-EXCERPT.txt",
        "F10",
        "generator-name-cut",
    ),
    # a whole generator name an old CMake does not have stays F03
    ("cmake-could-not-create-named-generator-vs2017-win64-old-cmake-wabt-EXCERPT.txt", "F03", "unknown-generator"),
]


@pytest.mark.parametrize(("name", "want", "signature"), TRAIN)
def test_train_generator_logs(name, want, signature, tmp_path: Path):
    assert decisive(train_text(name), tmp_path) == (want, signature)


COMPOSED = [
    ("CMake Error: Could not create named generator  Unix Makefiles\n", "F10"),  # led by a space
    ("CMake Error: Could not create named generator Unix Makefiles//-DCMAKE_INSTALL_PREFIX=\n", "F10"),
    ("CMake Error: Could not create named generator 'MinGW\n", "F10"),
    ("CMake Error: Could not create named generator Sublime\n", "F10"),
    ("CMake Error: Could not create named generator Unix MakeFiles\n", "F03"),  # a misspelt whole name
    ("CMake Error: Could not create named generator Ninja Multi-Config\n", "F03"),  # too old a CMake
    ("CMake Error: Could not create named generator Visual Studio 17 2022\n", "F03"),
]


@pytest.mark.parametrize(("text", "want"), COMPOSED)
def test_generator_name_whole_or_cut(text, want, tmp_path: Path):
    assert decisive(text, tmp_path)[0] == want


def test_conda_cmake_args_in_one_quoted_argument(tmp_path: Path):
    text = train_text("logs/F10/morpheus-906-conda-cmake_args-quoted-into-one-token-ar-command.txt")
    assert decisive(text, tmp_path) == ("F10", "anchor:cmake-args-in-one-value")


@pytest.mark.parametrize(
    "line",
    [
        # cmake itself given its settings in a quoted command line
        'Running "/usr/bin/cmake -DCMAKE_BUILD_TYPE=Release -S . -B build"\n',
        "subprocess.CalledProcessError: Command 'C:\\\\tools\\\\cmake.exe -DCMAKE_BUILD_TYPE=Release' returned 1\n",
        # a compiler's own defines (no CMake variable)
        '"/usr/bin/gcc -DNDEBUG=1 -O2 -c x.c" failed\n',
        # the define CMake's multi-config generators pass to the compiler
        '"C:/VS/bin/cl.exe -DCMAKE_INTDIR=\\"Release\\" /c x.cpp"\n',
    ],
)
def test_settings_given_to_cmake_or_defines_are_no_f10(line):
    assert facts(line).first("args_in_one_value") is None


# CMake's native architecture probe (Kitware/CMake Modules/CMakeCUDACompilerABI.cu) prints one of two messages
# when it sees no GPU; CMAKE_CUDA_ARCHITECTURES_NATIVE then holds the message and nvcc is given it as an arch
@pytest.mark.parametrize(
    "probe", ["No CUDA devices found.", "No CUDA Devices found.", "No CUDA architecture detected from any devices."]
)
def test_native_probe_message_as_architecture_is_f12(probe, tmp_path: Path):
    text = f"nvcc fatal   : Unsupported gpu architecture 'compute_{probe}'\nninja: build stopped: subcommand failed.\n"
    assert decisive(text, tmp_path) == ("F12", "native-garbage")


# CMAKE_ARGS set in PowerShell's syntax in a POSIX shell: `$env` expands to nothing and the rest runs as a command
# (bash's "<word>: command not found" and zsh's "command not found: <word>" formats)
@pytest.mark.parametrize(
    "text",
    [
        '$ $env:CMAKE_ARGS="-DGGML_CUDA=on"\nbash: :CMAKE_ARGS=-DGGML_CUDA=on: command not found\n',
        '% $env:CMAKE_ARGS="-DGGML_CUDA=on"\nzsh: command not found: :CMAKE_ARGS=-DGGML_CUDA=on\n',
    ],
)
def test_cmake_args_in_another_shells_syntax(text, tmp_path: Path):
    assert decisive(text, tmp_path) == ("F10", "anchor:cmake-args-shell-syntax")


def test_export_in_a_posix_shell_is_no_f10(tmp_path: Path):
    text = (
        '$ export CMAKE_ARGS="-DGGML_CUDA=on"\n$ pip install llama-cpp-python\n'
        "Successfully installed llama-cpp-python-0.3.16\n"
    )
    assert decisive(text, tmp_path) == (None, None)
