"""envmgr/__main__.py: `python -m envmgr` is the same command line as the console script."""

from __future__ import annotations

import subprocess
import sys

import envmgr.__main__ as dunder_main
from envmgr import __version__
from envmgr.cli.main import main
from tests.conftest import ROOT


def test_importing_it_runs_nothing_and_it_holds_the_cli_entry_point():
    assert dunder_main.main is main


def test_python_m_envmgr_answers_as_the_cli_does(cli):
    done = subprocess.run(
        [sys.executable, "-m", "envmgr", "--version"], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert __version__ in done.stdout and done.stdout == cli("--version").stdout
    bad = subprocess.run(
        [sys.executable, "-m", "envmgr", "no-such-command"], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert bad.returncode == 2 and "no-such-command" in bad.stderr
