"""`doctor --log` of two trees in turns on the same logs: a speed change measured on a shared machine.

    python bench/logscan_turns.py OLD_TREE NEW_TREE [--kinds fixed-width,ordinary] [--mb 200] [--pairs 3]
                                  [--file PATH ...]

Each pair runs `python -m envmgr doctor --log LOG --json` once from each tree's root (PYTHONPATH and the working
folder set to it, so each imports its own envmgr), the old tree first in odd pairs and the new one first in even
pairs, so a change in the machine's load falls on both. The logs are bench/logscan.py's shapes (made once, at --mb
MiB) and any --file given. Per run: wall seconds, the child's CPU seconds (user + system) and peak RSS; per pair the
new/old ratios and whether the two --json documents are the same (the file name aside). Medians per log at the end.
A measurement, not a test: nothing is asserted. Make OLD_TREE with `git archive <commit> | tar -x -C DIR`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from logscan import make_log


def run(tree: Path, log: Path) -> tuple[float, float, float, bytes]:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(tree)}
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "envmgr", "doctor", "--log", str(log), "--json"],
        cwd=tree,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    out = proc.stdout.read() if proc.stdout else b""
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - t0, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


def pair(old: Path, new: Path, log: Path, i: int) -> dict:
    order = [("old", old), ("new", new)] if i % 2 == 0 else [("new", new), ("old", old)]
    load = os.getloadavg()[0]
    got = {name: run(tree, log) for name, tree in order}
    row = {"log": log.name, "pair": i + 1, "first": order[0][0], "load": round(load, 2)}
    for name in ("old", "new"):
        wall, cpu, rss, _ = got[name]
        row |= {f"{name}_wall": round(wall, 2), f"{name}_cpu": round(cpu, 2), f"{name}_rss": round(rss, 1)}
    row["ratio_wall"] = round(row["new_wall"] / row["old_wall"], 3)
    row["ratio_cpu"] = round(row["new_cpu"] / row["old_cpu"], 3)
    row["same_json"] = got["old"][3] == got["new"][3]
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--kinds", default="fixed-width,ordinary")
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--file", type=Path, action="append", default=[])
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="envmgr-bench-turns-") as tmp:
        logs = list(a.file)
        for kind in filter(None, a.kinds.split(",")):
            logs.append(Path(tmp) / f"{kind}.log")
            make_log(kind, logs[-1], a.mb << 20)
        for log in logs:
            for i in range(a.pairs):
                rows.append(pair(a.old.resolve(), a.new.resolve(), log, i))
                print(json.dumps(rows[-1]), flush=True)
    for name in dict.fromkeys(r["log"] for r in rows):
        rs = [r for r in rows if r["log"] == name]

        def med(key: str, rs: list = rs) -> float:
            return statistics.median(r[key] for r in rs)

        print(
            f"{name}: {len(rs)} pairs; wall median old {med('old_wall'):.2f} s, new {med('new_wall'):.2f} s, "
            f"median ratio {med('ratio_wall'):.3f}; CPU median ratio {med('ratio_cpu'):.3f}; load "
            f"{min(r['load'] for r in rs)}-{max(r['load'] for r in rs)}; same --json: "
            f"{all(r['same_json'] for r in rs)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
