"""PowerShell (Windows PowerShell 5.1 and pwsh): `$env:NAME = '...'`.

Verbatim (single-quoted) strings expand nothing; a quote inside is doubled. PowerShell's
tokenizer also treats the curly quotes U+2018 U+2019 U+201A U+201B as single quotes
(`CharExtensions.IsSingleQuote`), so an undoubled ‘ would end the string: every one is doubled.
Files are UTF-8 with a BOM, because Windows PowerShell 5.1 reads BOM-less files as ANSI.
"""

from __future__ import annotations

import re

from envmgr.shellkit._common import UnrepresentableValue, check_name, check_text, drop_entries, list_text, ops_of
from envmgr.snapshot.envdelta import PREPEND, SET, UNSET, EnvDelta

NEWLINE = "\r\n"
ENCODING = "utf-8-sig"
SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"
SIMPLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ANY_NAME = re.compile(r"[^=]+")


def quote(value: str) -> str:
    return "'" + "".join(c + c if c in SINGLE_QUOTES else c for c in value) + "'"


def _var(name: str) -> tuple[str, str]:
    """(expression reading NAME, statement prefix assigning it) for any legal name."""
    if SIMPLE.fullmatch(name):
        return f"$env:{name}", f"$env:{name} = "
    q = quote(name)
    return f"[Environment]::GetEnvironmentVariable({q})", f"[Environment]::SetEnvironmentVariable({q}, "


def _assign(name: str, expr: str) -> str:
    _, prefix = _var(name)
    return prefix + expr + ("" if prefix.endswith("= ") else ")")


def render(delta: EnvDelta) -> str:
    lines = ["# envmgr environment for PowerShell: dot-source this file (. .\\env.ps1)"]
    for op in ops_of(delta):
        n = op.name
        check_name("ps1", n, ANY_NAME, "non-empty and without '='")
        check_text("ps1", n, n, what="name")
        read, _ = _var(n)
        if op.op == UNSET:
            lines.append(
                f"Remove-Item Env:{n} -ErrorAction SilentlyContinue"
                if SIMPLE.fullmatch(n)
                else f"[Environment]::SetEnvironmentVariable({quote(n)}, $null)"
            )
            continue
        text = str(op.value) if op.op == SET else list_text(delta, op)
        check_text("ps1", n, text)
        if op.op == SET:
            if text == "":
                raise UnrepresentableValue("ps1", n, "PowerShell deletes a variable assigned ''; use unset")
            lines.append(_assign(n, quote(text)))
        elif text:
            grown = f"{quote(text + delta.sep)} + {KEPT}" if op.op == PREPEND else f"{KEPT} + {quote(delta.sep + text)}"
            lines.append(
                f"{_strip(read, drop_entries(delta, op), delta)}; "
                f"if ({KEPT}) {{ {_assign(n, grown)} }} else {{ {_assign(n, quote(text))} }}; "
                f"Remove-Variable {KEPT[1:]}"
            )
    return "".join(line + NEWLINE for line in lines)


KEPT = "$__envmgr_l"


def _strip(read: str, drop: list[str], delta: EnvDelta) -> str:
    """KEPT = the current value without the entries `drop` (so applying twice equals once);
    -notcontains compares case-insensitively, as Windows does (-cnotcontains elsewhere)."""
    notin = "-notcontains" if delta.platform == "windows" else "-cnotcontains"
    sep = quote(delta.sep)  # ';' or ':', neither special in -split's regex
    return (
        f"{KEPT} = @(({read} -split {sep}) | Where-Object {{ @({', '.join(quote(e) for e in drop)}) {notin} $_ }})"
        f" -join {sep}"
    )
