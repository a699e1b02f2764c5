"""Running one child program for an answer, bounded: what is kept of its output, how long it runs, and
what is left of it afterwards.

The answers envmgr asks programs for (nvcc --version, vswhere's JSON, an interpreter's site folders, a
vcvars environment dump) are kilobytes. A program that prints forever (`yes` behind a wrapper script)
would otherwise be read into memory until the timeout (0.6 GB/s measured), so each stream keeps at most
OUTPUT_LIMIT bytes and the child is stopped when one goes over. The child starts in its own process
group (a new session on POSIX) and the whole group is killed at the timeout, at the cap, or when envmgr
itself is interrupted, so a wrapper script's own children (`nvcc` -> `sleep`) do not outlive it.
On Windows the tree is ended with `taskkill /T`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from envmgr.host.base import OUTPUT_MIB

# Per stream; the largest real answer (a vswhere dump of 100 instances) is ~0.5 MB.
OUTPUT_LIMIT = OUTPUT_MIB * 1024 * 1024
_CHUNK = 64 * 1024


@dataclass
class Outcome:
    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    overflowed: bool = False  # a stream went over OUTPUT_LIMIT: the child was stopped there
    lingered: bool = False  # the child ended; a process it started kept its output open to the timeout


class _Drain(threading.Thread):
    """Reads one pipe to its end, keeping at most `limit` bytes; sets `full` when more came."""

    def __init__(self, pipe: IO[bytes] | None, limit: int, full: threading.Event) -> None:
        super().__init__(daemon=True)
        self.pipe, self.limit, self.full = pipe, limit, full
        self.parts: list[bytes] = []
        self.kept = 0

    def run(self) -> None:
        try:
            while True:
                if self.pipe is None:
                    return
                chunk = self.pipe.read1(_CHUNK) if hasattr(self.pipe, "read1") else self.pipe.read(_CHUNK)
                if not chunk:
                    return
                room = self.limit - self.kept
                if len(chunk) > room:
                    self.parts.append(chunk[:room])
                    self.kept = self.limit
                    self.full.set()
                    return
                self.parts.append(chunk)
                self.kept += len(chunk)
        except (OSError, ValueError):  # the pipe was closed under us
            return

    def data(self) -> bytes:
        return b"".join(self.parts)


def start(argv: Sequence[str], env: Mapping[str, str] | None, creationflags: int = 0) -> subprocess.Popen[bytes]:
    """The child, in its own process group, with stdin closed and both outputs piped (OSError if it cannot start)."""
    windows = sys.platform == "win32"
    return subprocess.Popen(
        tuple(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env) if env is not None else None,
        creationflags=creationflags if windows else 0,
        start_new_session=not windows,
    )


def run_bounded(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    creationflags: int = 0,
    limit: int = OUTPUT_LIMIT,
) -> Outcome:
    """Run the child to its end, to `timeout` seconds or to `limit` bytes on a stream, whichever comes first."""
    proc = start(argv, env, creationflags)
    full = threading.Event()
    drains = [_Drain(proc.stdout, limit, full), _Drain(proc.stderr, limit, full)]
    for d in drains:
        d.start()
    deadline = time.monotonic() + timeout
    timed_out = lingered = False
    try:
        while not full.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                # The child itself ended and only a process it started holds the pipes: its answer is whole,
                # and its exit code is kept (audit N23: a daemon started by an import held `verify`).
                timed_out = proc.poll() is None
                lingered = not timed_out
                break
            if proc.poll() is not None and not any(d.is_alive() for d in drains):
                break
            full.wait(min(left, 0.05))
    finally:
        if proc.poll() is None or any(d.is_alive() for d in drains):
            kill_tree(proc)  # also on Ctrl-C: the group is ours, not the terminal's
        for d in drains:
            d.join(1.0)
        for d, pipe in zip(drains, (proc.stdout, proc.stderr), strict=True):
            # A pipe still held by a process in another session (not killed with the group): closing it would
            # wait for the blocked read (the buffer's lock), that is for that process to end (audit N23).
            if pipe is not None and not d.is_alive():
                pipe.close()
    rc = proc.wait()
    if timed_out or full.is_set():
        rc = -1
    return Outcome(
        rc, drains[0].data(), drains[1].data(), timed_out=timed_out, overflowed=full.is_set(), lingered=lingered
    )


def kill_tree(proc: subprocess.Popen[bytes]) -> None:
    """End the child and every process of its group (its tree on Windows), then reap it."""
    if sys.platform == "win32":
        try:
            subprocess.run(
                ["taskkill", "/T", "/F", "/PID", str(proc.pid)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=10,
                creationflags=0x08000000,
            )
        except (OSError, subprocess.SubprocessError):
            pass
        proc.kill()
    else:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.kill()
        except ProcessLookupError:
            pass
    proc.wait()
