"""What the machine-aware verdicts (doctor/verdict.py, issue 36 part 2) do to the train logs, per recorded machine.

    python bench/machine_verdicts.py [--save]

Train logs only (held out is not read). Every train log the engine names an id in is judged against each recorded
machine as if it had come from there: how many candidates each machine confirms and rules out (per id), how many
failure logs lose every candidate, and how many clean logs given an id are cleared. The logs did not come from these
machines, so this is no recall or precision figure: it shows what each kind of machine does (a machine with GPUs
should rule out nearly nothing; one without an NVIDIA GPU only the CPU family's run evidence). A measurement, not a
test.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from corpus_index import CORPUS, load_index, read_log  # noqa: E402

from envmgr.buildlog.scan import scan_path  # noqa: E402
from envmgr.doctor.machine import read_machine  # noqa: E402
from envmgr.doctor.verdict import CONFIRMED, CONTRADICTED, judge, kept  # noqa: E402
from envmgr.host.recorded import load_machine  # noqa: E402

RESULTS = ROOT / "bench" / "results"
MACHINES = (
    "verdicts/macos-apple-silicon",
    "verdicts/linux-arm64-no-gpu",
    "verdicts/linux-x86-no-gpu",
    "verdicts/linux-gtx1080-llama-sm75",
    "verdicts/linux-t4-llama-sm75",
    "linux-two-toolkits",
    "vs2026-laptop-no-v143",
    "community-buildtools-cuda124",
)


def _scans() -> list[tuple[bool, object]]:
    out = []
    with tempfile.TemporaryDirectory(prefix="envmgr-verdicts-") as folder:
        log = Path(folder) / "build.log"
        for e in load_index():
            if e.split != "train":
                continue
            log.write_bytes(read_log(CORPUS / e.file, e.origin))
            scan = scan_path(log)
            if scan.matches:
                out.append((not e.expect, scan))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--save", action="store_true")
    a = ap.parse_args()
    scans = _scans()
    lines = [
        "| machine | failure logs named | all ruled out | clean logs named | cleared | confirmed | ruled out |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    for name in MACHINES:
        path = ROOT / "tests" / "machines" / f"{name}.toml"
        facts = read_machine(load_machine(str(path)), str(path))
        assert facts is not None, name
        c: Counter = Counter()
        confirmed: Counter = Counter()
        ruled: Counter = Counter()
        for clean, scan in scans:
            verdicts = judge(scan.matches, facts)  # type: ignore[attr-defined]
            left = kept(scan.matches, verdicts)  # type: ignore[attr-defined]
            c["clean" if clean else "failure"] += 1
            c[("clean" if clean else "failure") + " gone"] += not left
            confirmed.update(v.id for v in verdicts if v.verdict == CONFIRMED)
            ruled.update(v.id for v in verdicts if v.verdict == CONTRADICTED)
        words = ", ".join(f"{k} {n}" for k, n in sorted(confirmed.items())) or "-"
        dropped = ", ".join(f"{k} {n}" for k, n in sorted(ruled.items())) or "-"
        lines.append(
            f"| {name} | {c['failure']} | {c['failure gone']} | {c['clean']} | {c['clean gone']} | {words} | "
            f"{dropped} |"
        )
    print("\n".join(lines))
    if a.save:
        stem = f"{datetime.now(timezone.utc):%Y-%m-%d}-machine-verdicts"
        head = [
            f"# Machine-aware verdicts on the train logs, per recorded machine ({stem})",
            "",
            "`python bench/machine_verdicts.py --save`: every train log the engine names an id in, judged against "
            "each record as if it came from there (they did not: no recall or precision figure); held out not "
            "read.",
            "",
        ]
        (RESULTS / f"{stem}.md").write_text("\n".join(head + lines) + "\n", encoding="utf-8")
        print(f"wrote {RESULTS / stem}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
