"""Run by Windows CPython (under Wine): envmgr's runtime-defer fix (envmgr/wheels/defer.py) planned from a
process's module list and applied, or undone, on the live Windows file system; printed as JSON.

    python.exe defer_fix.py MODULES_JSON PACKAGE_ROOT MANIFEST_DIR
    python.exe defer_fix.py --undo MANIFEST

This checkout's envmgr comes first on sys.path: the shared interpreter's ._pth may name another checkout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from envmgr.binaries.runtimes import duplicates
from envmgr.wheels import defer


def main(argv: list[str]) -> dict:
    if argv[0] == "--undo":
        return {"undo": defer.undo(Path(argv[1]))}
    modules = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    plans = defer.plan(duplicates(modules), [argv[1]])
    lines, manifest = defer.apply(plans, Path(argv[2]))
    return {
        "plans": [[d.package_copy, d.app_copy, d.what] for d in plans],
        "applied": lines,
        "manifest": str(manifest) if manifest else None,
        "words": [defer.words(d) for d in plans],
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:])))
    sys.stdout.flush()
