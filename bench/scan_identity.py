"""Whether two trees' `doctor --log` engines give the same results on every corpus log (a speed change's proof).

    python bench/scan_identity.py --dump OUT.json [--tree PATH]   # scan with the engine of PATH (default: this tree)
    python bench/scan_identity.py --compare A.json B.json         # print only how many logs differ

--dump runs bench/diagnosis.measure over every row of tests/corpus/logs/INDEX.tsv (all splits) and tests/corpus's
own logs, with the engine (and bench/) of --tree, and keeps per log its (matched ids, decisive id), then scans each
again for the whole `--json` document (line numbers, lines, counts, details, near misses), under its row number only.
--compare prints only counts: logs whose (matches, decisive) differ, logs whose whole document differs, and logs
in one dump only. No file name is printed or saved, so held-out logs stay unseen.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path


def _dump(tree: Path, out: Path) -> int:
    sys.path[:0] = [str(tree), str(tree / "bench")]
    from corpus_index import CORPUS, entries, load_index, read_log, render
    from corpus_index import INDEX as index_path
    from diagnosis import measure

    try:  # the engine's home since issue 35; older trees keep it in doctor/
        from envmgr.buildlog import scan as logscan
    except ImportError:
        from envmgr.doctor import logscan  # type: ignore[no-redef]
    scan_json, scan_path = logscan.scan_json, logscan.scan_path
    from envmgr.errors import InputFileError

    rows, _ = entries()
    if index_path.is_file() and index_path.read_text(encoding="utf-8") == render(rows):
        rows = load_index()
    rows = [e for e in rows if (CORPUS / e.file).is_file()]
    docs = [{"got": r["got"], "decisive": r["decisive"], "error": r["error"]} for r in measure(rows)]
    with tempfile.TemporaryDirectory(prefix="envmgr-identity-") as folder:
        log = Path(folder) / "build.log"
        for e, doc in zip(rows, docs, strict=True):
            log.write_bytes(read_log(CORPUS / e.file, e.origin))
            try:
                doc["doc"] = scan_json(scan_path(log), "build.log")
            except InputFileError as err:
                doc["doc"] = {"error": err.message}
    out.write_text(json.dumps(docs) + "\n", encoding="utf-8")
    print(f"{len(docs)} logs scanned with the engine of {Path(logscan.__file__).parents[2]}")
    return 0


def _compare(a: Path, b: Path) -> int:
    left = json.loads(a.read_text(encoding="utf-8"))
    right = json.loads(b.read_text(encoding="utf-8"))
    pairs = list(zip(left, right, strict=False))
    short = sum(
        1
        for x, y in pairs
        if (x.get("got"), x.get("decisive"), x.get("error")) != (y.get("got"), y.get("decisive"), y.get("error"))
    )
    whole = sum(1 for x, y in pairs if x != y)
    print(
        f"logs compared: {len(pairs)}; (matches, decisive) differ: {short}; whole --json differs: {whole}; "
        f"in one dump only: {abs(len(left) - len(right))}"
    )
    return 1 if short or whole or len(left) != len(right) else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dump", type=Path)
    ap.add_argument("--tree", type=Path, default=Path(__file__).resolve().parent.parent)
    ap.add_argument("--compare", type=Path, nargs=2)
    a = ap.parse_args()
    if a.compare:
        return _compare(*a.compare)
    if a.dump:
        return _dump(a.tree.resolve(), a.dump)
    ap.error("give --dump OUT or --compare A B")
    return 2


if __name__ == "__main__":
    sys.exit(main())
