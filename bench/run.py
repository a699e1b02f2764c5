"""envmgr's benchmark suite: each figure is a ratio (or difference) against a baseline measured in the
same run, median of repeated runs. Results go to bench/results/<date>-<machine>.md and .json; nothing
here is a test and nothing is asserted.

    python bench/run.py [--repeat N] [--quick]

Figures (targets from issue 7):
  startup   `envmgr --version` vs `python -c pass`                 target: < 60 ms more
  list      `envmgr list` wall time                                target: < 0.5 s
  export    cached `envmgr export` vs `--refresh` and vs Python    target: cached < 50 ms more than Python
  run       `envmgr run -- true` vs `true` started from Python     target: < 60 ms more
  doctor    `envmgr doctor` wall time (when the command exists)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def timed(argv: list[str], env: dict, repeat: int, warmup: int = 1) -> tuple[float, list[float], int]:
    """(median seconds, all samples, last exit code) of running argv to completion, output discarded."""
    samples, code = [], 0
    for i in range(warmup + repeat):
        t0 = time.perf_counter()
        code = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        if i >= warmup:
            samples.append(time.perf_counter() - t0)
    return statistics.median(samples), samples, code


def envmgr_argv() -> list[str]:
    return [sys.executable, "-m", "envmgr"]


def machine_name() -> str:
    node = platform.node().split(".")[0] or "machine"
    return f"{platform.system().lower()}-{node}-{os.cpu_count()}cpu"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15, help="runs per figure (median); list/doctor use a third")
    ap.add_argument("--quick", action="store_true", help="5 runs per figure")
    ap.add_argument("--no-save", action="store_true", help="print only")
    a = ap.parse_args()
    n = 5 if a.quick else a.repeat
    cache = tempfile.mkdtemp(prefix="envmgr-bench-cache-")
    env = {
        **os.environ,
        "ENVMGR_CACHE_DIR": cache,
        "NO_COLOR": "1",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    }
    for k in ("ENVMGR_MACHINE", "ENVMGR_WINEPREFIX", "ENVMGR_ACTIVE", "ENVMGR_RESTORE"):
        env.pop(k, None)
    em = envmgr_argv()
    rows: list[dict] = []

    def add(name, value, baseline, unit, target, ok, note=""):
        rows.append(
            {
                "figure": name,
                "value": value,
                "baseline": baseline,
                "unit": unit,
                "target": target,
                "met": ok,
                "note": note,
            }
        )
        shown = f"{value:8.1f} {unit}" + (f"  (baseline {baseline:.1f} {unit})" if baseline is not None else "")
        print(f"{name:44} {shown:40} target {target}: {'met' if ok else 'MISSED'} {note}", flush=True)

    try:
        py, _, _ = timed([sys.executable, "-c", "pass"], env, n)
        ver, _, _ = timed([*em, "--version"], env, n)
        add(
            "envmgr --version - python -c pass",
            (ver - py) * 1e3,
            py * 1e3,
            "ms",
            "< 60 ms",
            ver - py < 0.060,
            f"ratio {ver / py:.2f}x",
        )

        lst, _, code = timed([*em, "list"], env, max(3, n // 3))
        add("envmgr list", lst * 1e3, None, "ms", "< 500 ms", lst < 0.5 and code == 0, f"exit {code}")

        fresh, _, code = timed([*em, "export", "--refresh"], env, max(3, n // 3))
        cached, _, _ = timed([*em, "export"], env, n)
        add(
            "cached export - python -c pass",
            (cached - py) * 1e3,
            py * 1e3,
            "ms",
            "< 50 ms",
            cached - py < 0.050,
            f"fresh capture (--refresh) {fresh * 1e3:.0f} ms = {fresh / cached:.1f}x the cached export; exit {code}",
        )

        true = shutil.which("true") or "true"
        base, _, _ = timed([sys.executable, "-c", f"import subprocess; subprocess.run([{true!r}])"], env, n)
        run, _, code = timed([*em, "run", "--", "true"], env, n)
        add(
            "envmgr run -- true - python+subprocess(true)",
            (run - base) * 1e3,
            base * 1e3,
            "ms",
            "< 60 ms",
            run - base < 0.060 and code == 0,
            f"ratio {run / base:.2f}x; exit {code}",
        )

        has_doctor = subprocess.run([*em, "doctor", "--help"], env=env, capture_output=True).returncode == 0
        if has_doctor:
            doc, _, code = timed([*em, "doctor"], env, max(3, n // 3))
            add("envmgr doctor", doc * 1e3, None, "ms", "(none)", True, f"exit {code} (1 = findings)")
        else:
            print("envmgr doctor: not in this build, skipped")
    finally:
        shutil.rmtree(cache, ignore_errors=True)

    meta = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine_name(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "repeat": n,
        "method": "median wall time of N runs after 1 warm-up; baseline measured in the same run",
    }
    if not a.no_save:
        RESULTS.mkdir(parents=True, exist_ok=True)
        stem = RESULTS / f"{meta['date'][:10]}-local-{meta['machine']}"
        stem.with_suffix(".json").write_text(json.dumps({"meta": meta, "figures": rows}, indent=2) + "\n")
        stem.with_suffix(".md").write_text(render(meta, rows))
        print(f"\nwritten: {stem.with_suffix('.md').relative_to(ROOT)} and .json")
    return 0


def render(meta: dict, rows: list[dict]) -> str:
    out = [
        f"# envmgr local benchmarks, {meta['date']}",
        "",
        f"Machine: {meta['machine']} ({meta['platform']}), Python {meta['python']}, {meta['cpus']} CPUs. "
        f"{meta['method']}; N = {meta['repeat']}. Produced by `python bench/run.py`.",
        "",
        "| figure | value | baseline | target | met | note |",
        "|---|---:|---:|---|---|---|",
    ]
    for r in rows:
        base = f"{r['baseline']:.1f} {r['unit']}" if r["baseline"] is not None else ""
        out.append(
            f"| {r['figure']} | {r['value']:.1f} {r['unit']} | {base} | {r['target']} | "
            f"{'yes' if r['met'] else 'NO'} | {r['note']} |"
        )
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
