"""The log scan as a stream: windows of lines, never the whole log in memory (issue 13 item 5).

Lines arrive in windows of WINDOW lines; each window also holds the OVERLAP lines before it (for a
signature that reads the line above its match) and is scanned only once OVERLAP lines after it are in
(for messages that CMake, clang or MSBuild spread over several lines). A match counts in the window
where it starts, so nothing is counted twice. A signature's regex runs only on windows that contain
its needle (a literal it cannot match without), which keeps a 200 MB log of ordinary lines to a few
substring searches per window; whether a needle is there is asked of a `Probe` (a cheaper copy of the
window), and a needle's places are not looked at in a window lacking a literal each of its signatures
requires (its gates). Per id only the count, the first EVIDENCE lines and the signatures
seen are kept, so a log that repeats one failure a million times still costs a few kilobytes.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate

from envmgr.buildlog.signatures import Details, Signature
from envmgr.catalog import FailureId

Placed = list[tuple[int, Signature]]  # signatures with their place in the table
Found = tuple[tuple[int, Signature, int], ...]  # (place, signature, offset in a region) of each match
NearWords = Sequence[tuple[FailureId, tuple[str, ...]]]

WINDOW = 2000
OVERLAP = 40
EVIDENCE = 5


_SPACES = re.compile("   +")
_SPACES_RAW = re.compile(b"   +")
PAD_SAMPLE = 1 << 13  # characters of a text looked at to tell whether it is padded
PAD_SHARE = 0.2  # ... and the share that cutting its runs of spaces must save


class Probe:
    """Whether a literal may occur in a text, asked with one C-speed substring search on the cheapest copy that
    answers it: the text's UTF-8 bytes where it holds a non-ASCII character (a str of 2 or 4 bytes a character is
    searched that much slower), with every run of three or more spaces cut to two where that saves PAD_SHARE of it (a
    fixed-width console pads its lines, and a search for a literal holding a space crawls through padding a character
    or two a step). A literal without three spaces in a row that occurs in the text occurs in the cut copy too, so
    `maybe` is False only where the literal is not in the text; where it is True, the text itself is searched.
    Answers are kept, and a literal holding a shorter one found absent (`inside`) is absent without a search."""

    def __init__(self, body: str, inside: Mapping[str, tuple[str, ...]] | None = None) -> None:
        self.body = body
        self.inside = inside or {}  # literal -> the shorter literals in it: one of them absent, so is it
        self.known: dict[str, bool] = {}  # the answers of `maybe` so far
        text: str | bytes = body if body.isascii() else body.encode("utf-8", "surrogatepass")
        self.text = _unpadded(text) if isinstance(text, str) else _unpadded_raw(text)
        self.cut = len(self.text) < len(text)  # `maybe` may then say yes where the literal is not

    def maybe(self, literal: str) -> bool:
        known = self.known.get(literal)
        if known is not None:
            return known
        inside = self.inside.get(literal)
        if inside is not None and any(self.known.get(m) is False for m in inside):
            known = False
        elif "   " in literal:
            known = literal in self.body
        elif isinstance(self.text, str):
            known = literal in self.text
        else:
            known = _utf8(literal) in self.text
        self.known[literal] = known
        return known

    def holds(self, literal: str) -> bool:
        """Whether the literal occurs in the text (exactly: the text itself is searched only where `maybe` is True of
        a cut copy)."""
        return self.maybe(literal) and (not self.cut or literal in self.body)


def _unpadded(text: str) -> str:
    sample = text[:PAD_SAMPLE]
    padded = "   " in sample and len(_SPACES.sub("  ", sample)) < (1 - PAD_SHARE) * len(sample)
    return _SPACES.sub("  ", text) if padded else text


def _unpadded_raw(raw: bytes) -> bytes:
    sample = raw[:PAD_SAMPLE]
    padded = b"   " in sample and len(_SPACES_RAW.sub(b"  ", sample)) < (1 - PAD_SHARE) * len(sample)
    return _SPACES_RAW.sub(b"  ", raw) if padded else raw


@functools.lru_cache(maxsize=4096)
def _utf8(literal: str) -> bytes:
    return literal.encode("utf-8", "surrogatepass")


def physical_lines(chunks: Iterable[str], ansi: re.Pattern[str]) -> Iterator[list[str]]:
    """Batches of lines: ANSI codes stripped; CRLF, LF and a lone CR (progress bars) end a line."""
    rest, first = "", True
    held: list[str] = []  # the pieces of a line longer than a chunk, joined once its end comes (audit N20)
    size = dropped = 0  # characters in `held`; characters of the line left out of it
    for chunk in chunks:
        if first:
            chunk, first = chunk.lstrip("\ufeff"), False
        cut = max(chunk.rfind("\n"), chunk.rfind("\r"))
        if cut == len(chunk) - 1 and chunk.endswith("\r"):
            cut = max(chunk.rfind("\n", 0, cut), chunk.rfind("\r", 0, cut))  # a CR may be half of CRLF
        if not chunk:
            continue
        if cut < 0 and not (held[-1] if held else rest).endswith("\r"):
            held.append(chunk)  # no line ends here: only the new chunk is searched, never the line so far
            size += len(chunk)
            if size > 2 * LINE_MAX:
                line = "".join([rest, *held])
                cr = "\r" if line.endswith("\r") else ""  # maybe half of the CRLF that ends it
                line = line[: len(line) - len(cr)]
                dropped += len(line) - LINE_MAX
                rest, held, size = "", [line[: LINE_MAX // 2], line[-(LINE_MAX // 2) :] + cr], LINE_MAX
            continue
        text = "".join([rest, *held, chunk])
        held, size = [], 0
        cut = max(text.rfind("\n"), text.rfind("\r"))
        if cut == len(text) - 1 and text.endswith("\r"):
            cut = max(text.rfind("\n", 0, cut), text.rfind("\r", 0, cut))
        if cut < 0:
            rest = text
            continue
        rest, text = text[cut + 1 :], text[: cut + 1]
        lines = _split(text, ansi)[:-1]
        if dropped or len(lines[0]) > LINE_MAX:
            lines[0], dropped = _shortened(lines[0], dropped), 0
        yield lines
    rest = "".join([rest, *held])
    if not first and rest:  # a log that ends with its newline has no empty line after it (audit M1)
        lines = _split(rest, ansi)[:-1] if rest.endswith("\r") else _split(rest, ansi)
        if lines and (dropped or len(lines[0]) > LINE_MAX):
            lines[0] = _shortened(lines[0], dropped)
        yield lines


# A line longer than this is read as its first and last LINE_MAX / 2 characters (audit N20: a log of one 100 MB line
# is read in bounded memory and time; a failure at the end of such a line, where a build stops, is still seen).
LINE_MAX = 4 << 20


GLIMPSE = 1 << 16  # characters of a line read where a whole-line regex only looks for words (advice, unnamed)


def glimpse(text: str) -> str:
    """`text`, or for a longer line its first and last GLIMPSE / 2 characters on two lines: what reads a line for
    a few words (the runtime it names, whether a program printed it) costs bounded time per line (audit N20)."""
    if len(text) <= GLIMPSE:
        return text
    return text[: GLIMPSE // 2] + "\n" + text[-(GLIMPSE // 2) :]


def _shortened(line: str, dropped: int) -> str:
    """`line` (of which `dropped` characters were already left out in its middle) as its first and last LINE_MAX / 2
    characters, with a mark that says how many were not read."""
    if len(line) > LINE_MAX:
        dropped += len(line) - LINE_MAX
        line = line[: LINE_MAX // 2] + line[-(LINE_MAX // 2) :]
    half = LINE_MAX // 2
    return f"{line[:half]} [... {dropped} characters of this line not read ...] {line[half:]}"


def _split(text: str, ansi: re.Pattern[str]) -> list[str]:
    if "\x1b" in text:
        text = ansi.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")


MIN_WIDTH = 40  # a console narrower than this is not taken for a wrapping one
MAX_PIECES = 64  # physical lines one wrapped logical line may span: beyond it, a run of lines of the
# wrap width is a fixed-width log (padded table, truncating console), not wrapping


def _long_lengths(batches: Iterable[list[str]], limit: int) -> tuple[Counter[int], bool]:
    """(how many lines have each length of MIN_WIDTH or more, in the first `limit` characters; whether
    that was the whole text)."""
    long: Counter[int] = Counter()
    seen = 0
    for lines in batches:
        lens = list(map(len, lines))
        long.update(filter((MIN_WIDTH - 1).__lt__, lens))
        seen += sum(lens)
        if seen > limit:
            return long, False
    return long, True


def wrap_width(batches: Iterable[list[str]], head: int = 16 << 20) -> int | None:
    """The console width a logger hard-wrapped at: many long lines of one length and none longer.
    Read from the first `head` characters only: a console logger keeps one width for the whole run.
    The width is only a candidate: `logical_lines` joins a run of such lines only with evidence."""
    long, _ = _long_lengths(batches, head)
    if not long:
        return None
    width, n = long.most_common(1)[0]
    return width if n >= 3 and width == max(long) else None


WEAK_MAX = 4 << 20  # characters: a log read again with a weak wrap width is a paste, not a build's full output


def weak_wrap_width(batches: Iterable[list[str]]) -> int | None:
    """The width of a paste that a console or an editor cut at a fixed column where only one or two lines
    were that long (too few for `wrap_width`): its longest line, when one or two lines have that length.
    None for a log larger than WEAK_MAX. logscan tries it only where the log named nothing."""
    long, whole = _long_lengths(batches, WEAK_MAX)
    if not long or not whole:
        return None
    width = max(long)
    return width if long[width] <= 2 else None


_BOX = frozenset("|+│┃║┆┊╎")


def _first_word(line: str) -> int:
    word = line.lstrip()
    cut = word.find(" ")
    return len(word) if cut < 0 else cut


def _soft_cut(a: str, b: str, width: int) -> bool:
    """Whether `b` continues `a` in a text word-wrapped at `width`: `a` holds at least a quarter of the width (a long
    word such as a path goes whole to the next line), does not end in padding nor a box, and `b`'s first word would
    not have fitted after it."""
    return (
        width // 4 <= len(a) <= width
        and bool(b.strip())
        and not a.endswith("  ")
        and a[-1:] not in _BOX
        and len(a) + 1 + _first_word(b) > width
    )


def soft_wrap_width(batches: Iterable[list[str]]) -> int | None:
    """The width a paste was word-wrapped at (an editor, a mail client, a forum): its longest line, where a line
    ends with a next line whose first word would not have fitted after it (`_soft_cut`). None beyond WEAK_MAX."""
    lines: list[str] = []
    seen = 0
    for batch in batches:
        lines += batch
        seen += sum(map(len, batch))
        if seen > WEAK_MAX:
            return None
    width = max(map(len, lines), default=0)
    if width < MIN_WIDTH:
        return None
    cuts = sum(_soft_cut(a, b, width) for a, b in zip(lines, lines[1:], strict=False))
    return width if cuts else None


def soft_lines(batches: Iterable[list[str]], width: int) -> Iterator[tuple[list[int], list[str]]]:
    """(first physical line numbers, texts) with word-wrapped lines joined back with a space (`_soft_cut`), at most
    MAX_PIECES physical lines to one."""
    no, num, pieces = 0, 0, 0
    text: str | None = None
    last = ""
    for batch in batches:
        nums: list[int] = []
        texts: list[str] = []
        for line in batch:
            no += 1
            if text is not None and pieces < MAX_PIECES and _soft_cut(last, line, width):
                text, last, pieces = text + " " + line.lstrip(), line, pieces + 1
                continue
            if text is not None:
                nums.append(num)
                texts.append(text)
            num, text, last, pieces = no, line, line, 1
        yield nums, texts
    if text is not None:
        yield [num], [text]


def _continues(a: str, b: str) -> bool:
    """Whether `b` can be the continuation of the wrapped piece `a`: `a` is not padded (a table row ends
    in spaces) nor a box-drawn row, and `b` holds text."""
    return bool(b.strip()) and not a.endswith("  ") and a[-1:] not in _BOX


def _unindent(piece: str) -> str:
    """A continuation piece without the indent a console puts before it; one leading space is no indent but
    the space the cut fell before (`...cannot open shared` / ` object file`), and stays."""
    rest = piece.lstrip()
    return " " + rest if len(piece) - len(rest) == 1 and piece[0] == " " else rest


class _Joiner:
    """The state of `logical_lines` across batches: the open run of lines of the wrap width. A run is one
    hard-wrapped line when it is bounded (MAX_PIECES), its last piece is shorter and holds text, and every
    cut is continuable (`_continues`); each cut is checked once, as the run grows."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.run: list[str] = []  # lines of `width`, not yet decided
        self.first = 0  # the line number of run[0] (the run's lines are consecutive)
        self.cuts_ok = True  # every cut inside the run is continuable
        self.fixed = False  # inside a run longer than MAX_PIECES: no joining

    def push(self, no: int, line: str, nums: list[int], texts: list[str]) -> None:
        run = self.run
        if len(line) == self.width:
            if self.fixed:
                nums.append(no)
                texts.append(line)
                return
            if run:
                self.cuts_ok = self.cuts_ok and _continues(run[-1], line)
            else:
                self.first, self.cuts_ok = no, True
            run.append(line)
            if len(run) > MAX_PIECES:
                self.fixed = True
                self.flush(nums, texts)
            return
        self.fixed = False
        if run and self.cuts_ok and len(line) < self.width and line.strip() and _continues(run[-1], line):
            nums.append(self.first)
            texts.append(run[0] + "".join(map(_unindent, run[1:])) + _unindent(line))
            self.run = []
            return
        self.flush(nums, texts)
        nums.append(no)
        texts.append(line)

    def flush(self, nums: list[int], texts: list[str]) -> None:
        nums.extend(range(self.first, self.first + len(self.run)))
        texts.extend(self.run)
        self.run = []


def logical_lines(batches: Iterable[list[str]], width: int | None) -> Iterator[tuple[list[int], list[str]]]:
    """(first physical line numbers, texts) per batch, hard-wrapped continuation lines joined back where
    the lines show wrapping (`_Joiner`); at most MAX_PIECES lines make one, so no log becomes one line."""
    no = 0
    if not width:
        for lines in batches:
            yield list(range(no + 1, no + 1 + len(lines))), lines
            no += len(lines)
        return
    joiner = _Joiner(width)
    for lines in batches:
        nums: list[int] = []
        texts: list[str] = []
        # one byte per line, 1 where the line has the wrap width: the runs to copy are found at C speed
        wide = bytes(map(width.__eq__, map(len, lines)))
        i, n = 0, len(lines)
        while i < n:
            if not joiner.run:
                # not in a run: copy up to the next line of the width; in a fixed-width run (beyond
                # MAX_PIECES, no joining): copy up to the next line of another length
                j = wide.find(0 if joiner.fixed else 1, i)
                j = n if j < 0 else j
                nums.extend(range(no + i + 1, no + j + 1))
                texts.extend(lines[i:j])
                i = j
                if i == n:
                    break
            joiner.push(no + i + 1, lines[i], nums, texts)
            i += 1
        no += n
        yield nums, texts
    nums, texts = [], []
    joiner.flush(nums, texts)
    if nums:
        yield nums, texts


@dataclass
class Hit:
    """What the scan keeps of one id: the first match, the count, a few lines, the signatures seen."""

    index: int  # 0-based logical line of the first match
    line_no: int
    line: str
    signature: str
    details: Details
    count: int = 0
    lines: list[tuple[int, str]] = field(default_factory=list)  # [(line_no, line)], the first EVIDENCE
    signatures: dict[str, int] = field(default_factory=dict)  # name -> count


@dataclass
class Near:
    """A catalog id whose words appeared although none of its signatures matched."""

    id: FailureId
    count: int
    line_no: int
    line: str
    words: list[str]


def literal_prefixes(pattern: str) -> tuple[str, ...]:
    """The literal each top-level alternative of `pattern` starts with, or () when one has none: a
    needle for a regex written elsewhere (logscan's fact regexes), so it need not run on every window."""
    out = []
    for branch in pattern.split("|"):
        lit, i = "", _after_lookarounds(branch, 1 if branch.startswith("^") else 0)
        while i < len(branch):
            c = branch[i]
            if c == "\\" and i + 1 < len(branch) and branch[i + 1] in ".+()[]\\/-?*":
                lit, i = lit + branch[i + 1], i + 2
                continue
            if c in ".^$*+?{}[]()|\\":
                if c in "*?{" and lit:
                    lit = lit[:-1]
                break
            lit, i = lit + c, i + 1
        if len(lit) < 4:
            return ()
        out.append(lit)
    return tuple(out)


_LOOKAROUND = ("(?<!", "(?<=", "(?!", "(?=")
_QUANTIFIER = re.compile(r"(?:[*+?]|\{\d*(?:,\d*)?\})[?+]?")
_CLASS_ESCAPES = frozenset("bBAZdDsSwWntrfva")  # one-letter escapes: a class, an assertion or a control


def required_literals(rx: re.Pattern[str]) -> tuple[str, ...]:
    """The literals every match of `rx` holds: the runs of plain characters in its top-level sequence (groups,
    classes and the characters a quantifier applies to left out). () where that cannot be told simply: a top-level
    `|`, case-insensitive or verbose flags, a numeric or named escape. A text without one of them holds no match."""
    if rx.flags & (re.IGNORECASE | re.VERBOSE):
        return ()
    pattern, runs, i, depth = rx.pattern, [""], 0, 0
    while i < len(pattern):
        c, nxt = pattern[i], pattern[i + 1 : i + 2]
        q = _QUANTIFIER.match(pattern, i)
        if q is not None:  # the character before it may be absent or repeated
            runs[-1] = runs[-1][:-1]
            runs.append("")
            i = q.end()
            continue
        if c == "\\":
            if nxt.isalnum() and nxt not in _CLASS_ESCAPES:
                return ()
            keep, width = depth == 0 and not nxt.isalnum(), 2
        elif c == "[":
            keep, width = False, _class_end(pattern, i) - i
        elif c in "()":
            depth += 1 if c == "(" else -1
            keep, width = False, 1
        elif c == "|" and depth == 0:
            return ()
        else:
            keep, width = depth == 0 and c not in ".^$|{", 1
        if keep:
            runs[-1] += pattern[i + width - 1]
        elif runs[-1]:
            runs.append("")
        i += width
    return tuple(r for r in runs if r)


def _class_end(pattern: str, i: int) -> int:
    """Where the character class opened at `i` ends (past its `]`)."""
    j = i + 1
    j += pattern.startswith("^", j)
    j += pattern.startswith("]", j)
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


def _after_lookarounds(branch: str, i: int) -> int:
    """Where a branch's first consumed character is: past the zero-width assertions it starts with (a match
    of `(?<!')-allow` starts at `-allow`, so that literal is still its needle)."""
    while branch.startswith(_LOOKAROUND, i):
        depth, j = 0, i
        while j < len(branch):
            if branch[j] == "\\":
                j += 2
                continue
            depth += {"(": 1, ")": -1}.get(branch[j], 0)
            j += 1
            if depth == 0:
                break
        if depth:
            return len(branch)  # unbalanced: no literal
        i = j
    return i


GATE_MIN = 4  # characters: a shorter literal (a quote, a colon) is in almost every window
GATE_AFTER = 64  # a needle's places in a window looked at before its gates are (a pass over the window each)


def _gates(needle: str, sigs: Placed) -> tuple[str, ...] | None:
    """For each signature of `needle`, the longest literal it requires (its key, or one of `required_literals`) that
    neither lies in the needle nor holds it; None when a signature has none of GATE_MIN characters or more."""
    gates = []
    for _, sig in sigs:
        lits = [x for x in (sig.key, *required_literals(sig.regex)) if x not in needle and needle not in x]
        if max(map(len, lits), default=0) < GATE_MIN:
            return None
        gates.append(max(lits, key=len))
    return tuple(dict.fromkeys(gates))


def _line_start(body: str, pos: int, back: int) -> int:
    for _ in range(back + 1):
        pos = body.rfind("\n", 0, pos) if pos > 0 else -1
        if pos < 0:
            return 0
    return pos + 1


REACH = 512  # characters a message may start before its needle (and run on after it, per line of span)
# characters a region may run on past that to the end of its line: a regex then never reads more than about
# 2 * REACH + REACH * span / 2 + LONG characters around a needle, however long the line is, so a line of 100 MB costs
# time linear in its length (audit N20: a lazy repetition restarted at every character of a 100 KB line took minutes)
LONG = 16384


@dataclass(frozen=True)
class _Plan:
    """What a Scanner reads from its signatures and regexes before any text: the same for every log, so made once."""

    by_needle: dict[str, Placed]  # needle -> [(index, signature)]
    gates: dict[str, tuple[str, ...] | None]
    fact_needles: list[tuple[str, ...]]
    anchor_rxs: tuple[tuple[str, re.Pattern[str]], ...]
    anchor_needles: list[tuple[str, ...]]
    inside: dict[str, tuple[str, ...]]  # literal -> the shorter literals in it (Probe)
    first: list[str]  # the needles, shortest first
    first_near: list[str]  # the needles and near words, shortest first


# made plans, by the ids of what they were made from
_PLANS: dict[tuple[object, ...], tuple[tuple[object, ...], _Plan]] = {}


def _plan_for(
    signatures: Sequence[Signature],
    near_words: NearWords,
    fact_rxs: Sequence[re.Pattern[str]],
    failed_rx: re.Pattern[str],
) -> _Plan:
    """The plan for these signatures and regexes, made once: looked up by the ids of the objects (kept alive with the
    plan, so no other object can have their ids), as hashing 100 signatures cost more than a small log's scan."""
    key = (tuple(map(id, signatures)), tuple(map(id, near_words)), tuple(map(id, fact_rxs)), id(failed_rx))
    made = _PLANS.get(key)
    if made is None:
        if len(_PLANS) >= 8:
            _PLANS.clear()
        made = _PLANS[key] = (
            (signatures, near_words, fact_rxs, failed_rx),
            _plan(signatures, near_words, fact_rxs, failed_rx),
        )
    return made[1]


def _plan(
    signatures: Sequence[Signature],
    near_words: NearWords,
    fact_rxs: Sequence[re.Pattern[str]],
    failed_rx: re.Pattern[str],
) -> _Plan:
    by_needle: dict[str, Placed] = {}
    for k, sig in enumerate(signatures):
        for n in sig.needle:
            by_needle.setdefault(n, []).append((k, sig))
    fact_needles = [literal_prefixes(rx.pattern) for rx in fact_rxs]
    # per needle, a literal each of its signatures needs besides it (None: one has none): a window holding none
    # of them holds no match of any, and the needle's places in it (past GATE_AFTER of them) need no look
    gates = {n: _gates(n, sigs) for n, sigs in by_needle.items()}
    anchor_rxs = (("failed", failed_rx), ("ccbin", _CCBIN), ("allow", _ALLOW))
    anchor_needles = [literal_prefixes(rx.pattern) for _, rx in anchor_rxs]
    # every literal a window is asked for, and the shorter ones each holds (Probe skips one whose part is absent);
    # a window asks its needles shortest first (and the near words, while they are read) so the parts come first
    near = [w for _, words in near_words for w in words]
    asked = list(
        dict.fromkeys(
            [
                *near,
                *by_needle,
                *(g for gs in gates.values() for g in gs or ()),
                *_WINDOWS_WORDS,
                *(n for ns in (*fact_needles, *anchor_needles) for n in ns),
            ]
        )
    )
    inside = {a: parts for a in asked if (parts := tuple(b for b in asked if len(b) < len(a) and b in a))}
    return _Plan(
        by_needle,
        gates,
        fact_needles,
        anchor_rxs,
        anchor_needles,
        inside,
        sorted(by_needle, key=len),
        sorted(dict.fromkeys([*near, *by_needle]), key=len),
    )


class Scanner:
    """Feed (line numbers, texts) batches, then `finish()`; read `hits`, `facts`, `near` afterwards.

    Per window every distinct needle is looked for once (a C-speed substring search); a signature's
    regex then runs only on the lines around each place its needle occurs (from REACH characters above
    to about REACH * `span` / 2 below), so a window without failure text costs one search per needle
    and nothing else."""

    def __init__(
        self,
        signatures: Sequence[Signature],
        near_words: NearWords,
        fact_rxs: Sequence[re.Pattern[str]],
        failed_rx: re.Pattern[str],
        msvc_from: int = 0,
    ) -> None:
        self.signatures, self.near_words = signatures, near_words
        self.fact_rxs, self.failed_rx = fact_rxs, failed_rx
        plan = _plan_for(signatures, near_words, fact_rxs, failed_rx)
        self.by_needle, self.gates, self.fact_needles = plan.by_needle, plan.gates, plan.fact_needles
        self.anchor_rxs, self.anchor_needles = plan.anchor_rxs, plan.anchor_needles
        self.inside, self.first, self.first_near = plan.inside, plan.first, plan.first_near
        self.msvc_from = msvc_from  # fact_rxs[msvc_from:] read MSVC versions
        self.windows_msvc = False  # a Windows toolchain word was seen: look for MSVC facts
        self.nums: list[int] = []
        self.texts: list[str] = []
        self.base = 0  # logical index of texts[0]
        self.lo = 0  # first index in texts not yet counted
        self.hits: dict[FailureId, Hit] = {}
        self.fact_lines: dict[int, tuple[int, str]] = {}
        self.anchors: dict[str, tuple[int, int, str]] = {}  # failed/ccbin/allow -> (index, line_no, line)
        self.near: dict[FailureId, Near] = {}
        self.regions: dict[tuple[str, str], Found] = {}  # (needle, lines around it) -> the matches found there
        self.lines_read = 0

    def feed(self, nums: list[int], texts: list[str]) -> None:
        self.nums += nums
        self.texts += texts
        self.lines_read += len(texts)
        if len(self.texts) >= WINDOW + 2 * OVERLAP:
            self._scan(final=False)

    def finish(self) -> Scanner:
        self._scan(final=True)
        return self

    # -------------------------------------------------------------- one window

    def _scan(self, final: bool) -> None:
        texts = self.texts
        hi = len(texts) if final else len(texts) - OVERLAP
        body = "\n".join(texts) + "\n"
        lo_pos = sum(map(len, texts[: self.lo])) + self.lo
        hi_pos = len(body) - sum(map(len, texts[hi:])) - (len(texts) - hi)
        # Whether a needle is there at all is asked of the probe (Probe: a cheaper copy of the window); the window
        # itself is searched only for the needles that may be.
        probe = Probe(body, self.inside)
        for literal in self.first if self.hits else self.first_near:
            probe.maybe(literal)
        win = _Window(body, self, lo_pos, hi_pos, probe)
        present: dict[str, int] = {}
        seen: set[tuple[int, int]] = set()
        for needle, sigs in self.by_needle.items():
            if not probe.maybe(needle):
                continue
            pos = body.find(needle, lo_pos)
            if pos < 0:
                continue
            present[needle] = pos
            self._around(win, needle, pos, sigs, seen, functools.partial(self._gated_out, needle, probe))
        self.windows_msvc = self.windows_msvc or any(map(probe.holds, _WINDOWS_WORDS))
        self._facts(win)
        if not self.hits:
            self._near(win, present)
        keep = max(0, hi - OVERLAP)
        self.base += keep
        self.nums, self.texts, self.lo = self.nums[keep:], self.texts[keep:], hi - keep

    def _gated_out(self, needle: str, probe: Probe) -> bool:
        """Whether no signature of `needle` can match in this window: each lacks its gate literal."""
        gates = self.gates[needle]
        return gates is not None and not any(map(probe.maybe, gates))

    def _around(
        self,
        win: _Window,
        needle: str,
        pos: int,
        sigs: Placed,
        seen: set[tuple[int, int]],
        gated_out: Callable[[], bool],
    ) -> None:
        """Run each signature of `needle` on the lines around every occurrence of it; from its GATE_AFTER-th
        occurrence on only where `gated_out()` (asked then, once) does not say that none can match in this window."""
        body, lo_pos, hi_pos = win.body, win.lo, win.hi
        span = max(sig.span for _, sig in sigs)
        done = places = 0
        n = len(body)
        while 0 <= pos < hi_pos + 4096:
            places += 1
            if places == GATE_AFTER and gated_out():
                return
            # From the line holding the point REACH characters back (a message's first words, wrapped
            # lines above it) to the end of the line REACH * span characters on: one search each way.
            back = max(done, pos - REACH)
            start = max(body.rfind("\n", done, back) + 1, back - REACH, done)
            reach = min(n, pos + REACH * span // 2)
            end = body.find("\n", reach, reach + LONG)
            cut = end < 0 and reach + LONG < n  # a line longer than that: the region stops there (N20)
            end = reach + LONG if cut else n if end < 0 else end + 1
            region = body[start:end]
            known = self.regions.get((needle, region))
            if (
                known is not None
                and all(sig.id in self.hits for _, sig, _ in known)
                and not self._before_first(known, start, win)
            ):
                # a repeated log: the same lines again, only counted
                for k, sig, rel in known:
                    at = start + rel
                    if (k, at) not in seen and lo_pos <= at < hi_pos:
                        seen.add((k, at))
                        self._again(sig, at, win)
            else:
                found = []
                for k, sig in sigs:
                    if sig.key and sig.key not in region:
                        continue
                    for m in sig.regex.finditer(body, start, end):
                        if not sig.check or sig.check(m):
                            found.append((k, sig, m.start() - start))
                        if (k, m.start()) in seen or not lo_pos <= m.start() < hi_pos:
                            continue
                        seen.add((k, m.start()))
                        if not sig.check or sig.check(m):
                            self._hit(sig, m, win.index(m.start()))
                if len(self.regions) < 4096:
                    self.regions[(needle, region)] = tuple(found)
            done = body.find("\n", pos, end)
            done = end if done < 0 else done + 1  # a cut line: its next place, past this region, is looked at
            pos = body.find(needle, done)

    def _before_first(self, known: Found, start: int, win: _Window) -> bool:
        """Whether a cached match lies above its id's first hit: the region was cached while its lines were still
        the previous window's overlap, and another needle found a later match of the same id first. Such a match
        must go through `_hit` (regexes run again) so that it becomes the first line."""
        return any(self.base + win.index(start + rel) < self.hits[sig.id].index for _, sig, rel in known)

    def _hit(self, sig: Signature, m: re.Match[str], i: int) -> None:
        index, line_no, line = self.base + i, self.nums[i], self.texts[i]
        hit = self.hits.get(sig.id)
        if hit is None or index < hit.index:
            details = sig.extract(m) if sig.extract else {}
            new = Hit(index, line_no, line, sig.name, details)
            if hit is not None:
                new.count, new.lines, new.signatures = hit.count, hit.lines, hit.signatures
            hit = self.hits[sig.id] = new
        hit.count += 1
        hit.signatures[sig.name] = hit.signatures.get(sig.name, 0) + 1
        if (len(hit.lines) < EVIDENCE or line_no < hit.lines[-1][0]) and (line_no, line) not in hit.lines:
            hit.lines.append((line_no, line))
            hit.lines.sort()
            del hit.lines[EVIDENCE:]

    def _again(self, sig: Signature, pos: int, win: _Window) -> None:
        """A match in lines seen before: count it; its line is evidence while there are few, or when it lies above
        the last evidence line (a small window can reach a cached region after later matches of the id)."""
        hit = self.hits[sig.id]
        hit.count += 1
        hit.signatures[sig.name] = hit.signatures.get(sig.name, 0) + 1
        i = win.index(pos)
        if len(hit.lines) < EVIDENCE or self.nums[i] < hit.lines[-1][0]:
            if (self.nums[i], self.texts[i]) not in hit.lines:
                hit.lines.append((self.nums[i], self.texts[i]))
                hit.lines.sort()
                del hit.lines[EVIDENCE:]

    def _at(self, win: _Window, pos: int) -> tuple[int, int, str]:
        i = win.index(pos)
        return self.base + i, self.nums[i], self.texts[i]

    def _facts(self, win: _Window) -> None:
        # MSVC facts and the failure anchors serve only F04/F05 inference: Windows logs only.
        for k, rx in enumerate(self.fact_rxs):
            if k in self.fact_lines or (k >= self.msvc_from and not self.windows_msvc):
                continue
            if m := _gated(rx, self.fact_needles[k], win.body, win.lo, win.hi, win.probe):
                self.fact_lines[k] = self._at(win, m.start())[1:]
        if not self.windows_msvc:
            return
        for (name, rx), needles in zip(self.anchor_rxs, self.anchor_needles, strict=True):
            if name not in self.anchors and (m := _gated(rx, needles, win.body, win.lo, win.hi, win.probe)):
                self.anchors[name] = self._at(win, m.start())

    def _near(self, win: _Window, present: dict[str, int]) -> None:
        """Ids whose needles or near words appear (only while nothing matched: they are not shown then)."""
        for fid, words in self.near_words:
            for word in words:
                pos = (
                    present.get(word, -1)
                    if word in self.by_needle
                    else win.body.find(word, win.lo, win.hi)
                    if win.probe.maybe(word)
                    else -1
                )
                if pos < 0 or pos >= win.hi:
                    continue
                near = self.near.get(fid)
                if near is None:
                    _, line_no, line = self._at(win, pos)
                    near = self.near[fid] = Near(fid, 0, line_no, line, [])
                near.count += 1
                if word not in near.words:
                    near.words.append(word)


class _Window:
    """One window's text; the line starts are computed only when a position must become a line."""

    def __init__(self, body: str, scanner: Scanner, lo: int, hi: int, probe: Probe) -> None:
        self.body, self.scanner, self.lo, self.hi, self.probe = body, scanner, lo, hi, probe
        self._starts: list[int] | None = None

    def index(self, pos: int) -> int:
        if self._starts is None:
            self._starts = [0, *accumulate(len(t) + 1 for t in self.scanner.texts)]
        return bisect.bisect_right(self._starts, pos) - 1


_WINDOWS_WORDS = ("MSVC", "MSBuild", "Microsoft")


def _gated(
    rx: re.Pattern[str], needles: tuple[str, ...], body: str, lo: int, hi: int, probe: Probe | None = None
) -> re.Match[str] | None:
    """rx.search(body, lo, hi), started at the first needle (none found: no regex pass at all); `probe` (of `body`)
    rules out the needles that are not there at all."""
    if not needles:
        return rx.search(body, lo, hi)
    found = [p for n in needles if (probe is None or probe.maybe(n)) and (p := body.find(n, lo, hi)) >= 0]
    if not found:
        return None
    return rx.search(body, _line_start(body, min(found), 0), hi)


_CCBIN = re.compile(r"-ccbin[^\n]*MSVC")
# the flag given, not host_config.h's #error text that suggests it ("'-allow-unsupported-compiler' can be used")
_ALLOW = re.compile(r"(?<!')-allow-unsupported-compiler(?!' can be used)")
