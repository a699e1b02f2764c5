"""A second, independent reading of a blind cohort's labels (issue 36).

    python bench/second_reader.py strip COHORT_DIR OUT_DIR
    python bench/second_reader.py merge COHORT_DIR OUT_DIR LABELS.tsv

`strip` copies every log of COHORT_DIR's failure/ and no-id/ halves into OUT_DIR under opaque names (r001.txt, ...,
in an order that does not follow the halves), keeping only the `# SOURCE:`, `# PROJECT:` and `# LANG:` lines above
the log text: the first reader's EXPECT, EVIDENCE, DECISIVE, NOTE and KIND are gone, and so is the half the log came
from. The map from opaque name to file is written to OUT_DIR/.map.tsv, which the second reader is told not to open.

`merge` reads the second reader's LABELS.tsv (`r001.txt<TAB>F07` or `outside` or `none`, one line per log) and
writes each label into its file as `# SECOND: <label>` (replacing an earlier one), which
`bench/diagnosis_cohorts.py --blind` scores as the `both readers agree` row. A measurement aid, not a test.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

_KEEP = re.compile(r"^# (SOURCE|PROJECT|LANG):")
_HEAD = re.compile(r"^# [A-Z]+:")
_LABEL = re.compile(r"^(F(0[1-9]|1\d|2[0-5])|outside|none)$")


def _logs(cohort: Path) -> list[Path]:
    files = [p for half in ("failure", "no-id") for p in sorted((cohort / half).glob("*.txt"))]
    # an order unrelated to the halves and the names, but the same on every run
    return sorted(files, key=lambda p: hashlib.sha256(p.name.encode()).hexdigest())


def strip(cohort: Path, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=False)
    rows = []
    for n, path in enumerate(_logs(cohort), 1):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        body = next((i for i, line in enumerate(lines) if not _HEAD.match(line)), len(lines))
        kept = [line for line in lines[:body] if _KEEP.match(line)] + lines[body:]
        name = f"r{n:03d}.txt"
        (out / name).write_text("".join(kept), encoding="utf-8")
        rows.append(f"{name}\t{path.relative_to(cohort).as_posix()}\n")
    (out / ".map.tsv").write_text("".join(rows), encoding="utf-8")
    print(f"{len(rows)} logs -> {out}")
    return 0


def merge(cohort: Path, out: Path, labels: Path) -> int:
    where = dict(line.rstrip("\n").split("\t", 1) for line in (out / ".map.tsv").read_text().splitlines(True))
    done = 0
    for line in labels.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, label = (f.strip() for f in line.split("\t")[:2])
        if name not in where or not _LABEL.match(label):
            print(f"second_reader: bad row {line!r}", file=sys.stderr)
            return 2
        path = cohort / where[name]
        lines = [x for x in path.read_text(encoding="utf-8").splitlines(True) if not x.startswith("# SECOND:")]
        at = next(i for i, x in enumerate(lines) if x.startswith("# EXPECT:")) + 1
        lines.insert(at, f"# SECOND: {label}\n")
        path.write_text("".join(lines), encoding="utf-8")
        done += 1
    print(f"{done}/{len(where)} labels merged")
    return 0 if done == len(where) else 1


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "strip":
        return strip(Path(argv[1]), Path(argv[2]))
    if len(argv) == 4 and argv[0] == "merge":
        return merge(Path(argv[1]), Path(argv[2]), Path(argv[3]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
