"""Which Python install and verify act on (envmgr/target.py): the user's, in uv's order, envmgr's own
last. Pure: a recorded host's environment and files, Linux and Windows layouts (this file also runs
under Windows CPython, tests/run-win32.sh). Hand-made hosts: the layouts are venv's and conda's own."""

from __future__ import annotations

import pytest

from envmgr.discover.target import TargetPython, choose_python, conda_python, venv_python
from envmgr.host.base import LINUX, WINDOWS
from envmgr.host.recorded import RecordedHost

OWN_LINUX = "/home/u/.local/share/pipx/venvs/envmgr/bin/python"
OWN_WIN = "C:\\Users\\u\\pipx\\venvs\\envmgr\\Scripts\\python.exe"


def linux(files: list[str], env: dict[str, str]) -> RecordedHost:
    return RecordedHost({"platform": LINUX, "files": dict.fromkeys([*files, OWN_LINUX], ""), "env": env})


def windows(files: list[str], env: dict[str, str]) -> RecordedHost:
    return RecordedHost({"platform": WINDOWS, "files": dict.fromkeys([*files, OWN_WIN], ""), "env": env})


def test_layouts():
    assert venv_python(LINUX, "/p/.venv") == "/p/.venv/bin/python"
    assert venv_python(WINDOWS, "C:\\p\\.venv") == "C:\\p\\.venv\\Scripts\\python.exe"
    assert conda_python(LINUX, "/opt/conda/envs/x") == "/opt/conda/envs/x/bin/python"
    assert conda_python(WINDOWS, "C:\\miniconda3\\envs\\x") == "C:\\miniconda3\\envs\\x\\python.exe"


ALL_LINUX = [
    "/proj/.venv/bin/python",
    "/work/venv/bin/python",
    "/opt/conda/envs/x/bin/python",
    "/usr/bin/python3",
    "/home/u/.local/share/pipx/venvs/envmgr/bin/python3",
]
PATH_LINUX = "/home/u/.local/share/pipx/venvs/envmgr/bin:/usr/local/bin:/usr/bin"


@pytest.mark.parametrize(
    ("env", "cwd", "path", "why"),
    [
        (
            {"VIRTUAL_ENV": "/work/venv", "CONDA_PREFIX": "/opt/conda/envs/x"},
            "/proj/sub",
            "/work/venv/bin/python",
            "VIRTUAL_ENV",
        ),
        ({"CONDA_PREFIX": "/opt/conda/envs/x"}, "/proj/sub", "/opt/conda/envs/x/bin/python", "CONDA_PREFIX"),
        ({}, "/proj", "/proj/.venv/bin/python", ".venv"),
        ({}, "/proj/sub/deeper", "/proj/.venv/bin/python", ".venv"),  # uv's rule: a parent's .venv
        ({}, "/elsewhere", "/usr/bin/python3", "PATH"),  # envmgr's own bin is skipped
        ({"VIRTUAL_ENV": "/gone"}, "/elsewhere", "/usr/bin/python3", "PATH"),  # a venv without its python: next
    ],
)
def test_linux_order(env, cwd, path, why):
    host = linux(ALL_LINUX, {"PATH": PATH_LINUX, **env})
    got = choose_python(host, cwd, OWN_LINUX)
    assert (got.path, got.why) == (path, why)


def test_given_python_wins_over_everything():
    host = linux(ALL_LINUX, {"PATH": PATH_LINUX, "VIRTUAL_ENV": "/work/venv"})
    assert choose_python(host, "/proj", OWN_LINUX, "/x/python") == TargetPython("/x/python", "--python")


def test_python_before_python3_on_path():
    host = linux(["/a/python3", "/b/python"], {"PATH": "/a:/b"})
    assert choose_python(host, "/", OWN_LINUX).path == "/b/python"


def test_envmgrs_own_only_when_nothing_else_exists():
    host = linux([], {"PATH": "/home/u/.local/share/pipx/venvs/envmgr/bin"})
    got = choose_python(host, "/nowhere", OWN_LINUX)
    assert (got.path, got.why) == (OWN_LINUX, "envmgr")
    assert "envmgr's own Python" in got.line()


def test_line_and_json_say_which_and_why():
    got = choose_python(linux(ALL_LINUX, {"PATH": PATH_LINUX}), "/proj/sub", OWN_LINUX)
    assert got.line() == "envmgr: target Python /proj/.venv/bin/python (the .venv of /proj)"
    assert got.as_json() == {"path": "/proj/.venv/bin/python", "why": ".venv"}


ALL_WIN = [
    "C:\\proj\\.venv\\Scripts\\python.exe",
    "D:\\venvs\\work\\Scripts\\python.exe",
    "C:\\miniconda3\\envs\\x\\python.exe",
    "C:\\Python312\\python.exe",
]
PATH_WIN = "C:\\Users\\u\\pipx\\venvs\\envmgr\\Scripts;C:\\Windows\\system32;C:\\Python312"


@pytest.mark.parametrize(
    ("env", "cwd", "path", "why"),
    [
        ({"VIRTUAL_ENV": "D:\\venvs\\work"}, "C:\\proj", "D:\\venvs\\work\\Scripts\\python.exe", "VIRTUAL_ENV"),
        (
            {"CONDA_PREFIX": "C:\\miniconda3\\envs\\x"},
            "C:\\proj",
            "C:\\miniconda3\\envs\\x\\python.exe",
            "CONDA_PREFIX",
        ),
        ({}, "C:\\proj\\src\\pkg", "C:\\proj\\.venv\\Scripts\\python.exe", ".venv"),
        ({}, "D:\\other", "C:\\Python312\\python.exe", "PATH"),
    ],
)
def test_windows_order(env, cwd, path, why):
    host = windows(ALL_WIN, {"Path": PATH_WIN, **env})  # Windows spells it Path; the host folds case
    got = choose_python(host, cwd, OWN_WIN)
    assert (got.path.lower(), got.why) == (path.lower(), why)


def test_windows_own_scripts_folder_is_skipped_case_insensitively():
    host = windows([OWN_WIN.replace("python.exe", "python.exe")], {"PATH": OWN_WIN.rsplit("\\", 1)[0].upper()})
    assert choose_python(host, "D:\\", OWN_WIN).why == "envmgr"


def test_the_store_alias_in_windowsapps_is_passed_over():
    apps = "C:\\Users\\u\\AppData\\Local\\Microsoft\\WindowsApps"
    host = windows([apps + "\\python.exe", "C:\\Python312\\python.exe"], {"PATH": apps + ";C:\\Python312"})
    got = choose_python(host, "D:\\", OWN_WIN)
    assert (got.path, got.why) == ("C:\\Python312\\python.exe", "PATH")
    assert any("Microsoft Store's alias" in p for p in got.passed)
    only = windows([apps + "\\python.exe"], {"PATH": apps})
    assert choose_python(only, "D:\\", OWN_WIN).why == "envmgr"
