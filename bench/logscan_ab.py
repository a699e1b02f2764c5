"""`doctor --log` of this tree against another envmgr tree (e.g. main's), on the same generated logs, in turns.

    python bench/logscan_ab.py OTHER_TREE [--mb 200] [--kinds ordinary,crlf-ansi] [--out FILE.json]

OTHER_TREE is a folder holding an `envmgr` package (`git archive main envmgr | tar -x -C /tmp/main`). The logs
are bench/logscan.py's shapes; each is scanned by the other tree, then by this one, in fresh processes, so
both see the same machine load. The other tree is not run on `fixed-width` above 20 MiB (it reads that shape
as one line: minutes). Prints one row per run; --out keeps them as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import logscan  # noqa: E402


def run(tree: str, path: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": tree, "NO_COLOR": "1"}
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "envmgr", "doctor", "--log", str(path), "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd="/",
    )
    out = proc.stdout.read()
    proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    doc = json.loads(out or b"{}")
    return {
        "seconds": round(time.perf_counter() - t0, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "lines": doc.get("lines"),
        "ids": [m["id"] for m in doc.get("matches", [])],
        "exit": os.waitstatus_to_exitcode(status),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other")
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--kinds", default=",".join(logscan.SAMPLES))
    ap.add_argument("--out")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="envmgr-bench-ab-") as tmp:
        for kind in a.kinds.split(","):
            path = Path(tmp) / f"{kind}.log"
            size = logscan.make_log(kind, path, a.mb << 20)
            for name, tree in (("other", a.other), ("this", str(ROOT))):
                if name == "other" and kind == "fixed-width" and a.mb > 20:
                    continue
                row = {
                    "kind": kind,
                    "tree": name,
                    "mib": round(size / 2**20, 1),
                    "load": round(os.getloadavg()[0], 2),
                    **run(tree, path),
                }
                rows.append(row)
                print(row, flush=True)
            path.unlink()
    if a.out:
        Path(a.out).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
