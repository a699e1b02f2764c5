"""The console script's first step: answer the common cached cases without click or a live host.

`envmgr --version`, `envmgr export [--format F] [selectors]`, `envmgr export --activate --format F`
and `envmgr run [selectors] -- CMD` on a cache hit cost one Python start, a hash, a dozen stat()
calls and one file read (KEY.fast, written by cache/fast.py beside each cache entry). Anything else,
any unusual flag, any miss, any doubt: the full CLI (envmgr.cli.main:main) answers, with the same output.
Only the simple argv forms are parsed here; click parses everything else. This module imports only
the standard library's built-in modules and envmgr.cache.key.
"""

from __future__ import annotations

import os
import sys

from envmgr.fastpath.argv import parse_options, selectors
from envmgr.host.process import environ

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from envmgr.snapshot.envdelta import EnvDelta

# Variables that make the full CLI behave differently (another host, shell completion, defaults: docs/config.md).
_FULL_PATH_ENV = (
    "ENVMGR_MACHINE",
    "ENVMGR_WINEPREFIX",
    "ENVMGR_CUDA",
    "ENVMGR_VS",
    "ENVMGR_TOOLSET",
    "ENVMGR_RECIPE",
    "ENVMGR_PYTHON",
    "ENVMGR_GPU",
)


def main() -> None:
    try:
        answer = plan(sys.argv[1:], environ())
    except Exception:  # broad on purpose; any doubt: the full CLI decides
        answer = None
    if answer is None:
        from envmgr.cli.main import main as full

        keep = help_to_keep(sys.argv[1:], environ())
        if keep is None:
            full()
        else:
            _full_keeping_help(full, keep)
        return
    answer()


def _kept_help(argv: list[str], env: Mapping[str, str]) -> Callable[[], object] | None:
    """The help text click printed last time for `argv` (helptext.py), or None for the full CLI."""
    from envmgr.fastpath.helptext import help_file, help_form, read_help  # not for --version: one module less

    if not help_form(argv):
        return None
    folder = cache_dir(env)
    path = help_file(argv, env, folder) if folder else None
    kept = read_help(path) if path else None
    return (lambda: _write_bytes(kept)) if kept is not None else None


def help_to_keep(argv: list[str], env: Mapping[str, str]) -> str | None:
    """Where a help text the full CLI prints for `argv` is kept, or None (not a help form, no cache)."""
    if (
        sys.platform == "win32"
        or argv[-1:] not in (["--help"], ["-h"])
        or "_ENVMGR_COMPLETE" in env
        or any(env.get(k) for k in _FULL_PATH_ENV)
        or _project_defaults()
    ):  # a project's defaults: never kept
        return None
    from envmgr.fastpath.helptext import help_file, help_form

    if not help_form(argv):
        return None
    folder = cache_dir(env)
    return help_file(argv, env, folder) if folder else None


def _full_keeping_help(full: Callable[[], None], path: str) -> None:
    """The full CLI, with what it prints on stdout kept in `path` when it exits 0 (click's help)."""
    import io

    real, captured = sys.stdout, io.StringIO()
    code: str | int | None = 0
    sys.stdout = captured
    try:
        full()
    except SystemExit as exc:
        code = exc.code
    finally:
        sys.stdout = real
    text = captured.getvalue()
    _write_text(text)
    if code in (0, None) and text:
        from envmgr.fastpath.helptext import store_help

        store_help(path, text)
    sys.exit(code)


def _project_defaults() -> bool:
    """An envmgr.toml or a pyproject.toml naming tool.envmgr from here upward (files/project.py reads them)."""
    folder = os.getcwd()
    while True:
        if os.path.isfile(os.path.join(folder, "envmgr.toml")):
            return True
        pyproject = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(pyproject):
            with open(pyproject, "rb") as fh:
                if b"tool.envmgr" in fh.read(1 << 20):
                    return True
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


def plan(argv: list[str], env: Mapping[str, str]) -> Callable[[], object] | None:
    """A callable that answers `argv` on the fast path, or None for the full CLI."""
    if sys.platform == "win32" or "_ENVMGR_COMPLETE" in env or any(env.get(k) for k in _FULL_PATH_ENV):
        return None
    if argv in (["--version"], ["-V"]):
        from envmgr import __version__

        return lambda: _write_text(f"envmgr, version {__version__}\n")
    if argv[-1:] in (["--help"], ["-h"]):
        return None if _project_defaults() else _kept_help(argv, env)
    if not argv or argv[0] not in ("export", "run") or _project_defaults():
        return None
    command: tuple[str, ...] = ()
    args = argv[1:]
    if argv[0] == "run":
        if "--" not in args:
            return None
        cut = args.index("--")
        args, command = args[:cut], tuple(args[cut + 1 :])
        if not command or command[0] == "--":
            return None
    opts = parse_options(args, with_format=argv[0] == "export")
    if opts is None:
        return None
    data = read_entry(opts, env)
    if data is None:
        return None
    if argv[0] == "run":
        return lambda: _run(data, command)
    fmt = opts.get("--format", "toml")
    if "--activate" in opts:
        if fmt not in ("sh", "fish", "ps1", "cmd"):
            return None
        text = _activation_script(data, fmt, env)
        slot = env.get("ENVMGR_SLOT")
        if slot and fmt == "sh" and argv[1:4] == ["--activate", "--format", "sh"]:
            from envmgr.fastpath.slot_sh import write_sh_slot  # for shells/envmgr.sh: next time, no Python

            write_sh_slot(slot, data, argv[4:], env, data["fast_file"])
        elif slot and fmt == "fish" and argv[1:4] == ["--activate", "--format", "fish"]:
            from envmgr.fastpath.slot_fish import write_fish_slot  # for shells/envmgr.fish

            write_fish_slot(slot, data, argv[4:], env, data["fast_file"])
        elif slot and fmt == "ps1" and argv[1:4] == ["--activate", "--format", "ps1"]:
            from envmgr.fastpath.slot_ps1 import write_ps1_slot  # for Enter-Envmgr (shells/Envmgr.psm1)

            write_ps1_slot(slot, data, argv[4:], env, data["fast_file"])
        return lambda: _write_bytes(text)
    out = data["out"].get(fmt)
    if out is None:
        return None
    return lambda: _write_bytes(out) if isinstance(out, bytes) else _write_text(out)


def cache_dir(env: Mapping[str, str]) -> str | None:
    """cache.cache_dir() without platformdirs (its Linux rule: $XDG_CACHE_HOME or ~/.cache)."""
    override = env.get("ENVMGR_CACHE_DIR")
    if override:
        return override
    if not sys.platform.startswith("linux"):
        return None
    base = env.get("XDG_CACHE_HOME", "")
    if not base.strip():
        base = os.path.expanduser("~/.cache")
    return os.path.join(base, "envmgr")


def read_entry(opts: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any] | None:
    import marshal

    from envmgr import __version__
    from envmgr.cache.key import cache_key, entry_token, still_valid

    folder = cache_dir(env)
    if folder is None:
        return None
    key = cache_key("linux", selectors(opts), env, __version__)
    entry = os.path.join(folder, "snapshots", key + ".toml")
    try:
        with open(entry[:-5] + ".fast", "rb") as fh:
            data = marshal.loads(fh.read())
    except (OSError, ValueError, EOFError, TypeError):
        return None
    if not isinstance(data, dict) or data.get("v") != 1 or data.get("platform") != "linux" or not well_formed(data):
        return None
    if entry_token(entry) != data.get("entry") or not still_valid(data["validity"]):
        return None
    data["fast_file"] = entry[:-5] + ".fast"
    return data


_OPS = ("set", "prepend", "append", "unset", "remove")


def well_formed(data: dict[str, Any]) -> bool:
    """KEY.fast holds what cache/fast.answers writes, with those types: a damaged or foreign file is
    no answer (the full CLI then reads the entry), never a TypeError halfway through printing."""
    out, ops, validity = data.get("out"), data.get("ops"), data.get("validity")
    return (
        isinstance(out, dict)
        and all(isinstance(k, str) and isinstance(v, (str, bytes)) for k, v in out.items())
        and isinstance(ops, (list, tuple))
        and all(_well_formed_op(op) for op in ops)
        and isinstance(data.get("marker"), str)
        and isinstance(validity, dict)
        and all(isinstance(p, str) and isinstance(t, str) for p, t in validity.items())
    )


def _well_formed_op(op: object) -> bool:
    if not isinstance(op, tuple) or len(op) != 3:
        return False
    name, kind, value = op
    return (
        isinstance(name, str)
        and kind in _OPS
        and (isinstance(value, str) or isinstance(value, tuple) and all(isinstance(v, str) for v in value))
    )


def _delta(data: dict[str, Any]) -> EnvDelta:
    from envmgr.snapshot.envdelta import EnvDelta, VarOp

    return EnvDelta(data["platform"], tuple(VarOp(*op) for op in data["ops"]))


def _activation_script(data: dict[str, Any], fmt: str, env: Mapping[str, str]) -> bytes:
    """What `export --activate --format FMT` prints: render(activation_delta(...), fmt, env)."""
    from envmgr.shellkit import render, stream_encoding
    from envmgr.snapshot.activation import activation_delta

    delta = activation_delta(_delta(data), env, data["marker"])
    return render(delta, fmt, dict(env)).encode(stream_encoding(fmt))


def _run(data: dict[str, Any], command: tuple[str, ...]) -> None:
    """`run`: what session.run_command does after resolving (the child's exit code is ours): in
    _fastrun's few imports, or when it is unsure, through activation and spawn as the full CLI."""
    from envmgr.fastpath import run as _fastrun

    try:
        _fastrun.run(data["ops"], data["marker"], command)  # exits when it ran the command
    except KeyboardInterrupt:
        sys.exit(130)
    _run_full(data, command)


def _run_full(data: dict[str, Any], command: tuple[str, ...]) -> None:
    from envmgr import spawn
    from envmgr.errors import EnvmgrError
    from envmgr.snapshot.activation import activation_delta

    env = activation_delta(_delta(data), environ(), data["marker"]).apply(environ())
    try:
        code = spawn.run(list(command), env)
    except EnvmgrError as exc:
        from envmgr.output import show_error

        sys.exit(show_error(exc))
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(code)


def _write_text(text: str) -> None:
    if sys.stdout is None:
        _cannot_write(None)
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _reader_gone()
    except OSError as exc:
        _cannot_write(exc)


def _write_bytes(data: bytes) -> None:
    if sys.stdout is None:
        _cannot_write(None)
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    except BrokenPipeError:
        _reader_gone()
    except OSError as exc:
        _cannot_write(exc)


def _cannot_write(exc: OSError | None) -> None:
    """As cli.main (output.guard_stdout): a full disk, `ulimit -f` or a closed stdout is one line and exit 2
    (audit N24), and what is still buffered goes to /dev/null at exit instead of a second error."""
    from envmgr.output import output_failed, quiet_fd1, show_error

    quiet_fd1()
    sys.exit(show_error(output_failed(exc)))


def _reader_gone() -> None:
    # As cli.main: `envmgr export | head` is not an error worth a traceback.
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(0)
