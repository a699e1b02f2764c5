"""Parsing JSON and TOML from outside without a traceback or a minutes-long parse, however deep it nests.

A 2 kB file of 1,000 nested brackets ends json's and tomllib's recursion (RecursionError), and a key of
20,000 dotted parts (`a.a.a… = 1`, 40 kB) costs tomllib ~10 s and gigabytes before it does: its
dotted-key handling is quadratic. `loads_json` turns RecursionError and MemoryError into the
ValueError (json.JSONDecodeError) every caller already handles as "not valid JSON"; `too_deep_toml`
finds the long dotted key before tomllib sees it. No real file comes near MAX_DEPTH: the deepest key
in the shipped records and recipes has 4 parts.
"""

from __future__ import annotations

import json
import math
import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the fast path reads ENVMGR_RESTORE here
if TYPE_CHECKING:
    from typing import Any

MAX_DEPTH = 100  # dotted key parts (TOML); a deeper document is refused, not parsed

# MAX_DEPTH key parts joined by dots (bare or quoted parts; TOML allows blanks around the dots). Only lines
# with that many dots are searched: a large record has thousands of dots, but few on any one line.
_DOTTED = re.compile(r"""(?:(?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')[ \t]*\.[ \t]*)""" + f"{{{MAX_DEPTH}}}")


def loads_json(text: str | bytes) -> Any:
    """json.loads; a document too deep or too large to build is a json.JSONDecodeError, as bad syntax is,
    and so are NaN, Infinity and a number too large for a float (`1e999`): RFC 8259 has none of them, and
    once read they would make every later --json document invalid (audit N11)."""
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except json.JSONDecodeError:
        raise
    except (RecursionError, MemoryError, ValueError) as exc:
        doc = text if isinstance(text, str) else ""
        why = str(exc) if isinstance(exc, ValueError) else "nested too deeply (or too large) to read"
        raise json.JSONDecodeError(why, doc, 0) from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (RFC 8259)")


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise ValueError(f"{literal[:20]} is too large for a number")
    return value


def too_deep_toml(text: str) -> int | None:
    """The 1-based number of a line whose dotted key has MAX_DEPTH parts or more, else None."""
    if text.count(".") < MAX_DEPTH:
        return None
    for number, line in enumerate(text.splitlines(), 1):
        if line.count(".") >= MAX_DEPTH and _DOTTED.search(line):
            return number
    return None
