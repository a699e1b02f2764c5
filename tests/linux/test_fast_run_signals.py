"""Ctrl+C typed in a real terminal during `envmgr run -- CMD` on a cache hit (envmgr/fastpath/run.py):
the command gets it, envmgr does not, and envmgr exits 130 as the full path does
(tests/linux/test_interrupts.py drives the full path the same way)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envmgr.fastpath import main as _fast
from tests.conftest import Lazy
from tests.linux.test_interrupts import SLOW, alive, ended
from tests.unit.fastpath.test_fast_path import PLAIN, env, store  # noqa: F401 - env: a fixture

pexpect = Lazy("pexpect")
pytestmark = [pytest.mark.linux, pytest.mark.posix]


@pytest.mark.parametrize("path", ["fast", "full"])
def test_ctrl_c_reaches_the_command_and_envmgr_exits_130(env, tmp_path, path):
    watched = tmp_path / "w"
    watched.write_text("x")
    store(env, PLAIN, watched, cuda="13.0")
    args = ["run", "--cuda", "13.0", "--", sys.executable, "-c", SLOW]
    assert _fast.plan(args, env) is not None
    argv = (
        [str(Path(sys.executable).with_name("envmgr"))]
        if path == "fast"
        else [sys.executable, "-c", "from envmgr.cli.main import main; main()"]
    )
    child = pexpect.spawn(
        argv[0],
        [*argv[1:], *args],
        env={**env, "TERM": "dumb"},
        encoding="utf-8",
        timeout=15,
        cwd=str(tmp_path),
        dimensions=(40, 200),
    )
    child.expect("READY")
    start = time.monotonic()
    child.sendintr()
    assert ended(child) == 130
    assert time.monotonic() - start < 10 and "DONE" not in child.before
    assert not alive(tmp_path / "child.pid")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_envmgr_alone_without_a_terminal_reaches_the_command(env, tmp_path, sig):
    """No terminal (a new session, as under CI): SIGINT sent to envmgr alone is passed on, as SIGTERM
    is; the command's own answer is envmgr's exit code (the fast path swallowed SIGINT before)."""
    watched = tmp_path / "w"
    watched.write_text("x")
    store(env, PLAIN, watched, cuda="13.0")
    script = "trap 'echo GOT; kill $!; exit 7' INT TERM; echo READY; sleep 30 & wait; echo DONE"
    args = ["run", "--cuda", "13.0", "--", "sh", "-c", script]
    assert _fast.plan(args, env) is not None
    out = tmp_path / "out.txt"
    with open(out, "wb") as sink:
        proc = subprocess.Popen(
            [str(Path(sys.executable).with_name("envmgr")), *args],
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            start_new_session=True,
        )
        deadline = time.monotonic() + 15
        while "READY" not in out.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(sig)
        assert proc.wait(timeout=10) == 7
    assert "GOT" in out.read_text() and "DONE" not in out.read_text()
