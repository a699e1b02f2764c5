"""Logs as users paste them, measured by construction (issue 23 deliverable 2): a metamorphic benchmark.

    python bench/pasteforms.py [--forms a,b,...] [--save] [--seed N] [--limit N]

A log reaches `doctor --log` hard-wrapped by a console, word-wrapped by an editor, quoted in a Markdown reply,
inside a fence, HTML-escaped, as a JSON/Python string with `\\n` written out, behind the prefixes CI services and
loggers put on every line, with CRLF, ANSI colours, or as UTF-8 shown through a legacy code page. Each such change
is a small pure function over the log's text (`FORMS`, each documented); none invents failure text.

The logs: every FIT log of train (train minus the dev part, `corpus_index.dev_of`, as `bench/diagnosis.py --dev`
splits it; dev and held-out logs are never read here) that is either
  - a failure whose decisive id the engine names correctly as given (re-encoded as UTF-8: the `identity` form), or
  - a clean log (EXPECT none) on which the engine finds no id.
Per form: how many named logs keep their decisive id, how many clean logs gain an id (a new false positive), how
many logs the form changed at all (an ASCII log is not changed by a mojibake), and the fit logs that break.
Deterministic: the timestamps a prefix form writes come from a random.Random seeded by --seed and the file name.
A measurement, not a test: nothing is asserted. --save writes bench/results/<date>-pasteforms.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from corpus_index import CORPUS, dev_of, load_index, read_log  # noqa: E402

from envmgr.buildlog.read import stream_text  # noqa: E402
from envmgr.buildlog.scan import scan_path  # noqa: E402
from envmgr.errors import InputFileError, LogInputError  # noqa: E402

RESULTS = ROOT / "bench" / "results"
Form = Callable[[str, random.Random], str]


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _per_line(text: str, prefix: Callable[[int], str]) -> str:
    return "\n".join(prefix(i) + line for i, line in enumerate(_lines(text)))


# ------------------------------------------------------------------ the forms (text -> text, pure)


def identity(text: str, rng: random.Random) -> str:
    """The log as read (its encoding decoded), written back as UTF-8 with LF: the control the forms are judged by."""
    return text


def hard_wrap(width: int) -> Form:
    def form(text: str, rng: random.Random) -> str:
        return "\n".join(
            piece
            for line in _lines(text)
            for piece in ([line] if len(line) <= width else [line[i : i + width] for i in range(0, len(line), width)])
        )

    form.__doc__ = (
        f"A console {width} columns wide, copied as it shows: every line longer than {width} characters "
        f"cut into pieces of exactly {width} (no indent, a cut may fall inside a word or before a space)."
    )
    return form


def word_wrap(width: int) -> Form:
    def form(text: str, rng: random.Random) -> str:
        out = []
        for line in _lines(text):
            while len(line) > width:
                cut = line.rfind(" ", 0, width + 1)
                cut = width if cut <= 0 else cut
                out.append(line[:cut])
                line = line[cut:].lstrip(" ") if line[cut : cut + 1] == " " else line[cut:]
            out.append(line)
        return "\n".join(out)

    form.__doc__ = (
        f"An editor, mail client or forum that fills to {width} columns: a longer line broken at its last "
        f"space before column {width} (a word longer than that is cut), the space dropped."
    )
    return form


def md_quote(text: str, rng: random.Random) -> str:
    """A Markdown reply quoting the log: `> ` before every line."""
    return _per_line(text, lambda i: "> ")


def md_quote2(text: str, rng: random.Random) -> str:
    """A reply to a reply: `> > ` before every line, the log inside a fence."""
    return "\n".join("> > " + line for line in ["```", *_lines(text), "```"])


def md_list(text: str, rng: random.Random) -> str:
    """The log as the body of a Markdown list item: `- ` before its first line, the rest indented by two spaces."""
    return _per_line(text, lambda i: "- " if i == 0 else "  ")


def md_list_fence(text: str, rng: random.Random) -> str:
    """A fenced block inside a list item: `1. log:`, then the fence and every log line indented by three spaces."""
    return "\n".join(["1. the log:", "   ```text", *("   " + line for line in _lines(text)), "   ```"])


def fence(text: str, rng: random.Random) -> str:
    """The log inside a Markdown code fence (```` ```console ```` ... ```` ``` ````)."""
    return "\n".join(["Here is the log:", "", "```console", *_lines(text), "```", "", "Any idea?"])


def html_escape(text: str, rng: random.Random) -> str:
    """Copied from a page's source or an API that escapes: & < > " ' as &amp; &lt; &gt; &quot; &#39;."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


def json_string(text: str, rng: random.Random) -> str:
    """The log as a JSON string value (an API response, a JSON log): one line, `\\n` and `\\"` written out, non-ASCII
    kept."""
    return '{"output": ' + json.dumps(text, ensure_ascii=False) + "}"


def python_repr(text: str, rng: random.Random) -> str:
    """A program printed the captured output with repr(): one line `'...\\n...'`, CRLF as `\\r\\n`."""
    return "stdout: " + repr(text.replace("\n", "\r\n"))


def _clock(rng: random.Random) -> datetime:
    return datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc) + timedelta(seconds=rng.randrange(86400))


def _ticks(rng: random.Random, n: int) -> list[datetime]:
    t, out = _clock(rng), []
    for _ in range(n):
        t += timedelta(microseconds=rng.randrange(0, 400000))
        out.append(t)
    return out


def actions(text: str, rng: random.Random) -> str:
    """GitHub Actions' raw log: `2024-05-01T12:00:00.1234567Z ` (7 fraction digits) before every line."""
    lines = _lines(text)
    ts = _ticks(rng, len(lines))
    return "\n".join(
        f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond:06d}{rng.randrange(10)}Z {line}"
        for t, line in zip(ts, lines, strict=True)
    )


def gitlab(text: str, rng: random.Random) -> str:
    """GitLab's raw job log: the script inside `section_start:<epoch>:<name>\\r\\x1b[0K` ... `section_end` markers, the
    command line coloured, and (FF_TIMESTAMPS, runner 17+) `<RFC3339Nano> 00O ` before every line."""
    lines = _lines(text)
    ts = _ticks(rng, len(lines) + 3)
    epoch = int(ts[0].timestamp())
    body = [
        f'\x1b[0Ksection_start:{epoch}:step_script\r\x1b[0K\x1b[36;1mExecuting "step_script" stage\x1b[0;m',
        "\x1b[32;1m$ pip install -v .\x1b[0;m",
        *lines,
        f"\x1b[0Ksection_end:{epoch + 60}:step_script\r\x1b[0K",
    ]
    return "\n".join(
        f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond:06d}Z 00{'O' if rng.random() < 0.5 else 'E'} {line}"
        for t, line in zip(ts, body, strict=False)
    )


def buildkit(text: str, rng: random.Random) -> str:
    """Docker BuildKit's plain progress: `#12 3.456 ` (step, seconds since the step began) before every line."""
    lines = _lines(text)
    step, secs = rng.randrange(5, 30), 0.0
    out = []
    for line in lines:
        secs += rng.random() * 0.3
        out.append(f"#{step} {secs:.3f} {line}")
    return "\n".join(out)


def journald(text: str, rng: random.Random) -> str:
    """journalctl's short format: `May 01 12:00:00 buildhost pip[4242]: ` before every line."""
    lines = _lines(text)
    ts = _ticks(rng, len(lines))
    pid = rng.randrange(100, 99999)
    return "\n".join(f"{t:%b %d %H:%M:%S} buildhost pip[{pid}]: {line}" for t, line in zip(ts, lines, strict=True))


def crlf(text: str, rng: random.Random) -> str:
    """Windows line ends: CRLF after every line."""
    return text.replace("\n", "\r\n")


def ansi(text: str, rng: random.Random) -> str:
    """A coloured terminal: lines that say error/warning/failed wrapped in bold red or yellow, the words `error` and
    `warning` coloured again inside them, every other line reset (`\\x1b[0m`) at its start."""
    out = []
    for line in _lines(text):
        low = line.lower()
        if "error" in low or "failed" in low:
            line = "\x1b[1;31m" + line.replace("error", "\x1b[31;1merror\x1b[0m\x1b[1;31m") + "\x1b[0m"
        elif "warning" in low:
            line = "\x1b[33m" + line.replace("warning", "\x1b[1mwarning\x1b[22m") + "\x1b[0m"
        elif line:
            line = "\x1b[0m" + line
        out.append(line)
    return "\n".join(out)


def mojibake(codec: str) -> Form:
    def form(text: str, rng: random.Random) -> str:
        if codec == "gbk":  # a double-byte code page pairs the bytes across characters: decode whole lines
            return "\n".join(
                line if line.isascii() else line.encode("utf-8").decode("gbk", errors="ignore") for line in _lines(text)
            )
        # a byte the code page leaves undefined is shown as the C1 character of its number (as Windows does)
        return "".join(
            c
            if c.isascii()
            else "".join(bytes([b]).decode(codec, errors="ignore") or chr(b) for b in c.encode("utf-8"))
            for c in text
        )

    form.__doc__ = (
        f"UTF-8 text shown through {codec.upper()} (a console or an editor with the wrong code page): each "
        f"non-ASCII character becomes the {codec} characters of its UTF-8 bytes"
        + (
            " (decoded a line at a time, as a double-byte code page pairs bytes across characters; a "
            "byte GBK cannot pair is dropped)."
            if codec == "gbk"
            else "."
        )
    )
    return form


def combo(*forms: Form) -> Form:
    def form(text: str, rng: random.Random) -> str:
        for f in forms:
            text = f(text, rng)
        return text

    form.__doc__ = "; then ".join((f.__doc__ or "").split(":")[0].split(".")[0] for f in forms) + "."
    return form


FORMS: dict[str, Form] = {
    "identity": identity,
    **{f"hardwrap{w}": hard_wrap(w) for w in (80, 100, 120, 132)},
    **{f"wordwrap{w}": word_wrap(w) for w in (72, 80, 100)},
    "quote": md_quote,
    "quote2-fence": md_quote2,
    "list": md_list,
    "list-fence": md_list_fence,
    "fence": fence,
    "html": html_escape,
    "json": json_string,
    "repr": python_repr,
    "actions": actions,
    "gitlab": gitlab,
    "buildkit": buildkit,
    "journald": journald,
    "crlf": crlf,
    "ansi": ansi,
    **{f"mojibake-{c}": mojibake(c) for c in ("cp1252", "cp1251", "cp866", "gbk")},
}
# Combinations a paste shows: a CI log viewed in a console and copied (the console cuts the prefixed line; no
# colour codes are copied from a console), a raw coloured log saved on Windows, a quoted fence saved with CRLF.
FORMS["actions+wrap100"] = combo(actions, hard_wrap(100))
FORMS["buildkit+wrap80"] = combo(buildkit, hard_wrap(80))
FORMS["actions+ansi+crlf"] = combo(actions, ansi, crlf)
FORMS["fence+quote+crlf"] = combo(fence, md_quote, crlf)
FORMS["html+wordwrap80"] = combo(html_escape, word_wrap(80))


# ------------------------------------------------------------------ measuring


def fit_rows() -> list:
    """The fit part of train, as bench/diagnosis.py --dev splits it (dev and held-out rows are left out here)."""
    return [e for e in load_index() if e.split == "train" and not (e.origin == "new" and dev_of(e.thread))]


def _text_of(path: Path, origin: str, tmp: Path) -> str | None:
    log = tmp / "orig.log"
    log.write_bytes(read_log(path, origin))
    try:
        text = "".join(stream_text(log))
    except LogInputError:
        return None
    return text.replace("\r\n", "\n")


def _scan(text: str, tmp: Path) -> str | None:
    """The decisive id of `text` written as a UTF-8 file ("" when nothing matched, None for refused input)."""
    log = tmp / "paste.log"
    log.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        found = scan_path(log)
    except InputFileError:
        return None
    return found.decisive.id if found.decisive else ""


def _seed(seed: int, name: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}\0{name}".encode()).digest()[:8], "big")


def measure(forms: dict[str, Form], seed: int, limit: int | None) -> dict:
    rows = fit_rows()[:limit] if limit else fit_rows()
    per = {name: {"named": 0, "kept": 0, "clean": 0, "gained": 0, "changed": 0, "broken": []} for name in forms}
    with tempfile.TemporaryDirectory(prefix="envmgr-pasteforms-") as folder:
        tmp = Path(folder)
        for e in rows:
            text = _text_of(CORPUS / e.file, e.origin, tmp)
            if text is None:
                continue
            base = _scan(text, tmp)
            failing = bool(e.expect)
            if failing and base not in e.expect:
                continue  # not named as given: nothing a paste form can keep
            if not failing and base:
                continue  # a clean log already given an id: diagnosis.py's FP, not a paste form's
            for name, form in forms.items():
                shown = form(text, random.Random(_seed(seed, e.file)))
                r = per[name]
                r["changed"] += shown != text
                got = _scan(shown, tmp) if shown != text else base
                if failing:
                    r["named"] += 1
                    r["kept"] += got == base
                    if got != base:
                        r["broken"].append((e.file, base, got))
                else:
                    r["clean"] += 1
                    r["gained"] += bool(got)
                    if got:
                        r["broken"].append((e.file, "none", got))
    return per


def report(per: dict, forms: dict[str, Form]) -> list[str]:
    lines = ["| form | changed | named kept | clean gaining an id |", "|---|---|---|---|"]
    tot_n = tot_k = tot_c = tot_g = 0
    for name, r in per.items():
        lines.append(
            f"| {name} | {r['changed']}/{r['named'] + r['clean']} | {r['kept']}/{r['named']} | "
            f"{r['gained']}/{r['clean']} |"
        )
        if name != "identity":
            tot_n, tot_k, tot_c, tot_g = tot_n + r["named"], tot_k + r["kept"], tot_c + r["clean"], tot_g + r["gained"]
    lines.append(
        f"| all forms but identity | | {tot_k}/{tot_n} ({100 * tot_k / max(1, tot_n):.1f}%) | "
        f"{tot_g}/{tot_c} ({100 * tot_g / max(1, tot_c):.2f}%) |"
    )
    lines += ["", "### Forms", ""] + [f"- `{name}`: {' '.join((f.__doc__ or '').split())}" for name, f in forms.items()]
    lines += ["", "### Fit logs that break (file: id as given -> id in the form; `none` a clean log, `` nothing)", ""]
    for name, r in per.items():
        if r["broken"]:
            lines.append(
                f"- {name} ({len(r['broken'])}): "
                + ", ".join(
                    f"`{f}` {a} -> {b if b else 'nothing' if b == '' else 'refused'}" for f, a, b in r["broken"]
                )
            )
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--forms", default="", help="comma-separated form names (default: all)")
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("--limit", type=int, default=0, help="only the first N fit logs (a quick look)")
    ap.add_argument("--save", action="store_true")
    ap.add_argument("--stem", default="pasteforms")
    a = ap.parse_args()
    names = [n for n in a.forms.split(",") if n] or list(FORMS)
    unknown = [n for n in names if n not in FORMS]
    if unknown:
        ap.error(f"unknown form(s) {', '.join(unknown)}; known: {', '.join(FORMS)}")
    forms = {n: FORMS[n] for n in (["identity"] if "identity" not in names else []) + names}
    t0 = time.perf_counter()
    per = measure(forms, a.seed, a.limit or None)
    took = time.perf_counter() - t0
    lines = report(per, forms)
    print("\n".join(lines))
    print(f"\n{took:.0f} s")
    if a.save:
        RESULTS.mkdir(exist_ok=True)
        stem = f"{datetime.now(timezone.utc):%Y-%m-%d}-{a.stem}"
        head = [
            f"# doctor --log on fit logs in the forms users paste them ({stem})",
            "",
            f"`python bench/pasteforms.py {' '.join(sys.argv[1:])}` (seed {a.seed}): every fit log of train "
            "(train minus dev, as `bench/diagnosis.py --dev`; dev and held-out logs not read) that the engine "
            "names correctly as given, and every fit clean log it finds nothing in, changed by each form.",
            "",
        ]
        (RESULTS / f"{stem}.md").write_text("\n".join(head + lines) + "\n", encoding="utf-8")
        print(f"wrote {RESULTS / stem}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
