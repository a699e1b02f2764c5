"""Rendering: stdout carries data (text or --json), stderr carries talk. Colour: --color, else NO_COLOR,
FORCE_COLOR and whether the stream is a terminal (https://no-color.org, https://force-color.org)."""

from __future__ import annotations

import codecs
import io
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

from envmgr.errors import OutputFailed
from envmgr.files.jsondoc import dumps
from envmgr.files.utf8 import escape_surrogates
from envmgr.host.process import setting

if TYPE_CHECKING:
    import threading  # imported by Spinner only when it spins

    from envmgr.errors import EnvmgrError

JSON_SCHEMA_VERSION = 1
_CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}
COLOR_CHOICES = ("auto", "always", "never")


class Talk:
    """The global flags, set once by the CLI (cli/main.py): -q/--quiet (-1: errors only), -v/--verbose
    (1: details too), --color (auto: the environment and the terminal decide)."""

    verbosity = 0
    color = "auto"


def configure(verbosity: int = 0, color: str = "auto") -> None:
    Talk.verbosity, Talk.color = verbosity, color


def quiet() -> bool:
    """-q: no progress lines, no spinners (errors and data only)."""
    return Talk.verbosity < 0


def use_color(stream: TextIO) -> bool:
    if Talk.color != "auto":
        return Talk.color == "always"
    if setting("NO_COLOR") or setting("TERM") == "dumb":
        return False
    if setting("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


class Painter:
    def __init__(self, stream: TextIO) -> None:
        self.on = use_color(stream)
        if self.on and sys.platform == "win32":
            import colorama  # lazily: only Windows consoles need it

            colorama.just_fix_windows_console()

    def __call__(self, text: str, *styles: str) -> str:
        if not self.on or not styles:
            return text
        codes = ";".join(_CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"


def utf8_pipes() -> None:
    """On Windows a pipe or a file gets the ANSI code page (cp1252: "·" becomes byte B7 and a CJK path
    cannot be written at all), yet JSON and TOML are UTF-8 by definition. Seen under Windows CPython
    (tests/run-win32.sh): `envmgr export --format json` piped to a UTF-8 reader failed to decode. A
    console keeps Python's own Unicode console writer."""
    if sys.platform != "win32":
        return
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and hasattr(stream, "reconfigure") and not stream.isatty():
            stream.reconfigure(encoding="utf-8")


def emit_json(data: Any, stream: TextIO | None = None) -> None:
    """One JSON document, valid UTF-8 even when a path holds bytes that are not (written as \\udcXX); never
    NaN or Infinity (files/jsondoc.dumps refuses them: RFC 8259 has neither, audit N11)."""
    emit_utf8(escape_surrogates(dumps(data, indent=2, ensure_ascii=False, default=_public)) + "\n", stream)


def emit_utf8(text: str, stream: TextIO | None = None) -> None:
    """Data for stdout as UTF-8 bytes whatever the stream's encoding: an explicit PYTHONIOENCODING=ascii (or
    cp1252) would otherwise end a document in a UnicodeEncodeError half-way (audit N27); docs/json.md
    promises UTF-8. A stream without bytes underneath (a test's StringIO) takes the text."""
    stream = stream or sys.stdout
    buffer = getattr(stream, "buffer", None)
    if buffer is None or codecs.lookup(getattr(stream, "encoding", None) or "utf-8").name == "utf-8":
        stream.write(text)
        return
    stream.flush()
    buffer.write(text.encode("utf-8"))
    buffer.flush()


def _public(value: Any) -> Any:
    """A value that says how it may be shown (`__json__`): wheels/url.py's IndexUrl writes itself without
    its password or token (issue 34, N2). Anything else unknown stays json's TypeError."""
    public = getattr(type(value), "__json__", None)
    if public is None:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
    return public(value)


def say(message: str) -> None:
    """Talk for people: stderr, so stdout stays clean for data; -q silences it (errors still print)."""
    if Talk.verbosity >= 0:
        print(message, file=sys.stderr)


def detail(message: str) -> None:
    """Talk only -v asks for."""
    if Talk.verbosity > 0:
        print(message, file=sys.stderr)


def show_error(exc: EnvmgrError) -> int:
    """The one printer of an EnvmgrError (errors.py): its line, details and remedy on stderr; the
    exit code to leave with."""
    paint = Painter(sys.stderr)
    print(f"{paint('envmgr: error:', 'red', 'bold')} {exc.message}", file=sys.stderr)
    for line in exc.details:
        print(f"  {line}", file=sys.stderr)
    if exc.remedy:
        print(f"{paint('  fix:', 'yellow')} {exc.remedy}", file=sys.stderr)
    return exc.exit_code


class Spinner:
    """Progress for a slow step (a vcvars capture, discovery, verify): on a terminal a spinner with what runs
    and the time so far; elsewhere (a pipe, CI) a line every 10 s; nothing under -q (quiet())."""

    FRAMES = "|/-\\"
    PLAIN_EVERY = 10.0

    def __init__(self, message: str) -> None:
        self.message = message
        self.tty = sys.stderr.isatty() and not setting("CI")
        self.active = not quiet()
        self._thread: threading.Thread | None = None
        self._stop: threading.Event | None = None

    def __enter__(self) -> Spinner:
        if self.active:
            import threading

            self._stop = threading.Event()
            spin = self._spin if self.tty else self._lines
            self._thread = threading.Thread(target=spin, args=(self._stop,), daemon=True)
            self._thread.start()
        return self

    def _spin(self, stop: threading.Event) -> None:
        import time

        start, i, shown = time.monotonic(), 0, 0
        # Wait a little first: fast steps should not flicker.
        if stop.wait(0.3):
            return
        while not stop.wait(0.1):
            text = f"{self.FRAMES[i % 4]} {self.message} {int(time.monotonic() - start)} s"
            sys.stderr.write("\r" + text.ljust(shown))
            sys.stderr.flush()
            shown, i = len(text), i + 1
        sys.stderr.write("\r" + " " * shown + "\r")
        sys.stderr.flush()

    def _lines(self, stop: threading.Event) -> None:
        waited = 0.0
        while not stop.wait(self.PLAIN_EVERY):
            waited += self.PLAIN_EVERY
            sys.stderr.write(f"envmgr: {self.message} ({waited:.0f} s)\n")
            sys.stderr.flush()

    def __exit__(self, *exc: object) -> None:
        if self._stop is not None and self._thread is not None:  # both set by __enter__, or neither
            self._stop.set()
            self._thread.join()


# ---------------------------------------------------------------- stdout that fails (issue 34, audit N24)


class _Stdout(io.FileIO):
    """fd 1 under sys.stdout (text and .buffer alike): a write that fails for any reason but a reader gone (EPIPE,
    cli.main's reader_gone) - a full disk (ENOSPC), `ulimit -f` (EFBIG), an I/O error - raises OutputFailed, which
    the CLI prints as one line (exit 2), instead of a traceback and Python's exit 120. fd 1 then becomes /dev/null,
    so what is still buffered is dropped quietly at exit. `closed`: fd 1 was closed when envmgr started."""

    def __init__(self, closed: bool = False) -> None:
        super().__init__(1, "wb", closefd=False)
        self.was_closed = closed

    def write(self, data: Any) -> int:
        if self.was_closed:
            self.was_closed = False  # said once: fd 1 is /dev/null from here on
            raise output_failed(None)
        try:
            return super().write(data)
        except BrokenPipeError:
            raise
        except OSError as exc:
            quiet_fd1()
            raise output_failed(exc) from None


def output_failed(exc: OSError | None) -> OutputFailed:
    """The one wording of a stdout that cannot be written (`exc`), or that was closed (None)."""
    if exc is None:
        return OutputFailed(
            "cannot write the output: stdout is closed",
            "run envmgr with its stdout open (no >&-), or send it to a file or /dev/null",
        )
    return OutputFailed(
        f"cannot write the output: {exc.strerror or exc}",
        "free space where the output goes (or lift its size limit), or send it elsewhere; "
        "what was written is incomplete",
    )


def quiet_fd1() -> None:
    """fd 1 becomes /dev/null: what is still buffered for stdout is dropped at exit without a second error."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    if devnull != 1:
        os.dup2(devnull, 1)
        os.close(devnull)


def guard_stdout() -> None:
    """sys.stdout over `_Stdout` where it is a file or a pipe (a terminal never fills up), keeping its encoding,
    errors and newline handling. A closed fd 1 is taken by /dev/null first: a file envmgr opens (a --log, a cache
    entry) would otherwise become fd 1 and receive the output, and a child would inherit it as its stdout."""
    stream = sys.stdout
    if stream is None:
        quiet_fd1()
        closed = True
    else:
        try:
            if stream.fileno() != 1 or stream.isatty():
                return
        except (OSError, ValueError, AttributeError):  # a replaced stream (pytest's capture, CliRunner)
            return
        closed = False
    encoding = stream.encoding if stream is not None else "utf-8"
    errors = stream.errors if stream is not None else "strict"
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(_Stdout(closed)), encoding=encoding, errors=errors, line_buffering=False, write_through=False
    )
