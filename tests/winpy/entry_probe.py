"""Run by Windows CPython (under Wine): load each DLL the way llama_cpp does (its folder first on PATH,
winmode=0) and call its `use` export, printing the outcome as JSON.

    python.exe entry_probe.py PKG_DIR NAME [NAME...]

Prints {NAME: {"loaded": bool, "load_error": str|null, "winerror": int|null, "result": int|null,
"call_error": str|null}}. On Windows a missing entry point fails the load ([WinError 127]); Wine 8 binds
it to a stub instead and the call fails ("unimplemented function DLL.FUNC", 0x80000100), so the call is
part of the probe. Only the standard library: this is the oracle envmgr is compared with.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys


def probe(pkg: str, name: str) -> dict:
    out = {"loaded": False, "load_error": None, "winerror": None, "result": None, "call_error": None}
    try:
        lib = ctypes.CDLL(os.path.join(pkg, name + ".dll"), winmode=0)
    except OSError as exc:
        out["load_error"], out["winerror"] = str(exc), getattr(exc, "winerror", None)
        return out
    out["loaded"] = True
    try:
        out["result"] = lib.use()
    except OSError as exc:
        out["call_error"] = str(exc)
    return out


if __name__ == "__main__":
    pkg = sys.argv[1]
    os.environ["PATH"] = pkg + os.pathsep + os.environ.get("PATH", "")
    print(json.dumps({n: probe(pkg, n) for n in sys.argv[2:]}))
    sys.stdout.flush()
