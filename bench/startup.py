"""Start-up (issue 33): `envmgr --help`, every `envmgr CMD --help`, `list` and `doctor`, this tree against
an old tree (its baseline), and both against `envmgr --version`.

    .venv/bin/python bench/startup.py [--rounds N] [--old TREE] [--no-save]

TREE is a checkout of an earlier commit (default /tmp/old-h26g: `git archive 5725032 | tar -x -C TREE`).
Both trees run with the same Python (this venv's) and the same installed click, as
`python -c "from envmgr.fastpath.main import main; main()" ARGS` from /tmp with PYTHONPATH=TREE: exactly what
the console script runs. Every round runs every variant once, in a new random order, so a load drift hits all
alike. This tree's help runs twice: `kept` (the fast path prints the text kept by an earlier run) and `cold`
(an empty cache folder each time: click renders it, as the first time after an install or upgrade).
Each figure is min/median over the rounds; ratios are medians of per-round ratios. Nothing is asserted.
Writes results/<date>-startup.md (and .json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
RESULTS = ROOT / "bench" / "results"
COMMANDS = (
    "cache",
    "deactivate",
    "doctor",
    "export",
    "fix-msbuild",
    "init",
    "install",
    "list",
    "recipes",
    "record",
    "run",
    "shell",
    "verify",
    "wheels",
)
WORK_ARGS = {"list": ["list", "--json"], "doctor": ["doctor", "--json"]}


def cases() -> dict[str, list[str]]:
    out = {"--version": ["--version"], "--help": ["--help"]}
    out.update({f"{c} --help": [c, "--help"] for c in COMMANDS})
    out.update({" ".join(a): a for a in WORK_ARGS.values()})
    return out


def timed(tree: Path, args: list[str], cache: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree), "ENVMGR_CACHE_DIR": cache, "COLUMNS": "100", "NO_COLOR": "1"}
    env.pop("ENVMGR_MACHINE", None)
    start = time.perf_counter()
    subprocess.run(
        [str(PYTHON), "-c", "from envmgr.fastpath.main import main; main()", *args],
        cwd="/tmp",
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return time.perf_counter() - start


def one_round(old: Path, tmp: Path, samples: dict[tuple[str, str], list[float]]) -> None:
    jobs = [
        (name, variant)
        for name, args in cases().items()
        for variant in (("old", "kept", "cold") if "--help" in args else ("old", "new"))
    ]
    random.shuffle(jobs)
    for name, variant in jobs:
        args = cases()[name]
        if variant == "cold":
            cold = tmp / "cold"
            shutil.rmtree(cold, ignore_errors=True)
            t = timed(ROOT, args, str(cold))
        else:
            tree = old if variant == "old" else ROOT
            t = timed(tree, args, str(tmp / ("old" if variant == "old" else "new")))
        samples.setdefault((name, variant), []).append(t)


def summarize(samples: dict[tuple[str, str], list[float]], rounds: int) -> dict[str, dict[str, float]]:
    version_old = samples[("--version", "old")]
    version_new = samples[("--version", "new")]
    table: dict[str, dict[str, float]] = {}
    for name in cases():
        row: dict[str, float] = {}
        for variant in ("old", "new", "kept", "cold"):
            times = samples.get((name, variant))
            if not times:
                continue
            row[f"{variant}_min_ms"] = min(times) * 1000
            row[f"{variant}_median_ms"] = statistics.median(times) * 1000
            base = samples[(name, "old")]
            row[f"{variant}_vs_old"] = statistics.median(t / b for t, b in zip(times, base, strict=True))
            versions = version_old if variant == "old" else version_new
            row[f"{variant}_vs_version"] = statistics.median(t / v for t, v in zip(times, versions, strict=True))
        table[name] = row
    return table


def render(table: dict[str, dict[str, float]], meta: dict[str, str]) -> str:
    lines = [
        f"# Start-up: --help, CMD --help, list, doctor ({meta['date']})",
        "",
        f"Machine: {meta['machine']}. Python {meta['python']}. {meta['rounds']} rounds, every variant once per "
        "round in random order; min/median ms; ratios are medians of per-round ratios.",
        f"Old tree: {meta['old']} (the default is main 5725032's). Command: `python bench/startup.py "
        f"{meta.get('args', '')}`.",
        "",
        "`kept`: this tree, the help text kept by an earlier run (the fast path prints it); `cold`: this tree "
        "with an empty cache folder (click renders the help, the first run after an install or upgrade).",
        "",
        "| command | old median | new/kept median | new/kept vs --version | cold median | cold vs --version |"
        " new vs old |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in table.items():
        new = "kept" if "kept_median_ms" in row else "new"
        cold = f"{row['cold_median_ms']:.0f} | {row['cold_vs_version']:.2f}x" if "cold_median_ms" in row else "- | -"
        lines.append(
            f"| `{name}` | {row['old_median_ms']:.0f} | {row[f'{new}_median_ms']:.0f} | "
            f"{row[f'{new}_vs_version']:.2f}x | {cold} | {row[f'{new}_vs_old']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--old", default="/tmp/old-h26g")
    parser.add_argument("--no-save", action="store_true")
    opts = parser.parse_args()
    old = Path(opts.old)
    if not (old / "envmgr" / "fastpath" / "main.py").is_file():
        raise SystemExit(f"no old tree at {old}: git archive 5725032 | tar -x -C {old}")
    samples: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for tree in (old, ROOT):  # warm-up: bytecode compiled, the kept help written once
            for args in cases().values():
                timed(tree, args, str(Path(tmp) / ("old" if tree == old else "new")))
        for _ in range(opts.rounds):
            one_round(old, Path(tmp), samples)
    table = summarize(samples, opts.rounds)
    meta = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "machine": f"{platform.node()} ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f})",
        "python": platform.python_version(),
        "rounds": str(opts.rounds),
        "args": " ".join(sys.argv[1:]),
        "old": str(old),
    }
    text = render(table, meta)
    print(text)
    if not opts.no_save:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / f"{meta['date']}-startup.md").write_text(text, encoding="utf-8")
        (RESULTS / f"{meta['date']}-startup.json").write_text(
            json.dumps({"meta": meta, "table": table}, indent=2), encoding="utf-8"
        )


if __name__ == "__main__":
    sys.exit(main())
