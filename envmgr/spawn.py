"""The only interactive side effects: run one command, or a shell, in an environment.

Ctrl+C belongs to the child: envmgr ignores SIGINT while it waits, so the child (which shares
the terminal's process group) gets it and decides; envmgr then returns the child's exit code.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from contextlib import contextmanager
from typing import Mapping, Sequence

from .errors import EnvmgrError


class CannotStart(EnvmgrError):
    """Exit 127 (not found) or 126 (not executable), as shells do."""


@contextmanager
def _child_owns_ctrl_c():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def resolve_program(argv0: str, env: Mapping[str, str]) -> str:
    """The program as the new environment's PATH finds it, or CannotStart (127/126)."""
    found = shutil.which(argv0, path=env.get("PATH") if sys.platform != "win32" else _win_path(env))
    if found is None:
        if os.path.sep in argv0 or (os.altsep and os.altsep in argv0):
            if os.path.exists(argv0) and not os.access(argv0, os.X_OK):
                err = CannotStart(f"{argv0}: not executable", "check its permissions (chmod +x)")
                err.exit_code = 126
                raise err
        err = CannotStart(f"{argv0}: command not found in the environment's PATH",
                          "check the name, or install it; `envmgr run ... -- where/which NAME` shows the PATH used")
        err.exit_code = 127
        raise err
    return found


def _win_path(env: Mapping[str, str]) -> str | None:
    for key, value in env.items():
        if key.upper() == "PATH":
            return value
    return None


def run(argv: Sequence[str], env: Mapping[str, str]) -> int:
    program = resolve_program(argv[0], env)
    try:
        proc = subprocess.Popen([program, *argv[1:]], env=dict(env))
    except PermissionError:
        err = CannotStart(f"{argv[0]}: not executable (permission denied)", "check its permissions")
        err.exit_code = 126
        raise err from None
    except OSError as exc:
        err = CannotStart(f"{argv[0]}: cannot be started: {exc.strerror or exc}", "is it a program for this system?")
        err.exit_code = 126
        raise err from None
    with _child_owns_ctrl_c():
        return _wait(proc)


def _wait(proc: subprocess.Popen) -> int:
    code = proc.wait()
    # A child killed by a signal: report it the way shells do (128 + signal number).
    return 128 - code if code < 0 else code


def run_logged(argv: Sequence[str], env: Mapping[str, str], log_path: str) -> int:
    """Run in a pseudo-terminal (so the child keeps colours and progress bars) and tee to a file."""
    program = resolve_program(argv[0], env)
    if sys.platform == "win32":
        return _run_winpty([program, *argv[1:]], env, log_path)
    return _run_pty([program, *argv[1:]], env, log_path)


def _run_pty(argv: list[str], env: Mapping[str, str], log_path: str) -> int:
    """pty.spawn copies our terminal in raw mode, so a Ctrl+C typed by the user reaches the child
    through its own terminal; the child inherits os.environ at exec, hence the swap."""
    import pty

    saved = dict(os.environ)
    with open(log_path, "wb") as log:
        def read(fd: int) -> bytes:
            data = os.read(fd, 65536)
            log.write(data)
            log.flush()
            return data

        os.environ.clear()
        os.environ.update(env)
        try:
            with _child_owns_ctrl_c():
                status = pty.spawn(argv, read)
        finally:
            os.environ.clear()
            os.environ.update(saved)
    return os.waitstatus_to_exitcode(status)


def _run_winpty(argv: list[str], env: Mapping[str, str], log_path: str) -> int:  # pragma: no cover - Windows
    from winpty import PtyProcess

    cols, rows = shutil.get_terminal_size((120, 30))
    proc = PtyProcess.spawn(subprocess.list2cmdline(argv), env=dict(env), dimensions=(rows, cols))
    with open(log_path, "w", encoding="utf-8", errors="replace") as log, _child_owns_ctrl_c():
        while proc.isalive() or not proc.eof():
            try:
                data = proc.read(65536)
            except EOFError:
                break
            sys.stdout.write(data)
            sys.stdout.flush()
            log.write(data)
        proc.wait()
    return proc.exitstatus or 0
