"""Time measured in a log itself (issue 23, F20): the stamps loggers and CI services put before lines.

logclean cuts those prefixes before anything else reads a line, so `Clock` reads the raw physical lines first
(logscan feeds each batch to it before `strip_batch`). It keeps, as the facts do, the first HEAD and the last TAIL
characters of a log (a 200 MB log costs its clock on 8 MiB): the earliest and latest stamp (the span the log covers)
and the longest gap between a compile step's line and the next stamped line (how long that one step took), with
whether that next line reports a failure (a compiler killed after a long step is F25's, not a slow build).

Stamps read: ISO 8601 dates with a time (T or a space; GitHub Actions', Azure Pipelines' and GitLab runner 17+'s
leading stamp, bracketed or not), journald/syslog's `May 01 12:00:00`, a time of day alone (`12:00:01`, `[12:00:01]`)
and GitLab's section markers (`section_start:1700000000:name`, Unix seconds). A stamp with no date wraps at midnight
at most once between two lines close to it. Durations are in seconds; no time zone is read (one log, one clock).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from datetime import date

HEAD = 4 << 20  # characters read from the start of a log ...
TAIL = 4 << 20  # ... and from its end (logfacts' bounds)
SAMPLE = 64  # lines of a batch looked at for a stamp (logclean's: a logger stamps every line)

_MONTHS = {
    m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)
}
_STAMP = re.compile(
    r"(?:\ufeff)?\[?(?:(\d{4})-(\d\d)-(\d\d)[T ]|"  # ISO date
    r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([ \d]\d) )?"  # syslog's month and day
    r"(\d\d):(\d\d):(\d\d)(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?[ \t|]"  # time of day
    r"|section_(?:start|end):(\d{9,10}):"
)  # GitLab's sections
# a compile step: a CUDA or C/C++ compiler run, CMake's object line, pip's wheel build
_COMPILE = re.compile(
    r"\b(?:nvcc|cicc|ptxas|cudafe\+\+|cc1plus|cl\.exe)\b|"
    r"(?<![\w/.+-])(?:[gc]\+\+|gcc|clang\+\+|clang|cl)(?:\.exe)?[ \t]+-|"
    r"Building (?:CUDA|CXX|C) object|Building wheels? for"
)
# how a failure reads on the line that ends a gap (MSBuild's "0 Error(s)" is no failure)
FAILURE = re.compile(
    r"(?i)(?<![\w-])(?<!\b0 )(?:errors?|error\(s\)|failed|failure|fatal|killed|terminated|"
    r"aborted|traceback|out of memory|exit (?:code|status) [1-9]\d*)(?![\w-])"
)
END = 10  # the log's last lines kept raw: a failure a CI prefix says (`##[error]`, cut by logclean)
WRAP_MAX = 6 * 3600  # a stamp with no date that goes back: after midnight only if the gap it makes is this or less
DAY = 86400
_EPOCH = date(1970, 1, 1).toordinal()  # dates as Unix seconds, as GitLab's sections give them


@dataclass(frozen=True)
class Gap:
    seconds: float
    line_no: int  # the compile step's line (its text below, stamp cut off by logclean later)
    line: str
    failed: bool  # the line that ends the gap reports a failure


@dataclass
class Clock:
    """Feed raw physical batches in order (`feed`), then `finish`; `first`/`last` are the earliest and latest stamp
    read (seconds), `longest` the longest compile step, `compiles` how many compile steps had a stamp, `ordered`
    whether the stamps run forward as one run's do."""

    first: float | None = None
    last: float | None = None
    longest: Gap | None = None
    compiles: int = 0
    began: tuple[int, str] | None = None  # the first compile step's (line_no, line)
    ordered: bool = True  # every stamp at or after the one before, within a day
    read: int = 0  # characters fed so far
    lines: int = 0  # physical lines fed so far
    # (first line number, lines, size) of the batches past the head
    tail: deque[tuple[int, list[str], int]] = field(default_factory=deque)
    held: int = 0
    end: deque[str] = field(default_factory=lambda: deque(maxlen=END))  # the last raw lines, prefixes kept
    _open: tuple[float, int, str] | None = None  # the open compile step: (seconds, line_no, line)
    _prev: tuple[float, bool] | None = None  # the last stamp read: (seconds, dated)

    def feed(self, lines: list[str]) -> None:
        no, self.lines = self.lines + 1, self.lines + len(lines)
        size = sum(map(len, lines)) + len(lines)
        if self.read < HEAD:
            self.read += size
            self._batch(no, lines)
            return
        self.tail.append((no, lines, size))
        self.held += size
        while len(self.tail) > 1 and self.held - self.tail[0][2] >= TAIL:
            self.held -= self.tail.popleft()[2]
            self._open = self._prev = None  # a step is not timed across text not read

    def finish(self) -> Clock:
        while self.tail:
            no, lines, _ = self.tail.popleft()
            self._batch(no, lines)
        return self

    @property
    def ends_failed(self) -> bool:
        return any(FAILURE.search(line) for line in self.end)

    @property
    def span(self) -> float:
        return self.last - self.first if self.first is not None and self.last is not None else 0.0

    def _batch(self, no: int, lines: list[str]) -> None:
        self.end.extend(lines[-END:])
        step = max(1, len(lines) // SAMPLE)
        if not any(_STAMP.match(line) for line in lines[::step]):
            return
        for i, line in enumerate(lines):
            m = _STAMP.match(line)
            if m is None:
                continue
            at = self._at(m)
            if at is None:
                continue
            self._step(at, no + i, line)

    def _step(self, at: tuple[float, bool], no: int, line: str) -> None:
        """One stamped line: the gap it ends (after a compile step) and the compile step it starts."""
        seconds, dated = at
        prev = self._prev[0] if self._prev is not None else None
        if prev is not None and not dated:  # a time of day: on the last stamp's day, or the day after it
            seconds += DAY * (prev // DAY)
            if seconds < prev and seconds + DAY - prev <= WRAP_MAX:
                seconds += DAY
        if prev is not None and (seconds < prev or seconds - prev > DAY):
            self.ordered = False  # stamps that go back or skip a day: pieces of several runs
        if self.first is None:
            self.first = seconds
        self.last = seconds if self.last is None else max(self.last, seconds)
        if self._open is not None and seconds >= self._open[0]:
            gap = seconds - self._open[0]
            if self.longest is None or gap > self.longest.seconds:
                self.longest = Gap(gap, self._open[1], self._open[2], FAILURE.search(line) is not None)
        self._open = None
        if _COMPILE.search(line):
            self._open = (seconds, no, line)
            self.compiles += 1
            self.began = self.began or (no, line)
        self._prev = (seconds, dated)

    @staticmethod
    def _at(m: re.Match[str]) -> tuple[float, bool] | None:
        """The stamp's time in seconds and whether it has a date (a time of day alone counts from day 0)."""
        y, mo, d, mon, day, hh, mm, ss, epoch = m.groups()
        if epoch:
            return float(epoch), True
        clock = int(hh) * 3600 + int(mm) * 60 + int(ss)
        try:
            if y:
                return (date(int(y), int(mo), int(d)).toordinal() - _EPOCH) * DAY + clock, True
            if mon:  # syslog writes no year
                return (date(2000, _MONTHS[mon], int(day)).toordinal() - _EPOCH) * DAY + clock, True
        except ValueError:
            return None
        return float(clock), False
