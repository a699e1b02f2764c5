"""tomllib.loads for large machine records, with the basic strings decoded in C (issue 14).

tomllib reads a basic string ("C:\\\\Program Files\\\\...") one character per Python loop turn: a
100-instance record (570 kB, nearly all of it in basic strings: file paths, vswhere's JSON) cost
~100 ms of its parse there. `loads` finds the strings with one regular expression, hands tomllib the
document with each one replaced by a short literal-string placeholder, decodes all of them in one
json.loads call (TOML's simple escapes are JSON's) and puts them back in the result.

The answer is tomllib's, or `loads` asks tomllib itself: a string with an escape JSON does not share
(\\uXXXX, \\UXXXXXXXX, a line-ending backslash) stays in the document for tomllib; a quote that
starts no well-formed string, a placeholder that comes back as anything but a whole string, or two
keys that become one (`"a"` beside `a`) make it parse the original text instead, so tomllib also
gives every error and its line and column.
"""

from __future__ import annotations

import json
import re

from envmgr.files.tomlread import tomllib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

_MARK = "\ue000"  # a private-use character: the placeholders' prefix, when the text holds none
_CTL1 = r"\x00-\x08\x0a-\x1f\x7f"  # what a one-line basic string cannot hold (tab can)
_CTLM = r"\x00-\x08\x0b-\x1f\x7f"  # ... a multi-line one (tab and LF can; CRLF is LF by then)
_ESC = r'\\[btnfr"\\]'  # the escapes that mean the same in JSON

# One token at each quote or `#` outside strings and comments (in TOML they can start nothing else):
# a basic string decoded here (ml, one), one skipped as tomllib would read it (keep), or a quote that
# starts no well-formed string (bad). Every loop is unrolled ("normal* (special normal*)*"): a
# string that does not match fails in linear time.
_TOKEN = re.compile(
    rf"""
  "(?:
    ""(?P<ml>[^"\\{_CTLM}]*(?:(?:{_ESC}|"(?!""))[^"\\{_CTLM}]*)*)"{{3}}(?!")
  | (?P<one>[^"\\{_CTL1}]*(?:{_ESC}[^"\\{_CTL1}]*)*)"(?!")
  )
| (?P<keep>
    "(?: ""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*"{{3}}"{{0,2}} | [^"\\\n]*(?:\\.[^"\\\n]*)*" )
  | '(?: ''[\s\S]*?'{{3}}'{{0,2}} | [^'\n]*' )
  | \#[^\n]* )
| (?P<bad>['"])
""",
    re.X,
)
_BARE_QUOTE = re.compile(r'(\\[\s\S])|"')


class _Mismatch(Exception):
    """The placeholders did not come back as whole strings, or two keys became one."""


def loads(text: str) -> dict[str, Any]:
    """tomllib.loads(text), faster on documents with many or long basic strings; raises what it raises."""
    src = text.replace("\r\n", "\n")  # as tomllib does first
    marked = None if _MARK in src else _mark(src)
    if marked is not None:
        doc, bodies = marked
        try:
            data = tomllib.loads(doc)
            strings = json.loads("[" + ",".join(bodies) + "]", strict=False)
            restored: dict[str, Any] = _restore(data, {f"{_MARK}{i}": s for i, s in enumerate(strings)})
            return restored
        except (tomllib.TOMLDecodeError, ValueError, _Mismatch):
            pass
    plain: dict[str, Any] = tomllib.loads(text)
    return plain


def _mark(src: str) -> tuple[str, list[str]] | None:
    """(the document with each decodable basic string replaced, those strings as JSON), or None."""
    parts = _TOKEN.split(src)  # text, then ml, one, keep, bad of a token, text, ...
    if parts[4::5].count(None) != len(parts) // 5:
        return None
    numbers: dict[str, int] = {}  # one placeholder per spelling, so tomllib sees the same key again
    tokens = []
    for ml, one, keep in zip(parts[1::5], parts[2::5], parts[3::5], strict=True):
        if keep is not None:
            tokens.append(keep)
            continue
        if one is None:
            one = ml[1:] if ml.startswith("\n") else ml  # the newline after the opening """ is dropped
            if '"' in one:  # a bare quote ends a JSON string
                one = _BARE_QUOTE.sub(lambda q: q.group(1) or '\\"', one)
        tokens.append(f"'{_MARK}{numbers.setdefault(one, len(numbers))}'")
    if not numbers:
        return None
    tokens.append("")
    text = "".join([s for pair in zip(parts[0::5], tokens, strict=True) for s in pair])
    return text, [f'"{body}"' for body in numbers]


def _restore(value: Any, strings: dict[str, str]) -> Any:
    if isinstance(value, str):
        if _MARK in value:
            try:
                return strings[value]
            except KeyError:
                raise _Mismatch from None
        return value
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if _MARK in k:
                k = strings.get(k)
                if k is None:
                    raise _Mismatch
            if k in out:
                raise _Mismatch
            out[k] = _restore(v, strings)
        return out
    if isinstance(value, list):
        return [_restore(v, strings) for v in value]
    return value
