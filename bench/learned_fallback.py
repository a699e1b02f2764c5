"""Would a model learned from the corpus's words add to the anchors where they name nothing? (issue 23)

    python bench/learned_fallback.py [--save]

Train only; held-out logs are not read. The train logs are cut into five folds by a hash of the source
thread; each fold is answered by a model fitted on the other four, so no log is judged by a model that saw
it or its thread. The model: every lower-case word of 3-31 characters in the log (annotation lines
blanked), weighted by inverse document frequency over the four folds (words seen in one log dropped),
cosine similarity, the five nearest train logs voting with their similarity (a clean log votes `none`).

Reported: the model alone, the anchors alone (`doctor --log`'s decisive id), and the anchors with the model
answering only where they name nothing, at several thresholds (the nearest log's similarity, the share of
the vote). A measurement, not a test; nothing of it ships.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
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
from envmgr.errors import InputFileError  # noqa: E402

RESULTS = ROOT / "bench" / "results"
WORD = re.compile(r"[a-z][a-z0-9_+\-]{2,30}")
FOLDS, K = 5, 5
THRESHOLDS = ((0.0, 0.5), (0.0, 0.8), (0.0, 1.0), (0.3, 0.8), (0.5, 0.8), (0.5, 1.0), (0.7, 1.0))


def fold_of(thread: str) -> int:
    return int.from_bytes(hashlib.sha256(b"fold\0" + thread.encode("utf-8")).digest()[:8], "big") % FOLDS


def load() -> list[dict]:
    out = []
    with tempfile.TemporaryDirectory(prefix="envmgr-learned-") as folder:
        log = Path(folder) / "build.log"
        for e in load_index():
            if e.split != "train":
                continue
            data = read_log(CORPUS / e.file, e.origin)
            log.write_bytes(data)
            try:
                found = scan_path(log)
                decisive = found.decisive.id if found.decisive else None
            except InputFileError:
                decisive = None
            out.append(
                {
                    "expect": e.expect,
                    "label": e.expect[0] if e.expect else "none",
                    "rules": decisive,
                    "words": set(WORD.findall(data.decode("utf-8", "replace").lower())),
                    "fold": fold_of(e.thread),
                }
            )
    return out


def vote(logs: list[dict]) -> None:
    """Each log's nearest-neighbour answer from the other folds: (label, best similarity, vote share)."""
    for k in range(FOLDS):
        fit = [x for x in logs if x["fold"] != k]
        df = Counter(w for x in fit for w in x["words"])
        idf = {w: math.log(len(fit) / n) for w, n in df.items() if n >= 2}

        def vec(x: dict, idf: dict[str, float] = idf) -> dict[str, float]:
            v = {w: idf[w] for w in x["words"] if w in idf}
            norm = math.sqrt(sum(a * a for a in v.values())) or 1.0
            return {w: a / norm for w, a in v.items()}

        fitted = [(vec(x), x["label"]) for x in fit]
        for x in logs:
            if x["fold"] != k:
                continue
            q = vec(x)
            near = sorted(((sum(a * v.get(w, 0.0) for w, a in q.items()), label) for v, label in fitted), reverse=True)[
                :K
            ]
            ballot: Counter = Counter()
            for sim, label in near:
                ballot[label] += sim
            label, weight = ballot.most_common(1)[0]
            x["model"] = (label, near[0][0], weight / (sum(ballot.values()) or 1.0))


def score(logs: list[dict], pick) -> tuple[int, int, int, int]:
    named = n = fp = clean = 0
    for x in logs:
        out = pick(x)
        if x["expect"]:
            n += 1
            named += out in x["expect"]
        else:
            clean += 1
            fp += out is not None
    return named, n, fp, clean


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--save", action="store_true")
    a = ap.parse_args()
    logs = load()
    vote(logs)
    rows = [
        ("model alone", score(logs, lambda x: None if x["model"][0] == "none" else x["model"][0])),
        ("anchors alone", score(logs, lambda x: x["rules"])),
    ]
    for sim, share in THRESHOLDS:

        def pick(x: dict, sim: float = sim, share: float = share) -> str | None:
            label, best, part = x["model"]
            if x["rules"] is None and label != "none" and best >= sim and part >= share:
                return label
            return x["rules"]

        rows.append(
            (f"anchors, then the model where they name nothing (nearest >= {sim}, vote >= {share})", score(logs, pick))
        )
    missed = [x for x in logs if x["expect"] and x["rules"] not in x["expect"]]
    lines = [
        f"train: {len(logs)} logs in {FOLDS} folds by source thread; model: {K} nearest by idf-weighted words",
        "",
        "| answer | failure logs named right | clean logs given an id |",
        "|---|---:|---:|",
    ]
    lines += [f"| {name} | {a}/{n} | {f}/{c} |" for name, (a, n, f, c) in rows]
    lines += [
        "",
        f"of the {len(missed)} failure logs the anchors miss, the model names "
        f"{sum(x['model'][0] in x['expect'] for x in missed)} right",
    ]
    print("\n".join(lines))
    if a.save:
        stem = f"{datetime.now(timezone.utc):%Y-%m-%d}-learned-fallback"
        head = [
            f"# A learned fallback beside the anchors, cross-validated on train ({stem})",
            "",
            "`python bench/learned_fallback.py --save`: " + __doc__.split("\n\n")[2].replace("\n", " "),
            "",
        ]
        (RESULTS / f"{stem}.md").write_text("\n".join(head + lines) + "\n", encoding="utf-8")
        (RESULTS / f"{stem}.json").write_text(
            json.dumps(
                [{"answer": name, "named": r[0], "failures": r[1], "fp": r[2], "clean": r[3]} for name, r in rows],
                indent=1,
            )
            + "\n",
            encoding="utf-8",
        )
        print(f"wrote {RESULTS / stem}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
