"""A CUDA component missing (F24) and no usable MSVC (F03) in more of the tools' own words (issue 23, round 9).

The train logs are real logs of tests/corpus/logs (their sources in INDEX.tsv); the composed samples are the
messages as the tools print them (GNU ld and MSVC's link.exe, CMake's target and NOTFOUND checks, setuptools'
msvc.py and its distutils, CMake's Visual Studio generators, MSBuild), with the negative cases that keep the anchors
to what the cause is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.logtext import decisive, facts, train_text

TRAIN = [
    # cuDNN installed in its own folder: MSVC's linker cannot open cudnn.lib (LNK1181)
    ("logs/F24/cudarc-260-candle-windows-cudnn9.2-lnk1181-cudnn.lib-include-cudnn.h-EXCERPT.txt", "F24"),
    # vcpkg's cudnn port: the component's own variables NOTFOUND, then CMake's error
    ("logs/F24/vcpkg-38521-cudnn-port-x64-windows-cudnn_library-notfound.txt", "F24"),
    # Visual Studio 2012's error list: LNK1181 on cublas.lib
    ("logs/F24/niuzhiheng-caffe-67-vs2012-maincaller-error-list-lnk1181-cublas.lib.txt", "F24"),
]


@pytest.mark.parametrize(("name", "expected"), TRAIN, ids=[Path(n).stem[:40] for n, _ in TRAIN])
def test_train_logs_name_their_cause(name: str, expected: str, tmp_path: Path) -> None:
    assert decisive(train_text(name), tmp_path)[0] == expected


def test_an_installed_package_s_exported_link_interface_is_not_a_missing_component(tmp_path: Path) -> None:
    """Ceres' config exports CUDA::cublas; the consumer's CMake has no such target: the package, not the toolkit."""
    name = "logs/clean/sophus-523-ceres-exported-target-links-cuda-cublas-not-found-reinstall-ceres.txt"
    assert decisive(train_text(name), tmp_path) == (None, None)


@pytest.mark.parametrize(
    "line",
    [
        # GNU ld, any locale's words after the colon, and lld
        "/usr/bin/ld: cannot find -lcudnn: No such file or directory\n",
        "/usr/bin/ld: 找不到 -lnvrtc\n",
        "ld.lld: error: unable to find library -lcudadevrt\n",
        "/usr/bin/ld: cannot find -lnppig\n",
        # MSVC's linker: LNK1181 (an input file) and LNK1104 (a file it was told to open), any language
        "LINK : fatal error LNK1104: cannot open file 'cudnn.lib'\n",
        'LINK : fatal error LNK1104: Datei "cublasLt.lib" kann nicht geöffnet werden.\n',
        "LINK : fatal error LNK1181: 无法打开输入文件“cusolver.lib”\n",
    ],
)
def test_a_component_library_the_linker_cannot_open_is_f24(line: str, tmp_path: Path) -> None:
    assert decisive(line, tmp_path)[0] == "F24"


@pytest.mark.parametrize(
    "line",
    [
        # a linker that cannot open a library of the project, or the driver library (F23's), is not a toolkit component
        "LINK : fatal error LNK1104: cannot open file 'mylib.lib'\n",
        "LINK : fatal error LNK1104: cannot open file 'build\\Release\\app.exe'\n",
        "/usr/bin/ld: cannot find -lfoo\n",
        # a command line naming the library is no failure
        "g++ -o app main.o -lcudnn -lcublas\n",
    ],
)
def test_other_libraries_or_command_lines_are_not_f24(line: str, tmp_path: Path) -> None:
    assert decisive(line, tmp_path)[0] != "F24"


def test_a_component_variable_notfound_counts_only_where_the_build_failed() -> None:
    status = "-- CUDNN_INCLUDE_DIR: CUDNN_INCLUDE_DIR-NOTFOUND\n-- CUDNN_LIBRARY: CUDNN_LIBRARY-NOTFOUND\n"
    assert facts(status).values("component_missing") == ["CUDNN"]
    assert facts(status).values("build_failed") == []


def test_a_status_line_alone_is_not_f24_and_with_cmake_s_error_it_is(tmp_path: Path) -> None:
    status = "-- CUDNN_LIBRARY: CUDNN_LIBRARY-NOTFOUND\n-- Configuring done\n"
    assert decisive(status, tmp_path)[0] is None
    failed = status.replace("-- Configuring done\n", "CMake Error at CMakeLists.txt:40 (message):\n  need cuDNN\n")
    assert decisive(failed, tmp_path)[0] == "F24"
    # CMake's own NOTFOUND list is the failure itself
    listed = (
        "CMake Error: The following variables are used in this project, but they are set to NOTFOUND.\n"
        'CUDNN_LIBRARY (ADVANCED)\n    linked by target "net" in directory /src\n'
    )
    assert decisive(listed, tmp_path)[0] == "F24"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # setuptools' msvc.py: the Python 2.7 and 3.3/3.4 forms beside 14.0's
        (
            "error: Microsoft Visual C++ 9.0 is required (Unable to find vcvarsall.bat). Get it from "
            "http://aka.ms/vcpython27\n",
            "F03",
        ),
        ('error: Microsoft Visual C++ 10.0 is required. Get it with "Microsoft Windows SDK 7.1"\n', "F03"),
        # setuptools' own distutils (2024+)
        (
            "      building 'shap._cext' extension\n      error: Unable to find a compatible Visual Studio installation.\n",
            "F03",
        ),
        # CMake's Visual Studio generators, newer and older spacing
        (
            "CMake Error at CMakeLists.txt:2 (project):\n  Could not find an appropriate version of the Windows 10 SDK "
            "installed on this machine\n",
            "F03",
        ),
        ("CMake Error: Could not find an appropriate version of the Windows 10 SDKinstalled on this machine\n", "F03"),
        # MSBuild without Visual C++ (node-gyp before VS 2015's tools)
        (
            'MSBUILD : error MSB3428: Could not load the Visual C++ component "VCBuild.exe". To fix this, 1) install '
            "the .NET Framework 2.0 SDK, 2) install Microsoft Visual Studio 2005\n",
            "F03",
        ),
        # a redistributable's name, or a VS install that reports its version, is no failure
        ("Microsoft Visual C++ 2015-2022 Redistributable (x64) - 14.38.33130 is required by this installer\n", None),
        ("-- Selecting Windows SDK version 10.0.22621.0 to target Windows 10.0.19045.\n", None),
    ],
)
def test_the_tools_own_words_for_no_usable_msvc(text: str, expected: str | None, tmp_path: Path) -> None:
    assert decisive(text, tmp_path)[0] == expected
