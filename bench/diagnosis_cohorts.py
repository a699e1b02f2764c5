"""How `doctor --log` does on logs the moment they arrive, before anyone tunes on them (issue 23).

    python bench/diagnosis_cohorts.py [--save] [--stem diagnosis-cohorts]

The corpus grew in rounds; each round ended with a dated result (bench/results/*-diagnosis*.md, not the
--dev ones). A log's *cohort* is the first of those results whose commit came after the commit that added
the log (a moved file keeps the date it was first added, git's rename detection). For every cohort after
the first, the engine of the previous result's commit had never been shown any of its logs, train or held
out: how that engine did on them is what a user's unseen log gets (`first sight`). The same logs through
today's engine give `now`, split into train (the rounds since looked at those) and held out (never read).

Figures are aggregate; no held-out log is named. Needs the git history (a shallow clone says so and
stops). A measurement, not a test: nothing is asserted.

    python bench/diagnosis_cohorts.py --blind [--before REV] [--save] [--stem diagnosis-blind]

--blind scores the cohorts gathered blind for issue 36 (tests/corpus/cohorts/<date>/failure and no-id; each file's
`# EXPECT:` is a catalog id, `outside` (a failure the catalog has no id for) or `none`, labelled from the thread by
someone who never ran the engine on it). The engine of this tree is the one that had not seen a cohort when the
cohort was committed after it; --before REV adds the engine of an older commit beside it. Per cohort: failure logs
with a catalog label named / given a wrong id / given nothing; `outside` failures given an id; no-id logs given an
id (any match, as `clean given an id` above), also by the kind their NOTE starts with. Counts only.
Where a cohort's files carry them, two more rows: `cause in the log` keeps the failures whose `# EVIDENCE:` is
`log` (the labelled cause is in the pasted text, not only in the thread; no-id logs all stay), and `both readers
agree` keeps the logs whose `# SECOND:` (a second reader's label, given without seeing EXPECT) equals EXPECT.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
_RESULT = re.compile(r"^\d{4}-\d{2}-\d{2}-diagnosis(-\d+)?\.md$")
_TITLE = "# doctor --log on the diagnosis corpus"

# Run in a child with an old engine first on sys.path: reads JSON [[file, origin], ...] on stdin and
# prints {file: decisive id or null} plus whether any id matched.
_CHILD = r"""
import json, sys, tempfile
from pathlib import Path
engine, bench = sys.argv[1], sys.argv[2]
sys.path[:0] = [engine, bench]
from corpus_index import CORPUS, read_log
try:                                   # the engine's home since issue 35; older trees keep it in doctor/
    from envmgr.buildlog.scan import scan_path
except ImportError:
    from envmgr.doctor.logscan import scan_path
out = {}
with tempfile.TemporaryDirectory() as d:
    log = Path(d) / "build.log"
    for rel, origin in json.load(sys.stdin):
        log.write_bytes(read_log(CORPUS / rel, origin))
        try:
            s = scan_path(log)
        except Exception as e:
            out[rel] = [None, False]
            continue
        out[rel] = [s.decisive.id if s.decisive else None, bool(s.matches)]
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Round:
    name: str  # the result's file stem
    commit: str
    time: int


def git(*args: str) -> str:
    return subprocess.run(("git", *args), cwd=ROOT, capture_output=True, text=True, check=True).stdout


def rounds() -> list[Round]:
    """The dated train/held-out results, oldest first, with the commit that added each."""
    out = []
    for path in sorted(RESULTS.glob("*-diagnosis*.md")):
        if not _RESULT.match(path.name):
            continue
        with open(path, encoding="utf-8") as fh:
            head = fh.read(600)
        if not head.startswith(_TITLE) or "--dev" in head.split("\n\n", 2)[1]:
            continue
        line = git("log", "--diff-filter=A", "--format=%H %ct", "--", path.relative_to(ROOT).as_posix()).split()
        if line:
            out.append(Round(path.stem, line[-2], int(line[-1])))
    return sorted(out, key=lambda r: r.time)


def added_times() -> dict[str, int]:
    """Corpus path (relative to tests/corpus) -> when it was first added, following moves."""
    log = git("log", "-M", "--diff-filter=AR", "--name-status", "--format=@%ct", "--", "tests/corpus")
    when: dict[str, int] = {}
    moved: dict[str, str] = {}  # new path -> old path
    t = 0
    for line in log.splitlines():
        if line.startswith("@"):
            t = int(line[1:])
            continue
        cells = line.split("\t")
        if len(cells) == 2 and cells[0] == "A":
            when[cells[1]] = t  # newest first: the last write is the oldest add
        elif len(cells) == 3 and cells[0].startswith("R"):
            moved[cells[2]] = cells[1]
    out = {}
    for path in set(when) | set(moved):
        seen, p = set(), path
        while p in moved and p not in seen:
            seen.add(p)
            p = moved[p]
        if p in when:
            out[path.removeprefix("tests/corpus/")] = when[p]
    return out


def engine_at(commit: str, into: Path) -> Path:
    """envmgr/ of one commit, unpacked under `into`."""
    data = subprocess.run(
        ("git", "archive", "--format=tar", commit, "envmgr"), cwd=ROOT, capture_output=True, check=True
    ).stdout
    root = into / commit[:12]
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(root, filter="data")
    return root


def scan_with(engine: Path, rows) -> dict[str, list]:
    job = subprocess.run(
        (sys.executable, "-c", _CHILD, str(engine), str(ROOT / "bench")),
        input=json.dumps([[e.file, e.origin] for e in rows]),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(job.stdout)


def count(rows, got: dict[str, list]) -> Counter:
    c: Counter = Counter()
    for e in rows:
        decisive, any_id = got[e.file]
        if e.expect:
            c["n"] += 1
            c["named"] += decisive in e.expect
        else:
            c["clean"] += 1
            c["fp"] += any_id
    return c


def pct(a: int, n: int) -> str:
    return f"{a}/{n} ({100 * a / n:.0f}%)" if n else "-"


COHORTS = ROOT / "tests" / "corpus" / "cohorts"
_BLIND_HEAD = re.compile(r"^# (EXPECT|KIND|NOTE|EVIDENCE|SECOND):\s?(.*)$")


@dataclass(frozen=True)
class Blind:
    file: str  # relative to tests/corpus, as scan_with reads it
    cohort: str
    kind: str  # failure | no-id
    expect: str  # F01..F25 | outside | none
    note_kind: str  # the NOTE's first word for a no-id log (non-nvidia:rocm, chosen-cpu, ...)
    origin: str = "new"
    evidence: str = ""  # from cohort 2026-12-07d: `log` (the labelled cause is in the log text) or `thread`
    second: str = ""  # a second reader's label, given without seeing EXPECT ("" where none was read)


def blind_logs() -> list[Blind]:
    out = []
    for path in sorted(COHORTS.glob("*/*/*.txt")):
        head: dict[str, str] = {}
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                m = _BLIND_HEAD.match(line.rstrip("\r\n"))
                if m:
                    head.setdefault(m.group(1), m.group(2).strip())
                elif not line.startswith("# "):
                    break
        kind = head.get("KIND", path.parent.name)
        note = head.get("NOTE", "").split()
        out.append(
            Blind(
                path.relative_to(ROOT / "tests" / "corpus").as_posix(),
                path.parent.parent.name,
                kind,
                head.get("EXPECT", "none").split()[0] if head.get("EXPECT") else "none",
                note[0].rstrip(",;:.") if note and kind == "no-id" else "",
                evidence=head.get("EVIDENCE", "").split()[0] if head.get("EVIDENCE") else "",
                second=head.get("SECOND", "").split()[0] if head.get("SECOND") else "",
            )
        )
    return out


def _subsets(members: list[Blind]) -> dict[str, list[Blind]]:
    """The whole cohort, and where its files carry them: the failures whose labelled cause is in the log text
    (no-id logs kept whole), and the logs both readers labelled alike."""
    out = {"all": members}
    if any(b.evidence for b in members):
        out["cause in the log"] = [b for b in members if b.kind == "no-id" or b.evidence == "log"]
    if any(b.second for b in members):
        out["both readers agree"] = [b for b in members if b.second == b.expect]
    return out


def blind_count(logs: list[Blind], got: dict[str, list]) -> Counter:
    c: Counter = Counter()
    for b in logs:
        decisive, any_id = got[b.file]
        if b.kind == "no-id":
            c["noid"] += 1
            c["noid_given"] += any_id
            c[f"noid:{b.note_kind.split(':')[0]}"] += 1
            c[f"noid_given:{b.note_kind.split(':')[0]}"] += any_id
        elif b.expect == "outside":
            c["outside"] += 1
            c["outside_given"] += decisive is not None
        else:
            c["catalog"] += 1
            c["named"] += decisive == b.expect
            c["wrong"] += decisive is not None and decisive != b.expect
            c["nothing"] += decisive is None
    return c


def _agreement(members: list[Blind]) -> list[str]:
    """How often the second reader gave the first reader's label: failures labelled with a catalog id, `outside`
    failures, no-id logs (none where the cohort has no second reading)."""
    read = [b for b in members if b.second]
    if not read:
        return []
    kinds = (
        ("failures with a catalog id", [b for b in read if b.kind != "no-id" and b.expect != "outside"]),
        ("`outside` failures", [b for b in read if b.kind != "no-id" and b.expect == "outside"]),
        ("no-id logs", [b for b in read if b.kind == "no-id"]),
    )
    agreed = "; ".join(f"{name} {pct(sum(b.second == b.expect for b in part), len(part))}" for name, part in kinds)
    return ["", f"second reader gave the same label: {agreed}"]


def blind(before: str | None, save: bool, stem: str) -> int:
    logs = blind_logs()
    if not logs:
        print("diagnosis_cohorts: no blind cohort under tests/corpus/cohorts", file=sys.stderr)
        return 2
    engines = {"this tree": ROOT}
    with tempfile.TemporaryDirectory(prefix="envmgr-blind-") as folder:
        if before:
            engines[f"before ({before[:12]})"] = engine_at(git("rev-parse", before).strip(), Path(folder))
        got = {name: scan_with(path, logs) for name, path in engines.items()}
    lines = [
        "| cohort | engine | failures with a catalog id: named | wrong id | nothing | "
        "`outside` failures given an id | no-id logs given an id |",
        "|---|---|---|---|---|---|---|",
    ]
    data = []
    for cohort in sorted({b.cohort for b in logs}):
        members = [b for b in logs if b.cohort == cohort]
        for subset, part in _subsets(members).items():
            for name in engines:
                c = blind_count(part, got[name])
                label = cohort if subset == "all" else f"{cohort}, {subset}"
                lines.append(
                    f"| {label} | {name} | {pct(c['named'], c['catalog'])} | {pct(c['wrong'], c['catalog'])} | "
                    f"{pct(c['nothing'], c['catalog'])} | {pct(c['outside_given'], c['outside'])} | "
                    f"{pct(c['noid_given'], c['noid'])} |"
                )
                data.append({"cohort": cohort, "subset": subset, "engine": name, **dict(c)})
        data_all = [d for d in data if d["cohort"] == cohort and d["subset"] == "all"]
        kinds = sorted({k.split(":", 1)[1] for k in data_all[-1] if k.startswith("noid:")})
        lines += [
            "",
            f"no-id logs of {cohort} given an id, by kind ("
            + ", ".join(engines)
            + "): "
            + "; ".join(
                f"{k} " + " / ".join(pct(d.get(f"noid_given:{k}", 0), d.get(f"noid:{k}", 0)) for d in data_all)
                for k in kinds
            ),
            *_agreement(members),
            "",
        ]
    print("\n".join(lines))
    if save:
        name = f"{datetime.now(timezone.utc):%Y-%m-%d}-{stem}"
        at = git("rev-parse", "--short", "HEAD").strip()
        head = [
            f"# doctor --log on the blind cohorts at first sight ({name})",
            "",
            f"`python bench/diagnosis_cohorts.py {' '.join(sys.argv[1:])}` at {at}. Each cohort was gathered "
            "blind (in search order, labelled from the thread, never run through the engine before it was "
            "committed); `this tree` is the engine that had not seen it. Counts only; no log is named.",
            "",
        ]
        (RESULTS / f"{name}.md").write_text("\n".join(head + lines) + "\n", encoding="utf-8")
        (RESULTS / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {RESULTS / name}.md")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--save", action="store_true")
    ap.add_argument("--stem", default=None)
    ap.add_argument("--blind", action="store_true", help="score the blind cohorts of tests/corpus/cohorts")
    ap.add_argument("--before", metavar="REV", help="with --blind: also the engine of this older commit")
    a = ap.parse_args()
    a.stem = a.stem or ("diagnosis-blind" if a.blind else "diagnosis-cohorts")
    if not re.fullmatch(r"[\w.-]{1,60}", a.stem):
        ap.error("--stem: letters, digits, '.', '-' and '_' only (a file name, not a path)")
    if a.blind:
        return blind(a.before, a.save, a.stem)
    if git("rev-parse", "--is-shallow-repository").strip() == "true":
        print(
            "diagnosis_cohorts: needs the git history (this clone is shallow: git fetch --unshallow)", file=sys.stderr
        )
        return 2
    sys.path.insert(0, str(ROOT / "bench"))
    from corpus_index import load_index

    rows = load_index()
    done = rounds()
    when = added_times()
    cohort: dict[str, int] = {}
    for e in rows:
        t = when.get(e.file, 0)
        cohort[e.file] = next((i for i, r in enumerate(done) if r.time >= t), len(done))
    with tempfile.TemporaryDirectory(prefix="envmgr-cohorts-") as folder:
        now = scan_with(ROOT, rows)
        first: dict[int, dict[str, list]] = {}
        for i in range(1, len(done) + 1):
            members = [e for e in rows if cohort[e.file] == i]
            if members:
                first[i] = scan_with(engine_at(done[i - 1].commit, Path(folder)), members)
    lines = [
        "| cohort | logs (failures / clean) | first sight: named | first sight: clean given an id | "
        "now, train: named | now, held out: named | now, held out: clean given an id |",
        "|---|---|---|---|---|---|---|",
    ]
    total_first, data = Counter(), []
    for i in range(len(done) + 1):
        members = [e for e in rows if cohort[e.file] == i]
        if not members:
            continue
        label = done[i].name if i < len(done) else "after " + done[-1].name
        f = count(members, first[i]) if i in first else Counter()
        tr = count([e for e in members if e.split == "train"], now)
        ho = count([e for e in members if e.split == "held_out"], now)
        total_first.update(f)
        lines.append(
            f"| {label} | {sum(1 for e in members if e.expect)} / {sum(1 for e in members if not e.expect)} | "
            f"{pct(f['named'], f['n']) if i in first else 'no earlier engine'} | "
            f"{pct(f['fp'], f['clean']) if i in first else '-'} | {pct(tr['named'], tr['n'])} | "
            f"{pct(ho['named'], ho['n'])} | {pct(ho['fp'], ho['clean'])} |"
        )
        data.append(
            {
                "cohort": label,
                "first_engine": done[i - 1].commit if i in first else None,
                "first_sight": dict(f),
                "now_train": dict(tr),
                "now_held_out": dict(ho),
            }
        )
    lines += [
        "",
        f"first sight, every cohort after the first: named {pct(total_first['named'], total_first['n'])}, "
        f"clean given an id {pct(total_first['fp'], total_first['clean'])}",
    ]
    print("\n".join(lines))
    if a.save:
        stem = f"{datetime.now(timezone.utc):%Y-%m-%d}-{a.stem}"
        at = git("rev-parse", "--short", "HEAD").strip()
        head = [
            f"# doctor --log on each cohort of the diagnosis corpus, at first sight and now ({stem})",
            "",
            f"`python bench/diagnosis_cohorts.py {' '.join(sys.argv[1:])}` at {at}. "
            "A cohort is the logs first added after one dated diagnosis result and up to the next; `first "
            "sight` is the engine of the previous result's commit, which had been shown none of them (train "
            "or held out). `now` is today's engine. Counts only; no held-out log is named.",
            "",
            "Engines used for first sight: "
            + ", ".join(f"{d['cohort']} <- {d['first_engine'][:7]}" for d in data if d["first_engine"]),
            "",
        ]
        (RESULTS / f"{stem}.md").write_text("\n".join(head + lines) + "\n", encoding="utf-8")
        (RESULTS / f"{stem}.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {RESULTS / stem}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
