"""Facts read from a log while it streams (issue 23 item 1), for the rules that decide catalog ids from them.

The signatures of signatures.py each know one tool's sentence. A log in another tool's words, another
language or another wrapper still carries things that do not change with the wording: error codes
(MSB3721, C1189, STL1002, LNK1181), Windows error numbers and their system messages in every language
(126 / 0x8007007E "module not found", 127 "procedure not found", 193 "not a valid Win32 application"),
file names (cudart64_12.dll, libcuda.so.1, host_config.h, -lcublas), the versions a decision rests on
(the CUDA a driver supports, the CUDA a binary needs; an nvcc and the architecture asked of it) and the
runtimes' own status phrases (`offloaded 0/`, `BLAS = 0`). `FactScanner` collects them while the log
streams (a needle gates each regex, a few values per kind are kept); the patterns are the rule families'
(rules/<family>.py: `FACTS`), and `rules.decide` names catalog ids from what was found together, in the
registry's order. logscan uses the decision where no signature matched.
"""

from __future__ import annotations

import bisect
import re
from collections import deque
from dataclasses import dataclass, field
from itertools import accumulate

from envmgr.buildlog.clock import Clock
from envmgr.buildlog.engine import Probe
from envmgr.buildlog.rules import FACTS, decide
from envmgr.buildlog.rules.base import _BY_LINE, _LATEST, KEEP, LAST, LINES_PER_NAME, Decision, Fact, FactRx
from envmgr.buildlog.rules.clock import _duration, _seconds, heavy_unfinished, timed_long
from envmgr.buildlog.rules.outcome import (
    build_stop_contradicted,
    build_succeeded,
    contradicted,
    ends_open,
    stopped_after,
    unfinished,
)

__all__ = [
    "FACTS",
    "KEEP",
    "LAST",
    "Decision",
    "Fact",
    "FactRx",
    "FactScanner",
    "build_stop_contradicted",
    "build_succeeded",
    "contradicted",
    "decide",
    "ends_open",
    "heavy_unfinished",
    "stopped_after",
    "timed_long",
    "unfinished",
    "_duration",
    "_seconds",
]

HEAD = 4 << 20  # characters read from the start of a log ...
TAIL = 4 << 20  # ... and from its end
LINE = 1 << 20  # characters of one line read (its first and last half): facts cost a few MiB whatever the line


@dataclass
class FactScanner:
    """Feed (line numbers, texts) batches; `facts` holds the first KEEP distinct values of each kind."""

    facts: dict[str, list[Fact]] = field(default_factory=dict)  # kind -> [Fact]
    counts: dict[str, int] = field(default_factory=dict)  # kind -> matches seen
    read: int = 0  # characters fed so far
    # batches past the head, the last TAIL characters of them
    tail: deque[tuple[list[int], list[str], int]] = field(default_factory=deque)
    held: int = 0  # characters in `tail`
    last: deque[tuple[int, str]] = field(default_factory=lambda: deque(maxlen=LAST))  # the log's last lines
    clock: Clock | None = None  # the log's own stamps (logclock; logscan sets it)

    def feed(self, nums: list[int], texts: list[str]) -> None:
        """The first HEAD characters are read as they come, the last TAIL at `finish` (a failure's facts are at
        the start of a log, where it says what it builds with, or at its end, where it stops): a 200 MB log
        costs its facts on 8 MiB of text, not on all of it. So does a log of one line of 100 MB (audit N20): a line
        longer than LINE is read as its first and last LINE / 2 characters."""
        if max(map(len, texts), default=0) > LINE:
            texts = [t if len(t) <= LINE else t[: LINE // 2] + " ... " + t[-(LINE // 2) :] for t in texts]
        if self.read < HEAD:
            self.read += sum(map(len, texts)) + len(texts)
            self._facts(nums, texts)
            return
        size = sum(map(len, texts)) + len(texts)
        self.tail.append((nums, texts, size))
        self.held += size
        while len(self.tail) > 1 and self.held - self.tail[0][2] >= TAIL:
            self.held -= self.tail.popleft()[2]

    def finish(self) -> FactScanner:
        while self.tail:
            nums, texts, _ = self.tail.popleft()
            self._facts(nums, texts)
        self.held = 0
        return self

    def _facts(self, nums: list[int], texts: list[str]) -> None:
        self.last.extend(zip(nums[-LAST:], texts[-LAST:], strict=True))
        self._find(nums, texts)

    def _find(self, nums: list[int], texts: list[str]) -> None:
        """Each fact's regex runs only on the lines around the first OCCURRENCES places its needles occur in
        this batch (a few lines, as a message may wrap), so a batch costs a substring search per needle
        and a few short regex runs, however often a failure repeats."""
        if not texts:
            return
        body = "\n".join(texts)
        wanted = [fx for fx in FACTS if fx.kind in _LATEST or len(self.facts.get(fx.kind, ())) < fx.keep]
        # which needles are there is asked of a cheaper copy first (logengine.Probe)
        present = _present({n for fx in wanted for n in fx.needles}, Probe(body))
        starts: list[int] | None = None
        for fx in wanted:
            needles = [n for n in fx.needles if n in present]
            if not needles:
                continue
            seen: set[int] = set()
            for lo, hi in _regions(body, needles):
                for m in fx.regex.finditer(body, lo, hi):
                    if m.start() in seen:
                        continue
                    seen.add(m.start())
                    if starts is None:
                        starts = _starts(texts)
                    self._keep(fx.kind, m, nums, texts, starts)
                if fx.kind not in _LATEST and len(self.facts.get(fx.kind, ())) >= fx.keep:
                    break

    def _keep(self, kind: str, m: re.Match[str], nums: list[int], texts: list[str], starts: list[int]) -> None:
        value = next((g for g in m.groups() if g), m.group(0))
        self.counts[kind] = self.counts.get(kind, 0) + 1
        have = self.facts.setdefault(kind, [])
        if kind in _LATEST:
            i = bisect.bisect_right(starts, m.start()) - 1
            _keep_latest(have, Fact(kind, value, nums[i], texts[i]))
            return
        same = [f for f in have if f.value == value]
        if same and (kind not in _BY_LINE or len(same) >= LINES_PER_NAME):
            return
        i = bisect.bisect_right(starts, m.start()) - 1
        if any(f.line == texts[i] for f in same):
            return
        have.append(Fact(kind, value, nums[i], texts[i]))

    def first(self, kind: str) -> Fact | None:
        found = self.facts.get(kind)
        return found[0] if found else None

    def values(self, kind: str) -> list[str]:
        return [f.value for f in self.facts.get(kind, ())]


def _keep_latest(have: list[Fact], fact: Fact) -> None:
    """The last line of each value; past KEEP values the last line seen takes the last place."""
    same = next((i for i, f in enumerate(have) if f.value == fact.value), None)
    if same is not None:
        have[same] = fact
    elif len(have) < KEEP:
        have.append(fact)
    else:
        have[-1] = fact


_NEEDLE_BYTES = {n: n.encode("utf-8") for fx in FACTS for n in fx.needles}
# the needles shortest first, each with the shorter needles inside it: where one of those is absent, so is it
_NEEDLE_ORDER = sorted(_NEEDLE_BYTES, key=len)
_INSIDE = {n: tuple(m for m in _NEEDLE_ORDER if len(m) < len(n) and m in n) for n in _NEEDLE_ORDER}


def _present(every: set[str], probe: Probe) -> set[str]:
    """The needles of `every` in the batch (`probe.holds`: one substring search each on a cheaper copy, and one on the
    batch for a needle found in a copy cut down), none for a needle holding a shorter needle already found absent (a
    batch costs a pass per needle searched, so the skipped ones are what a log without failure text saves)."""
    absent: set[str] = set()
    present: set[str] = set()
    # where the probe's copy is the batch itself, it is searched here: a method call per needle cost more than a
    # small batch's searches
    text = probe.text
    holds = probe.holds if probe.cut else text.__contains__ if isinstance(text, str) else None
    for n in _NEEDLE_ORDER:
        if n not in every:
            continue
        if any(m in absent for m in _INSIDE[n]):
            absent.add(n)
        elif holds(n) if holds is not None else _NEEDLE_BYTES[n] in text:
            present.add(n)
        else:
            absent.add(n)
    return present


OCCURRENCES = 16  # needle places looked at per fact and batch
LONG = 4096  # characters each side of a needle a fact's regex reads: bounded work in a line of any length
_AROUND = 2  # lines before and after a needle's line that a match may span


def _regions(body: str, needles: list[str]) -> list[list[int]]:
    """(lo, hi) spans of `body` around the first OCCURRENCES places of the needles, merged, in order."""
    places: list[int] = []
    for n in needles:
        pos = body.find(n)
        while pos >= 0 and len(places) < 4 * OCCURRENCES:
            places.append(pos)
            nl = body.find("\n", pos, pos + LONG)  # the next line, or LONG characters on in a longer one
            pos = body.find(n, pos + LONG if nl < 0 else nl + 1) if nl >= 0 or pos + LONG < len(body) else -1
    spans: list[list[int]] = []
    for pos in sorted(places)[:OCCURRENCES]:
        # _AROUND lines each side, at most LONG characters (a long line: each search stops there, audit N20)
        lo, floor = pos, max(0, pos - LONG)
        for _ in range(_AROUND + 1):
            lo = max(body.rfind("\n", floor, lo - 1) + 1, floor) if lo > floor else floor
        hi, top = pos, min(len(body), pos + LONG)
        for _ in range(_AROUND + 1):
            nl = body.find("\n", hi + 1, top)
            hi = top if nl < 0 else nl
        if spans and lo <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], hi)
        else:
            spans.append([lo, hi])
    return spans


def _starts(texts: list[str]) -> list[int]:
    return [0, *accumulate(len(t) + 1 for t in texts)]
