"""Scan a build or load log (pip -v, CMake, MSBuild, nvcc, ninja, a Python traceback) for the
catalog's failures: `scan_path(path)` streams the file's text through logengine (bounded memory, linear
time).

Matches are deduplicated per id (the first line, how often the id matched, the first few lines and the
signatures that fired) and ordered by first occurrence; one of them is marked decisive, with the reason
(`why`). Where a log names an nvcc and an MSVC that cannot work together but the error text itself was
cut off (excerpts, CMake's compiler-id output), F04/F05 are inferred from the versions and marked
`inferred` in the details. With no match, the ids whose words appeared are the near misses.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from envmgr.buildlog.advice import TAILORED, Mentions, advise, runtime_of
from envmgr.buildlog.clean import Memo, repair, strip_batch
from envmgr.buildlog.clock import Clock
from envmgr.buildlog.context import ContextScanner, Platform, Veto, veto
from envmgr.buildlog.engine import (
    WEAK_MAX,
    Hit,
    Near,
    Scanner,
    logical_lines,
    physical_lines,
    soft_lines,
    soft_wrap_width,
    weak_wrap_width,
    wrap_width,
)
from envmgr.buildlog.facts import (
    LAST,
    FactScanner,
    build_stop_contradicted,
    build_succeeded,
    decide,
    ends_open,
    unfinished,
)
from envmgr.buildlog.read import LogText
from envmgr.buildlog.report import (
    LogMatch,
    LogScan,
    matches_json,
    render_matches,
    render_scan,
    scan_json,
    unnamed_text,
)
from envmgr.buildlog.rules import NEAR_WORDS, PRECEDENCE, SIGNATURES
from envmgr.buildlog.unnamed import Marks, explain, seen_last, vetoed_answer
from envmgr.catalog import CATALOG, FailureId
from envmgr.errors import InputFileError, LogInputError
from envmgr.knowledge import (
    LOG_JUDGED_FROM,
    cuda_at_least,
    host_limits,
    msc_ver,
    msvc_of_msbuild17,
    msvc_of_msc,
    stl_min_cuda,
)

__all__ = [
    "LogMatch",
    "LogScan",
    "log_facts",
    "matches_json",
    "render_matches",
    "render_scan",
    "scan_json",
    "scan_path",
    "unnamed_text",
]

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


# ---------------------------------------------------------------- facts for details and inference

_CUDA_FACTS = (  # most trustworthy first: what nvcc said about itself, then what ran
    re.compile(r"compiler identification is NVIDIA (\d+\.\d+)"),
    re.compile(r"Cuda compilation tools, release (\d+\.\d+)"),
    re.compile(r"CUDA[\\/]+v(\d+\.\d+)[\\/]+bin[\\/]+nvcc"),
    re.compile(r"BuildCustomizations[\\/]+CUDA (\d+\.\d+)\.targets\("),
)
_MSVC_FACTS = (
    (re.compile(r"-ccbin\s+\"?[^\"\n]*?MSVC[\\/]+(14\.\d+)\.\d+"), "-ccbin"),
    (re.compile(r"CXX compiler identification is MSVC 19\.(\d+)"), "cl"),
    (re.compile(r"with host compiler MSVC 19\.(\d+)"), "cl"),
    (re.compile(r"C compiler identification is MSVC 19\.(\d+)"), "cl"),
    (re.compile(r"C/C\+\+ Optimizing Compiler Version 19\.(\d+)"), "cl"),
    (re.compile(r"MSVC[\\/]+(14\.\d+)\.\d+[\\/]+bin"), "toolset path"),
    (re.compile(r"MSBuild version 17\.(\d+)\."), "MSBuild"),
)
_FAILED = re.compile(
    r"is not able to compile a simple test program|CUDA compiler ABI info - failed|"
    r"CompilerIdCUDA|error MSB3721|did not run successfully|Configuring incomplete|^FAILED: ",
    re.M,
)


def _msvc(value: str, source: str) -> str:
    minor = int(value.split(".")[-1]) if "." in value else int(value)
    # cl 19.NN is toolset 14.NN; MSBuild 17.N ships toolset 14.(30+N) as its default.
    return msvc_of_msbuild17(minor) if source == "MSBuild" else msvc_of_msc(1900 + minor)


def log_facts(text: str) -> dict[str, Any]:
    """The CUDA and MSVC versions a log names, best source first (for details and inference)."""
    facts: dict[str, Any] = {}
    for rx in _CUDA_FACTS:
        m = rx.search(text)
        if m:
            facts["cuda"] = m.group(1)
            break
    for rx, source in _MSVC_FACTS:
        m = rx.search(text)
        if m:
            facts["msvc"] = _msvc(m.group(1), source)
            facts["msvc_from"] = source
            break
    return facts


def _infer(text: str, facts: dict[str, Any]) -> tuple[FailureId, dict[str, Any]] | None:
    """F04 (or F05 with -allow-unsupported-compiler) when a failed CUDA build names an nvcc and an
    MSVC that the compatibility tables say cannot work together. Only CUDA >= 11.8 is judged."""

    cuda, msvc = facts.get("cuda"), facts.get("msvc")
    if not (cuda and msvc and _FAILED.search(text)) or not cuda_at_least(cuda, LOG_JUDGED_FROM):
        return None
    details = {"inferred": True, "cuda": cuda, "msvc": msvc, "msvc_from": facts["msvc_from"]}
    if "-allow-unsupported-compiler" in text:
        need = stl_min_cuda(msvc)
        return ("F05", {**details, "cuda_min": need}) if need and not cuda_at_least(cuda, need) else None
    limits = host_limits(cuda)
    msc = msc_ver(msvc)
    if limits is None or msc is None or limits.msvc_ok(msc):
        return None
    return "F04", {**details, "msc_ver": msc, "accepted": limits.describe_msvc()}


# ---------------------------------------------------------------- scanning


def scan_path(path: str | Path) -> LogScan:
    """One read of the file (read.LogText keeps its text for the next pass), and over it two streaming passes (the
    wrap width, then the scan); InputFileError for bad input. A paste that named nothing and had no wrap width is
    scanned once more with its longest line's length as the width (`weak_wrap_width`: one or two lines cut at a
    column, too few for `wrap_width`), and then with its word-wrapped lines joined (`soft_wrap_width`: an editor or
    a mail client broke lines at spaces)."""

    text = _open(path)
    width = wrap_width(_lines(text))
    clock = Clock()  # the stamps logclean cuts, read on the scan's pass (the same for a paste read again)
    paste = text.size <= WEAK_MAX  # a paste is small: a build's whole output is scanned once
    found = _scan(logical_lines(_lines(text, clock, last=not paste), width), clock)
    if found.matches or not paste:
        return found
    weak = None if width else weak_wrap_width(_lines(text))
    again = _scan(logical_lines(_lines(text), weak), clock) if weak else found
    if again.matches:
        return again
    soft = soft_wrap_width(_lines(text))
    again = _scan(soft_lines(_lines(text), soft), clock) if soft else found
    return again if again.matches else found


def _lines(text: LogText, clock: Clock | None = None, last: bool = False) -> Iterator[list[str]]:
    """The file's lines in batches, ANSI codes gone and what a paste adds around them cut (logclean); each raw
    batch given to `clock` first, whose stamps logclean cuts."""
    batches = physical_lines(_stream(text, last), _ANSI)
    return map(strip_batch, batches if clock is None else _clocked(batches, clock))


def _clocked(batches: Iterable[list[str]], clock: Clock) -> Iterator[list[str]]:
    for lines in batches:
        clock.feed(lines)
        yield lines


@dataclass
class _Read:
    """What one pass over a log's logical lines leaves: the signature scanner, the facts (read only where no signature
    matched), the last lines, the program marks, the packages named and the machine the log shows."""

    scanner: Scanner
    facts: FactScanner
    last: deque[tuple[int, str]]  # the last lines: does the build end in success after a match?
    marks: Marks  # a line a program printed (looked for on the first lines only)
    mentions: Mentions  # the packages the log's first lines name (for the try: line)
    context: ContextScanner  # the machine and the run the log shows (context.py: vetoes)


def _read_lines(logical: Iterable[tuple[list[int], list[str]]], clock: Clock | None) -> _Read:
    fact_rxs = (*_CUDA_FACTS, *(rx for rx, _ in _MSVC_FACTS))
    r = _Read(
        Scanner(SIGNATURES, NEAR_WORDS, fact_rxs, _FAILED, msvc_from=len(_CUDA_FACTS)),
        FactScanner(),
        deque(maxlen=LAST),
        Marks(),
        Mentions(),
        ContextScanner(),
    )
    memo: Memo = {}
    for nums, texts in logical:
        nums, texts = repair(nums, texts, memo)
        r.last.extend(zip(nums[-LAST:], texts[-LAST:], strict=True))
        r.marks.feed(texts)
        r.mentions.feed(texts)
        r.context.feed(nums, texts)
        r.scanner.feed(nums, texts)
        if not r.scanner.hits:  # the facts decide only where no signature matched
            r.facts.feed(nums, texts)
    r.scanner.finish()
    if not r.scanner.hits:
        r.facts.finish()
        r.facts.clock = clock.finish() if clock is not None else None
    return r


def _candidates(r: _Read) -> tuple[list[LogMatch], dict[FailureId, int]]:
    """The catalog ids the lines give (signatures, versions that cannot work together, the facts' anchors), and each
    signature id's place on its line."""
    scanner, last = r.scanner, r.last
    # The lines that hold the first match of each fact regex give log_facts the same answer as the log.
    versions = log_facts("\n".join(line for _, line in sorted(scanner.fact_lines.values())))
    # a build-stopping cause whose match the build's own success follows is not named (as the facts' `contradicted`)
    hits = {
        fid: hit
        for fid, hit in scanner.hits.items()
        if build_stop_contradicted(last, fid, hit.signature, hit.line_no) is None
    }
    inferred = None
    if not hits.keys() & {"F04", "F05"} and "failed" in scanner.anchors:
        deciding = "\n".join(scanner.anchors[k][2] for k in ("failed", "allow") if k in scanner.anchors)
        inferred = _infer(deciding, versions)
        if inferred and build_stop_contradicted(last, inferred[0], "", scanner.anchors["failed"][1]):
            inferred = None
    matches = [_match(fid, hit, versions) for fid, hit in hits.items()]
    if not matches and not inferred and not scanner.hits:  # (the facts stopped at the first match: not read)
        matches = _anchored(r.facts)
    if inferred:
        anchor = scanner.anchors.get("ccbin") or scanner.anchors["failed"]
        matches.append(
            LogMatch(
                inferred[0],
                anchor[1],
                anchor[2].strip(),
                CATALOG[inferred[0]],
                {"signature": "inferred-from-versions", **inferred[1]},
                1,
                ((anchor[1], anchor[2].strip()),),
                ("inferred-from-versions",),
            )
        )
    return matches, {fid: hit.index for fid, hit in hits.items()}


def _scan(logical: Iterable[tuple[list[int], list[str]]], clock: Clock | None = None) -> LogScan:
    r = _read_lines(logical, clock)
    matches, order = _candidates(r)
    last, facts = r.last, r.facts
    platform = r.context.platform()
    matches, vetoed = _vetoes(matches, platform, last)  # the one hook: context.veto judges, this records
    # in the order of the text: several logical lines share one physical line (a repr or JSON string of the log)
    matches.sort(key=lambda m: (m.line_no, order.get(m.id, 0), m.id))
    near = () if matches else _near(r.scanner.near)
    failed = None if matches else platform.first_failure(last)  # a tool's failure line is program output too
    why = (
        None
        if matches
        else explain(
            facts.first("outside_stop") or seen_last(last),
            build_succeeded(last, 0),
            unfinished(last) or ends_open(last),
            r.marks.output or failed is not None,
        )
    )
    if why is not None:
        why = vetoed_answer(why, vetoed[0] if vetoed else None, (failed.line_no, failed.line) if failed else None)
    return LogScan(_advised(_rank(matches), last, r.mentions), near, r.scanner.lines_read, why, tuple(vetoed), platform)


def _vetoes(
    matches: list[LogMatch], platform: Platform, last: Iterable[tuple[int, str]]
) -> tuple[list[LogMatch], list[Veto]]:
    """The matches the log's context leaves standing, and the vetoed ones with their reasons (context.veto)."""
    kept, vetoed = [], []
    for m in matches:
        v = veto(m.id, m.line_no, m.lines or ((m.line_no, m.line),), platform, tuple(last))
        if v is None:
            kept.append(m)
        else:
            vetoed.append(v)
    return kept, vetoed


def _advised(
    matches: tuple[LogMatch, ...], last: Iterable[tuple[int, str]], mentions: Mentions
) -> tuple[LogMatch, ...]:
    """Each match whose catalog command is one package's, with the command for the package the log is about."""
    out = []
    for m in matches:
        advice = (
            advise(
                m.id,
                runtime_of([m.line, *(line for _, line in m.lines)], (t for _, t in last), mentions.head),
                m.details.get("signature", ""),
            )
            if m.id in TAILORED
            else None
        )
        out.append(replace(m, advice=advice) if advice else m)
    return tuple(out)


def _anchored(facts: FactScanner) -> list[LogMatch]:
    """No signature matched: the ids the facts decide (logfacts.decide), each at its anchor's line."""
    return [
        LogMatch(
            d.id,
            d.fact.line_no,
            d.fact.line.strip(),
            CATALOG[d.id],
            {"signature": f"anchor:{d.rule}", **d.details},
            1,
            ((d.fact.line_no, d.fact.line.strip()),),
            (f"anchor:{d.rule}",),
        )
        for d in decide(facts)
    ]


def _match(fid: FailureId, hit: Hit, facts: dict[str, Any]) -> LogMatch:
    details = {"signature": hit.signature, **hit.details}
    if fid in ("F02", "F04", "F05", "F13", "F06"):  # the versions in play help the reader here
        for key in ("cuda", "msvc"):
            if key in facts and key not in details:
                details[key] = facts[key]
    return LogMatch(
        fid,
        hit.line_no,
        hit.line.strip(),
        CATALOG[fid],
        details,
        hit.count,
        tuple((n, line.strip()) for n, line in hit.lines),
        tuple(hit.signatures),
    )


def _rank(matches: list[LogMatch]) -> tuple[LogMatch, ...]:
    """Mark the decisive match and say why each id ranks where it does."""
    if not matches:
        return ()
    ids = {m.id for m in matches}
    explained = {loser: (winner, why) for winner, loser, why in PRECEDENCE if winner in ids and loser in ids}
    text = [m for m in matches if not m.details.get("inferred")]
    pool = [m for m in (text or matches) if m.id not in explained] or text or matches
    first = pool[0]
    out = []
    for m in matches:
        if m is first:
            why = (
                "the only catalog failure in the log"
                if len(matches) == 1
                else f"the first failure in the log (line {m.line_no}); later errors usually follow from it"
            )
            if m.details.get("inferred"):
                why = "no error text names the cause; inferred from the CUDA and MSVC versions the log names"
            why += "".join(f"; it explains {what}: {w}" for what, (wi, w) in explained.items() if wi == m.id)
        elif m.id in explained:
            winner, reason = explained[m.id]
            why = f"explained by {winner}: {reason}"
        elif m.details.get("inferred"):
            why = "inferred from the versions in the log; the error text names another failure"
        else:
            why = (
                f"also in the log, after {first.id} (line {first.line_no})"
                if m.line_no >= first.line_no
                else f"earlier in the log, but {first.id} names the cause"
            )
        out.append(
            LogMatch(m.id, m.line_no, m.line, m.failure, m.details, m.count, m.lines, m.signatures, m is first, why)
        )
    return tuple(out)


def _near(near: dict[FailureId, Near]) -> tuple[Near, ...]:
    return tuple(sorted(near.values(), key=lambda n: (-len(n.words), -n.count, n.line_no))[:3])


# ---------------------------------------------------------------- reading


def _open(path: str | Path) -> LogText:
    try:
        return LogText(path)
    except LogInputError as e:
        raise InputFileError(e.message, e.remedy) from None
    except OSError as e:
        raise _unreadable(path, e) from None


def _stream(text: LogText, last: bool = False) -> Iterator[str]:
    try:
        yield from text.pieces(last)
    except LogInputError as e:
        raise InputFileError(e.message, e.remedy) from None
    except OSError as e:
        raise _unreadable(text.path, e) from None


def _unreadable(path: str | Path, e: OSError) -> InputFileError:
    return InputFileError(
        f"cannot read log file {path}: {e.strerror or e}",
        "pass the path of a text log (for example pip install -v ... > build.log)",
    )
