"""Run by the TARGET Python (not envmgr's): import llama_cpp and make it prove, in its own words, where
its computation runs. Standard library only, Python 3.8 syntax: the target may not have envmgr.

    python child.py MODEL.gguf N_TOKENS [AFTER]      AFTER: verify --after's modules, comma-separated

One line per stage on stdout, `ENVMGR-VERIFY {json}`, flushed at once: when the process dies in a
stage (a segfault in CUDA init, an abort in the loader) the parent still has every earlier stage and
knows which one killed it. llama.cpp's own log goes to stderr; the parent captures it whole (only
a parent can: the C library writes to fd 2 directly).
"""

import ctypes
import json
import os
import sys
import time


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
INTERESTING = ("ggml", "llama", "cuda", "cublas", "cudart", "nvrtc", "mtmd")


def emit(stage, **data):
    data["stage"] = stage
    sys.stderr.flush()
    sys.stdout.write(TAG + json.dumps(data) + "\n")
    sys.stdout.flush()


def package_facts():
    import importlib.util

    facts = {
        "python": sys.executable,
        "version": sys.version.split()[0],
        "platform": sys.platform,
        "LLAMA_CPP_LIB_PATH": os.environ.get("LLAMA_CPP_LIB_PATH"),
    }
    try:
        spec = importlib.util.find_spec("llama_cpp")
    except (ImportError, ValueError) as exc:
        spec, facts["find_error"] = None, repr(exc)
    facts["found"] = spec is not None
    if spec is not None and spec.origin:
        pkg = os.path.dirname(spec.origin)
        facts["package_dir"] = pkg
        lib = os.environ.get("LLAMA_CPP_LIB_PATH") or os.path.join(pkg, "lib")
        facts["lib_dir"] = lib
        try:
            facts["lib_files"] = sorted(os.listdir(lib))
        except OSError as exc:
            facts["lib_files"], facts["lib_error"] = [], str(exc)
    try:
        from importlib.metadata import version

        facts["dist_version"] = version("llama_cpp_python")
    except Exception:  # not installed as a distribution (a source checkout on sys.path)
        facts["dist_version"] = None
    return facts


def loaded_libraries():
    """Shared libraries in this process whose names matter (what really loaded, and from where)."""
    seen, out = set(), []
    for p in child_after.loaded_modules():
        name = os.path.basename(p).lower()
        if p not in seen and any(k in name for k in INTERESTING):
            seen.add(p)
            out.append(p)
    return out


def ggml_devices(lib_dir, llama_lib):
    """The devices ggml's backend registry sees (name, description, memory), through its C API."""
    handles = [llama_lib]
    for name in ("libggml.so", "ggml.dll", "libggml.dylib", "libggml-base.so", "ggml-base.dll"):
        path = os.path.join(lib_dir or "", name)
        if os.path.exists(path):
            try:
                handles.append(ctypes.CDLL(path))
            except OSError:
                pass
    for h in handles:
        try:
            count, get = h.ggml_backend_dev_count, h.ggml_backend_dev_get
        except AttributeError:
            continue
        count.restype, get.restype, get.argtypes = ctypes.c_size_t, ctypes.c_void_p, [ctypes.c_size_t]
        fns = {}
        for h2 in handles:
            for fn in (
                "ggml_backend_dev_name",
                "ggml_backend_dev_description",
                "ggml_backend_dev_memory",
                "ggml_backend_dev_type",
            ):
                if fn not in fns and hasattr(h2, fn):
                    fns[fn] = getattr(h2, fn)
        for fn in ("ggml_backend_dev_name", "ggml_backend_dev_description"):
            if fn in fns:
                fns[fn].restype, fns[fn].argtypes = ctypes.c_char_p, [ctypes.c_void_p]
        devices = []
        for i in range(count()):
            dev = get(i)
            d = {"index": i}
            if "ggml_backend_dev_name" in fns:
                d["name"] = (fns["ggml_backend_dev_name"](dev) or b"").decode("utf-8", "replace")
            if "ggml_backend_dev_description" in fns:
                d["description"] = (fns["ggml_backend_dev_description"](dev) or b"").decode("utf-8", "replace")
            if "ggml_backend_dev_type" in fns:
                fns["ggml_backend_dev_type"].restype = ctypes.c_int
                fns["ggml_backend_dev_type"].argtypes = [ctypes.c_void_p]
                d["type"] = fns["ggml_backend_dev_type"](dev)
            if "ggml_backend_dev_memory" in fns:
                free, total = ctypes.c_size_t(), ctypes.c_size_t()
                fns["ggml_backend_dev_memory"].argtypes = [
                    ctypes.c_void_p,
                    ctypes.POINTER(ctypes.c_size_t),
                    ctypes.POINTER(ctypes.c_size_t),
                ]
                fns["ggml_backend_dev_memory"].restype = None
                fns["ggml_backend_dev_memory"](dev, ctypes.byref(free), ctypes.byref(total))
                d["memory_total"], d["memory_free"] = total.value, free.value
            devices.append(d)
        return {"available": True, "devices": devices}
    return {"available": False, "devices": []}


def run_model(llama_cpp, model, n_tokens):
    t0 = time.perf_counter()
    llm = llama_cpp.Llama(model_path=model, n_gpu_layers=-1, n_ctx=128, n_batch=64, seed=1, verbose=True)
    load = time.perf_counter() - t0
    emit("loaded", load_seconds=round(load, 3))
    prompt = llm.tokenize(b"hello world, the GPU is on")
    got = []
    t0 = time.perf_counter()
    for tok in llm.generate(prompt, temp=0.0):  # generate() does not stop at EOS: exactly n_tokens
        got.append(int(tok))
        if len(got) >= n_tokens:
            break
    gen = time.perf_counter() - t0
    text = llm.detokenize(got).decode("utf-8", "replace")
    emit("generated", tokens=got, prompt_tokens=len(prompt), gen_seconds=round(gen, 4), text=text)
    llm.close() if hasattr(llm, "close") else None


def main(argv):
    model, n_tokens = argv[1], int(argv[2])
    after = child_after.after_modules(argv[3] if len(argv) > 3 else "")
    facts = package_facts()
    emit("package", **facts)
    if not facts["found"]:
        return 0
    if not child_after.import_after(after, emit):
        emit("done")
        return 0
    try:
        import llama_cpp
    except BaseException as exc:  # RuntimeError (F15), FileNotFoundError (F16/F15), OSError (.so missing)
        emit(
            "import",
            ok=False,
            error_type=type(exc).__name__,
            error=str(exc)[:4000],
            winerror=getattr(exc, "winerror", None),
            libraries=loaded_libraries(),
        )
        child_after.emit_runtimes(emit)
        return 0
    low = getattr(llama_cpp, "llama_cpp", llama_cpp)
    lib = getattr(low, "_lib", None)
    emit(
        "import",
        ok=True,
        version=getattr(llama_cpp, "__version__", None),
        file=llama_cpp.__file__,
        lib_path=getattr(lib, "_name", None),
        libraries=loaded_libraries(),
    )
    child_after.emit_runtimes(emit)
    info = {}
    try:
        info["gpu_offload"] = bool(llama_cpp.llama_supports_gpu_offload())
    except Exception as exc:
        info["gpu_offload_error"] = repr(exc)
    try:
        info["system_info"] = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    except Exception as exc:
        info["system_info_error"] = repr(exc)
    emit("backend", **info)
    try:
        emit("devices", **ggml_devices(facts.get("lib_dir"), lib))
    except Exception as exc:
        emit("devices", available=False, devices=[], error=repr(exc))
    emit("libraries", libraries=loaded_libraries())
    try:
        run_model(llama_cpp, model, n_tokens)
    except Exception as exc:
        emit("model_error", error_type=type(exc).__name__, error=str(exc)[:4000])
    emit("libraries", libraries=loaded_libraries())
    emit("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
