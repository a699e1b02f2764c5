"""fish: `set -gx NAME 'value'`.

In fish single quotes only `\\'` and `\\\\` are escapes. Variables whose name ends in PATH are
path variables (fish splits them on ':' when set and joins them with ':' when quoted or
exported), so list values are built from the quoted "$NAME", which round-trips either way.
"""

from __future__ import annotations

import re

from envmgr.shellkit._common import UnrepresentableValue, check_name, check_text, drop_entries, list_text, ops_of
from envmgr.snapshot.envdelta import PREPEND, SET, UNSET, EnvDelta

NEWLINE = "\n"
ENCODING = "utf-8"
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# fish's read-only or electric variables: `set -gx` on them fails or is ignored.
# fish exports an empty element of these as "." (fish 3.6, measured): "a::b" would become "a:.:b".
DOT_FOR_EMPTY = frozenset({"PATH", "CDPATH"})
READ_ONLY = frozenset(
    {
        "PWD",
        "SHLVL",
        "_",
        "history",
        "status",
        "pipestatus",
        "version",
        "FISH_VERSION",
        "fish_pid",
        "hostname",
        "umask",
        "status_generation",
        "fish_kill_signal",
        "argv",
    }
)


def quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def render(delta: EnvDelta) -> str:
    lines = ["# envmgr environment for fish: source this file"]
    for op in ops_of(delta):
        n = op.name
        check_name("fish", n, NAME, "letters, digits and '_', not starting with a digit")
        if n in READ_ONLY:
            raise UnrepresentableValue("fish", n, "fish does not let scripts set this variable", what="name")
        if op.op == UNSET:
            lines.append(f"set -q {n}; and set -e {n}")
            continue
        text = str(op.value) if op.op == SET else list_text(delta, op)
        check_text("fish", n, text)
        if n in DOT_FOR_EMPTY and (op.op == SET or text) and "" in text.split(":"):
            raise UnrepresentableValue("fish", n, "fish exports an empty entry of this path variable as '.'", ":")
        if op.op == SET:
            lines.append(f"set -gx {n} {quote(text)}")
        elif text:
            joined = f'{quote(text + delta.sep)}"${L}"' if op.op == PREPEND else f'"${L}"{quote(delta.sep + text)}'
            lines.append(
                _strip(n, drop_entries(delta, op)) + f'; if test -n "${L}"; set -gx {n} {joined}; '
                f"else; set -gx {n} {quote(text)}; end; set -e {L}; set -e {C}; set -e {E}"
            )
    return "".join(line + NEWLINE for line in lines)


L, C, E = "__envmgr_l", "__envmgr_c", "__envmgr_e"


def _strip(n: str, drop: list[str]) -> str:
    """Set L to $n without the entries `drop`, so that applying twice equals once. L is a path
    variable: set from "$n" it splits on ':' (whether $n is a path variable, joined by the quotes,
    or a plain string), and "$L" joins what is kept with ':' again."""
    return (
        f'set -l --path {C} "${n}"; set -l --path {L}; for {E} in ${C}; '
        f"contains -- ${E} {' '.join(quote(e) for e in drop)}; or set -a {L} ${E}; end"
    )
