"""`envmgr verify PACKAGE` for any installed distribution: from what child_any.py reported, the device
code read from the package's binaries and the GPUs here, to steps and a level of proof. Pure.

The questions, in order: is it installed; did its modules import (a crash: the child's signal); has it
native libraries at all; did each load with the real loader (doctor --dll's diagnosis when not); is
there CUDA in them (device code or a CUDA import); can this machine's GPUs run that device code
(native cubin, PTX JIT, or not at all: F14; no GPU: F12); and the package's own smoke test where
there is one. Levels of proof, weakest first: `loaded` (no smoke test for this package: it loads and
its device code suits the GPU), `reported` (the library itself reports a CUDA backend), `ran` (work
ran on the GPU: a tensor computed through torch with the extension loaded).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from envmgr.binaries.devicecode import DeviceCode
from envmgr.binaries.gpufit import NATIVE, NONE, PTX_JIT, Fit
from envmgr.verify.analyze import FAIL, OK, WARN, Step
from envmgr.verify.report import ChildRun, death, log_tail

LOADED, REPORTED, RAN = "loaded", "reported", "ran"
# Words a ggml-based library's system info uses for its backends (whisper.cpp: "CUDA = 1", "COREML = 0";
# ggml's backend registry: "CUDA : ARCHS = 890", "CPU : SSE3 = 1"); a text with none of them names none.
_CUDA_ON = re.compile(r"\bCUDA\s*(?:=\s*[1-9]|:)", re.IGNORECASE)  # "CUDA = 1", "CUDA : ARCHS = ..."; not "CUDA = 0"
BACKEND_WORDS = ("CUDA", "CPU :", "METAL", "VULKAN", "COREML", "OPENVINO", "BLAS", "SYCL", "HIP", "CANN", "MUSA")
PROOF_WORDS = {
    LOADED: "it imports, its libraries load and its device code suits the GPU (no smoke test for this package)",
    REPORTED: "the library reports its CUDA backend, its libraries load and its device code suits the GPU",
    RAN: "work ran on the GPU through it",
}


@dataclass(frozen=True)
class AnyInputs:
    run: ChildRun
    package: str
    code: DeviceCode | None = None  # read by the parent from the libraries the child listed
    fits: tuple[Fit, ...] = ()  # per GPU here
    gpu_lines: tuple[str, ...] = ()  # nvidia-smi's GPUs (or its problem), as evidence
    dll_evidence: tuple[str, ...] = ()  # doctor --dll on the first library that did not load
    dll_command: str = ""
    host_platform: str = ""  # "linux" / "win32": a library of the other platform never loads


def judge(i: AnyInputs) -> tuple[tuple[Step, ...], str]:
    """(steps, level of proof reached: "" when not verified)."""
    steps: list[Step] = []
    for check in (_package, _imports, _native, _load, _cuda, _gpu, _smoke):
        step = check(i)
        if step is not None:
            steps.append(step)
            if step.status == FAIL:
                break
    if any(s.status == FAIL for s in steps) or not any(s.name == "gpu" and s.status in (OK, WARN) for s in steps):
        return tuple(steps), ""
    smoke = next((s for s in steps if s.name == "smoke"), None)
    level = LOADED if smoke is None or smoke.status == WARN else RAN if "ran on the GPU" in smoke.summary else REPORTED
    return tuple(steps), level


def _died(i: AnyInputs, name: str) -> Step | None:
    how = death(i.run.returncode, i.run.timed_out)
    if not how:
        return None
    doing = {
        "": "starting",
        "package": "importing the package",
        "import": "importing the package",
        "loading": "loading a native library with the real loader",
        "load": "running its smoke test",
        "after": "importing the package after the --after modules",
        "runtimes": "running its smoke test",
        "smoke-start": "computing on the GPU through the package's own ggml",
        "smoke": "shutting down",
    }.get(i.run.last_stage, "running")
    return Step(
        name,
        FAIL,
        f"the child Python {how} while {doing}",
        (f"last stage reported: {i.run.last_stage or '(none)'}", *log_tail(i.run.log)),
        fix="a crash inside the package's own library: a broken or mismatched build; rebuild it",
        fix_command=f"envmgr doctor --dll {i.package}",
    )


def _package(i: AnyInputs) -> Step:
    pkg = i.run.get("package")
    if not pkg:
        return _died(i, "package") or Step(
            "package", FAIL, "the child Python reported nothing", log_tail(i.run.log, 12)
        )
    if not pkg.get("found"):
        return Step(
            "package",
            FAIL,
            f"{i.package} is not installed in {pkg.get('python')}",
            fix="install it into that Python (a CUDA build: envmgr install --recipe NAME SPEC)",
            fix_command=f"{pkg.get('python')} -m pip install {i.package}",
        )
    libs = pkg.get("libraries") or []
    return Step(
        "package",
        OK,
        f"{pkg.get('name')} {pkg.get('version')}: {len(libs)} native librar"
        f"{'y' if len(libs) == 1 else 'ies'}, modules {', '.join(pkg.get('modules') or []) or '(none)'}",
        tuple(libs[:8]),
    )


def _imports(i: AnyInputs) -> Step | None:
    records = i.run.records("import")
    bad = [r for r in records if not r.get("ok")]
    died = _died(i, "import") if i.run.last_stage in ("package", "import") else None
    if died:
        return died
    if bad:
        ev = tuple(f"{r.get('module')}: {r.get('error')}"[:400] for r in bad)
        return Step(
            "import",
            FAIL,
            f"import {bad[0].get('module')} failed: {bad[0].get('error_type')}: {str(bad[0].get('error'))[:300]}",
            ev,
            fix="its native libraries or their dependencies do not load (see doctor --dll)",
            fix_command=i.dll_command,
        )
    if not records:
        return None
    return Step("import", OK, f"imported {', '.join(str(r.get('module')) for r in records)}")


def _native(i: AnyInputs) -> Step | None:
    """No native library: a CPU-only install, unless RECORD names libraries that are gone (a damaged install) or
    there is no RECORD at all (audit N21: both were called "pure-Python or CPU-only")."""
    pkg = i.run.get("package")
    libs, missing = pkg.get("libraries") or [], pkg.get("missing") or []
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        return Step(
            "native",
            FAIL,
            f"RECORD lists {_base(missing[0])}{more}, which is missing: a damaged install",
            tuple(f"missing: {m}" for m in missing[:8]),
            fix="reinstall it (a copy, an upgrade or a cleanup removed files it installed)",
            fix_command=f"{pkg.get('python') or 'python'} -m pip install --force-reinstall --no-deps "
            f"{pkg.get('name') or i.package}",
        )
    if pkg.get("record") is False:
        if libs:
            return Step(
                "native",
                WARN,
                f"no RECORD: {len(libs)} native librar{'y' if len(libs) == 1 else 'ies'} "
                "found by looking in the package folder were not listed",
                ("an editable, conda or distutils install has no RECORD", *libs[:8]),
            )
        return Step(
            "native",
            FAIL,
            "no RECORD, and no native library in the package folder",
            ("an editable, conda or distutils install has no RECORD: its package folder was searched",),
            fix="reinstall it with pip, or build the CUDA variant (envmgr install --recipe NAME SPEC)",
        )
    if libs:
        return None
    return Step(
        "native",
        FAIL,
        "no native libraries: nothing runs on the GPU",
        ("the distribution's RECORD lists no .so/.pyd/.dll file",),
        fix="a pure-Python or CPU-only install: build the CUDA variant (envmgr install --recipe NAME SPEC)",
    )


def _base(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _load(i: AnyInputs) -> Step | None:
    died = _died(i, "load") if i.run.last_stage in ("load", "loading") or not i.run.get("load") else None
    if died:
        where = i.run.get("loading").get("path") if i.run.last_stage == "loading" else None
        ev = ((f"it died loading {where}",) if where else ()) + tuple((i.code or DeviceCode()).problems[:4])
        return Step("load", FAIL, died.summary, ev + died.evidence, "F23" if where else "", died.fix, died.fix_command)
    libs = i.run.get("load").get("libraries") or []
    bad = [r for r in libs if not r.get("ok")]
    if bad:
        ev = tuple(f"{r.get('path')}: {r.get('error')}"[:500] for r in bad) + i.dll_evidence
        return Step(
            "load",
            FAIL,
            f"{len(bad)} of {len(libs)} native libraries do not load",
            ev,
            "F23",
            "doctor --dll names the missing dependency and where the loader looked",
            i.dll_command,
        )
    return Step(
        "load",
        OK,
        f"{len(libs)} native librar{'y' if len(libs) == 1 else 'ies'} loaded by the real loader",
        tuple(f"{r.get('how')}: {r.get('path')}" for r in libs[:6]),
    )


def _cuda(i: AnyInputs) -> Step:
    code = i.code or DeviceCode()
    ev = tuple(
        f"{b.name}: {', '.join(b.cubin + b.ptx) or 'no device code'}"
        f"{'; imports ' + ', '.join(b.cuda_imports) if b.cuda_imports else ''}"
        for b in code.binaries[:8]
    )
    ev += tuple(code.problems[:4]) + tuple(f"not read: {s}" for s in code.skipped[:4])
    if not code.is_cuda:
        return Step(
            "cuda",
            FAIL,
            "a CPU-only build: no device code and no CUDA library import in its native libraries",
            ev,
            "F18",
            "rebuild it with CUDA (envmgr install --recipe NAME SPEC)",
        )
    return Step("cuda", OK, f"device code: {code.summary()}", ev)


def _gpu(i: AnyInputs) -> Step:
    code = i.code or DeviceCode()
    if not (code.cubin or code.ptx):
        return Step(
            "gpu",
            OK if i.gpu_lines and not i.gpu_lines[0].startswith("nvidia-smi: no") else FAIL,
            "no device code of its own: it runs CUDA through the libraries it imports",
            i.gpu_lines,
        )
    if not i.fits:
        return Step(
            "gpu",
            FAIL,
            f"no NVIDIA GPU here: the device code ({code.summary()}) cannot run on this machine",
            i.gpu_lines,
            "F12",
            "run it on a machine with an NVIDIA GPU and driver",
            "nvidia-smi",
        )
    ev = tuple(f"{f.gpu}: {f.detail}" for f in i.fits) + i.gpu_lines
    none = [f for f in i.fits if f.how == NONE]
    if none:
        return Step(
            "gpu",
            FAIL,
            none[0].detail,
            ev,
            "F14",
            "rebuild for this GPU's architecture (envmgr install --recipe NAME --cuda-arch ...)",
        )
    jit = [f for f in i.fits if f.how == PTX_JIT]
    if jit:
        return Step(
            "gpu",
            WARN,
            f"runs through PTX JIT on {', '.join(f.gpu for f in jit)} (from {jit[0].via}): slower first run",
            ev,
            "F14",
            "rebuild for this GPU's architecture for native code",
        )
    return Step("gpu", OK, "; ".join(sorted({f"{f.gpu}: {f.how} ({f.via})" for f in i.fits if f.how == NATIVE})), ev)


def _smoke(i: AnyInputs) -> Step | None:
    rec = i.run.get("smoke")
    if not rec:
        return _died(i, "smoke")
    if not rec.get("ok"):
        return Step(
            "smoke",
            FAIL,
            f"its smoke test failed: {rec.get('error_type')}: {str(rec.get('error'))[:300]}",
            log_tail(i.run.log),
        )
    if rec.get("kind") == "ggml":
        return _smoke_ggml(i, rec)
    if rec.get("kind") == "torch":
        ev = (f"torch {rec.get('torch')} (CUDA {rec.get('torch_cuda')}), device {rec.get('device')}",)
        if rec.get("cuda_available") and rec.get("tensor_sum_on_gpu") == 8.0:
            return Step(
                "smoke",
                OK,
                "torch.cuda.is_available() in the process that loaded it, and a tensor "
                "computed on the GPU: ran on the GPU",
                ev,
            )
        return Step(
            "smoke",
            FAIL,
            "torch.cuda.is_available() is False in the process that loaded it",
            ev,
            "F17",
            "check the driver against torch's CUDA (envmgr doctor)",
            "envmgr doctor",
        )
    info = str(rec.get("system_info") or "")
    ev = (f"{rec.get('function')}(): {info[:300]}",)
    if _CUDA_ON.search(info):
        return Step("smoke", OK, "its system info names CUDA", ev)
    if not any(word in info.upper() for word in BACKEND_WORDS):
        # stable-diffusion-cpp-python 0.4.7's sd_get_system_info() lists CPU features only, in a CUDA
        # build as in a CPU one (bench/results/2026-11-25-issue21-gpu-proof.md, H100): it cannot tell.
        return Step(
            "smoke",
            WARN,
            "its system info lists CPU features only, no backends: it cannot show which "
            "backend runs (the device code above is the evidence)",
            ev,
        )
    return Step(
        "smoke",
        FAIL,
        "its system info lists backends and CUDA is not one: a CPU backend",
        ev,
        "F18",
        "rebuild it with CUDA (envmgr install --recipe NAME SPEC)",
    )


def _smoke_ggml(i: AnyInputs, rec: dict[str, Any]) -> Step:
    """ggml's own backend registry in the package's library: its devices, and a + b on its CUDA device."""
    devices = [str(d) for d in rec.get("devices") or []][:16]
    ev = (f"ggml in {rec.get('library')}", *(f"ggml device {d}" for d in devices))
    on = rec.get("computed_on")
    if not on:
        return Step(
            "smoke",
            FAIL,
            f"its ggml lists {len(devices)} device(s) and no CUDA one although this "
            "machine has an NVIDIA GPU: it runs on the CPU",
            ev + log_tail(i.run.log, 6),
            "F18",
            "a CUDA build whose CUDA backend found no device (the log above says why), or no CUDA "
            "backend at all: rebuild it with CUDA (envmgr install --recipe NAME SPEC)",
            "envmgr doctor",
        )
    if rec.get("status") == 0 and rec.get("result") == [2.0, 4.0, 6.0, 8.0]:
        return Step("smoke", OK, f"its own ggml computed [1,2,3,4] + [1,2,3,4] on {on}: ran on the GPU", ev)
    return Step(
        "smoke",
        FAIL,
        f"its ggml on {on} returned status {rec.get('status')} and {rec.get('result')} for [1,2,3,4] + [1,2,3,4]",
        ev + log_tail(i.run.log, 6),
        "",
        "a broken CUDA backend: check the driver against its CUDA (envmgr doctor)",
        "envmgr doctor",
    )
