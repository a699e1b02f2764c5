"""Run by Windows CPython (under Wine): envmgr's DLL closure of a llama_cpp\\lib folder on the live Windows
host, and the fix from a toolkit's bin folder applied (or undone), printed as JSON.

    python.exe closure_fix.py LIB CUDA_BIN MANIFEST_DIR [UNDO_MANIFEST]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from envmgr.host.live import LiveHost
from envmgr.wheels import closure


def main(lib: str, cuda_bin: str, manifests: str, undo: str = "") -> dict:
    if undo:
        return {"undo": closure.undo(Path(undo))}
    host = LiveHost()
    found = closure.check(host, sys.executable, lib)
    plan = closure.plan_fix(host, found, {"12.9": (cuda_bin,)}, ())
    lines, manifest = closure.apply(plan, Path(manifests))
    return {
        "checked": list(found.checked),
        "missing": sorted(n.lower() for n in found.missing),
        "why": list(found.why),
        "copies": [[c.name.lower(), c.source, c.dest] for c in plan.copies],
        "unresolved": list(plan.unresolved),
        "applied": lines,
        "manifest": str(manifest),
        "entries": [[e.dll.lower(), e.function] for e in found.entries],
    }


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:])))
    sys.stdout.flush()
