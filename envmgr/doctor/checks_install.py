"""Checks of the installed llama_cpp and pip's wheel cache (F14, F15, F18, F19)."""

from __future__ import annotations

import re

from envmgr.binaries.dll import resolve_pe
from envmgr.doctor.checks import FAIL, OK, SKIPPED, WARN, Facts, Finding, check, finding
from envmgr.errors import InputFileError
from envmgr.files.wheelzip import BadWheel, member_names
from envmgr.host.base import WINDOWS, Host, join, safe_listdir

CUDA_LIB = re.compile(r"^(lib)?ggml-cuda\.(dll|so)", re.I)
_WHEEL = re.compile(r"^llama_cpp_python-([^-]+)-.*\.whl$", re.I)
MAX_WHEEL = 48 * 1024 * 1024


def llama_lib_dir(facts: Facts) -> str | None:
    """The folder llama_cpp loads from: LLAMA_CPP_LIB_PATH, else site-packages/llama_cpp/lib."""
    override = facts.env.get("LLAMA_CPP_LIB_PATH")
    if override:
        return override
    py = facts.python
    for site in py.site_packages if py is not None else ():
        lib = join(facts.host, site, "llama_cpp", "lib")
        if facts.host.is_dir(lib):
            return lib
    return None


def lib_files(facts: Facts) -> tuple[str | None, list[str]]:
    lib = llama_lib_dir(facts)
    names, _ = safe_listdir(facts.host, lib) if lib else ([], None)
    return lib, names


@check("F18")
def f18(facts: Facts) -> Finding:
    lib, names = lib_files(facts)
    if lib is None:
        return finding("F18", SKIPPED, "llama_cpp is not installed in this Python")
    ev = [f"{lib}: {', '.join(names) or '(empty)'}"]
    if any(CUDA_LIB.match(n) for n in names):
        return finding("F18", OK, "the installed llama_cpp has the CUDA backend (ggml-cuda)", ev)
    status = FAIL if facts.inv.gpus else WARN
    return finding(
        "F18",
        status,
        "the installed llama_cpp is a CPU-only build (no ggml-cuda library)",
        ev,
        fix="reinstall without pip's cache in a prepared shell (CMAKE_ARGS=-DGGML_CUDA=on)",
        fix_command="pip install --no-cache-dir --force-reinstall --verbose llama-cpp-python",
    )


def pip_cache_dir(facts: Facts) -> str | None:
    env = facts.env
    if env.get("PIP_CACHE_DIR"):
        return env["PIP_CACHE_DIR"]
    if facts.windows:
        base = env.get("LOCALAPPDATA")
        return join(facts.host, base, "pip", "Cache") if base else None
    base = env.get("XDG_CACHE_HOME") or (join(facts.host, env["HOME"], ".cache") if env.get("HOME") else None)
    return join(facts.host, base, "pip") if base else None


def cached_wheels(host: Host, wheels_dir: str, budget: int = 4000) -> list[str]:
    """Every llama_cpp_python wheel under pip's wheels/ (ab/cd/ef/<hash>/name.whl), listing at most `budget` folders."""
    found, stack = [], [wheels_dir]
    while stack and budget > 0:
        folder = stack.pop()
        budget -= 1
        names, _ = safe_listdir(host, folder)
        for name in names:
            full = join(host, folder, name)
            if name.endswith(".whl"):
                if _WHEEL.match(name):
                    found.append(full)
            elif "." not in name:
                stack.append(full)
    return found


def wheel_has_cuda(host: Host, path: str) -> bool | None:
    """True/False from the wheel's file list; None when too big to open (CUDA wheels are hundreds of MiB)."""

    try:
        if host.stat(path).size > MAX_WHEEL:
            return None
        names = member_names(host.read_bytes(path), path)
    except (OSError, BadWheel):
        return None
    return any(CUDA_LIB.match(n.rsplit("/", 1)[-1]) for n in names)


@check("F19")
def f19(facts: Facts) -> Finding:
    if facts.env.get("PIP_NO_CACHE_DIR", "").lower() in ("1", "true", "yes", "on"):
        return finding("F19", OK, "PIP_NO_CACHE_DIR is set: pip will not reuse a cached wheel")
    cache = pip_cache_dir(facts)
    if not cache:
        return finding("F19", SKIPPED, "pip's cache folder is unknown (no HOME/LOCALAPPDATA)")
    wheels = cached_wheels(facts.host, join(facts.host, cache, "wheels"))
    if not wheels:
        return finding("F19", OK, f"pip's wheel cache ({cache}) holds no llama-cpp-python wheel")
    ev, cpu = [], []
    for w in wheels:
        has = wheel_has_cuda(facts.host, w)
        ev.append(f"{w}: {'CUDA' if has else 'CPU-only' if has is False else 'large, presumably CUDA'}")
        if has is False:
            cpu.append(w.replace("\\", "/").rsplit("/", 1)[-1])
    if cpu:
        return finding(
            "F19",
            WARN,
            f"pip's wheel cache holds CPU-only {', '.join(sorted(set(cpu)))}: pip install "
            "llama-cpp-python would reinstall it instead of building with CUDA",
            ev,
            fix="remove it from pip's cache, or install with --no-cache-dir --force-reinstall",
            fix_command="pip cache remove llama_cpp_python",
        )
    return finding("F19", OK, "pip's cached llama-cpp-python wheels have the CUDA backend", ev)


@check("F15", WINDOWS)
def f15(facts: Facts) -> Finding:
    lib, names = lib_files(facts)
    if lib is None:
        return finding("F15", SKIPPED, "llama_cpp is not installed in this Python")
    target = next((n for n in ("llama.dll", "libllama.dll") if n in names), None)
    if target is None:
        return finding(
            "F15",
            FAIL,
            f"{lib} has no llama.dll (Shared library with base name 'llama' not found)",
            [f"{lib}: {', '.join(names) or '(empty)'}"],
            fix_command="pip install --no-cache-dir --force-reinstall --verbose llama-cpp-python",
        )
    try:
        report = resolve_pe(
            facts.host,
            join(facts.host, lib, target),
            python_exe=facts.python.executable if facts.python else None,
            base_dir=lib,
        )
    except InputFileError as exc:
        return finding("F15", FAIL, exc.message, [lib])
    missing, bad = report.missing(), report.unloadable()
    if report.loads:
        return finding(
            "F15", OK, f"every DLL {target} needs resolves (as llama_cpp's loader searches)", [report.loader]
        )
    if report.blocked:
        return finding(
            "F15",
            FAIL,
            f"import llama_cpp stops before loading {target}",
            [report.blocked, report.loader],
            fix="correct or unset CUDA_PATH/HIP_PATH (F16)",
            fix_command="envmgr shell",
        )
    ev = [f"{m.name}: {m.why}" for m in missing] + [f"{m.name} ({m.path}): {m.bad}" for m in bad] + [report.loader]
    what = "; ".join(
        x
        for x in (
            ", ".join(m.name for m in missing) and f"{', '.join(m.name for m in missing)} not found",
            ", ".join(m.name for m in bad) and f"{', '.join(m.name for m in bad)} cannot load",
        )
        if x
    )
    return finding(
        "F15",
        FAIL,
        f"{what}: import llama_cpp fails ('Could not find module ... (or one of its dependencies)')",
        ev,
        fix="put the matching CUDA bin (and bin\\x64 for CUDA 13) on PATH; see envmgr doctor --dll llama_cpp",
        fix_command=f"envmgr shell --cuda {facts.cuda.short}" if facts.cuda else "envmgr shell",
    )


@check("F14")
def f14(facts: Facts) -> Finding:
    return finding(
        "F14",
        SKIPPED,
        "needs the installed package's llama_print_system_info() (a run); "
        "envmgr doctor --log FILE recognises the runtime message",
    )
