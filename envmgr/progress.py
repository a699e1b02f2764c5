"""Live progress on a long wait (issue 33): one line on stderr, never on stdout.

The pure part reads a build's own counter from its output lines (ninja's and CMake+ninja's `[n/N]`, CMake
Makefiles' `[ nn%]`, MSBuild's project on each line) and renders the line; `Ticker` decides when to draw it:
on a terminal after 2 s and then redrawn in place (erased before the child writes), elsewhere one line every
10 s. `-q` (output.quiet) silences it. Logs written to files go through `strip_ansi`.
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass, replace
from typing import TextIO

from envmgr.output import quiet

FIRST_AFTER = 2.0  # a wait shorter than this shows nothing
EVERY_PLAIN = 10.0  # not a terminal: a line this often
EVERY_TTY = 0.5  # a terminal: redraw this often

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_NINJA = re.compile(r"^\s*\[(\d+)/(\d+)\]\s")  # ninja, cmake --build with Ninja
_PERCENT = re.compile(r"^\s*\[\s*(\d{1,3})%\]\s")  # CMake's Makefile generator
_MSB_TAIL = re.compile(r"\[([^\[\]]*?([^\\/\[\]]+)\.(?:vcx|cs|vb)proj)\]\s*$", re.IGNORECASE)
_MSB_DONE = re.compile(r"^\s*([^\s\\/\"]+)\.(?:vcx|cs|vb)proj -> ", re.IGNORECASE)
_MSB_START = re.compile(
    r'^\s*Project "[^"]*?([^\\/"]+)\.(?:vcx|cs|vb)proj"'
    r'(?: \(\d+\) is building "[^"]*?([^\\/"]+)\.(?:vcx|cs|vb)proj"| on node)',
    re.IGNORECASE,
)


def strip_ansi(text: str) -> str:
    """Text without terminal escapes (colours, cursor moves, titles): what a log file should hold."""
    return _ANSI.sub("", text)


@dataclass(frozen=True)
class Counter:
    """The build's own count: done of total steps (ninja), a percentage (make), or MSBuild's projects."""

    done: int = 0
    total: int = 0
    percent: int | None = None
    project: str = ""
    projects: tuple[str, ...] = ()

    def text(self) -> str:
        if self.total:
            return f"[{self.done}/{self.total}]"
        if self.percent is not None:
            return f"[{self.percent:3d}%]"
        if self.project:
            return f"[project {len(self.projects)}: {self.project}]"
        return ""


def read_counter(line: str, before: Counter) -> Counter:
    """The counter after one output line (escapes already stripped)."""
    m = _NINJA.match(line)
    if m:
        return replace(before, done=int(m.group(1)), total=int(m.group(2)))
    m = _PERCENT.match(line)
    if m and int(m.group(1)) <= 100:
        return replace(before, percent=int(m.group(1)))
    m = _MSB_DONE.match(line) or _MSB_START.match(line) or _MSB_TAIL.search(line)
    if m:
        name = m.group(1) if m.re is _MSB_DONE else (m.group(2) or m.group(1))
        projects = before.projects if name in before.projects else (*before.projects, name)
        return replace(before, project=name, projects=projects)
    return before


def elapsed_text(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def size_text(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"  # not reached


def build_line(what: str, seconds: float, counter: Counter, last: str, width: int) -> str:
    """`envmgr: building 2:13 [45/120] Building CUDA object ...`, cut to `width` columns."""
    count = counter.text()
    head = " ".join(p for p in (f"envmgr: {what}", elapsed_text(seconds), count) if p)
    last = last.strip()
    return _fit(head, last[len(count) :].lstrip() if count and last.startswith(count) else last, width)


def download_line(what: str, seconds: float, done: int, total: int | None, width: int) -> str:
    """`envmgr: downloading X 120.0 MB of 310.2 MB (38%) 12.3 MB/s 0:09`."""
    rate = done / seconds if seconds > 0 else 0.0
    of = f" of {size_text(total)} ({100 * done // total}%)" if total else ""
    return _fit(
        f"envmgr: downloading {what} {size_text(done)}{of} {size_text(rate)}/s {elapsed_text(seconds)}", "", width
    )


def _fit(head: str, tail: str, width: int) -> str:
    tail = " ".join(tail.split())
    line = f"{head}  {tail}" if tail else head
    return line if len(line) <= width else line[: max(width - 3, 0)] + "..."


class Ticker:
    """When to draw: `due(now)` says whether a line should be drawn now; `draw(line)` draws it on `stream`
    (in place on a terminal), `clear()` takes it away before other output, `done()` ends it."""

    def __init__(self, stream: TextIO | None = None, *, start: float | None = None, tty: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.start = time.monotonic() if start is None else start
        self.tty = (hasattr(self.stream, "isatty") and self.stream.isatty()) if tty is None else tty
        self.off = quiet()
        self.shown = False
        self._next = self.start + FIRST_AFTER if self.tty else self.start + EVERY_PLAIN

    def width(self) -> int:
        if not self.tty:
            return 200
        import shutil

        return max(shutil.get_terminal_size((100, 24)).columns - 1, 20)

    def due(self, now: float) -> bool:
        return not self.off and now >= self._next

    def draw(self, line: str, now: float) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K" + line)
            self.shown = True
            self._next = now + EVERY_TTY
        else:
            self.stream.write(line + "\n")
            self._next = now + EVERY_PLAIN
        self.stream.flush()

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False

    def done(self) -> None:
        self.clear()


class BuildWatch:
    """A build's output, fed as it comes (bytes, any split): the counter and the last non-empty line.
    `shown`: the output also goes to the screen, so a line it left unfinished (a prompt, ninja's own status
    line) is not drawn over on a terminal."""

    def __init__(self, what: str, ticker: Ticker, *, shown: bool = False) -> None:
        self.what = what
        self.ticker = ticker
        self.shown = shown
        self.counter = Counter()
        self.last = ""
        self._partial = ""

    def feed(self, data: bytes) -> None:
        text = self._partial + data.decode("utf-8", "replace").replace("\r\n", "\n")
        *lines, self._partial = re.split(r"[\r\n]", text)
        for raw in lines:
            line = strip_ansi(raw).rstrip()
            if line.strip():
                self.counter = read_counter(line, self.counter)
                self.last = line.strip()

    def tick(self, now: float) -> None:
        if self.ticker.tty and self.shown and self._partial.strip():
            return
        if self.ticker.due(now):
            self.ticker.draw(
                build_line(self.what, now - self.ticker.start, self.counter, self.last, self.ticker.width()), now
            )


class LogCleaner:
    """Bytes on their way to a log file, without terminal escapes; an escape cut between two reads is held
    back until its end arrives."""

    _ESC = re.compile(_ANSI.pattern.encode())

    def __init__(self) -> None:
        self._held = b""

    def feed(self, data: bytes) -> bytes:
        data = self._held + data
        cut = data.rfind(b"\x1b", max(len(data) - 64, 0))
        if cut >= 0 and not self._ESC.match(data, cut):
            data, self._held = data[:cut], data[cut:]
        else:
            self._held = b""
        return self._ESC.sub(b"", data)

    def flush(self) -> bytes:
        held, self._held = self._held, b""
        return self._ESC.sub(b"", held)


class DownloadWatch:
    """A download's bytes, total (when the server says it) and rate, drawn as they come."""

    def __init__(self, what: str, ticker: Ticker) -> None:
        self.what = what
        self.ticker = ticker

    def tick(self, now: float, done: int, total: int | None) -> None:
        if self.ticker.due(now):
            self.ticker.draw(download_line(self.what, now - self.ticker.start, done, total, self.ticker.width()), now)
