"""`envmgr doctor --log` on large logs: wall time and peak memory (issue 13 item 5).

    python bench/logscan.py [--mb 200] [--no-save]

The logs are made of real samples from tests/corpus, repeated up to the size (nothing invented):
  repeated-failure  the real pip log of llama-cpp-python on this machine (F24 + F12 in every copy)
  ordinary          a successful CMake/MSBuild configure log (no failure text at all)
  wrapped-msbuild   the MSBuild F04 excerpt, hard-wrapped at 120 columns like MSBuild's console logger
  crlf-ansi         the ordinary log with CRLF line ends and ANSI colour on every line
  fixed-width       the ordinary log as a fixed-width console writes it: every line cut into 87-column
                    pieces and padded to 87 (issue 23: such a log was taken for one wrapped line)
  one-line          the ordinary log's lines joined by spaces into ONE line (a whole log or command line
                    pasted as one line), with the real nvcc F13 line of the gadgetron excerpt at its very end
                    (issue 34, audit N20: a needle in a long line made the scan quadratic)
Each runs `python -m envmgr doctor --log FILE --json` in a fresh process; the peak RSS is that
process's ru_maxrss (os.wait4). Targets: < 20 s and < 200 MB for 200 MB.
Results go to bench/results/<date>-logscan-<machine>.md and .json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
RESULTS = ROOT / "bench" / "results"
sys.path.insert(0, str(ROOT / "bench"))
from run import machine_name  # noqa: E402

SAMPLES = {
    "repeated-failure": "pip-llama-cpp-python-0.3.36-cuda13.0-no-cublas-native-no-gpu-linux-cmake3.25.txt",
    "ordinary": "cmake-vs2022-generator-cuda-identification-ok-ci-cuda11.7.99.txt",
    "wrapped-msbuild": "msbuild-cuda11.8-host_config-unsupported-msvc14.40-vs2022-buildtools-llama-cpp-python-EXCERPT.txt",
    "crlf-ansi": "cmake-vs2022-generator-cuda-identification-ok-ci-cuda11.7.99.txt",
    "fixed-width": "cmake-vs2022-generator-cuda-identification-ok-ci-cuda11.7.99.txt",
    "one-line": "cmake-vs2022-generator-cuda-identification-ok-ci-cuda11.7.99.txt",
}
ONE_LINE_END = (
    "nvcc-fatal-unsupported-gpu-architecture-compute_35-findcuda-make-gadgetron-EXCERPT.txt",
    "nvcc fatal   : Unsupported gpu architecture",
)
FIXED = 87


def _unit(kind: str) -> bytes:
    text = (CORPUS / SAMPLES[kind]).read_text(encoding="utf-8", errors="replace")
    lines = [l for l in text.split("\n") if not l.startswith(("# SOURCE:", "# Context:"))]
    if kind == "wrapped-msbuild":
        out = []
        for line in lines:
            out.append(line[:120])
            rest = line[120:]
            while rest:
                out.append("       " + rest[:113])
                rest = rest[113:]
        lines = out
    if kind == "fixed-width":
        lines = [line[k : k + FIXED].ljust(FIXED) for line in lines for k in range(0, max(len(line), 1), FIXED)]
    if kind == "crlf-ansi":
        return "".join(f"\x1b[33m{l}\x1b[0m\x1b[K\r\n" for l in lines).encode()
    return ("\n".join(lines) + "\n").encode()


def make_log(kind: str, path: Path, size: int) -> int:
    unit = _unit(kind)
    with open(path, "wb") as fh:
        written = 0
        block = unit * max(1, (1 << 20) // len(unit))
        if kind == "one-line":
            unit = unit.replace(b"\n", b" ")
            block = unit * max(1, (1 << 20) // len(unit)) if size >= 1 << 20 else unit * (size // len(unit) + 1)
        while written < size:
            fh.write(block)
            written += len(block)
        if kind == "one-line":
            name, needle = ONE_LINE_END
            end = next(x for x in (CORPUS / name).read_text(encoding="utf-8").splitlines() if needle in x)
            fh.write(f" {end}\n".encode())
    return written


def measure(path: Path, env: dict, timeout: float | None = None) -> tuple[float, float, int, dict]:
    """(wall seconds, peak RSS MB, exit code, the --json document); past `timeout` the scan is killed (exit -9)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "envmgr", "doctor", "--log", str(path), "--json"],
            stdout=out_file,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        deadline = None if timeout is None else t0 + timeout
        while True:  # os.wait4 (not Popen.wait, which reaps the child) keeps the child's peak RSS
            pid, status, usage = os.wait4(proc.pid, 0 if deadline is None else os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                deadline = None
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out_file.seek(0)
        out = out_file.read()
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    rss_mb = usage.ru_maxrss / 1024  # kilobytes on Linux
    try:
        doc = json.loads(out)
    except ValueError:
        doc = {}
    return wall, rss_mb, proc.returncode, doc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=200)
    ap.add_argument("--timeout", type=float, default=None, help="seconds after which a scan is killed (exit -9)")
    ap.add_argument("--kinds", default=",".join(SAMPLES))
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--stem", default="logscan", help="result file name part (a second run of the day: logscan-2)")
    a = ap.parse_args()
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    rows = []
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="envmgr-bench-log-") as tmp:
        for kind in a.kinds.split(","):
            path = Path(tmp) / f"{kind}.log"
            size = make_log(kind, path, int(a.mb * 1024 * 1024))
            wall, rss, code, doc = measure(path, env, a.timeout)
            ids = [m["id"] for m in doc.get("matches", [])]
            counts = {m["id"]: m["count"] for m in doc.get("matches", [])}
            ok = wall < 20 and rss < 200
            rows.append(
                {
                    "kind": kind,
                    "bytes": size,
                    "lines": doc.get("lines"),
                    "seconds": round(wall, 2),
                    "peak_rss_mb": round(rss, 1),
                    "exit": code,
                    "ids": ids,
                    "counts": counts,
                    "met": ok,
                }
            )
            print(
                f"{kind:18} {size / 2**20:7.1f} MiB  {wall:6.2f} s  {rss:6.1f} MB  exit {code}  {ids} "
                f"{'met' if ok else 'MISSED'}",
                flush=True,
            )
            path.unlink()
    if not a.no_save:
        RESULTS.mkdir(exist_ok=True)
        stem = f"{datetime.now(timezone.utc):%Y-%m-%d}-{a.stem}-{machine_name()}"
        meta = {
            "python": sys.version.split()[0],
            "cpus": os.cpu_count(),
            "mb": a.mb,
            "target": "< 20 s and < 200 MB peak RSS per log",
            "loadavg_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        }
        (RESULTS / f"{stem}.json").write_text(json.dumps({**meta, "rows": rows}, indent=2) + "\n")
        lines = [
            f"# doctor --log on {a.mb} MiB logs ({stem})",
            "",
            f"Python {meta['python']}, {meta['cpus']} CPUs, 1-minute load average "
            f"{meta['loadavg_before_after'][0]} before and {meta['loadavg_before_after'][1]} after (other work "
            f"shares the machine). `python bench/logscan.py --mb {a.mb} --stem {a.stem}"
            f"{'' if a.kinds == ','.join(SAMPLES) else ' --kinds ' + a.kinds}"
            f"{'' if a.timeout is None else f' --timeout {a.timeout:g}'}`; "
            "each log is a real corpus sample repeated (see the script's docstring).",
            "",
            "| log | MiB | lines | seconds | peak RSS MB | exit | ids (count) | target |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            ids = ", ".join(f"{i} ({r['counts'][i]})" for i in r["ids"]) or "none"
            lines.append(
                f"| {r['kind']} | {r['bytes'] / 2**20:.3g} | {r['lines']} | {r['seconds']} | "
                f"{r['peak_rss_mb']} | {r['exit']} | {ids} | {'met' if r['met'] else 'MISSED'} |"
            )
        (RESULTS / f"{stem}.md").write_text("\n".join(lines) + "\n")
        print(f"wrote {RESULTS / stem}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
