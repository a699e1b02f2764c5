"""Scan a build or load log (pip -v, CMake, MSBuild, nvcc, ninja, a Python traceback) for the
catalog's failures: `scan_log(text)` is pure; `read_log(path)` is the one function that reads a file.

Matches are deduplicated per id (the first line, plus how often the id matched) and ordered by
first occurrence. Where a log names an nvcc and an MSVC that cannot work together but the error
text itself was cut off (excerpts, CMake's compiler-id output), F04/F05 are inferred from the
versions and marked `inferred` in the details.
"""
from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from .catalog import CATALOG, Failure
from .signatures import SIGNATURES

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


@dataclass(frozen=True)
class LogMatch:
    id: str
    line_no: int          # 1-based, in the text as given (CRLF or LF)
    line: str             # that line, ANSI codes stripped (a hard-wrapped MSBuild line re-joined)
    failure: Failure
    details: dict         # extracted values: cuda, msvc, dll, arch, path, ...; `inferred` for guesses
    count: int = 1        # how many matches this id had in the whole log


# ---------------------------------------------------------------- normalising

def normalize(text: str) -> list[str]:
    """Physical lines without ANSI codes; CRLF, LF and a lone CR (progress bars) all end a line."""
    text = _ANSI.sub("", text.lstrip("\ufeff"))
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _wrap_width(lines: list[str]) -> int | None:
    """The console width a logger hard-wrapped at: many long lines of one length and none longer."""
    long = Counter(len(l) for l in lines if len(l) >= 79)
    if not long:
        return None
    width, n = long.most_common(1)[0]
    return width if n >= 3 and width == max(long) else None


def _logical(lines: list[str]) -> list[tuple[int, str]]:
    """(first physical line number, text) with hard-wrapped continuation lines joined back."""
    width = _wrap_width(lines)
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        start, text = i + 1, lines[i]
        while width and len(lines[i]) == width and i + 1 < len(lines):
            i += 1
            text += lines[i].lstrip()
        out.append((start, text))
        i += 1
    return out


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
    (re.compile(r"C compiler identification is MSVC 19\.(\d+)"), "cl"),
    (re.compile(r"C/C\+\+ Optimizing Compiler Version 19\.(\d+)"), "cl"),
    (re.compile(r"MSVC[\\/]+(14\.\d+)\.\d+[\\/]+bin"), "toolset path"),
    (re.compile(r"MSBuild version 17\.(\d+)\."), "MSBuild"),
)
_FAILED = re.compile(r"is not able to compile a simple test program|CUDA compiler ABI info - failed|"
                     r"CompilerIdCUDA|error MSB3721|did not run successfully|Configuring incomplete|^FAILED: ",
                     re.M)


def _msvc_minor(value: str, source: str) -> int:
    minor = int(value.split(".")[-1]) if "." in value else int(value)
    # cl 19.NN is toolset 14.NN; MSBuild 17.N ships toolset 14.(30+N) as its default (17.10 -> 14.40).
    return 30 + minor if source == "MSBuild" else minor


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
            facts["msvc"] = f"14.{_msvc_minor(m.group(1), source)}"
            facts["msvc_from"] = source
            break
    return facts


def _mm(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def _infer(text: str, facts: dict[str, Any]) -> tuple[str, dict] | None:
    """F04 (or F05 with -allow-unsupported-compiler) when a failed CUDA build names an nvcc and an
    MSVC that the compatibility tables say cannot work together. Only CUDA >= 11.8 is judged."""
    from ..compat import table_limits, table_stl_min_cuda

    cuda, msvc = facts.get("cuda"), facts.get("msvc")
    if not (cuda and msvc and _FAILED.search(text)) or _mm(cuda) < (11, 8):
        return None
    details = {"inferred": True, "cuda": cuda, "msvc": msvc, "msvc_from": facts["msvc_from"]}
    if "-allow-unsupported-compiler" in text:
        need = table_stl_min_cuda(msvc)
        return ("F05", {**details, "cuda_min": need}) if need and _mm(cuda) < _mm(need) else None
    limits = table_limits(cuda)
    msc = 1900 + _mm(msvc)[1]
    if limits is None or limits.msvc_ok(msc):
        return None
    return "F04", {**details, "msc_ver": msc, "accepted": limits.describe_msvc()}


# ---------------------------------------------------------------- scanning

def scan_log(text: str) -> tuple[LogMatch, ...]:
    logical = _logical(normalize(text))
    body = "\n".join(t for _, t in logical) + "\n"
    starts, pos = [], 0
    for _, t in logical:
        starts.append(pos)
        pos += len(t) + 1
    hits: dict[str, list] = {}
    for sig in SIGNATURES:
        if sig.needle and sig.needle not in body:
            continue
        for m in sig.regex.finditer(body):
            if sig.check and not sig.check(m):
                continue
            index = bisect.bisect_right(starts, m.start()) - 1
            details = sig.extract(m) if sig.extract else {}
            hits.setdefault(sig.id, []).append((index, sig.name, details))
    facts = log_facts(body)
    inferred = _infer(body, facts) if not hits.keys() & {"F04", "F05"} else None
    if inferred:
        hits[inferred[0]] = [(_anchor(body, starts), "inferred-from-versions", inferred[1])]
    matches = [_first(fid, found, logical, facts) for fid, found in hits.items()]
    return tuple(sorted(matches, key=lambda m: (m.line_no, m.id)))


def _anchor(body: str, starts: list[int]) -> int:
    m = re.search(r"-ccbin[^\n]*MSVC", body) or _FAILED.search(body)
    return bisect.bisect_right(starts, m.start()) - 1 if m else 0


def _first(fid: str, found: list, logical: list[tuple[int, str]], facts: dict) -> LogMatch:
    index, name, details = min(found, key=lambda h: h[0])
    details = {"signature": name, **details}
    if fid in ("F02", "F04", "F05", "F13", "F06"):   # the versions in play help the reader here
        for key in ("cuda", "msvc"):
            if key in facts and key not in details:
                details[key] = facts[key]
    line_no, line = logical[index]
    return LogMatch(fid, line_no, line.strip(), CATALOG[fid], details, len(found))


# ---------------------------------------------------------------- reading

def read_log(path: str | Path) -> str:
    """A log as text: UTF-8 (BOM or not), UTF-16 (BOM, or the NUL pattern PowerShell's `>` writes),
    else cp1252. Unreadable or binary files raise InputFileError (exit 2)."""
    from ..errors import InputFileError

    try:
        from ..readfile import TEXT_LIMIT, read_regular

        data = read_regular(path, TEXT_LIMIT)
    except OSError as e:
        raise InputFileError(f"cannot read log file {path}: {e.strerror or e}",
                             "pass the path of a text log (for example pip install -v ... > build.log)") from None
    text = _decode(data)
    if text is None or _looks_binary(text):
        raise InputFileError(f"{path} is not a text log (binary data)",
                             "pass the text output of the build, not an executable, archive or image")
    return text


def _decode(data: bytes) -> str | None:
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    sample = data[:4096]
    even, odd = sample[0::2], sample[1::2]
    if len(sample) >= 4 and odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.1 * len(even):
        return data.decode("utf-16-le", errors="replace")
    if len(sample) >= 4 and even.count(0) > 0.4 * len(even) and odd.count(0) < 0.1 * len(odd):
        return data.decode("utf-16-be", errors="replace")
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _looks_binary(text: str) -> bool:
    sample = text[:8192]
    if not sample:
        return False
    control = sum(1 for c in sample if ord(c) < 32 and c not in "\t\n\r\f\b\x1b")
    return "\x00" in sample or control > 0.1 * len(sample)


# ---------------------------------------------------------------- rendering

def _short(line: str, limit: int = 220) -> str:
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _details_text(details: dict) -> str:
    shown = {k: v for k, v in details.items() if k not in ("signature", "inferred")}
    return ", ".join(f"{k}={', '.join(v) if isinstance(v, list) else v}" for k, v in shown.items())


def render_matches(matches: Iterable[LogMatch], paint: Callable[..., str]) -> str:
    """Text for people: id and title, the line with its number, what was read from it, cause, fix."""
    out: list[str] = []
    for m in matches:
        times = f" (x{m.count})" if m.count > 1 else ""
        guess = " (inferred from the versions in the log)" if m.details.get("inferred") else ""
        out.append(f"{paint(m.id, 'red', 'bold')}  {paint(m.failure.title, 'bold')}{guess}")
        out.append(f"  {paint(f'line {m.line_no}{times}:', 'dim')} {_short(m.line)}")
        seen = _details_text(m.details)
        if seen:
            out.append(f"  {paint('seen:', 'dim')}  {seen}")
        out.append(f"  {paint('cause:', 'yellow')} {m.failure.cause}")
        out.append(f"  {paint('fix:', 'green')}   {m.failure.fix}")
        if m.failure.fix_command:
            out.append(f"  {paint('try:', 'cyan')}   {m.failure.fix_command}")
        out.append("")
    if not out:
        return "no known failure signature found in the log\n"
    return "\n".join(out)


def matches_json(matches: Iterable[LogMatch]) -> list[dict]:
    return [{"id": m.id, "title": m.failure.title, "line_no": m.line_no, "line": m.line, "count": m.count,
             "details": dict(m.details), "cause": m.failure.cause, "fix": m.failure.fix,
             "fix_command": m.failure.fix_command, "platforms": list(m.failure.platforms)}
            for m in matches]
