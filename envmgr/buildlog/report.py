"""doctor --log's output: text for people (the decisive line first), JSON with the evidence of each
match (matched line numbers and lines, the signatures that fired, why this id ranks where it does),
and the near misses when nothing matched. Shapes in docs/doctor.md. The answer's own shape (`LogMatch`, `LogScan`)
is defined here, where it is written out; scan.py makes it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from envmgr.buildlog.advice import Advice
from envmgr.buildlog.context import Platform, Sign, Veto
from envmgr.buildlog.engine import Near
from envmgr.buildlog.signatures import Details
from envmgr.buildlog.unnamed import Unnamed
from envmgr.catalog import CATALOG, Failure, FailureId

Paint = Callable[..., str]
Json = dict[str, Any]


@dataclass(frozen=True)
class LogMatch:
    id: FailureId
    line_no: int  # 1-based, in the text as given (CRLF or LF)
    line: str  # that line, ANSI codes stripped (a hard-wrapped MSBuild line re-joined)
    failure: Failure
    details: Details  # extracted values: cuda, msvc, dll, arch, path, ...; `inferred` for guesses
    count: int = 1  # how many matches this id had in the whole log
    lines: tuple[tuple[int, str], ...] = ()  # the first few matched (line_no, line)
    signatures: tuple[str, ...] = ()  # every signature of this id that matched
    decisive: bool = False  # the match that names the cause
    why: str = ""  # why this id ranks where it does
    advice: Advice | None = None  # the try: line for the log's own package (None: the catalog's)

    @property
    def fix_command(self) -> str | None:
        return self.advice.command if self.advice else self.failure.fix_command


@dataclass(frozen=True)
class LogScan:
    matches: tuple[LogMatch, ...]
    near: tuple[Near, ...] = ()  # engine.Near, best first, at most three
    lines: int = 0
    unnamed: Unnamed | None = None  # with no match: why nothing was named, and what to do
    vetoed: tuple[Veto, ...] = ()  # candidates the log's context ruled out, with the reason (context.py)
    context: Platform | None = None  # the machine and run the log shows (context.py), for the report

    @property
    def decisive(self) -> LogMatch | None:
        return next((m for m in self.matches if m.decisive), None)


def _short(line: str, limit: int = 220) -> str:
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _details_text(details: Details) -> str:
    shown = {k: v for k, v in details.items() if k not in ("signature", "inferred")}
    return ", ".join(f"{k}={', '.join(v) if isinstance(v, list) else v}" for k, v in shown.items())


def render_matches(matches: Iterable[LogMatch], paint: Paint) -> str:
    """Text for people: id and title, the decisive line with its number, what was read, cause, fix."""
    out: list[str] = []
    shown = tuple(matches)
    for m in shown:
        times = f" (x{m.count})" if m.count > 1 else ""
        guess = " (inferred from the versions in the log)" if m.details.get("inferred") else ""
        mark = paint("decisive", "bold") + "  " if m.decisive else ""
        out.append(f"{paint(m.id, 'red', 'bold')}  {paint(m.failure.title, 'bold')}{guess}")
        out.append(f"  {paint(f'line {m.line_no}{times}:', 'dim')} {_short(m.line)}")
        seen = _details_text(m.details)
        if seen:
            out.append(f"  {paint('seen:', 'dim')}  {seen}")
        if m.why and len(shown) > 1:
            out.append(f"  {paint('why:', 'dim')}   {mark}{m.why}")
        out.append(f"  {paint('cause:', 'yellow')} {m.failure.cause}")
        out.append(f"  {paint('fix:', 'green')}   {m.failure.fix}")
        if m.fix_command:
            out.append(f"  {paint('try:', 'cyan')}   {m.fix_command}")
        out.append("")
    if not out:
        return "no known failure signature found in the log\n"
    return "\n".join(out)


def render_scan(scan: LogScan, paint: Paint) -> str:
    """render_matches, or the near misses: the ids whose words appeared, with the first such line."""
    vetoes = scan.vetoed
    if not scan.matches and scan.unnamed is not None and scan.unnamed.reason == "vetoed":
        vetoes = vetoes[1:]  # the first is the answer's own why
    vetoed = vetoed_text(vetoes, paint)
    if scan.matches:
        return render_matches(scan.matches, paint) + ("\n".join(vetoed) + "\n" if vetoed else "")
    out = [
        f"no known failure signature found in the log ({scan.lines} lines)",
        *unnamed_text(scan.unnamed, paint),
        *vetoed,
    ]
    if scan.near:
        out.append("closest catalog ids (their words appear, their error text does not):")
        for n in scan.near:
            out.append(f"  {paint(n.id, 'yellow')}  {CATALOG[n.id].title}")
            out.append(
                f"      {paint(f'line {n.line_no}:', 'dim')} {_short(n.line.strip(), 200)}"
                f"  ({', '.join(n.words)}; x{n.count})"
            )
    return "\n".join(out) + "\n"


def unnamed_text(why: Unnamed | None, paint: Paint) -> list[str]:
    """Why nothing was named (unnamed.explain), the line it rests on, and what to do."""
    if why is None:
        return []
    out = [f"  {paint('why:', 'yellow')}  {why.title}"]
    if why.line_no is not None:
        out.append(f"  {paint(f'line {why.line_no}:', 'dim')} {_short(why.line or '')}")
    if why.first_failure is not None and why.first_failure[0] != why.line_no:
        no, line = why.first_failure
        out.append(f"  {paint('first failing line', 'dim')} {paint(f'{no}:', 'dim')} {_short(line)}")
    out.append(f"  {paint('do:', 'green')}   {why.advice}")
    return out


def vetoed_text(vetoed: Iterable[Veto], paint: Paint) -> list[str]:
    """The candidates the log's context set aside (context.Veto), one line each with the line it rests on."""
    out = []
    for v in vetoed:
        out.append(f"  {paint('set aside:', 'dim')} {paint(v.id, 'yellow')}  {v.why}")
        out.append(f"      {paint(f'line {v.line_no}:', 'dim')} {_short(v.line, 200)}")
    return out


def context_json(platform: Platform | None) -> Json | None:
    """The first line of each kind of sign the log's context found (context.Platform): NVIDIA, a Mac, another vendor,
    an ARM board, the CPU chosen; null where none."""
    if platform is None:
        return None

    def sign(s: Sign | None) -> Json | None:
        return None if s is None else {"kind": s.kind, "rule": s.rule, "line_no": s.line_no, "line": s.line}

    return {
        "nvidia": sign(platform.nvidia),
        "mac": sign(platform.mac),
        "other": sign(platform.other),
        "arm": sign(platform.arm),
        "cpu_chosen": sign(platform.cpu),
    }


def vetoed_json(vetoed: Iterable[Veto]) -> list[Json]:
    return [{"id": v.id, "reason": v.reason, "why": v.why, "line_no": v.line_no, "line": v.line} for v in vetoed]


def unnamed_json(why: Unnamed | None) -> Json | None:
    if why is None:
        return None
    first = why.first_failure
    return {
        "reason": why.reason,
        "kind": why.kind,
        "title": why.title,
        "line_no": why.line_no,
        "line": why.line,
        "advice": why.advice,
        "vetoed": why.vetoed,
        "first_failure": {"line_no": first[0], "line": first[1]} if first else None,
    }


def matches_json(matches: Iterable[LogMatch]) -> list[Json]:
    return [
        {
            "id": m.id,
            "title": m.failure.title,
            "line_no": m.line_no,
            "line": m.line,
            "count": m.count,
            "decisive": m.decisive,
            "why": m.why,
            "evidence": [{"line_no": n, "line": line} for n, line in m.lines],
            "signatures": list(m.signatures),
            "details": dict(m.details),
            "cause": m.failure.cause,
            "fix": m.failure.fix,
            "fix_command": m.fix_command,
            "runtime": (m.advice.runtime or None) if m.advice else None,
            "platforms": list(m.failure.platforms),
        }
        for m in matches
    ]


def scan_json(scan: LogScan, path: str) -> Json:
    decisive = scan.decisive
    return {
        "schema": 2,
        "file": path,
        "lines": scan.lines,
        "decisive": decisive.id if decisive else None,
        "matches": matches_json(scan.matches),
        "near_misses": [
            {"id": n.id, "count": n.count, "line_no": n.line_no, "line": n.line.strip(), "words": list(n.words)}
            for n in scan.near
        ],
        "unnamed": unnamed_json(scan.unnamed),
        "vetoed": vetoed_json(scan.vetoed),
        "context": context_json(scan.context),
    }
