"""The vocabulary every rule family shares: a fact's pattern (`FactRx`, made with `fx`), a fact found (`Fact`), what
the rules read (`Facts`: the scanner's answers), a decision (`Decision`) and the `Add` a family decides through.

A fact kind is read by the family that keeps its pattern; the kinds several families read live in rules/common.py.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from envmgr.buildlog.clock import Clock
from envmgr.catalog import FailureId

KEEP = 8  # values kept per fact kind (the first ones)
LAST = 60  # the log's last lines, kept for the state it ends in (a build still running)


@dataclass(frozen=True)
class FactRx:
    kind: str
    regex: re.Pattern[str]
    needles: tuple[str, ...]  # one of these literals is in every match
    keep: int = KEEP  # distinct values kept (1 where only the first is read)


# Kinds whose rules read more than the first value (a list of codes, versions, archs or names).
_MANY = {
    "msb",
    "winerr",
    "cuda_dll",
    "cuda_so",
    "lib_missing",
    "lib_missing_msvc",
    "component_missing",
    "nvcc_fatal",
    "nvcc_missing",
    "cmake_error",
    "toolkit_dir",
    "nvcc_cuda",
    "arch",
    "host_compiler",
    "lnk",
    "header_missing",
    "wheel_index",
    "sdist_build",
    "wheel_tags",
    "wheel_taken",
    "sdist_fetched",
    "wheel_failed",
    "timed_compile",
}


# Kinds whose LAST line is what a rule reads (what the log shows working, after a cause's line: `contradicted`)
_LATEST = {"ok_gpu_work", "ok_lib_loaded", "ok_nvcc_found"}


# Kinds whose rule reads the line around the value (a DLL or shared object named, and whether that line says it is
# missing): the same name on another line is kept too, up to LINES_PER_NAME lines, as the first one may only list it
_BY_LINE = {"cuda_dll", "cuda_so"}
LINES_PER_NAME = 3


def fx(kind: str, pattern: str, needles: str | Iterable[str], flags: int = 0, keep: int | None = None) -> FactRx:
    """The pattern of a fact kind, with the literals one of which every match holds (the scanner's needles)."""
    many = LINES_PER_NAME * KEEP if kind in _BY_LINE else KEEP if kind in _MANY else 1
    return FactRx(
        kind, re.compile(pattern, flags), (needles,) if isinstance(needles, str) else tuple(needles), keep or many
    )


def alts(phrases: Iterable[str]) -> str:
    return "|".join(re.escape(p) for p in phrases)


# cmd's and PowerShell's words for a program not on PATH, after its quoted name, in each locale (cmd quotes it
# 'x' in some languages and "x" in others): en "is not recognized as" (both shells), de cmd 'Der Befehl "x" ist
# entweder falsch geschrieben' (SCons' own tests expect it) and PowerShell 'Die Benennung "x" wurde nicht als Name
# eines Cmdlet', fr, es, it, pt, zh (simplified and traditional), ja, ru as users quote them in public code
NOT_RECOGNIZED = alts(
    (
        "is not recognized as",
        "ist entweder falsch geschrieben",
        "wurde nicht als Name",
        "wird nicht als",
        "n'est pas reconnu",
        "no se reconoce como",
        "non è riconosciuto",
        "não é reconhecido",
        "不是内部或外部命令",
        "不是內部或外部命令",
        "は、内部コマンドまたは外部コマンド",
        "не является внутренней или внешней",
    )
)


@dataclass
class Fact:
    kind: str
    value: str
    line_no: int
    line: str


Lines = Iterable[tuple[int, str]]  # (line number, text): the log's last lines, as FactScanner.last keeps them


class Facts(Protocol):
    """What the rules read of a scan (facts.FactScanner): the first values of each fact kind, the log's last lines
    and its clock."""

    @property
    def facts(self) -> dict[str, list[Fact]]: ...
    @property
    def last(self) -> deque[tuple[int, str]]: ...
    @property
    def clock(self) -> Clock | None: ...
    def first(self, kind: str) -> Fact | None: ...
    def values(self, kind: str) -> list[str]: ...


Details = dict[str, object]


@dataclass(frozen=True)
class Decision:
    id: FailureId
    rule: str
    fact: Fact
    details: Details


class Add(Protocol):
    """How a family decides: `add(id, rule, fact, **details)` names `id` at `fact`'s line, unless the fact is None, an
    earlier family already named that id (the registry's order decides), or a later line contradicts it."""

    def __call__(self, fid: FailureId, rule: str, fact: Fact | None, **details: object) -> None: ...
