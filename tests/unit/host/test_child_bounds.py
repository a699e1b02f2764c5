"""A child envmgr asks for an answer is bounded (audit hostile-input-2026-11, C3 and C12): what is kept
of its output, and what is left of it after a timeout.

Real programs, not stubs: `yes` (coreutils) prints forever; `sh -c 'sleep 300 & ...'` is the shape of a
wrapper script (an nvcc or python shim) whose own child would outlive a plain kill.
"""

from __future__ import annotations

import os
import shutil
import time

import pytest

from envmgr.host.live import LiveHost

pytestmark = pytest.mark.posix  # process groups, /proc, sh


def test_a_child_that_prints_forever_is_stopped_at_the_cap():
    start = time.monotonic()
    done = LiveHost().run([shutil.which("yes") or "yes"], timeout=20)
    took = time.monotonic() - start
    assert getattr(done, "overflowed", False) and not done.ok
    assert took < 10, f"read for {took:.1f} s"  # stopped at the cap, not at the 20 s timeout
    assert "printed far more than an answer" in done.describe_failure()
    assert "MiB; stopped" in done.describe_failure()


def test_output_under_the_cap_is_kept_whole():
    done = LiveHost().run(["sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' a; echo err >&2"], timeout=20)
    assert done.ok and len(done.stdout) == 3000000 and done.stderr == "err\n"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is dead (its parent may not reap)
    except FileNotFoundError:
        return False


def test_a_timeout_kills_the_childs_own_children_too():
    done = LiveHost().run(["sh", "-c", "sleep 300 & echo $!; wait"], timeout=1)
    assert done.timed_out and not done.ok
    pid = int(done.stdout.split()[0])
    for _ in range(50):
        if not _alive(pid):
            break
        time.sleep(0.1)
    else:
        os.kill(pid, 9)
        pytest.fail("the wrapper's child (sleep 300) outlived the timeout")


def test_a_child_that_exits_at_once_is_not_waited_for():
    start = time.monotonic()
    done = LiveHost().run(["sh", "-c", "echo hi; exit 3"], timeout=20)
    assert done.returncode == 3 and done.stdout == "hi\n" and time.monotonic() - start < 5
