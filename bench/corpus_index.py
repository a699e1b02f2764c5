"""The diagnosis corpus, its split and its index (issue 23 item 3).

    python bench/corpus_index.py            # writes tests/corpus/logs/INDEX.tsv
    python bench/corpus_index.py --check    # exit 1 when INDEX.tsv is not what the files say

Every log under tests/corpus/logs/<F01..F25 or clean>/<slug>.txt starts with annotation lines
(`# SOURCE: <url>`, `# EXPECT: F04` or `none`, `# PROJECT: owner/repo`, `# LANG: en`, `# NOTE: ...`),
then the log as the user pasted it. The split is decided once, by a stable hash of the source *thread*
(the URL without fragment or query, lower-case host, no trailing slash): 70% `train`, 30% `held_out`.
All logs of one thread fall on one side, so a thread's second comment cannot leak into the other.

The logs of tests/corpus itself (tests/unit/buildlog/test_logscan.py's LOGS and CLEAN_LOGS) were read when the
signatures were written, before any split: they are listed as `train` (origin `seen`), and so is any
new log from one of their threads.

Only the annotation header of a file is read here (the split is computed before anyone opens a log);
`read_log` gives a log's text with those lines blanked, so line numbers still count the file's lines.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
LOGS = CORPUS / "logs"
INDEX = LOGS / "INDEX.tsv"
TRAIN_PERCENT = 70
KEYS = ("SOURCE", "EXPECT", "PROJECT", "LANG", "NOTE")
_HEADER = re.compile(r"^# (SOURCE|EXPECT|SECOND|EVIDENCE|DECISIVE|PROJECT|LANG|NOTE|KIND|QUERY|Context):\s?(.*)$")
_FOLDER = re.compile(r"^(F\d\d|clean)$")
COLUMNS = ("file", "expect", "project", "lang", "split", "origin", "thread")


@dataclass(frozen=True)
class Entry:
    file: str  # relative to tests/corpus
    expect: tuple[str, ...]  # catalog ids, () for none
    project: str
    lang: str
    split: str  # train | held_out
    origin: str  # new (tests/corpus/logs) | seen (tests/corpus, read before the split)
    thread: str

    def row(self) -> str:
        return "\t".join(
            (self.file, " ".join(self.expect) or "none", self.project, self.lang, self.split, self.origin, self.thread)
        )


def thread_of(url: str) -> str:
    """The source thread: scheme https, host lower-case without www., path without trailing slash, no
    query or fragment (an issue's comments are one thread)."""
    parts = urlsplit(url.strip())
    host = parts.netloc.lower().removeprefix("www.")
    path = parts.path.rstrip("/")
    return f"https://{host}{path}" if host else url.strip().split("#")[0]


def split_of(thread: str) -> str:
    digest = hashlib.sha256(thread.encode("utf-8")).digest()
    return "train" if int.from_bytes(digest[:8], "big") % 100 < TRAIN_PERCENT else "held_out"


DEV_PERCENT = 30


def dev_of(thread: str) -> bool:
    """Whether a `train` thread is in the dev part (DEV_PERCENT of train threads, by a second hash of the
    thread): what a change to the anchors is checked on by someone who wrote it looking at the rest of train
    (`fit`). Not recorded in INDEX.tsv: dev is a way of working on train, not a split of the corpus."""
    digest = hashlib.sha256(b"dev\0" + thread.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % 100 < DEV_PERCENT


def read_header(path: Path) -> dict[str, str]:
    """The annotation lines at the top of a corpus log (nothing after them is read)."""
    out: dict[str, str] = {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = _HEADER.match(line.rstrip("\r\n"))
            if not m:
                break
            out.setdefault(m.group(1), m.group(2).strip())
    return out


_SEEN_NOTE = re.compile(rb"^(# SOURCE:|# Context:|\[\.\.\. TRUNCATED)")


def read_log(path: Path, origin: str = "new") -> bytes:
    """The file's bytes with its leading annotation lines blanked (line numbers keep counting file lines).
    tests/corpus's own logs follow their older convention (test_logscan.log): `# SOURCE:`, `# Context:`
    and `[... TRUNCATED ...]` lines are blanked wherever they are."""
    data = path.read_bytes()
    if origin == "seen":
        return b"\n".join(b"" if _SEEN_NOTE.match(l) else l for l in data.split(b"\n"))
    out, pos = [], 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end + 1
        line = data[pos:end]
        if not _HEADER.match(line.decode("utf-8", "replace").rstrip("\r\n")):
            break
        out.append(b"\r\n" if line.endswith(b"\r\n") else b"\n" if line.endswith(b"\n") else b"")
        pos = end
    return b"".join(out) + data[pos:]


def _expect(value: str) -> tuple[str, ...]:
    ids = tuple(v for v in value.replace(",", " ").split() if v.lower() != "none")
    return tuple(sorted(set(ids)))


def seen_entries() -> list[Entry]:
    """tests/corpus's own failure and clean logs, with the ids test_logscan asserts (read before the split)."""
    sys.path.insert(0, str(ROOT))
    from tests.unit.buildlog.test_logscan import CLEAN_LOGS
    from tests.unit.buildlog.test_logscan import LOGS as SEEN

    sources = {}
    for line in (CORPUS / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and (CORPUS / cells[0]).is_file():
            url = re.search(r"https?://\S+", cells[1])
            sources[cells[0]] = url.group(0).rstrip(").,") if url else ""
    out = []
    for name, (expected, _) in sorted(SEEN.items()):
        out.append(_seen(name, tuple(sorted({i for i, _ in expected})), sources.get(name, "")))
    out += [_seen(name, (), sources.get(name, "")) for name in CLEAN_LOGS]
    return out


def _seen(name: str, expect: tuple[str, ...], url: str) -> Entry:
    m = re.match(r"https://github\.com/([^/]+/[^/]+)/", url)
    return Entry(name, expect, m.group(1) if m else "", "en", "train", "seen", thread_of(url) if url else name)


def new_entries(seen_threads: set[str]) -> tuple[list[Entry], list[str]]:
    """The annotated logs of tests/corpus/logs, and the problems found in their headers."""
    out, problems = [], []
    for path in sorted(
        LOGS.glob("*/*.txt"), key=lambda p: p.relative_to(CORPUS).as_posix()
    ):  # Windows sorts paths case-blind
        rel = path.relative_to(CORPUS).as_posix()
        if not _FOLDER.match(path.parent.name):
            problems.append(f"{rel}: folder is not F01..F25 or clean")
            continue
        h = read_header(path)
        missing = [k for k in ("SOURCE", "EXPECT", "PROJECT", "LANG") if not h.get(k)]
        if missing:
            problems.append(f"{rel}: no {', '.join(missing)} line")
            continue
        expect = _expect(h["EXPECT"])
        if path.parent.name != "clean" and path.parent.name not in expect:
            problems.append(f"{rel}: in folder {path.parent.name} but EXPECT {h['EXPECT']}")
        thread = thread_of(h["SOURCE"])
        split = "train" if thread in seen_threads else split_of(thread)
        out.append(Entry(rel, expect, h["PROJECT"], h["LANG"].lower(), split, "new", thread))
    return out, problems


def entries() -> tuple[list[Entry], list[str]]:
    seen = seen_entries()
    new, problems = new_entries({e.thread for e in seen})
    return seen + new, problems


def render(rows: list[Entry]) -> str:
    return "\t".join(COLUMNS) + "\n" + "".join(e.row() + "\n" for e in rows)


def load_index(path: Path = INDEX) -> list[Entry]:
    rows = path.read_text(encoding="utf-8").splitlines()[1:]
    out = []
    for row in rows:
        f, expect, project, lang, split, origin, thread = row.split("\t")
        out.append(Entry(f, _expect(expect), project, lang, split, origin, thread))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with INDEX.tsv instead of writing it")
    a = ap.parse_args()
    rows, problems = entries()
    for p in problems:
        print(f"warning: {p}", file=sys.stderr)
    text = render(rows)
    if a.check:
        same = INDEX.is_file() and INDEX.read_text(encoding="utf-8") == text
        print("INDEX.tsv is up to date" if same else "INDEX.tsv differs: run python bench/corpus_index.py")
        return 0 if same else 1
    LOGS.mkdir(parents=True, exist_ok=True)
    INDEX.write_text(text, encoding="utf-8")
    new = [e for e in rows if e.origin == "new"]
    print(
        f"wrote {INDEX.relative_to(ROOT)}: {len(rows)} logs ({len(new)} new: "
        f"{sum(e.split == 'train' for e in new)} train, {sum(e.split == 'held_out' for e in new)} held_out)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
