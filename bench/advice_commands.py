"""Which `try:` line `doctor --log` prints for F14, F18 and F19 on the train logs (advice.py).

    python bench/advice_commands.py [--save]

Train logs only (held out is not read). For every train log whose decisive match is F14, F18 or F19: whether the
catalog's command (llama-cpp-python's) stands, the runtime's own command replaces it, or no command is printed,
counted per id and runtime. A measurement, not a test.
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

from envmgr.buildlog.advice import TAILORED  # noqa: E402
from envmgr.buildlog.scan import scan_path  # noqa: E402

RESULTS = ROOT / "bench" / "results"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--save", action="store_true")
    a = ap.parse_args()
    rows: Counter = Counter()
    with tempfile.TemporaryDirectory(prefix="envmgr-advice-") as folder:
        log = Path(folder) / "build.log"
        for e in load_index():
            if e.split != "train":
                continue
            log.write_bytes(read_log(CORPUS / e.file, e.origin))
            m = scan_path(log).decisive
            if m is None or m.id not in TAILORED:
                continue
            if m.advice is None:
                rows[(m.id, "llama-cpp-python", "the catalog's")] += 1
            else:
                rows[(m.id, m.advice.runtime or "(none named)", "the runtime's" if m.advice.command else "none")] += 1
    total: Counter = Counter()
    lines = ["| id | runtime read from the log | try: line | train logs |", "|---|---|---|---:|"]
    for (fid, runtime, what), n in sorted(rows.items()):
        lines.append(f"| {fid} | {runtime} | {what} | {n} |")
        total[what] += n
    lines += ["", "totals: " + ", ".join(f"{what} {n}" for what, n in sorted(total.items()))]
    print("\n".join(lines))
    if a.save:
        stem = f"{datetime.now(timezone.utc):%Y-%m-%d}-advice-commands"
        head = [
            f"# doctor --log's try: line for F14, F18 and F19 on the train logs ({stem})",
            "",
            "`python bench/advice_commands.py --save`: every train log whose decisive match is F14, F18 or F19; "
            "held out not read.",
            "",
        ]
        (RESULTS / f"{stem}.md").write_text("\n".join(head + lines) + "\n", encoding="utf-8")
        print(f"wrote {RESULTS / stem}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
