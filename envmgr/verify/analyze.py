"""From what the child reported to a verdict: one Step per question, each failure with its catalog id,
its evidence and the command that fixes it. Pure (tests feed recorded child output).

The questions, in order: is the package installed; did its library load, and from where (F15/F16/F23
when not); is the backend CUDA or CPU only (F18); were its CUDA architectures built for the GPUs here
(F14); which CUDA devices does the backend see (F12/F17 when none); did the tiny model run with every
layer on the GPU, as counted by llama.cpp's own `offloaded N/N layers to GPU` (F18/F14 when not).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from envmgr.binaries.gpufit import Fit
from envmgr.catalog import FailureId
from envmgr.discover.model import Gpu
from envmgr.verify.report import ChildRun, death, log_tail

OK, WARN, FAIL, SKIPPED = "ok", "warn", "fail", "skipped"
_CUDA_LIB = re.compile(r"^(lib)?ggml-cuda\.(dll|so)", re.I)


@dataclass(frozen=True)
class Step:
    name: str  # package | library | backend | archs | devices | offload
    status: str  # ok | warn | fail | skipped
    summary: str
    evidence: tuple[str, ...] = ()
    failure: FailureId | Literal[""] = ""  # catalog id (facts/failures.md) when it failed for a known reason
    fix: str = ""
    fix_command: str = ""


@dataclass(frozen=True)
class Inputs:
    run: ChildRun
    python: str  # the target interpreter, as given
    install_command: str  # `envmgr install llama-cpp-python [--python PY]`
    gpus: tuple[Gpu, ...] = ()  # from nvidia-smi
    gpu_problems: tuple[str, ...] = ()
    n_tokens: int = 8
    dll_evidence: tuple[str, ...] = ()  # doctor --dll's diagnosis when the library did not load
    dll_command: str = ""
    fits: tuple[Fit, ...] = ()  # binaries.gpufit.Fit per GPU, from the device code of the libraries in lib_dir
    device_summary: str = ""  # that device code in one line ("cubin sm_90; PTX compute_90")


def analyze(i: Inputs) -> tuple[Step, ...]:
    steps: list[Step] = []
    for check in (_package, _library, _backend, _archs, _device_code, _devices, _offload):
        step = check(i, steps)
        if step is not None:
            steps.append(step)
        if steps and steps[-1].status == FAIL and steps[-1].name in ("package", "library"):
            break
    return tuple(steps)


def first_failure(steps: tuple[Step, ...]) -> Step | None:
    """The step that stopped a verification, if one did."""
    return next((s for s in steps if s.status == FAIL), None)


def passed(steps: tuple[Step, ...]) -> bool:
    """The GPU did the work: nothing failed and the offload was counted."""
    return all(s.status != FAIL for s in steps) and any(s.name == "offload" and s.status == OK for s in steps)


def _died(i: Inputs, during: str) -> Step | None:
    how = death(i.run.returncode, i.run.timed_out)
    if not how:
        return None
    return Step(
        during,
        FAIL,
        f"the child Python {how} while {_DOING.get(i.run.last_stage, 'starting')}",
        (f"last stage reported: {i.run.last_stage or '(none)'}", *log_tail(i.run.log)),
        fix="run `envmgr doctor` and `envmgr doctor --dll llama_cpp`; a crash in the library itself is "
        "a broken or mismatched build: reinstall it",
        fix_command=i.install_command,
    )


_DOING = {
    "": "starting",
    "package": "importing llama_cpp (loading its library)",
    "import": "asking the backend",
    "after": "importing llama_cpp after the --after modules",
    "runtimes": "asking the backend",
    "backend": "listing devices (CUDA initialisation)",
    "devices": "loading the model",
    "libraries": "loading the model",
    "loaded": "generating tokens",
    "generated": "shutting down",
}


def _package(i: Inputs, _steps: list[Step]) -> Step:
    pkg = i.run.get("package")
    if not pkg:
        died = _died(i, "package")
        if died:
            return died
        return Step(
            "package",
            FAIL,
            "the child Python reported nothing",
            log_tail(i.run.log, 12),
            fix="check that this is a working Python",
        )
    if not pkg.get("found"):
        return Step(
            "package",
            FAIL,
            f"llama-cpp-python is not installed in {i.python}",
            (f"python {pkg.get('version')} ({pkg.get('python')}): `import llama_cpp` finds no module",),
            fix="install it with a CUDA build",
            fix_command=i.install_command,
        )
    ver = pkg.get("dist_version") or "(no distribution metadata)"
    return Step(
        "package",
        OK,
        f"llama-cpp-python {ver} in {pkg.get('package_dir')}",
        (f"python {pkg.get('version')} ({pkg.get('python')})",),
    )


def _library(i: Inputs, _steps: list[Step]) -> Step:
    pkg, imp = i.run.get("package"), i.run.get("import")
    lib_dir = pkg.get("lib_dir") or "?"
    listing = f"{lib_dir}: {', '.join(pkg.get('lib_files') or []) or '(empty or missing)'}"
    if not imp:
        return _died(i, "library") or Step(
            "library", FAIL, "the child stopped before importing llama_cpp", log_tail(i.run.log)
        )
    if imp.get("ok"):
        libs = [p for p in imp.get("libraries") or () if "llama" in p.lower() or "ggml" in p.lower()]
        return Step("library", OK, f"loaded {imp.get('lib_path')}", (listing, *(f"in the process: {p}" for p in libs)))
    err = f"{imp.get('error_type')}: {imp.get('error')}"
    failure, fix, cmd = _import_failure(i, err)
    missing = [e.split(" ")[1] for e in i.dll_evidence if e.startswith("missing: ")]
    what = f": {', '.join(missing)} not found" if missing else ""
    return Step(
        "library",
        FAIL,
        f"import llama_cpp failed: its library did not load{what}",
        (err, listing, *i.dll_evidence),
        failure,
        fix,
        cmd,
    )


def _import_failure(i: Inputs, err: str) -> tuple[FailureId, str, str]:
    if "WinError 3" in err or "add_dll_directory" in err:
        return "F16", "correct or unset CUDA_PATH/HIP_PATH (their bin and lib must exist)", "envmgr shell"
    if "base name 'llama' not found" in err:
        return (
            "F15",
            "the lib folder has no llama library (a broken install or a wrong LLAMA_CPP_LIB_PATH)",
            i.install_command,
        )
    if re.search(r"lib(cuda|cudart|cublas|cublasLt)\.so[.\d]*: cannot open shared object", err):
        return (
            "F23",
            "the CUDA runtime libraries are not on the loader's path: run inside `envmgr shell` or "
            "install the matching nvidia-*-cu1x wheels",
            i.dll_command or "envmgr doctor --dll llama_cpp",
        )
    return (
        "F15",
        "a library llama_cpp needs is missing or cannot load; the DLL diagnosis names which",
        i.dll_command or "envmgr doctor --dll llama_cpp",
    )


def _has_cuda_lib(i: Inputs) -> bool:
    return any(_CUDA_LIB.match(n) for n in i.run.get("package").get("lib_files") or ())


def _backend(i: Inputs, _steps: list[Step]) -> Step:
    b = i.run.get("backend")
    if not b:
        return _died(i, "backend") or Step("backend", FAIL, "the child stopped before reporting the backend")
    info = (b.get("system_info") or "").strip()
    ev = (f"llama_supports_gpu_offload() = {b.get('gpu_offload')}", f"llama_print_system_info(): {info[:300]}")
    if b.get("gpu_offload"):
        return Step("backend", OK, "CUDA backend (GPU offload supported)", ev)
    if not _has_cuda_lib(i):
        return Step(
            "backend",
            FAIL,
            "a CPU-only build: no ggml-cuda library, GPU offload unsupported",
            (*ev, f"{i.run.get('package').get('lib_dir')}: no ggml-cuda library"),
            "F18",
            "rebuild with CUDA (pip's cache or a lost CMAKE_ARGS gave a CPU wheel)",
            i.install_command,
        )
    return Step(
        "backend", FAIL, "the CUDA backend is built in but did not start", (*ev, *_cuda_evidence(i)), *_no_gpu_reason(i)
    )


def _cuda_evidence(i: Inputs) -> tuple[str, ...]:
    ev = []
    if i.run.cuda_init_error:
        ev.append(f"ggml_cuda_init: failed to initialize CUDA: {i.run.cuda_init_error}")
    ev += [
        f"nvidia-smi: GPU {g.index}: {g.name}, compute capability {g.compute_cap}, driver {g.driver_version}"
        for g in i.gpus
    ] or ["nvidia-smi: no NVIDIA GPU visible"]
    ev += [f"nvidia-smi: {p}" for p in i.gpu_problems]
    return tuple(ev)


def _no_gpu_reason(i: Inputs) -> tuple[FailureId, str, str]:
    err = i.run.cuda_init_error.lower()
    if "driver version is insufficient" in err or "unsupported display driver" in err:
        return (
            "F17",
            "update the NVIDIA driver, or use a CUDA build not newer than the driver's CUDA version",
            "envmgr doctor --only F17",
        )
    if not i.gpus:
        return (
            "F12",
            "no GPU is visible here (no driver, a container without --gpus, CUDA_VISIBLE_DEVICES): "
            "run on a machine with an NVIDIA GPU and driver",
            "nvidia-smi",
        )
    return (
        "F17",
        "the driver did not initialise CUDA for this build: check the driver against the build's CUDA",
        "envmgr doctor --only F17",
    )


def _caps(i: Inputs) -> list[str]:
    caps = [g.compute_cap for g in i.gpus if g.compute_cap]
    return caps or [cc for _, _, cc in i.run.devices]


def _archs(i: Inputs, steps: list[Step]) -> Step | None:
    if not i.run.get("backend").get("gpu_offload"):
        return None
    caps, archs = _caps(i), i.run.archs
    if not archs:
        return Step("archs", SKIPPED, "the library does not report its CUDA architectures")
    built = ", ".join(f"sm_{a // 10}" for a in archs)
    if not caps:
        return Step("archs", SKIPPED, f"built for {built}; no GPU to compare with")
    bad: list[str] = []
    ptx: list[str] = []
    for cc in dict.fromkeys(caps):
        major, minor = (int(x) for x in cc.split("."))
        own = major * 100 + minor * 10
        if any(a // 100 == major and a <= own for a in archs):
            continue
        (ptx if any(a <= own for a in archs) else bad).append(cc)
    ev = (
        f"built for {built} (CUDA : ARCHS = {','.join(map(str, archs))})",
        f"GPUs: compute capability {', '.join(caps)}",
    )
    if bad:
        return Step(
            "archs",
            FAIL,
            f"no kernel image for compute capability {', '.join(bad)}",
            ev,
            "F14",
            "rebuild for this GPU's architecture",
            i.install_command,
        )
    if ptx:
        return Step(
            "archs",
            WARN,
            f"compute capability {', '.join(ptx)} runs only through PTX JIT (if PTX was embedded): slow first start",
            ev,
            "F14",
            "rebuild for this GPU's architecture",
            i.install_command,
        )
    return Step("archs", OK, f"built for {built}: covers compute capability {', '.join(dict.fromkeys(caps))}", ev)


def _device_code(i: Inputs, _steps: list[Step]) -> Step | None:
    """How each GPU runs the device code read from the libraries themselves (cubin vs PTX: ARCHS cannot tell)."""
    if not i.fits:
        return None
    ev = (f"device code: {i.device_summary}", *(f"{f.gpu}: {f.detail}" for f in i.fits))
    none = [f for f in i.fits if f.how == "none"]
    if none:
        return Step(
            "device_code", FAIL, none[0].detail, ev, "F14", "rebuild for this GPU's architecture", i.install_command
        )
    jit = [f for f in i.fits if f.how == "ptx-jit"]
    if jit:
        return Step(
            "device_code",
            WARN,
            f"runs through PTX JIT from {jit[0].via} on {jit[0].gpu}: a slower first "
            "run (the driver compiles it), native code needs a build for this architecture",
            ev,
            "F14",
            "rebuild for this GPU's architecture",
            i.install_command,
        )
    return Step("device_code", OK, f"native cubin for every GPU here ({', '.join(f.via for f in i.fits)})", ev)


def _devices(i: Inputs, _steps: list[Step]) -> Step | None:

    if not i.run.get("backend").get("gpu_offload"):
        return None
    d = i.run.get("devices")
    cuda = [x for x in d.get("devices") or () if str(x.get("name", "")).upper().startswith("CUDA")]
    ev = tuple(
        f"{x.get('name')}: {x.get('description')}"
        + (f", {x['memory_total'] // 2**20} MiB" if x.get("memory_total") else "")
        for x in d.get("devices") or ()
    )
    ev += tuple(x for x in (i.run.cuda_found,) if x)
    if cuda:
        names = ", ".join(str(x.get("description")) for x in cuda)
        return Step("devices", OK, f"{len(cuda)} CUDA device(s): {names}", ev)
    if not d.get("available") and i.run.cuda_found and not i.run.cuda_found.startswith("ggml_cuda_init: found 0"):
        return Step("devices", OK, i.run.cuda_found, ev)
    return Step("devices", FAIL, "the backend sees no CUDA device", (*ev, *_cuda_evidence(i)), *_no_gpu_reason(i))


def _offload(i: Inputs, steps: list[Step]) -> Step:
    ev = [f"llama.cpp: offloaded {a}/{b} layers to GPU" for a, b in i.run.offloaded]
    died = _died(i, "offload")
    if any(s.status == FAIL and s.name in ("backend", "devices") for s in steps):
        extra = (
            f"; the tiny model's run on the CPU: the child {death(i.run.returncode, i.run.timed_out)}" if died else ""
        )
        return Step(
            "offload",
            SKIPPED,
            f"nothing can be offloaded without a working CUDA backend{extra}",
            (*ev, *(died.evidence if died else ())),
        )
    ev += [f"llama.cpp: {n} model buffer size = {s:.2f} MiB" for n, s in i.run.buffers]
    gen = i.run.get("generated")
    if gen:
        ev.append(
            f"{len(gen.get('tokens') or [])} tokens generated in {gen.get('gen_seconds')} s "
            f"(load {i.run.get('loaded').get('load_seconds')} s)"
        )
    if i.run.kernel_error:
        return Step(
            "offload",
            FAIL,
            f"CUDA: {i.run.kernel_error}",
            (*ev, *i.run.cuda_errors),
            "F14",
            "rebuild for this GPU's architecture",
            i.install_command,
        )
    if died:
        return Step("offload", FAIL, died.summary, (*ev, *died.evidence), "", died.fix, died.fix_command)
    err = i.run.get("model_error")
    if err:
        return Step(
            "offload",
            FAIL,
            f"the tiny model did not run: {err.get('error_type')}: {err.get('error')}",
            (*ev, *i.run.cuda_errors, *log_tail(i.run.log, 6)),
        )
    full = [(a, b) for a, b in i.run.offloaded if a == b and a > 0]
    if not i.run.offloaded:
        return Step("offload", FAIL, "llama.cpp reported no offload at all", (*ev, *log_tail(i.run.log, 6)), "F18")
    if not full:
        a, b = i.run.offloaded[-1]
        return Step(
            "offload",
            FAIL,
            f"only {a}/{b} layers went to the GPU",
            tuple(ev),
            "F18",
            "a CPU build, or CUDA did not start: see the steps above",
            i.install_command,
        )
    n = len((gen or {}).get("tokens") or [])
    if n < i.n_tokens:
        return Step("offload", FAIL, f"{n} of {i.n_tokens} tokens generated", tuple(ev))
    a, b = full[-1]
    return Step("offload", OK, f"offloaded {a}/{b} layers to GPU (llama.cpp's count), {n} tokens generated", tuple(ev))
