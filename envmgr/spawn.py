"""The only interactive side effects: run one command, or a shell, in an environment.

Ctrl+C belongs to the child: envmgr takes no action on SIGINT while it waits, so the child (which
shares the terminal's process group) gets it and decides; envmgr then returns the child's exit code
(128 + N for a child killed by signal N, as shells do). SIGTERM and SIGHUP sent to envmgr alone are
passed on, so a killed envmgr never leaves its child running; so are SIGINT and SIGQUIT when envmgr is
not in its terminal's foreground (no terminal at all: CI, a supervisor; `setsid`), where no
keystroke can have sent them to the child too. Under --log the child has a terminal
and a session of its own, which the terminal's signals cannot reach: envmgr passes those on too.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager

from envmgr.errors import CannotStart, CommandNotFound, InputFileError, Interrupted

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the fast path imports this module
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from types import FrameType
    from typing import Any, BinaryIO

    from envmgr.progress import BuildWatch


@contextmanager
def _child_owns_ctrl_c() -> Iterator[None]:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


_PASSED_ON = ("SIGTERM", "SIGHUP")  # what a terminal sends the child itself: SIGINT, SIGQUIT


class _Relay:
    """Records the signals that reach envmgr around a child (POSIX) and hands them on through
    `pass_on` once the child exists; one that came before it started is sent to it then."""

    def __init__(self) -> None:
        self.got: list[int] = []
        self.pass_on: Callable[[int], object] | None = None

    def handler(self, signum: int, _frame: FrameType | None) -> None:
        self.got.append(signum)
        if self.pass_on is not None:
            self.pass_on(signum)

    def started(self, pid: int, pass_on: Callable[[int], object]) -> None:
        self.pass_on = pass_on
        for signum in self.got:
            _kill(pid, signum)


@contextmanager
def _relay() -> Iterator[_Relay]:
    relay = _Relay()
    names = ("SIGINT", "SIGQUIT", *_PASSED_ON)
    previous = {s: signal.signal(s, relay.handler) for s in (getattr(signal, n) for n in names)}
    try:
        yield relay
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def passes_on(signum: int) -> bool:
    """Whether envmgr hands this signal to its child: SIGTERM and SIGHUP always; SIGINT and SIGQUIT
    unless envmgr is in its terminal's foreground process group, where the terminal sent the child
    the same keystroke (a second one would stop pip's clean-up, say)."""
    name = signal.Signals(signum).name
    return name in _PASSED_ON or (name in ("SIGINT", "SIGQUIT") and not _in_terminal_foreground())


def _in_terminal_foreground() -> bool:
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return False  # no controlling terminal
    try:
        return os.tcgetpgrp(fd) == os.getpgrp()
    except OSError:
        return False
    finally:
        os.close(fd)


def _kill(pid: int, signum: int, group: bool = False) -> None:
    try:
        (os.killpg if group else os.kill)(pid, signum)
    except OSError:
        pass


def _kill_tree(pid: int, signum: int) -> None:
    """The child and what it started: pip dies of SIGTERM at once and would leave its build running."""
    pids = [pid]
    try:
        import psutil

        pids += [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except Exception:  # broad on purpose; gone already, or no psutil: the child alone
        pass
    for each in pids:
        _kill(each, signum)


def _outcome(code: int, got: list[int], interrupted: str | None) -> int:
    if got and interrupted is not None:
        name = signal.Signals(got[0]).name
        raise Interrupted(f"{interrupted} (interrupted by {name})", got[0])
    return code


def resolve_program(argv0: str, env: Mapping[str, str]) -> str:
    """The program as the new environment's PATH finds it, or CannotStart (127/126)."""
    found = shutil.which(argv0, path=env.get("PATH") if sys.platform != "win32" else _win_path(env))
    if found is None:
        if os.path.sep in argv0 or (os.altsep and os.altsep in argv0):
            if os.path.exists(argv0) and not os.access(argv0, os.X_OK):
                raise CannotStart(f"{argv0}: not executable", "check its permissions (chmod +x)")
        raise CommandNotFound(
            f"{argv0}: command not found in the environment's PATH",
            "check the name, or install it; `envmgr run ... -- where/which NAME` shows the PATH used",
        )
    return found


def _win_path(env: Mapping[str, str]) -> str | None:
    for key, value in env.items():
        if key.upper() == "PATH":
            return value
    return None


# Where run()'s children write their stdout: inherited (None), or stderr (2) while a --json document is
# pending, so stdout holds that one document and nothing else (pip's "Collecting ..." went first: audit E3).
_CHILD_STDOUT: int | None = None


@contextmanager
def children_print_to_stderr() -> Iterator[None]:
    """While it holds, every child run() starts writes its stdout to envmgr's stderr."""
    global _CHILD_STDOUT
    saved, _CHILD_STDOUT = _CHILD_STDOUT, 2
    try:
        yield
    finally:
        _CHILD_STDOUT = saved


def run(argv: Sequence[str], env: Mapping[str, str], *, interrupted: str | None = None) -> int:
    """The child's exit code; with `interrupted` (what the step is), a signal that reached envmgr while
    the child ran raises Interrupted (exit 128 + N) once the child has ended, whatever its code."""
    program = resolve_program(argv[0], env)
    if sys.platform == "win32":
        proc = _start(argv[0], [program, *argv[1:]], env=dict(env), stdout=_CHILD_STDOUT)
        with _child_owns_ctrl_c():
            return _wait(proc)
    with _relay() as relay:
        proc = _start(argv[0], [program, *argv[1:]], env=dict(env), stdout=_CHILD_STDOUT)
        relay.started(proc.pid, lambda signum: _kill_tree(proc.pid, signum) if passes_on(signum) else None)
        code = _wait(proc)
    return _outcome(code, relay.got, interrupted)


def run_watched(
    argv: Sequence[str],
    env: Mapping[str, str],
    what: str,
    log_path: str,
    *,
    interrupted: str | None = None,
    echo: bool = False,
) -> int:
    """A long build: its output (stdout and stderr) goes to `log_path` without colour codes and feeds one
    progress line on stderr (elapsed time, the build's counter, its last line); with `echo` it is also
    copied to stderr as it comes (the user asked for -v). Signals as run()."""
    from envmgr.progress import BuildWatch, Ticker  # not at the top: the fast path imports this module

    program = resolve_program(argv[0], env)
    watch = BuildWatch(what, Ticker(sys.stderr), shown=echo)
    popen: dict[str, Any] = {"env": dict(env), "stdout": subprocess.PIPE, "stderr": subprocess.STDOUT}
    with open(log_path, "wb") as log:
        if sys.platform == "win32":
            proc = _start(argv[0], [program, *argv[1:]], **popen)
            with _child_owns_ctrl_c():
                return _pump(proc, log, watch, echo)
        with _relay() as relay:
            proc = _start(argv[0], [program, *argv[1:]], **popen)
            relay.started(proc.pid, lambda signum: _kill_tree(proc.pid, signum) if passes_on(signum) else None)
            code = _pump(proc, log, watch, echo)
    return _outcome(code, relay.got, interrupted)


def _pump(proc: subprocess.Popen[bytes], log: BinaryIO, watch: BuildWatch, echo: bool) -> int:
    """Read the child's pipe in a thread (a pipe cannot be polled on Windows); tick the line meanwhile."""
    import queue
    import threading

    from envmgr.progress import LogCleaner

    chunks: queue.Queue[bytes | None] = queue.Queue()
    pipe = proc.stdout
    if pipe is None:  # not reached: stdout=PIPE
        return _wait(proc)

    def reader() -> None:
        for block in iter(lambda: os.read(pipe.fileno(), 65536), b""):
            chunks.put(block)
        chunks.put(None)

    threading.Thread(target=reader, daemon=True).start()
    cleaner = LogCleaner()
    try:
        while (block := _next_chunk(chunks)) is not None:
            if block:
                log.write(cleaner.feed(block))
                log.flush()
                watch.feed(block)
                if echo:
                    watch.ticker.clear()
                    _write_all(2, block)
            watch.tick(time.monotonic())
        log.write(cleaner.flush())
    finally:
        watch.ticker.done()
    return _wait(proc)


def _next_chunk(chunks: Any) -> bytes | None:
    import queue

    try:
        block: bytes | None = chunks.get(timeout=0.2)
    except queue.Empty:
        return b""
    return block


def _start(name: str, argv: list[str], **popen: Any) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(argv, **popen)
    except PermissionError:
        raise CannotStart(f"{name}: not executable (permission denied)", "check its permissions") from None
    except OSError as exc:
        raise CannotStart(
            f"{name}: cannot be started: {exc.strerror or exc}", "is it a program for this system?"
        ) from None


def _wait(proc: subprocess.Popen[bytes]) -> int:
    code = proc.wait()
    # A child killed by a signal: report it the way shells do (128 + signal number).
    return 128 - code if code < 0 else code


class Log:
    """The --log file, unbuffered: a write that fails (a full disk, `ulimit -f`) stops the logging, never the
    child (audit N26). `stopped(written, error)` is called once, at the failure; what was written stays."""

    def __init__(self, path: str, stopped: Callable[[int, OSError], object]) -> None:
        self.file = open(path, "wb", buffering=0)  # closed by close(), after the child
        self.written = 0
        self.failed: OSError | None = None
        self._stopped = stopped

    def write(self, data: bytes) -> None:
        if self.failed is not None:
            return
        view = memoryview(data)
        try:
            while view:
                n = self.file.write(view) or 0
                self.written += n
                view = view[n:]
        except OSError as exc:
            self.failed = exc
            self._stopped(self.written, exc)

    def close(self) -> None:
        try:
            self.file.close()
        except OSError:
            pass


def run_logged(
    argv: Sequence[str],
    env: Mapping[str, str],
    log_path: str,
    log_stopped: Callable[[int, OSError], object] = lambda written, exc: None,
) -> int:
    """Run in a pseudo-terminal (so the child keeps colours and progress bars) and tee to a file. A log that cannot
    be opened is InputFileError before the child starts; one that stops on the way calls `log_stopped` and the child
    runs on: its exit code is the answer either way."""
    program = resolve_program(argv[0], env)
    try:
        log = Log(log_path, log_stopped)
    except OSError as exc:
        raise InputFileError(
            f"--log {log_path}: cannot write it: {exc.strerror or exc}",
            "free space where the log goes, or give --log a file on another disk",
        ) from None
    try:
        if sys.platform == "win32":
            return _run_winpty([program, *argv[1:]], env, log)
        return _run_pty([program, *argv[1:]], env, log)
    finally:
        log.close()


def _run_pty(argv: list[str], env: Mapping[str, str], log: Log) -> int:
    """The child gets a new session whose terminal is a pty: its output goes to ours and to the log.
    Our terminal is raw while it runs, so a Ctrl+C typed there reaches the child as a keystroke; a
    stdin that is no terminal (a file, a pipe, /dev/null) is the child's own stdin, EOF included."""
    import termios

    from envmgr.progress import BuildWatch, Ticker  # not at the top: the fast path imports this module

    stdin_tty = _isatty(0)
    master, slave = os.openpty()
    saved = termios.tcgetattr(0) if stdin_tty else None
    try:
        _copy_size(slave)
        if saved is not None:  # raw before the child starts: a Ctrl+C typed from now on is a keystroke
            import tty

            tty.setraw(0, termios.TCSANOW)  # TCSAFLUSH would drop what was typed ahead
        with _relay() as relay:
            try:
                proc = _start(
                    argv[0],
                    argv,
                    env=dict(env),
                    stdin=slave if stdin_tty else None,
                    stdout=slave,
                    stderr=slave,
                    start_new_session=True,
                    preexec_fn=_take_terminal,
                )
            finally:
                os.close(slave)
            relay.started(proc.pid, lambda signum: _pass_on_pty(proc.pid, master, signum))
            watch = BuildWatch(f"running {os.path.basename(argv[0])}", Ticker(sys.stderr), shown=True)
            try:
                _copy_output(proc, master, log, stdin_tty, watch)
            finally:
                watch.ticker.done()
            return _wait(proc)
    finally:
        if saved is not None:
            termios.tcsetattr(0, termios.TCSADRAIN, saved)
        os.close(master)


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _take_terminal() -> None:  # in the child, after setsid: the pty (its stdout) becomes its terminal
    import fcntl
    import termios

    fcntl.ioctl(1, termios.TIOCSCTTY, 0)


def _copy_size(slave: int) -> None:
    import fcntl
    import termios

    for fd in (1, 0, 2):
        try:
            size = fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8)
        except OSError:
            continue
        fcntl.ioctl(slave, termios.TIOCSWINSZ, size)
        return


def _pass_on_pty(pid: int, master: int, signum: int) -> None:
    """As the terminal would: Ctrl+C and Ctrl+\\ to its foreground group, the rest to the child's."""
    group = pid
    if signal.Signals(signum).name in ("SIGINT", "SIGQUIT"):
        try:
            group = os.tcgetpgrp(master)
        except OSError:
            pass
    _kill(group, signum, group=True)


def _copy_output(proc: subprocess.Popen[bytes], master: int, log: Log, stdin_tty: bool, watch: BuildWatch) -> None:
    """Until the pty has no writer left, or the child has ended and nothing is left to read (a daemon
    it started may hold the pty open for ever). The log gets the output without colour codes; the
    progress line (stderr) is erased before the child's output is written and drawn again when due."""

    fds = [master, 0] if stdin_tty else [master]
    from envmgr.progress import LogCleaner

    to_stdout = True
    cleaner = LogCleaner()
    while True:
        ready = select.select(fds, [], [], 0.2)[0]
        watch.tick(time.monotonic())
        if master in ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every slave end is closed
                data = b""
            if not data:
                log.write(cleaner.flush())
                return
            log.write(cleaner.feed(data))
            watch.feed(data)
            watch.ticker.clear()
            to_stdout = to_stdout and _write_all(1, data)
        elif proc.poll() is not None:
            log.write(cleaner.flush())
            return
        if 0 in ready:
            try:
                data = os.read(0, 65536)
            except OSError:
                data = b""
            if data:
                _write_all(master, data)
            else:  # our terminal hung up
                fds.remove(0)


def _write_all(fd: int, data: bytes) -> bool:
    try:
        while data:
            data = data[os.write(fd, data) :]
    except OSError:
        return False
    return True


def _run_winpty(argv: list[str], env: Mapping[str, str], log: Log) -> int:  # pragma: no cover - Windows
    from winpty import PtyProcess

    from envmgr.progress import BuildWatch, LogCleaner, Ticker

    cols, rows = shutil.get_terminal_size((120, 30))
    proc = PtyProcess.spawn(subprocess.list2cmdline(argv), env=dict(env), dimensions=(rows, cols))
    # ConPTY's output is full of escapes (colours, cursor moves): the log gets the text without them; the
    # progress line is drawn as output comes (a read blocks until then)
    cleaner, watch = LogCleaner(), BuildWatch(f"running {os.path.basename(argv[0])}", Ticker(sys.stderr), shown=True)
    with _child_owns_ctrl_c():
        while proc.isalive() or not proc.eof():
            try:
                data = proc.read(65536)
            except EOFError:
                break
            watch.ticker.clear()
            sys.stdout.write(data)
            sys.stdout.flush()
            raw = data.encode("utf-8", "replace")
            log.write(cleaner.feed(raw))
            watch.feed(raw)
            watch.tick(time.monotonic())
        log.write(cleaner.flush())
        watch.ticker.done()
        proc.wait()
    return proc.exitstatus or 0


def run_teed(argv: Sequence[str], env: Mapping[str, str], log_path: str, *, interrupted: str | None = None) -> int:
    """As run(), the child's stdout and stderr also copied to log_path (a build's log, for its diagnosis).
    Through a pipe, not a pty: it works the same on Windows, and under --json the copy goes to stderr."""
    program = resolve_program(argv[0], env)
    out = _CHILD_STDOUT if _CHILD_STDOUT is not None else 1
    pipes: dict[str, Any] = {"env": dict(env), "stdout": subprocess.PIPE, "stderr": subprocess.STDOUT}
    with open(log_path, "wb") as log:
        if sys.platform == "win32":
            proc = _start(argv[0], [program, *argv[1:]], **pipes)
            with _child_owns_ctrl_c():
                return _wait(_tee(proc, log, out))
        with _relay() as relay:
            proc = _start(argv[0], [program, *argv[1:]], **pipes)
            relay.started(proc.pid, lambda signum: _kill_tree(proc.pid, signum) if passes_on(signum) else None)
            code = _wait(_tee(proc, log, out))
    return _outcome(code, relay.got, interrupted)


def _tee(proc: subprocess.Popen[bytes], log: BinaryIO, out: int) -> subprocess.Popen[bytes]:
    """The child's output to the log and to `out` until it closes its end (a gone reader stops only the copy)."""
    assert proc.stdout is not None
    shown = True
    fd = proc.stdout.fileno()
    for chunk in iter(lambda: os.read(fd, 65536), b""):
        log.write(chunk)
        shown = shown and _write_all(out, chunk)
    return proc
