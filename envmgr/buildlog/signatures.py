"""Log signatures: compiled regexes that tie a line of a build or load log to a catalog id. This module is their
vocabulary (`Signature`, `sig`, the helpers several families share); each rule family keeps its own signatures
(rules/<family>.py: `SIGNATURES`) and rules.SIGNATURES is the table the scan reads, in catalog-id order.

Sources: facts/failures.md §2 and §9, checked against the real logs in tests/corpus (SOURCES.md).
The patterns run over text that logscan has already normalised (ANSI codes stripped, CRLF and lone
CR turned into LF, hard-wrapped MSBuild lines re-joined). They are unanchored, so prefixes such as
MSBuild's `1>`, VS Code's `[build] `, pip's indentation or a timestamp do not matter, and words are
joined with `\\s+` so that CMake's and clang's word-wrapped messages still match. Only text that
every locale prints in English is matched literally (CMake, nvcc, CPython, the #error text of
host_config.h); for localised tools (MSBuild, Windows) the error code is matched instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from envmgr.catalog import FailureId

Details = dict[str, Any]  # what a signature reads from its match (details in --json)
Extract = Callable[[re.Match[str]], Details]


@dataclass(frozen=True)
class Signature:
    id: FailureId  # catalog id, F01…F25
    name: str  # short label for --json and tests
    regex: re.Pattern[str]
    extract: Extract | None = None
    check: Callable[[re.Match[str]], bool] | None = None  # reject a match the regex alone can't
    needle: tuple[str, ...] = ()  # literals, one of which the text must contain (logengine skips the rest)
    span: int = 3  # lines below the needle the message may still run on
    key: str = ""  # a second literal, for signatures that share a common needle


def words(phrase: str) -> str:
    """A literal phrase whose spaces may be any whitespace run, line breaks included."""
    return r"\s+".join(re.escape(w) for w in phrase.split())


def named(m: re.Match[str]) -> Details:
    d = {k: v.strip() for k, v in m.groupdict().items() if v}
    if "\\\\" in d.get("path", ""):  # repr() of a Windows path doubles its backslashes
        d["path"] = d["path"].replace("\\\\", "\\")
    return d


def sig(
    id_: FailureId,
    name: str,
    pattern: str,
    extract: Extract | None = named,
    flags: int = 0,
    check: Callable[[re.Match[str]], bool] | None = None,
    needle: str | tuple[str, ...] = (),
    span: int = 3,
    key: str = "",
) -> Signature:
    """Every signature names its needle(s): a literal the regex cannot match without (tested on the
    corpus), so a window of a long log without it costs one substring search, not a regex pass."""
    needles = (needle,) if isinstance(needle, str) else tuple(needle)
    if not needles:
        raise ValueError(f"signature {name} has no needle")
    return Signature(id_, name, re.compile(pattern, flags), extract, check, needles, span, key)


def lines_above(text: str, pos: int, lines: int) -> int:
    """Where the text `lines` lines above position `pos` starts (0 at the top of the text)."""
    start = pos
    for _ in range(lines):
        start = text.rfind("\n", 0, start - 1) if start > 0 else -1
        if start < 0:
            return 0
    return start


def line_before(m: re.Match[str]) -> str:
    return m.string[m.string.rfind("\n", 0, m.start()) + 1 : m.start()]


# CMake's generators whose names have more than one word, by their first word (Kitware/CMake's generator
# list, printed under this error): a name that is only such a word was cut at its first space
_GENERATOR_FIRST_WORDS = frozenset(
    (
        "Unix",
        "MinGW",
        "MSYS",
        "NMake",
        "Borland",
        "Watcom",
        "Green",
        "Visual",
        "CodeBlocks",
        "CodeLite",
        "Eclipse",
        "Kate",
        "Sublime",
    )
)
NAMED_GENERATOR = r"Could not create named generator (?P<generator>[^\n]+)"


def generator_cut(m: re.Match[str]) -> bool:
    """The name CMake was given for -G is a piece of a generator's name, not an unknown generator: cut at its
    first space (`-G Unix Makefiles` unquoted, CMAKE_ARGS split by a shell or shlex), led by a space, carrying
    the shell's quotes (`"Ninja"` passed as one argument) or running into the next -D setting."""
    raw = m.group("generator").rstrip()
    name = raw.strip().strip("`")
    return (
        raw != raw.lstrip()
        or name[:1] in "\"'"
        or name[-1:] in "\"'"
        or name in _GENERATOR_FIRST_WORDS
        or re.search(r"-D[A-Z]", name) is not None
    )
