"""One module per shell: render an EnvDelta as a script that applies it to the CURRENT environment.

    render(delta, fmt, current_env=None) -> str      fmt in FORMATS
    render_github(delta, current_env=None) -> (github_env_text, github_path_text)
    write_script(path, text, fmt)                     bytes in the format's ENCODING, atomically
    newline(fmt), encoding(fmt)                       the per-shell NEWLINE / ENCODING constants (for files)
    stream_encoding(fmt)                              the same without a BOM: for stdout and pipes
    expected_env(delta, env)                          what running the script must leave behind

Rendered text already uses the format's newline (CRLF for cmd/ps1), because values may hold
line breaks that must not be translated: write it as bytes (write_script, or
sys.stdout.buffer.write(text.encode(stream_encoding(fmt)))), never through a text-mode stream.
sh/fish/ps1/cmd read prepend/append bases at run time; dotenv/github are static and resolve
them against `current_env` (github PATH prepends go to $GITHUB_PATH instead).
Anything a format cannot hold exactly raises UnrepresentableValue (exit code 2).

Also launch.py (`envmgr shell`: which shell, its init file) and init.py (`envmgr init`'s profile line):
every PowerShell, sh and fish line envmgr writes is quoted by this package's `quote`, nowhere else.
Imports the vocabulary, files/, host/ and snapshot/ (the EnvDelta it renders).
"""

from __future__ import annotations

import os
from types import ModuleType

from envmgr.errors import ALTERNATIVES
from envmgr.files.atomic import atomic_write
from envmgr.shellkit import cmd, dotenv, fish, github, ps1, sh
from envmgr.shellkit._common import UnrepresentableValue, expected_env
from envmgr.snapshot.envdelta import REMOVE, SET, EnvDelta, VarOp, split_list
from envmgr.winenv import env_key, path_key

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the fast path renders through here
if TYPE_CHECKING:
    from collections.abc import Mapping

FORMATS = ("sh", "fish", "ps1", "cmd", "dotenv", "github")
# A shell is named by its program everywhere (`shell --shell`, `init`); where a script format is asked
# (`export --format`, `deactivate --format`) the shell's name is taken too: the format it reads.
SHELL_FORMATS = {
    "pwsh": "ps1",
    "powershell": "ps1",
    "bash": "sh",
    "zsh": "sh",
    "dash": "sh",
    "sh": "sh",
    "fish": "fish",
    "cmd": "cmd",
}
_MODULES: dict[str, ModuleType] = {"sh": sh, "fish": fish, "ps1": ps1, "cmd": cmd, "dotenv": dotenv, "github": github}
render_github = github.render_github

__all__ = [
    "FORMATS",
    "UnrepresentableValue",
    "encoding",
    "expected_env",
    "newline",
    "render",
    "render_github",
    "stream_encoding",
    "write_script",
]


def _module(fmt: str) -> ModuleType:
    try:
        return _MODULES[fmt]
    except KeyError:
        from envmgr.errors import UsageError

        raise UsageError(f"unknown script format {fmt!r}", f"choose one of {', '.join(FORMATS)}") from None


def newline(fmt: str) -> str:
    text: str = _module(fmt).NEWLINE
    return text


def encoding(fmt: str) -> str:
    name: str = _module(fmt).ENCODING
    return name


def stream_encoding(fmt: str) -> str:
    """A BOM marks a file's encoding; in a pipe (`envmgr export --format ps1 | Invoke-Expression`,
    `> file` that the shell re-encodes anyway) it is a stray U+FEFF at the start of the first line."""
    enc = encoding(fmt)
    return "utf-8" if enc == "utf-8-sig" else enc


def resolve_removals(delta: EnvDelta, current_env: Mapping[str, str] | None) -> EnvDelta:
    """`remove` ops (drop other toolkits' folders from PATH) become a `set` of the current value
    without those folders: shells have no portable list filtering (cmd has none at all). The
    later prepend/append ops still apply to the value at run time."""

    if not any(op.op == REMOVE for op in delta.ops):
        return delta
    fold = delta.platform == "windows"
    env = dict(current_env or {})
    ops = []
    for op in delta.ops:
        if op.op != REMOVE:
            ops.append(op)
            continue
        key = env_key(env, op.name, fold)
        if key is None:
            continue
        drop = {path_key(e, fold) for e in op.entries}
        kept = [e for e in split_list(env[key], delta.sep) if path_key(e, fold) not in drop]
        if len(kept) != len(split_list(env[key], delta.sep)):
            ops.append(VarOp(op.name, SET, delta.sep.join(kept)))
    return EnvDelta(delta.platform, tuple(ops))


def render(delta: EnvDelta, fmt: str, current_env: Mapping[str, str] | None = None) -> str:
    """The script; UnrepresentableValue (exit 2) when `fmt` cannot hold the environment, its fix naming
    only formats that can (each is tried on the same environment: audit M2)."""
    try:
        return _render(delta, fmt, current_env)
    except UnrepresentableValue as exc:
        exc.remedy = _other_formats(delta, fmt, current_env)
        raise


def _render(delta: EnvDelta, fmt: str, current_env: Mapping[str, str] | None) -> str:
    mod = _module(fmt)
    delta = resolve_removals(delta, current_env)
    if fmt in ("dotenv", "github"):
        text: str = mod.render(delta, current_env)
    else:
        text = mod.render(delta)
    return text


def _other_formats(delta: EnvDelta, fmt: str, current_env: Mapping[str, str] | None) -> str:
    """The fix for a refusal: the formats, of those a user of `fmt` would turn to, that hold this environment."""

    def holds(other: str) -> bool:
        try:
            _render(delta, other, current_env)
        except UnrepresentableValue:
            return False
        return True

    others = ALTERNATIVES.get(fmt, ())
    able = [f for f in others if holds(f)]
    if not able:
        return (
            f"{' and '.join(others) or 'no other format'} cannot hold it either: change the variable where it "
            "comes from (the snapshot, the recipe, or the environment envmgr was started in)"
        )
    step = " (run it in a step)" if fmt == "github" else ""
    return f"export this environment as {' or '.join(able)} instead{step}"


def write_script(path: str | os.PathLike[str], text: str, fmt: str) -> None:
    atomic_write(path, text.encode(encoding(fmt)))
