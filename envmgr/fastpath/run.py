"""`envmgr run -- CMD` on a cache hit, in the fewest imports: the child's environment from KEY.fast's
operations, then fork, execve and waitpid.

What it does is what the full path does (session.run_command: activation_delta(...).apply, then
spawn.run) for a Linux snapshot, written again with the standard library's built-in modules only:
envdelta/activation/spawn import dataclasses, typing, pathlib, shutil, subprocess and json (about
25 ms). tests/unit/fastpath/test_fast_run.py holds it to the full path: the same child environment for every
kind of operation, with and without an active environment, and the same exit codes and signals.
Anything this module is not sure of (an unusual ENVMGR_RESTORE, a program it cannot find or start)
goes back to the full code, which then answers (and words any error) exactly as it always has.
"""

from __future__ import annotations

import _signal as signal  # the builtin: `signal` imports enum (milliseconds)
import os
import sys

from envmgr.host.process import environ

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from types import FrameType

    Op = tuple[str, str, "str | tuple[str, ...]"]  # (name, op, value) as KEY.fast holds them

ACTIVE, RESTORE = "ENVMGR_ACTIVE", "ENVMGR_RESTORE"
# POSIX only (the console script never takes this path on Windows), yet importable everywhere: Windows'
# signal module has no SIGHUP or SIGQUIT.
_PASSED_ON = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))
_RELAYED = (*(getattr(signal, n) for n in ("SIGINT", "SIGQUIT") if hasattr(signal, n)), *_PASSED_ON)
# Popen(restore_signals=True): what Python ignores at start-up is the default again in the child.
_DEFAULTED = tuple(getattr(signal, n) for n in ("SIGPIPE", "SIGXFZ", "SIGXFSZ") if hasattr(signal, n))


def child_env(ops: Sequence[Op], marker: str, env: Mapping[str, str]) -> dict[str, str] | None:
    """activation_delta(EnvDelta("linux", ops), env, marker).apply(env), or None when in doubt."""
    saved_json = env.get(RESTORE)
    previous: dict[str, str | None] = {}
    if saved_json:
        from envmgr.files.nested import loads_json  # only inside an active environment: its JSON says what to restore

        try:
            previous = loads_json(saved_json)
        except ValueError:  # bad syntax, too deep, NaN: the full CLI says why
            return None
        if not isinstance(previous, dict) or not all(isinstance(v, (str, type(None))) for v in previous.values()):
            return None
    base = dict(env)
    if saved_json:
        for name, value in previous.items():
            if value is None:
                base.pop(name, None)
            else:
                base[name] = value
        base.pop(ACTIVE, None)
        base.pop(RESTORE, None)
    after = apply(ops, base)
    names = list(dict.fromkeys(op[0] for op in ops))
    names += [n for n in previous if n not in names]
    saved = {n: base.get(n) for n in names}
    out = dict(env)
    for name in names:
        value = after.get(name)
        if value is None:
            out.pop(name, None)
        else:
            out[name] = value
    out[ACTIVE] = marker
    from envmgr.cache.key import dumps

    out[RESTORE] = dumps(saved, ensure_ascii=False, sort_keys=False)
    return out


def apply(ops: Sequence[Op], env: Mapping[str, str]) -> dict[str, str]:
    """EnvDelta.apply for a POSIX delta: ':' lists, names as written, entries equal up to trailing '/'."""
    out = dict(env)
    for name, op, value in ops:
        if op == "unset":
            out.pop(name, None)
            continue
        if op == "set":
            out[name] = str(value)
            continue
        entries = value if isinstance(value, tuple) else (value,)
        current = out.get(name, "")
        if op == "remove":
            if name in out:
                gone = {_key(e) for e in entries}
                out[name] = ":".join(e for e in _split(current) if _key(e) not in gone)
            continue
        added = {_key(e) for e in entries}
        rest = [e for e in _split(current) if _key(e) not in added]
        merged = [*entries, *rest] if op == "prepend" else [*rest, *entries]
        seen: set[str] = set()
        kept = []
        for e in merged:
            k = _key(e)
            if k not in seen:
                seen.add(k)
                kept.append(e)
        out[name] = ":".join(kept)
    return out


def _key(entry: str) -> str:
    return entry.rstrip("\\/") or entry


def _split(value: str) -> list[str]:
    return [e for e in value.split(":") if e.strip()]


def which(name: str, env: Mapping[str, str]) -> str | None:
    """shutil.which(name, path=env.get("PATH")) (CPython 3.11's rule) for a PATH that is set; None
    also when the answer has no '/' (Popen would search PATH again): the full code decides then."""
    if os.path.dirname(name):
        return name if _runnable(name) else None
    path = env.get("PATH")
    if not path:
        return None
    seen = set()
    for folder in path.split(os.pathsep):
        if folder in seen:
            continue
        seen.add(folder)
        candidate = os.path.join(folder, name)
        if _runnable(candidate):
            return candidate if os.path.dirname(candidate) else None
    return None


def _runnable(path: str) -> bool:
    return os.path.exists(path) and os.access(path, os.F_OK | os.X_OK) and not os.path.isdir(path)


def run(ops: Sequence[Op], marker: str, command: tuple[str, ...]) -> bool:
    """Run the command and exit with its code; False (nothing done) when the full code must answer."""
    env = child_env(ops, marker, environ())
    if env is None or "PATH" not in env:
        return False
    program = which(command[0], env)
    if program is None:
        return False
    got: list[int] = []
    state: dict[str, int | None] = {"pid": None}

    def handler(signum: int, _frame: FrameType | None) -> None:
        # spawn._Relay: Ctrl+C and Ctrl+\ are the child's (it shares the terminal); SIGTERM and
        # SIGHUP sent to envmgr alone go on to the child and what it started, and SIGINT/SIGQUIT too
        # where no terminal sent them to the child (spawn.passes_on).
        got.append(signum)
        if state["pid"] is not None:
            from envmgr.spawn import _kill_tree, passes_on

            if passes_on(signum):
                _kill_tree(state["pid"], signum)

    previous = {s: signal.signal(s, handler) for s in _RELAYED}
    state["pid"] = _start(program, [program, *command[1:]], env)
    if state["pid"] is None:
        for s, old in previous.items():
            signal.signal(s, old)
        return False
    for signum in got:  # what reached envmgr before the child existed
        try:
            os.kill(state["pid"], signum)
        except OSError:
            pass
    while True:
        try:
            _, status = os.waitpid(state["pid"], 0)
            break
        except ChildProcessError:
            status = 0
            break
    for s, old in previous.items():
        signal.signal(s, old)
    code = os.waitstatus_to_exitcode(status)
    sys.exit(128 - code if code < 0 else code)


def _start(program: str, argv: list[str], env: dict[str, str]) -> int | None:
    """fork and exec as Popen does (posix_spawn would leave glibc's internal signals 32 and 33
    ignored in the child); None when exec failed (Popen will meet the same error and word it)."""
    inherited = _inherited()
    read, write = os.pipe()  # close-on-exec: EOF at once when exec succeeds
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            for signum in _DEFAULTED:
                signal.signal(signum, signal.SIG_DFL)
            for fd in inherited:
                os.close(fd)
            os.execve(program, argv, env)
        except BaseException:  # broad on purpose; whatever it was, the parent hears of it
            os.write(write, b"x")
        finally:
            os._exit(255)
    os.close(write)
    try:
        failed = os.read(read, 1)
    finally:
        os.close(read)
    if failed:
        os.waitpid(pid, 0)
        return None
    return pid


def _inherited() -> list[int]:
    """Popen(close_fds=True): descriptors beyond 0-2 that the caller let us inherit are not the child's
    (those envmgr opened itself are close-on-exec already)."""
    out: list[int] = []
    try:
        fds = [int(fd) for fd in os.listdir("/proc/self/fd")]
    except OSError:
        return out
    for fd in fds:
        if fd > 2:
            try:
                if os.get_inheritable(fd):
                    out.append(fd)
            except OSError:
                pass
    return out
