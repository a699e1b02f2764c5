"""The hook's start-up cost (issue 38): `python -c pass` in a bare venv against the same in a hooked venv.

    python bench/hook_startup.py [--rounds N] [--no-save]

Three venvs of this interpreter's base Python, made in a temporary folder: `bare`; `hooked`, whose hook
applies this machine's CUDA 13.0 snapshot (`envmgr hook install --cuda 13.0`; a recorded Linux machine's when
this one has no toolkit); `hooked-vcvars`, whose env file holds the operations of a real Visual Studio 2026 +
CUDA capture (tests/machines/windows-latest-vs2026.toml, a GitHub runner: PATH, INCLUDE, LIB, LIBPATH...,
applied with this platform's separator), the heaviest env file a user's snapshot makes. Also `hooked, off`
(ENVMGR_HOOK=0: site imports the module, which returns at once) and `bare -S` (no site at all: the floor).
Every round runs every variant once in a new random order, so a load drift hits all alike; each figure is
min/median over the rounds, and each ratio is the median of the per-round ratios to `bare` in that round.
`-X importtime` gives the hook module's own import time. Writes results/<date>-hook-startup-<machine>.md/.json.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
RECORD = ROOT / "tests" / "machines" / "windows-latest-vs2026.toml"
LINUX_RECORD = ROOT / "tests" / "machines" / "linux-two-toolkits.toml"
VARIANTS = ("bare", "bare -S", "hooked", "hooked, off", "hooked-vcvars")


def envmgr(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "envmgr", *args], capture_output=True, text=True, env=env, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"envmgr {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def make(tmp: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    base_env = {
        **os.environ,
        "ENVMGR_CACHE_DIR": str(tmp / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp / "config"),
        "ENVMGR_DATA_DIR": str(tmp / "data"),
        "PYTHONPATH": str(ROOT),
    }
    pythons = {}
    for name in ("bare", "hooked", "vcvars"):
        venv.EnvBuilder(with_pip=False).create(tmp / name)
        pythons[name] = str(tmp / name / "bin" / "python")
    if Path("/usr/local/cuda-13.0/bin/nvcc").exists():
        envmgr("hook", "install", "--python", pythons["hooked"], "--cuda", "13.0", env=base_env)
    else:
        snap = tmp / "linux.toml"
        snap.write_text(envmgr("--machine", str(LINUX_RECORD), "export", env=base_env), encoding="utf-8")
        envmgr("hook", "install", "--python", pythons["hooked"], "--from", str(snap), env=base_env)
    _vcvars_env_file(tmp, pythons["vcvars"], base_env)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ENVMGR_", "PYTHON", "CUDA"))}
    return {
        "bare": ([pythons["bare"], "-c", "pass"], clean),
        "bare -S": ([pythons["bare"], "-S", "-c", "pass"], clean),
        "hooked": ([pythons["hooked"], "-c", "pass"], clean),
        "hooked, off": ([pythons["hooked"], "-c", "pass"], {**clean, "ENVMGR_HOOK": "0"}),
        "hooked-vcvars": ([pythons["vcvars"], "-c", "pass"], clean),
    }


def _vcvars_env_file(tmp: Path, python: str, env: dict[str, str]) -> None:
    """The vcvars venv's env file: the recorded Windows capture's operations, in this platform's form."""
    sys.path.insert(0, str(ROOT))
    from envmgr.hook import plan
    from envmgr.snapshot.envdelta import EnvDelta
    from envmgr.snapshot.form import from_toml

    snap = from_toml(envmgr("--machine", str(RECORD), "export", env=env))
    envmgr("hook", "install", "--python", python, "--from", str(_write(tmp / "any.toml")), env=env)
    env_file = next(Path(tmp / "vcvars").rglob(plan.ENV))
    env_file.write_text(
        plan.env_text(EnvDelta(platform.system().lower(), snap.delta.ops), ("bench: windows-latest-vs2026",)),
        encoding="utf-8",
    )


def _write(path: Path) -> Path:
    path.write_text('schema = 1\nplatform = "linux"\n[env]\nX = "1"\n', encoding="utf-8")
    return path


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def import_time_us(argv: list[str], env: dict[str, str]) -> int:
    """The hook module's own import (self + children) in µs, from -X importtime; the best of 5."""
    best = None
    for _ in range(5):
        done = subprocess.run([argv[0], "-X", "importtime", "-c", "pass"], env=env, capture_output=True, text=True)
        m = re.search(r"import time:\s+\d+ \|\s+(\d+) \|\s+_envmgr_hook\s*$", done.stderr, re.M)
        if m:
            best = min(best or 10**9, int(m.group(1)))
    return best or -1


def summarize(samples: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    table = {}
    for name in VARIANTS:
        times = samples[name]
        table[name] = {
            "min_ms": min(times) * 1000,
            "median_ms": statistics.median(times) * 1000,
            "vs_bare": statistics.median(t / b for t, b in zip(times, samples["bare"], strict=True)),
            "minus_bare_ms": statistics.median((t - b) * 1000 for t, b in zip(times, samples["bare"], strict=True)),
        }
    return table


def render(table: dict[str, dict[str, float]], meta: dict[str, str]) -> str:
    lines = [
        f"# The hook's start-up cost ({meta['date']})",
        "",
        f"Machine: {meta['machine']}. Python {meta['python']}. {meta['rounds']} rounds, every variant once per "
        "round in random order; `python -c pass` each time. Ratios and differences are medians of the "
        "per-round ones against `bare` in the same round. Command: `python bench/hook_startup.py`.",
        "",
        f"Env files: `hooked` {meta['env_lines_hooked']} operations ({meta['env_bytes_hooked']} bytes; this "
        f"machine's CUDA 13.0 snapshot); `hooked-vcvars` {meta['env_lines_vcvars']} operations "
        f"({meta['env_bytes_vcvars']} bytes; a real VS 2026 + CUDA capture of a GitHub runner). The hook "
        f"module's own import (-X importtime, best of 5): {meta['import_us']} µs.",
        "",
        "| variant | min ms | median ms | vs bare | minus bare (ms) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, row in table.items():
        lines.append(
            f"| `{name}` | {row['min_ms']:.1f} | {row['median_ms']:.1f} | {row['vs_bare']:.3f}x | "
            f"{row['minus_bare_ms']:+.2f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=101)
    parser.add_argument("--no-save", action="store_true")
    parser.add_argument("--machine-name", default="linux-vm-2cpu")
    opts = parser.parse_args()
    samples: dict[str, list[float]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        runs = make(Path(tmp))
        for argv, env in runs.values():  # warm-up: bytecode compiled, files in the page cache
            for _ in range(3):
                timed(argv, env)
        for _ in range(opts.rounds):
            order = list(VARIANTS)
            random.shuffle(order)
            for name in order:
                samples[name].append(timed(*runs[name]))
        files = {
            name: next(Path(tmp, name).rglob("_envmgr_hook.env")).read_text(encoding="utf-8")
            for name in ("hooked", "vcvars")
        }
        import_us = import_time_us(*runs["hooked-vcvars"])
    table = summarize(samples)
    meta = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "machine": f"{platform.node()} ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f})",
        "python": platform.python_version(),
        "rounds": str(opts.rounds),
        "import_us": str(import_us),
        **{
            f"env_lines_{k}": str(sum(1 for ln in v.splitlines()[1:] if not ln.startswith("#")))
            for k, v in (("hooked", files["hooked"]), ("vcvars", files["vcvars"]))
        },
        **{
            f"env_bytes_{k}": str(len(v.encode()))
            for k, v in (("hooked", files["hooked"]), ("vcvars", files["vcvars"]))
        },
    }
    text = render(table, meta)
    print(text)
    if not opts.no_save:
        RESULTS.mkdir(exist_ok=True)
        stem = RESULTS / f"{meta['date']}-hook-startup-{opts.machine_name}"
        stem.with_suffix(".md").write_text(text, encoding="utf-8")
        stem.with_suffix(".json").write_text(
            json.dumps({"meta": meta, "table": table, "samples_s": samples}, indent=2), encoding="utf-8"
        )


if __name__ == "__main__":
    sys.exit(main())
