"""Ctrl+C typed in a real terminal during `envmgr run -- CMD` on a cache hit (envmgr/_fastrun.py):
the command gets it, envmgr does not, and envmgr exits 130 as the full path does
(tests/linux/test_interrupts.py drives the full path the same way)."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from envmgr import _fast
from tests.conftest import Lazy
from tests.linux.test_interrupts import SLOW, alive, ended
from tests.unit.test_fast_path import PLAIN, env, store  # noqa: F401 - env: a fixture

pexpect = Lazy("pexpect")
pytestmark = [pytest.mark.linux, pytest.mark.posix]


@pytest.mark.parametrize("path", ["fast", "full"])
def test_ctrl_c_reaches_the_command_and_envmgr_exits_130(env, tmp_path, path):
    watched = tmp_path / "w"
    watched.write_text("x")
    store(env, PLAIN, watched, cuda="13.0")
    args = ["run", "--cuda", "13.0", "--", sys.executable, "-c", SLOW]
    assert _fast.plan(args, env) is not None
    argv = ([str(Path(sys.executable).with_name("envmgr"))] if path == "fast"
            else [sys.executable, "-c", "from envmgr.cli import main; main()"])
    child = pexpect.spawn(argv[0], [*argv[1:], *args], env={**env, "TERM": "dumb"}, encoding="utf-8",
                          timeout=15, cwd=str(tmp_path), dimensions=(40, 200))
    child.expect("READY")
    start = time.monotonic()
    child.sendintr()
    assert ended(child) == 130
    assert time.monotonic() - start < 10 and "DONE" not in child.before
    assert not alive(tmp_path / "child.pid")
