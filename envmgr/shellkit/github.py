"""GitHub Actions environment files: $GITHUB_ENV and $GITHUB_PATH.

$GITHUB_ENV takes `NAME=value` lines, or for a value with a line break
`NAME<<DELIMITER`, the value's lines, then `DELIMITER` alone on a line
(https://docs.github.com/actions/using-workflows/workflow-commands-for-github-actions#multiline-strings).
The runner reads lines with .NET ReadLine, so a CR is a line break too and cannot be kept: refused.
Values are static, so prepend/append are resolved against `current_env`, except prepends to PATH:
each line of $GITHUB_PATH is PREPENDED to PATH for later steps, the last line ending up first, so
each op's entries are written in reverse. GitHub files cannot unset a variable (refused), and the runner
rejects NODE_OPTIONS in $GITHUB_ENV.
"""

from __future__ import annotations

import hashlib
import re

from envmgr.shellkit._common import UnrepresentableValue, check_name, check_text, ops_of
from envmgr.shellkit.dotenv import final_values
from envmgr.snapshot.envdelta import PREPEND, UNSET, EnvDelta

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the fast path renders through here
if TYPE_CHECKING:
    from collections.abc import Mapping

NEWLINE = "\n"
ENCODING = "utf-8"
NAME = re.compile(r"(?:(?!<<)[^=\r\n])+")
REFUSED_NAMES = frozenset({"NODE_OPTIONS"})


def delimiter(value: str) -> str:
    """A delimiter that looks random, is stable for a value and occurs nowhere in it."""
    for i in range(1000):
        d = "ghadelimiter_" + hashlib.sha256(f"{i}\0{value}".encode("utf-8", "surrogatepass")).hexdigest()[:24]
        if d not in value:
            return d
    raise AssertionError("unreachable: no delimiter found")


def env_line(name: str, value: str) -> str:
    check_text("github", name, value, "\r", why="the runner reads a carriage return as a line break")
    if "\n" not in value:
        return f"{name}={value}{NEWLINE}"
    d = delimiter(value)
    return f"{name}<<{d}{NEWLINE}{value}{NEWLINE}{d}{NEWLINE}"


def _is_path(delta: EnvDelta, name: str) -> bool:
    return name.upper() == "PATH" if delta.platform == "windows" else name == "PATH"


def render_github(delta: EnvDelta, current_env: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(text for $GITHUB_ENV, text for $GITHUB_PATH)."""
    for op in ops_of(delta):
        check_name("github", op.name, NAME, "free of '=', '<<' and line breaks")
        check_text("github", op.name, op.name, what="name")
        if op.name.upper() in REFUSED_NAMES:
            raise UnrepresentableValue("github", op.name, "the runner refuses this name in $GITHUB_ENV", what="name")
        if op.op == UNSET:
            raise UnrepresentableValue("github", op.name, "$GITHUB_ENV cannot unset a variable", what="operation")
    path_ops = [op for op in delta.ops if _is_path(delta, op.name)]
    # PATH goes to $GITHUB_PATH only when every PATH op is a prepend; anything else is resolved.
    via_path_file = bool(path_ops) and all(op.op == PREPEND for op in path_ops)
    # Each op's entries reversed, ops in order: the runner puts the last line first.
    entries = [e for op in path_ops for e in reversed(op.entries) if e != ""] if via_path_file else []
    for e in entries:
        check_text("github", "PATH", e, "\r\n", why="one $GITHUB_PATH line is one entry")
    skip = frozenset(op.name for op in path_ops) if via_path_file else frozenset()
    rest = EnvDelta(delta.platform, tuple(op for op in delta.ops if op.name not in skip))
    values = final_values("github", rest, current_env)
    env_text = "".join(env_line(k, v) for k, v in values.items())
    path_text = "".join(e + NEWLINE for e in entries)
    return env_text, path_text


def render(delta: EnvDelta, current_env: Mapping[str, str] | None = None) -> str:
    env_text, path_text = render_github(delta, current_env)
    return (
        "# envmgr environment for GitHub Actions. Two files:\n"
        "# lines after '# >>> GITHUB_ENV' go to $GITHUB_ENV (variables for later steps);\n"
        "# lines after '# >>> GITHUB_PATH' go to $GITHUB_PATH (each line is PREPENDED to PATH,\n"
        "# the last line first). Inside a GitHub Actions step `envmgr export --format github` appends to both.\n"
        "# >>> GITHUB_ENV\n" + env_text + "# >>> GITHUB_PATH\n" + path_text
    )
