"""The elevation command line (pure; it only runs on Windows), the routes that need no admin, plan-file checks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from envmgr.host.live import is_admin
from envmgr.msbuild.elevate import ERROR_CANCELLED, elevation_argv
from envmgr.shellkit.ps1 import quote as ps_quote
from envmgr.msbuild.planfile import path_problem
from envmgr.msbuild.render import Route, render_routes, route_delta

PY = "C:\\Users\\Ann O'Neil\\AppData\\Local\\Programs\\Python\\Python312\\python.exe"
PLAN = "C:\\Users\\Ann O'Neil\\AppData\\Local\\envmgr\\msbuild\\plans\\20250101T000000Z-abc123.json"


def test_elevation_command_line():
    argv = elevation_argv(PY, ["fix-msbuild", "--apply-plan", PLAN])
    assert argv[:6] == ["powershell.exe", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command"]
    script = argv[6]
    assert f"-FilePath {ps_quote(PY)}" in script
    assert "-Verb RunAs -Wait -PassThru" in script and "exit $p.ExitCode" in script
    assert f"catch {{ exit {ERROR_CANCELLED} }}" in script
    # The argument string is one PowerShell literal holding a C-runtime command line with the path quoted.
    inner = subprocess.list2cmdline(["-m", "envmgr", "fix-msbuild", "--apply-plan", PLAN])
    assert f"-ArgumentList {ps_quote(inner)}" in script
    assert "\"C:\\Users\\Ann O''Neil\\AppData" in script  # quoted for CreateProcess, ' doubled for PowerShell


def test_ps_quote_expands_nothing():
    assert ps_quote("$env:X `n 'a'") == "'$env:X `n ''a'''"


@pytest.mark.skipif(sys.platform == "win32", reason="off Windows only; on Windows the next test checks it")
def test_not_admin_off_windows():
    assert is_admin() is False


@pytest.mark.skipif(sys.platform != "win32", reason="needs Windows (or Windows Python under Wine)")
def test_is_admin_agrees_with_writing_into_the_system_folder():
    # Only an elevated process may create files in %SystemRoot%\System32 (Wine lets everyone: Wine's
    # IsUserAnAdmin is TRUE too, so both sides agree there as on an elevated GitHub runner).
    probe = Path(os.environ["SystemRoot"]) / "System32" / f"envmgr-admin-probe-{os.getpid()}.tmp"
    try:
        probe.write_bytes(b"")
        can_write = True
        probe.unlink()
    except OSError:
        can_write = False
    assert is_admin() is can_write


def test_routes_text_has_the_exact_lines():
    r = Route(
        "f7268007",
        "VS 2022 BuildTools 17.14.37027.9",
        "12.4",
        "envmgr shell --vs f7268007 --cuda 12.4",
        (
            ("CMAKE_GENERATOR", "Visual Studio 17 2022"),
            ("CMAKE_GENERATOR_INSTANCE", "C:\\Program Files (x86)\\Microsoft Visual Studio\\2022\\BuildTools"),
            ("CMAKE_GENERATOR_PLATFORM", "x64"),
            ("CMAKE_GENERATOR_TOOLSET", "cuda=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4"),
        ),
    )
    text = render_routes((r,))
    for line in (
        "envmgr shell --vs f7268007 --cuda 12.4",
        "CMAKE_GENERATOR=Visual Studio 17 2022",
        "CMAKE_GENERATOR_INSTANCE=C:\\Program Files (x86)\\Microsoft Visual Studio\\2022\\BuildTools",
        "CMAKE_GENERATOR_PLATFORM=x64",
        "CMAKE_GENERATOR_TOOLSET=cuda=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4",
    ):
        assert line in text
    assert [op.name for op in route_delta(r).ops] == [
        "CMAKE_GENERATOR",
        "CMAKE_GENERATOR_INSTANCE",
        "CMAKE_GENERATOR_PLATFORM",
        "CMAKE_GENERATOR_TOOLSET",
    ]
    assert render_routes(()) == ""


@pytest.mark.parametrize(
    "path,bad",
    [
        ("C:\\VS\\MSBuild\\Microsoft\\VC\\v170\\BuildCustomizations\\CUDA 12.4.props", False),
        ("C:\\VS\\MSBuild\\..\\..\\Windows\\CUDA 12.4.props", True),
        ("C:\\VS\\.\\CUDA 12.4.props", True),
        ("VS\\CUDA 12.4.props", True),
        ("\\\\server\\share\\CUDA 12.4.props", True),
        ("C:\\VS\\CUDA 12.4.props:evil", True),
        ("C:/VS/CUDA 12.4.props", True),
        ("C:\\VS\\CUDA 12.4.props\x00", True),
        (None, True),
    ],
)
def test_path_shapes(path, bad):
    assert (path_problem(path) is not None) == bad
