"""POSIX sh (bash, zsh, dash): `export NAME='value'`.

Single quotes keep every byte literally (newlines too); a quote is written `'\\''`. The output has
no comments, because zsh without INTERACTIVE_COMMENTS runs `#` as a command in `eval "$(...)"`.
"""
from __future__ import annotations

import re

from ..envdelta import APPEND, PREPEND, SET, UNSET, EnvDelta
from ._common import check_name, check_text, list_text, ops_of

NEWLINE = "\n"
ENCODING = "utf-8"
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
        elif text and op.op == PREPEND:
            # ${N:+sep$N}: the separator only when the current value is non-empty.
            lines.append(f'export {n}={quote(text)}"${{{n}:+{delta.sep}${n}}}"')
        elif text and op.op == APPEND:
            lines.append(f'export {n}="${{{n}:+${n}{delta.sep}}}"{quote(text)}')
    return "".join(line + NEWLINE for line in lines)
