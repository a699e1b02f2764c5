"""Run by Windows CPython (under Wine): load a DLL the way a configuration says, print the outcome as JSON.

    python.exe dll_probe.py CONFIG_JSON

CONFIG_JSON: {"dll": path, "dll_dirs": [...] (os.add_dll_directory), "path_prepend": [...] (PATH),
"winmode": null | int, "llama_cpp": bool (do what llama_cpp's load_shared_library does: PATH gets the
DLL's folder, add_dll_directory for it and CUDA_PATH\\bin, \\lib, then winmode=ctypes.RTLD_GLOBAL)}.
Prints {"loaded": bool, "error": str|null, "winerror": int|null, "cudart": cudaRuntimeGetVersion|null,
"blocked": str|null (llama_cpp's add_dll_directory raised), "winmode": int|null}. Only the standard
library: this is the oracle doctor is compared with.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys


def main(config: dict) -> dict:
    dll = config["dll"]
    handles = [os.add_dll_directory(d) for d in config.get("dll_dirs", [])]
    if config.get("path_prepend"):
        os.environ["PATH"] = os.pathsep.join(config["path_prepend"] + [os.environ.get("PATH", "")])
    kwargs = {}
    if config.get("winmode") is not None:
        kwargs["winmode"] = config["winmode"]
    out = {"loaded": False, "error": None, "winerror": None, "cudart": None, "blocked": None}
    if config.get("llama_cpp"):
        # llama_cpp/_ctypes_extensions.py, load_shared_library (0.3.x), in its order.
        base = os.path.dirname(dll)
        try:
            handles.append(os.add_dll_directory(base))
            os.environ["PATH"] = base + os.pathsep + os.environ["PATH"]
            handles.append(os.add_dll_directory(base))
            if "CUDA_PATH" in os.environ:
                handles.append(os.add_dll_directory(os.path.join(os.environ["CUDA_PATH"], "bin")))
                handles.append(os.add_dll_directory(os.path.join(os.environ["CUDA_PATH"], "lib")))
        except OSError as exc:  # import llama_cpp ends here (F16)
            out["blocked"], out["winerror"] = str(exc), getattr(exc, "winerror", None)
            return out
        kwargs["winmode"] = ctypes.RTLD_GLOBAL
    out["winmode"] = kwargs.get("winmode")
    try:
        lib = ctypes.CDLL(dll, **kwargs)
    except OSError as exc:
        out["error"] = str(exc)
        out["winerror"] = getattr(exc, "winerror", None)
        return out
    out["loaded"] = True
    try:
        cudart = ctypes.CDLL("cudart64_12.dll", winmode=0)  # already in the process when it loaded
        version = ctypes.c_int()
        if cudart.cudaRuntimeGetVersion(ctypes.byref(version)) == 0:
            out["cudart"] = version.value
    except (OSError, AttributeError):
        pass
    del handles
    return out


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
    sys.stdout.flush()
