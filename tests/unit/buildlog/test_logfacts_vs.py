"""No usable Visual Studio (F03) read from other build tools' own words and from Windows markers (issue 23).

The train logs are real logs of tests/corpus/logs (their sources in INDEX.tsv); the composed samples are the
messages as cmd, Meson and CMake print them (cmd's "not recognized"; mesonbuild/compilers/detect.py; Kitware/CMake's
Visual Studio generators), with the negative cases that keep the anchors to what the cause is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.logtext import decisive, train_text

TRAIN = [
    # Meson on Windows probes its compiler list, which starts with cl, and finds none (no VS environment)
    ("logs/F03/meson-5156-windows-unknown-compilers-cl-errno2-not-in-vs-env.txt", "anchor:no-vc-tools"),
    # numpy's vendored Meson under pip: no compiler at all; the [['cl']] list is Meson's, not torch's call of cl
    ("logs/F03/wan2gp-332-pip-numpy-meson-vswhere-parse-failed-unknown-compilers-winerror2.txt", "anchor:no-vc-tools"),
    # CMake finds no C compiler; 'Windows_NT' (the OS's own name) is the only Windows marker in the log
    ("logs/F03/coreclr-2524-build-bat-vs2015-no-cmake_c_compiler.txt", "anchor:no-compiler-windows"),
    # the VS generator selected a Windows SDK (an empty version) and found no C compiler
    ("logs/F03/pycdc-264-empty-sdk-version-no-cmake_c_compiler.txt", "anchor:no-compiler-windows"),
    # a tool looking for a Visual Studio finds no vcvarsall.bat (distutils, vcpkg), VS's own vsvars cannot locate
    # its installation, a CI action finds no VS at all
    ("logs/F03/pyctp-19-python2.7-setup-py-build-unable-to-find-vcvarsall.txt", "anchor:no-visual-studio"),
    ("logs/F03/vcpkg-759-vs2017-incomplete-install-could-not-detect-vcvarsall.txt", "anchor:no-visual-studio"),
    ("logs/F03/msvc-dev-cmd-83-gha-vsversion-16-not-on-runner-visual-studio-not-found.txt", "anchor:no-visual-studio"),
    (
        "logs/F03/clarifierex-4-vs14-cannot-determine-vs-installation-msbuild-not-recognized.txt",
        "anchor:no-visual-studio",
    ),
]


def test_nvcc_missing_x64_vcvars_stays_f06(tmp_path: Path) -> None:
    """nvcc's own message names the VS it was given (one without the x64 setup): nvcc cannot use cl (F06)."""
    assert decisive(train_text("logs/F06/dlwin-vs2013-vcvars64.bat-could-not-be-found.txt"), tmp_path) == (
        "F06",
        "anchor:cl-not-found",
    )


@pytest.mark.parametrize(("name", "anchor"), TRAIN, ids=[Path(n).stem[:40] for n, _ in TRAIN])
def test_train_logs_name_f03(name: str, anchor: str, tmp_path: Path) -> None:
    assert decisive(train_text(name), tmp_path) == ("F03", anchor)


MESON = "https://github.com/mesonbuild/meson/blob/master/mesonbuild/compilers/detect.py"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # cmd, not a developer prompt: VS's own build programs are not on PATH (en; zh as cmd words it)
        ("'msbuild' is not recognized as an internal or external command,\noperable program or batch file.\n", "F03"),
        ("'nmake' 不是内部或外部命令，也不是可运行的程序\n或批处理文件。\n", "F03"),
        # the non-Windows list has no cl: a Linux/macOS host without a compiler is not Visual Studio's failure
        (
            "meson.build:21:0: ERROR: Unknown compiler(s): [['cc'], ['gcc'], ['clang'], ['nvc'], ['pgcc'], ['icc'], "
            "['icx']]\n",
            None,
        ),
        # another program not on PATH is not Visual Studio's
        ("'make' is not recognized as an internal or external command,\noperable program or batch file.\n", None),
        # a VS generator that selected its SDK and identified MSVC: a working configure
        (
            "-- Selecting Windows SDK version 10.0.22621.0 to target Windows 10.0.19045.\n"
            "-- The C compiler identification is MSVC 19.38.33130.0\n-- Configuring done\n",
            None,
        ),
    ],
    ids=["msbuild-not-recognized", "nmake-zh", "unix-list", "make-not-recognized", "sdk-selected-ok"],
)
def test_vs_environment_messages(text: str, expected: str | None, tmp_path: Path) -> None:
    """Samples composed from cmd's message, Meson's format string (MESON) and CMake's VS generators' status line."""
    assert decisive(text, tmp_path)[0] == expected
