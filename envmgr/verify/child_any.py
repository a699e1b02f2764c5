"""Run by the TARGET Python (not envmgr's): find an installed distribution, import it, load its native
libraries with the real loader, and run the package's smoke test where there is one. Standard library
only, Python 3.8 syntax: the target may not have envmgr.

    python child_any.py DISTRIBUTION [AFTER]     AFTER: verify --after's modules, comma-separated

One line per stage on stdout, `ENVMGR-VERIFY {json}`, flushed at once (a crash in a stage leaves the
earlier ones with the parent, which reports the signal). The stages: package (where it is, its native
libraries, its top-level modules), import (per module), load (per native library, ctypes with the
platform's loader), smoke (the package's own report of CUDA), done.

The smoke test is chosen by what the package is, not by its name first: a package that requires torch
gets torch's (its library loaded in the torch process, a tensor on the GPU); a library that exports
ggml's backend registry (llama.cpp, whisper.cpp, stable-diffusion.cpp and any other ggml binding) gets
ggml's: its own devices listed, and a 4-element add computed on its CUDA device through its own ggml;
otherwise the package's system info where envmgr knows the function.
"""

import ctypes
import json
import os
import re
import sys


def _sibling(name):
    """A script next to this one, by its path: an embeddable Python's ._pth file (ComfyUI's portable build),
    -I and PYTHONSAFEPATH all leave the script's folder off sys.path, and the target may lack envmgr."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
    spec = importlib.util.spec_from_file_location("envmgr_verify_" + name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


child_after = _sibling("child_after")

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
    libs, missing = [], []
    for f in dist.files or ():
        if NATIVE.search(str(f)) and len(libs) + len(missing) < MAX_LIBS:
            path = os.path.abspath(str(dist.locate_file(f)))
            (libs if os.path.isfile(path) else missing).append(path)
    modules = top_modules(dist)
    listed = dist.files is not None
    if not listed:  # no RECORD (an editable, conda or distutils install): look in the package folders
        libs = unlisted_libraries(dist, modules)
    requires = [r.split(";")[0].strip() for r in (dist.requires or ())]
    return {
        "found": True,
        "name": dist.metadata["Name"],
        "version": dist.version,
        "python": sys.executable,
        "platform": sys.platform,
        "libraries": libs,
        "modules": modules,
        "requires": requires[:64],
        "missing": missing,
        "record": listed,
    }, dist


def unlisted_libraries(dist, modules):
    """Native libraries under the package's top-level folders, when no RECORD lists them (a bounded walk)."""
    found, seen = [], 0
    for module in modules:
        top = os.path.abspath(str(dist.locate_file(module)))
        for folder, subdirs, files in os.walk(top):
            seen += 1
            if seen > 2000:
                return found
            subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
            for name in sorted(files):
                if NATIVE.search(name) and len(found) < MAX_LIBS:
                    found.append(os.path.join(folder, name))
    return found


def loaded_paths():
    if not sys.platform.startswith("linux"):
        return []
    try:
        with open("/proc/self/maps") as fh:
            return sorted(
                {
                    line.split(None, 5)[5].strip()
                    for line in fh
                    if len(line.split(None, 5)) == 6 and line.split(None, 5)[5].startswith("/")
                }
            )
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
            emit("loading", path=path)  # a crash in the loader (a cut file: SIGBUS) names its library
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

    info = {
        "kind": "torch",
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "cuda_available": bool(torch.cuda.is_available()),
    }
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


# ggml's public C API (ggml.h, ggml-backend.h, ggml-alloc.h), stable since the backend registry (2024):
# (name, restype, argtypes). Types as pointers: the probe never reads a struct's fields.
_P, _S, _I64 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64


class _InitParams(ctypes.Structure):  # struct ggml_init_params, passed by value
    _fields_ = [("mem_size", ctypes.c_size_t), ("mem_buffer", ctypes.c_void_p), ("no_alloc", ctypes.c_bool)]


GGML_API: tuple = (
    ("ggml_backend_dev_count", _S, []),
    ("ggml_backend_dev_get", _P, [_S]),
    ("ggml_backend_dev_name", ctypes.c_char_p, [_P]),
    ("ggml_backend_dev_description", ctypes.c_char_p, [_P]),
    ("ggml_backend_dev_init", _P, [_P, ctypes.c_char_p]),
    ("ggml_backend_free", None, [_P]),
    ("ggml_tensor_overhead", _S, []),
    ("ggml_graph_overhead", _S, []),
    ("ggml_init", _P, [_InitParams]),
    ("ggml_free", None, [_P]),
    ("ggml_new_tensor_1d", _P, [_P, ctypes.c_int, _I64]),
    ("ggml_add", _P, [_P, _P, _P]),
    ("ggml_new_graph", _P, [_P]),
    ("ggml_build_forward_expand", None, [_P, _P]),
    ("ggml_backend_alloc_ctx_tensors", _P, [_P, _P]),
    ("ggml_backend_buffer_free", None, [_P]),
    ("ggml_backend_tensor_set", None, [_P, _P, _S, _S]),
    ("ggml_backend_tensor_get", None, [_P, _P, _S, _S]),
    ("ggml_backend_graph_compute", ctypes.c_int, [_P, _P]),
)
GGML_TYPE_F32 = 0


def ggml_api(libs):
    """The first loaded library through which all of GGML_API resolves (dlsym searches its dependencies)."""
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
            fns = {}
            for name, restype, argtypes in GGML_API:
                fn = getattr(lib, name)
                fn.restype, fn.argtypes = restype, argtypes
                fns[name] = fn
            return path, fns
        except (OSError, AttributeError):
            continue
    return None, None


def ggml_devices(g):
    out = []
    for i in range(min(int(g["ggml_backend_dev_count"]()), 64)):
        dev = g["ggml_backend_dev_get"](i)
        name = (g["ggml_backend_dev_name"](dev) or b"").decode("utf-8", "replace")
        desc = (g["ggml_backend_dev_description"](dev) or b"").decode("utf-8", "replace")
        out.append((dev, name, desc))
    return out


def ggml_add_on(g, dev):
    """a + b on one device through the library's own ggml: [1, 2, 3, 4] + [1, 2, 3, 4]."""
    backend = g["ggml_backend_dev_init"](dev, None)
    if not backend:
        raise RuntimeError("ggml_backend_dev_init returned NULL")
    ctx = g["ggml_init"](_InitParams(g["ggml_tensor_overhead"]() * 8 + g["ggml_graph_overhead"](), None, True))
    buf = None
    try:
        a = g["ggml_new_tensor_1d"](ctx, GGML_TYPE_F32, 4)
        b = g["ggml_new_tensor_1d"](ctx, GGML_TYPE_F32, 4)
        c = g["ggml_add"](ctx, a, b)
        graph = g["ggml_new_graph"](ctx)
        g["ggml_build_forward_expand"](graph, c)
        buf = g["ggml_backend_alloc_ctx_tensors"](ctx, backend)
        data = (ctypes.c_float * 4)(1.0, 2.0, 3.0, 4.0)
        for t in (a, b):
            g["ggml_backend_tensor_set"](t, ctypes.cast(data, _P), 0, 16)
        status = g["ggml_backend_graph_compute"](backend, graph)
        result = (ctypes.c_float * 4)()
        g["ggml_backend_tensor_get"](c, ctypes.cast(result, _P), 0, 16)
        return int(status), [float(x) for x in result]
    finally:
        if buf:
            g["ggml_backend_buffer_free"](buf)
        g["ggml_free"](ctx)
        g["ggml_backend_free"](backend)


def smoke_ggml(path, g, want="CUDA"):
    devices = ggml_devices(g)
    info = {"kind": "ggml", "library": path, "devices": [n + ": " + d for _, n, d in devices]}
    target = next(((dev, n) for dev, n, _ in devices if n.upper().startswith(want)), None)
    if target is not None:
        emit("smoke-start", device=target[1])  # a crash inside the backend names the device
        info["computed_on"] = target[1]
        info["status"], info["result"] = ggml_add_on(g, target[0])
    return info


SMOKE = {
    "stable-diffusion-cpp-python": lambda: smoke_system_info(
        "stable_diffusion_cpp.stable_diffusion_cpp", "sd_get_system_info"
    ),
    "pywhispercpp": lambda: smoke_system_info("_pywhispercpp", "system_info"),
}


def main(argv):
    facts, dist = package_facts(argv[1])
    emit("package", **facts)
    if dist is None:
        return 0
    if not child_after.import_after(child_after.after_modules(argv[2] if len(argv) > 2 else ""), emit):
        emit("done")
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
    load_records = load_all(facts["libraries"])
    emit("load", libraries=load_records)
    child_after.emit_runtimes(emit)
    key = re.sub(r"[-_.]+", "-", facts["name"]).lower()
    smoke = smoke_torch if uses_torch else None
    if smoke is None:
        path, g = ggml_api([rec["path"] for rec in load_records if rec.get("ok")])
        smoke = (lambda: smoke_ggml(path, g)) if g else SMOKE.get(key)
    if smoke is not None:
        try:
            emit("smoke", ok=True, **smoke())
        except BaseException as exc:
            emit("smoke", ok=False, error_type=type(exc).__name__, error=str(exc)[:2000])
    emit("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
