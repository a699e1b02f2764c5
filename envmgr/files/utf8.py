"""Text that is not UTF-8: carried where the output can say so, refused where it cannot.

On POSIX a file name is bytes; Python hands a name that is not UTF-8 (a Latin-1 home folder made under
an old locale) to envmgr as a str with lone surrogates (U+DC80-U+DCFF, PEP 383). JSON can carry them as
`\\udcXX` escapes (`escape_surrogates`), so `--json` output stays valid UTF-8; a snapshot and a machine
record are TOML, which cannot, so they are refused with one line naming the variable (`check_utf8`)
rather than failing in the middle of a write (audit C7).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from envmgr.errors import UsageError

_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(json_text: str) -> str:
    """JSON text with each lone surrogate written as its \\uXXXX escape (what ensure_ascii does to it)."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)


def shown(text: str) -> str:
    """The text with the bytes that are not UTF-8 written as \\xNN: printable, and exact."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def check_utf8(pairs: Iterable[tuple[object, object]], what: str, remedy: str) -> None:
    """UsageError (exit 2) for the first (name, value) pair holding bytes that are not UTF-8."""
    for name, value in pairs:
        for text in (name, value):
            if isinstance(text, str) and _SURROGATE.search(text):
                raise UsageError(
                    f"{what}: {shown(str(name))} holds bytes that are not UTF-8 ({shown(text)!s}); "
                    "envmgr's snapshots and records are UTF-8 text",
                    remedy,
                )
