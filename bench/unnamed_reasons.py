"""What `doctor --log` tells the user when it names no catalog id (unnamed.explain), on FIT logs only.

    python bench/unnamed_reasons.py [--list]

Scans the fit part of train (bench/diagnosis.py --dev's `fit`; dev and held-out logs are neither scanned nor named)
and prints counts: the reasons given on clean logs, on clean logs whose NOTE says the failure is outside the catalog,
on `-prose` logs, and how many logs with a match carry a reason too (0 by construction: the reason is given only
where nothing is named). --list prints each clean log's reason, kind and NOTE, to judge by hand whether an
`outside` reason is right. A measurement, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from corpus_index import CORPUS, dev_of, load_index, read_log  # noqa: E402

from envmgr.buildlog.scan import scan_path  # noqa: E402
from envmgr.errors import InputFileError  # noqa: E402


def _note(path: Path) -> str:
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines()[:12]:
        if line.startswith("# NOTE"):
            return line[len("# NOTE:") :].strip()
    return ""


def fit_rows() -> list:
    return [e for e in load_index() if e.split == "train" and not (e.origin == "new" and dev_of(e.thread))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--list", action="store_true", help="each fit clean log's reason, kind and NOTE")
    args = ap.parse_args()
    counts: dict[str, Counter] = {k: Counter() for k in ("clean", "clean_outside_note", "prose", "named")}
    with tempfile.TemporaryDirectory(prefix="envmgr-unnamed-") as folder:
        log = Path(folder) / "build.log"
        for e in fit_rows():
            path = CORPUS / e.file
            log.write_bytes(read_log(path, e.origin))
            try:
                scan = scan_path(log)
            except InputFileError:
                continue
            why = scan.unnamed
            label = "none" if why is None else why.reason + (f":{why.kind}" if why.kind else "")
            if scan.matches:
                counts["named"]["with a reason" if why else "without"] += 1
            if not e.expect:
                note = _note(path)
                counts["clean"][label] += 1
                if "outside" in note.lower():
                    counts["clean_outside_note"][label] += 1
                if args.list:
                    print(f"{label:28} {e.file}\n    NOTE: {note[:240]}")
            if "-prose" in e.file:
                counts["prose"][label if not scan.matches else "named"] += 1
    for part, c in counts.items():
        print(f"{part}: {sum(c.values())} logs: " + ", ".join(f"{k} {v}" for k, v in c.most_common()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
