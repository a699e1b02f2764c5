"""cmd.exe batch files: `set "NAME=value"`, every line prefixed with `@` so nothing echoes.

How cmd reads a line (phases, https://stackoverflow.com/a/4095133): 1) `%` expansion, where `%%`
is a literal `%` and `%1`/`%NAME%` expand; 2) tokenizing, where `"` toggles quote mode and outside
quotes `^ & | < >` are special. Delayed expansion (`!`) is off by default in batch files, so `!`
is literal. Hence a value is written with `%` doubled, inside `set "N=...`, and every `"` in the
value flips the quote state, after which `^ & | < >` are escaped with `^` until the next `"`.
`set "N=..."` takes everything up to the LAST quote, so embedded quotes survive.

Refused: CR/LF (a batch line cannot hold them), empty set values (`set "N="` deletes N),
lines over 8191 characters. Prepend/append use `%NAME%`, which cmd expands before tokenizing,
so a CURRENT value holding a `"` followed by `& | < > ^` is re-parsed (cmd offers no
expansion that is safe without delayed expansion, which needs setlocal and so would scope the
change away); `&` and `)` alone are safe, since we never put an expansion inside a `( )` block.

Non-ASCII: cmd decodes each batch line in the console code page (OEM, e.g. 437/850/936), read
line by line, so a script holding non-ASCII text starts with `chcp 65001 >nul` (Windows 10+ reads
the following lines as UTF-8). That switch persists in the console after `call`. Wine's cmd
(8.0) ignores it and decodes batch files as OEM whatever chcp says (see tests/wine).
"""

from __future__ import annotations

import re

from envmgr.shellkit._common import UnrepresentableValue, check_name, check_text, drop_entries, list_text, ops_of
from envmgr.snapshot.envdelta import PREPEND, SET, UNSET, EnvDelta

NEWLINE = "\r\n"
ENCODING = "utf-8"
MAX_LINE = 8191
# Names inside `set "..."`: anything but '=', '"', '%' and control characters.
SET_NAME = re.compile(r'[^="%\x00-\x1f]+')
# Names also used as `if defined N` and `%N%`: no delimiters, no ':'/'~' (substring syntax),
# no leading digit (`%1` is an argument).
EXPAND_NAME = re.compile(r"[A-Za-z_#$@.\-][A-Za-z0-9_#$@.\-]*")
SPECIAL = "^&|<>"


def escape(value: str, quoted: bool = True) -> tuple[str, bool]:
    """The text for `value` inside a `set "..."` argument, and the quote state after it."""
    out = []
    for ch in value:
        if ch == "%":
            out.append("%%")
            continue
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in SPECIAL:
            out.append("^")
        out.append(ch)
    return "".join(out), quoted


def _set(name: str, text: str, tail: str = "") -> str:
    """`set "NAME=text<tail>"` where tail is a raw `;%NAME%` expansion (kept unescaped)."""
    body, _ = escape(f"{name}={text}")
    return f'set "{body}{tail}"'


L = "__envmgr_l"
# Entries that cannot be the search text of %VAR:old=new% (it ends at the first '=', and '%' ends
# the expansion): they are not removed first, so only they would stack when applied twice.
UNSEARCHABLE = "=%"


def _strip(n: str, drop: list[str], sep: str) -> list[str]:
    """Lines that set L to %n% without the entries `drop` (so applying twice equals once).

    %VAR:old=new% replaces every occurrence, case-insensitively, as Windows compares paths. With
    every separator doubled (";a;;b;"), each entry is ";entry;" with separators of its own, so one
    pass removes adjacent duplicates too; the remaining ";;" pairs are then halved and one separator
    cut from each end (%L:~1,-1% of ";" is empty)."""
    lines = [f'@set "{L}={sep}%{n}%{sep}"', f'@set "{L}=%{L}:{sep}={sep}{sep}%"']
    lines += [f'@set "{L}=%{L}:{sep}{e}{sep}=%"' for e in drop]
    lines += [f'@set "{L}=%{L}:{sep}{sep}={sep}%"', f'@set "{L}=%{L}:~1,-1%"']
    return lines


def render(delta: EnvDelta) -> str:
    lines = ["@rem envmgr environment for cmd.exe: call this file (call env.cmd)"]
    for op in ops_of(delta):
        n, first = op.name, len(lines)
        simple = op.op in (SET, UNSET)
        check_name(
            "cmd",
            n,
            SET_NAME if simple else EXPAND_NAME,
            "free of '=', '\"', '%' and control characters"
            if simple
            else "letters, digits and _#$@.- (not starting with a digit) to be expanded as %NAME%",
        )
        if op.op == UNSET:
            lines.append(f'@set "{escape(n)[0]}="')
            continue
        text = str(op.value) if op.op == SET else list_text(delta, op)
        check_text("cmd", n, text, "\r\n", why="a batch line cannot hold a line break")
        if op.op == SET:
            if text == "":
                raise UnrepresentableValue("cmd", n, 'cmd cannot hold an empty value (set "N=" deletes N); use unset')
            lines.append("@" + _set(n, text))
        elif text:
            lines += _strip(n, drop_entries(delta, op, UNSEARCHABLE), delta.sep)
            if op.op == PREPEND:
                lines.append(f"@if defined {L} " + _set(n, text + delta.sep, f"%{L}%"))
            else:
                lines.append(f'@if defined {L} set "{n}=%{L}%{escape(delta.sep + text)[0]}"')
            lines.append(f"@if not defined {L} " + _set(n, text))
            lines.append(f'@set "{L}="')
        if max((len(line) for line in lines[first:]), default=0) > MAX_LINE:
            raise UnrepresentableValue("cmd", n, f"the line would exceed cmd's {MAX_LINE}-character limit")
    if any(ord(c) > 127 for line in lines for c in line):
        lines.insert(1, "@chcp 65001 >nul 2>&1")
    return "".join(line + NEWLINE for line in lines)
