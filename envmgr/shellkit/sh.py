"""POSIX sh (bash, zsh, dash): `export NAME='value'`.

Single quotes keep every byte literally (newlines too); a quote is written `'\\''`. The output has
no comments, because zsh without INTERACTIVE_COMMENTS runs `#` as a command in `eval "$(...)"`.
"""

from __future__ import annotations

import re

from envmgr.shellkit._common import check_name, check_text, drop_entries, list_text, ops_of
from envmgr.snapshot.envdelta import PREPEND, SET, UNSET, EnvDelta

NEWLINE = "\n"
ENCODING = "utf-8"
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def double_quoted_body(text: str) -> str:
    """`text` for inside "...": the four characters special there (\\ " $ `) escaped with a backslash."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace("`", "\\`")


def quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def render(delta: EnvDelta) -> str:
    lines = []
    for op in ops_of(delta):
        n = op.name
        check_name("sh", n, NAME, "letters, digits and '_', not starting with a digit")
        if op.op == UNSET:
            lines.append(f"unset {n}")
            continue
        text = str(op.value) if op.op == SET else list_text(delta, op)
        check_text("sh", n, text)
        if op.op == SET:
            lines.append(f"export {n}={quote(text)}")
        elif text:
            lines.append(
                _strip(n, drop_entries(delta, op), delta.sep)
                + "; "
                + (
                    # ${L:+sep$L}: the separator only when what is left is non-empty.
                    f'export {n}={quote(text)}"${{{L}:+{delta.sep}${L}}}"'
                    if op.op == PREPEND
                    else f'export {n}="${{{L}:+${L}{delta.sep}}}"{quote(text)}'
                )
                + f"; unset {L} {E}"
            )
    return "".join(line + NEWLINE for line in lines)


L, E = "__envmgr_l", "__envmgr_e"


def _strip(n: str, drop: list[str], sep: str) -> str:
    """Set L to $n without the entries `drop` (each occurrence), so that applying twice equals once.

    POSIX only (dash has no arrays or ${//}): L is ":$n:", and while ":entry:" occurs in it, the
    first occurrence becomes ":" (quoted pattern parts match literally); then one ':' is cut from each end.
    """
    entries = " ".join(quote(e) for e in drop)
    pat = f'"{sep}${E}{sep}"'
    return (
        f'{L}="{sep}${{{n}-}}{sep}"; for {E} in {entries}; do while :; do case "${L}" in *{pat}*) '
        f'{L}="${{{L}%%{pat}*}}{sep}${{{L}#*{pat}}}";; *) break;; esac; done; done; '
        f'{L}="${{{L}#{sep}}}"; {L}="${{{L}%{sep}}}"'
    )
