"""Run by the TARGET Python (not envmgr's): find an installed distribution, import it, load its native
libraries with the real loader, and run the package's smoke test where there is one. Standard library
only, Python 3.8 syntax: the target may not have envmgr.

    python child_any.py DISTRIBUTION

One line per stage on stdout, `ENVMGR-VERIFY {json}`, flushed at once (a crash in a stage leaves the
earlier ones with the parent, which reports the signal). The stages: package (where it is, its native
libraries, its top-level modules), import (per module), load (per native library, ctypes with the
platform's loader), smoke (the package's own report of CUDA), done.
"""
import ctypes
import json
import os
import re
import sys

TAG = "ENVMGR-VERIFY "
NATIVE = re.compile(r"\.(so(\.\d+)*|pyd|dll)$", re.I)
MAX_LIBS = 512


def emit(stage, **data):
    data["stage"] = stage
    sys.stderr.flush()
    sys.stdout.write(TAG + json.dumps(data) + "\n")
    sys.stdout.flush()


def find(name):
    from importlib import metadata

    for candidate in dict.fromkeys((name, name.replace("-", "_"), name.replace("_", "-"))):
        try:
            return metadata.distribution(candidate)
        except metadata.PackageNotFoundError:
            continue
    return None


def top_modules(dist):
    text = dist.read_text("top_level.txt") or ""
    names = [n.strip() for n in text.splitlines() if n.strip() and not n.startswith("_")]
    if names:
        return names
    found = []
    for f in dist.files or ():
        parts = str(f).replace("\\", "/").split("/")
        if len(parts) == 2 and parts[1] == "__init__.py" and not parts[0].endswith((".dist-info", ".data")):
            found.append(parts[0])
        elif len(parts) == 1 and parts[0].endswith(".py") and not parts[0].startswith("_"):
            found.append(parts[0][:-3])
    return sorted(set(found))


def package_facts(name):
    dist = find(name)
    if dist is None:
        return {"found": False, "python": sys.executable, "platform": sys.platform}, None
    libs = []
    for f in dist.files or ():
        if NATIVE.search(str(f)) and len(libs) < MAX_LIBS:
            path = os.path.abspath(str(dist.locate_file(f)))
            if os.path.isfile(path):
                libs.append(path)
    requires = [r.split(";")[0].strip() for r in (dist.requires or ())]
    return {"found": True, "name": dist.metadata["Name"], "version": dist.version, "python": sys.executable,
            "platform": sys.platform, "libraries": libs, "modules": top_modules(dist),
            "requires": requires[:64]}, dist


def loaded_paths():
    if not sys.platform.startswith("linux"):
        return []
    try:
        with open("/proc/self/maps") as fh:
            return sorted({line.split(None, 5)[5].strip() for line in fh if len(line.split(None, 5)) == 6
                           and line.split(None, 5)[5].startswith("/")})
    except OSError:
        return []


def load_all(libs):
    already = set(loaded_paths())
    out = []
    for path in libs:
        rec = {"path": path}
        if os.path.realpath(path) in already or path in already:
            rec["ok"], rec["how"] = True, "loaded by the import"
        else:
            emit("loading", path=path)   # a crash in the loader (a cut file: SIGBUS) names its library
            try:
                ctypes.CDLL(path)
                rec["ok"], rec["how"] = True, "ctypes.CDLL"
            except OSError as exc:
                rec["ok"], rec["error"] = False, str(exc)[:2000]
                rec["winerror"] = getattr(exc, "winerror", None)
        out.append(rec)
    return out


def smoke_torch():
    import torch

    info = {"kind": "torch", "torch": torch.__version__, "torch_cuda": torch.version.cuda,
            "cuda_available": bool(torch.cuda.is_available())}
    if info["cuda_available"]:
        info["device"] = torch.cuda.get_device_name(0)
        x = torch.ones(4, device="cuda")
        info["tensor_sum_on_gpu"] = float((x + x).sum().item())
    return info


def smoke_system_info(module, attr):
    mod = __import__(module, fromlist=["_"])
    text = getattr(mod, attr)()
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return {"kind": "system_info", "function": module + "." + attr, "system_info": str(text)[:4000]}


SMOKE = {
    "stable-diffusion-cpp-python": lambda: smoke_system_info("stable_diffusion_cpp.stable_diffusion_cpp",
                                                             "sd_get_system_info"),
    "pywhispercpp": lambda: smoke_system_info("_pywhispercpp", "system_info"),
}


def main(argv):
    facts, dist = package_facts(argv[1])
    emit("package", **facts)
    if dist is None:
        return 0
    uses_torch = any(re.match(r"^torch\b", r) for r in facts["requires"])
    if uses_torch:
        try:
            import torch  # noqa: F401  (a torch extension's library needs torch's libraries loaded first)
        except BaseException as exc:
            emit("import", module="torch", ok=False, error_type=type(exc).__name__, error=str(exc)[:2000])
    for module in facts["modules"]:
        try:
            __import__(module)
            emit("import", module=module, ok=True)
        except BaseException as exc:
            emit("import", module=module, ok=False, error_type=type(exc).__name__, error=str(exc)[:2000])
    emit("load", libraries=load_all(facts["libraries"]))
    key = re.sub(r"[-_.]+", "-", facts["name"]).lower()
    smoke = SMOKE.get(key) or (smoke_torch if uses_torch else None)
    if smoke is not None:
        try:
            emit("smoke", ok=True, **smoke())
        except BaseException as exc:
            emit("smoke", ok=False, error_type=type(exc).__name__, error=str(exc)[:2000])
    emit("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
