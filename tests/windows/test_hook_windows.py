"""`envmgr hook` on Windows (issue 38): a Python started outside any developer prompt (a desktop shortcut,
an app's bundled interpreter) finds cl's environment (PATH, INCLUDE, LIB) in its own process, from a real
vcvars capture, and `hook remove` leaves its folder byte for byte as before.

Under the Windows-CPython tier (tests/run-win32.sh: python.org's embeddable build under Wine, Visual
Studio laid out by tests/wine/layout.py with the hand-made vcvarsall.bat run by Wine's real cmd.exe) the
target is an app-style copy of that embeddable build, its ._pth as python.org ships it (`#import site`);
on a real Windows runner (full CPython) it is a venv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.conftest import EMBEDDED_PYTHON, run_cli
from tests.unit.hook.test_hook import app_python, tree_hashes

pytestmark = pytest.mark.windows

PROBE = (
    "import json, os, shutil; print(json.dumps({'cl': shutil.which('cl'), 'INCLUDE': os.environ.get('INCLUDE'), "
    "'LIB': os.environ.get('LIB'), 'arch': os.environ.get('VSCMD_ARG_TGT_ARCH')}))"
)


@pytest.fixture
def target(tmp_path) -> tuple[Path, Path]:
    """(python.exe, the folder to compare byte for byte)."""
    if EMBEDDED_PYTHON:
        exe = app_python(tmp_path)
        return exe, exe.parent
    venv.EnvBuilder(with_pip=False).create(tmp_path / "venv")
    return tmp_path / "venv" / "Scripts" / "python.exe", tmp_path / "venv"


def started(python: Path) -> dict:
    """What a Python started outside a developer prompt sees: no compiler variables inherited."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k.upper() not in ("INCLUDE", "LIB", "LIBPATH", "VSCMD_ARG_TGT_ARCH", "ENVMGR_HOOK")
    }
    done = subprocess.run(
        [str(python), "-c", PROBE], capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=180
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_hooked_python_finds_cl_and_its_environment_in_process(target):
    python, folder = target
    before = tree_hashes(folder)
    bare = started(python)
    assert bare["cl"] is None and not bare["INCLUDE"]

    done = run_cli("hook", "install", "--python", str(python), "--json")
    assert done.code == 0, done.stderr
    report = json.loads(done.stdout)
    if EMBEDDED_PYTHON:
        assert report["kind"] == "embeddable" and report["pth_changed"].lower().endswith("._pth")
        assert b"\r\nimport site\r\n" in Path(report["pth_changed"]).read_bytes()

    hooked = started(python)
    assert hooked["cl"] is not None and hooked["cl"].lower().endswith("\\bin\\hostx64\\x64\\cl.exe"), hooked
    assert "\\vc\\tools\\msvc\\" in hooked["INCLUDE"].lower() and "\\lib\\x64" in hooked["LIB"].lower()
    assert hooked["arch"] == "x64"

    status = run_cli("hook", "status", "--python", str(python), "--json")
    assert status.code == 0, status.stdout
    assert json.loads(status.stdout)["snapshot"]["state"] == "current"

    assert run_cli("hook", "remove", "--python", str(python)).code == 0
    assert tree_hashes(folder) == before
    assert started(python)["cl"] is None
