"""The check runner: gather facts once, run every applicable check concurrently, render text or JSON."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from envmgr.binaries.dll import DepNode, DepReport, resolve_pe
from envmgr.binaries.dllsyms import entry_json, entry_lines
from envmgr.binaries.elf import resolve_elf
from envmgr.binaries.runtimes import Duplicate, duplicates
from envmgr.catalog import CATALOG, Failure, FailureId, is_failure_id
from envmgr.discover import discover
from envmgr.discover.limits import read_limits
from envmgr.discover.model import CudaToolkit, Inventory, VsInstance

# Importing the modules registers their checks.
from envmgr.doctor import checks_components, checks_cuda, checks_env, checks_install, checks_linux, checks_vs  # noqa: F401 - imported to register checks
from envmgr.doctor.checks import CHECKS, FAIL, OK, SEVERITY, SKIPPED, WARN, Facts, Finding, finding
from envmgr.doctor.checks_env import stray_compilers
from envmgr.errors import EnvmgrError, InputFileError, UsageError
from envmgr.host.base import WINDOWS, Host, Interpreter, join, safe_listdir
from envmgr.snapshot.overrides import override_lines
from envmgr.snapshot.select import check_selectors, choose, match_cuda, match_vs
from envmgr.snapshot.selectors import Selectors, with_real_paths

SCHEMA = 1


def parse_only(only: str | None) -> tuple[FailureId, ...]:
    if not only:
        return ()
    ids = tuple(dict.fromkeys(x.strip().upper() for x in only.replace(" ", ",").split(",") if x.strip()))
    unknown = [x for x in ids if not is_failure_id(x)]
    if unknown:
        raise UsageError(
            f"unknown check id(s) for --only: {', '.join(unknown)}",
            "use catalog ids, e.g. --only F01,F15",
            details=tuple(f"{f.id}  {f.title}" for f in CATALOG.values()),
        )
    return tuple(x for x in ids if is_failure_id(x))


def gather(host: Host, selectors: Selectors, target_python: str | None = None) -> Facts:
    """Discovery, limits, cmake's version and the selection, each read once (concurrently where it reads).
    `target_python`: the interpreter whose packages the checks inspect (None: the host's own answer)."""

    selectors = with_real_paths(host, selectors)
    with ThreadPoolExecutor(max_workers=3) as pool:
        inv_f = pool.submit(discover, host)
        cmake_f = pool.submit(_cmake_version, host)
        py_f = pool.submit(host.interpreter, target_python)
        inv = inv_f.result()
        limits = read_limits(host, inv)
        cmake, python = cmake_f.result(), py_f.result()
    check_selectors(inv, selectors)  # a selector naming nothing is exit 3, not "checking for nothing"
    choice, error = None, ""
    try:
        choice = choose(inv, selectors, limits)
    except EnvmgrError as exc:
        error = exc.message
    vs = choice.vs if choice is not None else _fallback_vs(inv, selectors)
    cuda = choice.cuda if choice is not None else _fallback_cuda(inv, selectors)
    return Facts(host, inv, limits, choice, error, selectors, vs, cuda, python, cmake)


def _fallback_vs(inv: Inventory, sel: Selectors) -> VsInstance | None:
    usable = [v for v in inv.visual_studio if v.toolsets and v.vcvarsall]
    return next((v for v in usable if not sel.vs or match_vs(v, sel.vs)), None)


def _fallback_cuda(inv: Inventory, sel: Selectors) -> CudaToolkit | None:
    kits = [k for k in inv.cuda if k.nvcc] or list(inv.cuda)
    return next((k for k in kits if not sel.cuda or match_cuda(k, sel.cuda)), None)


def _cmake_version(host: Host) -> str | None:
    exe = host.which("cmake")
    if exe is None:
        return None
    done = host.run([exe, "--version"], timeout=10)
    m = re.search(r"cmake version (\d+\.\d+(?:\.\d+)?)", done.stdout) if done.ok else None
    return m.group(1) if m else None


def run_checks(facts: Facts, only: tuple[FailureId, ...] = ()) -> tuple[Finding, ...]:
    platform = facts.host.platform
    ids = only or tuple(i for i, f in CATALOG.items() if platform in f.platforms)

    def one(id_: FailureId) -> Finding:
        failure = CATALOG[id_]
        chk = CHECKS.get(id_)
        if platform not in failure.platforms or (chk is not None and platform not in chk.platforms):
            result = finding(id_, SKIPPED, f"applies to {', '.join(failure.platforms)} only")
        elif chk is None:
            result = finding(
                id_, SKIPPED, "no automatic check; `envmgr doctor --log FILE` recognises it in a build log"
            )
        else:
            try:
                result = chk.func(facts)
            except EnvmgrError as exc:
                result = finding(id_, SKIPPED, f"could not check: {exc.message}")
        return _complete(result, failure)

    with ThreadPoolExecutor(max_workers=8) as pool:
        return tuple(pool.map(one, ids))


def _complete(result: Finding, failure: Failure) -> Finding:
    """Title from the catalog; the catalog's fix where the check gave none (for warn/fail only)."""
    result = replace(result, title=failure.title)
    if result.status in (WARN, FAIL):
        if not result.fix:
            result = replace(result, fix=failure.fix)
        if not result.fix_command and failure.fix_command and "<" not in failure.fix_command:
            result = replace(result, fix_command=failure.fix_command)
    return result


def exit_code(findings: Iterable[Finding]) -> int:
    return 1 if any(f.status == FAIL for f in findings) else 0


def counts(findings: Sequence[Finding]) -> dict[str, int]:
    return {s: sum(1 for f in findings if f.status == s) for s in (OK, WARN, FAIL, SKIPPED)}


def selection_json(facts: Facts) -> dict[str, Any]:
    c = facts.choice
    return {
        "vs": facts.vs.label if facts.vs else None,
        "vs_path": facts.vs.path if facts.vs else None,
        "toolset": c.toolset.version if c is not None and c.toolset else None,
        "cuda": facts.cuda.version if facts.cuda else None,
        "cuda_path": facts.cuda.path if facts.cuda else None,
        "error": facts.choice_error or None,
    }


def report_json(facts: Facts, findings: Sequence[Finding], machine: str | None) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "platform": facts.host.platform,
        "machine": machine,
        "selection": selection_json(facts),
        "counts": counts(findings),
        "exit_code": exit_code(findings),
        "compiler_overrides": [{"name": n, "value": v, "why": w} for n, v, w in stray_compilers(facts)],
        "checks": [
            {
                "id": f.id,
                "title": f.title,
                "status": f.status,
                "summary": f.summary,
                "evidence": list(f.evidence),
                "fix": f.fix or None,
                "fix_command": f.fix_command or None,
            }
            for f in findings
        ],
    }


_STYLE = {OK: ("green",), WARN: ("yellow", "bold"), FAIL: ("red", "bold"), SKIPPED: ("dim",)}


def render(facts: Facts, findings: Sequence[Finding], paint: Callable[..., str], verbose: bool = False) -> str:
    out = []
    sel = selection_json(facts)
    picked = (
        ", ".join(
            x
            for x in (sel["vs"], sel["toolset"] and f"MSVC {sel['toolset']}", sel["cuda"] and f"CUDA {sel['cuda']}")
            if x
        )
        or "nothing"
    )
    out.append(paint(f"envmgr doctor ({facts.host.platform}): checking for {picked}", "bold"))
    if facts.choice_error:
        out.append(paint(f"  selection: {facts.choice_error}", "yellow"))
    for f in sorted(findings, key=lambda f: (-SEVERITY[f.status], f.id)):
        tag = paint(f"{f.status.upper():7}", *_STYLE[f.status])
        out.append(f"{tag} {f.id}  {f.title}: {f.summary}")
        if f.status in (WARN, FAIL) or verbose:
            out += [f"          - {line}" for line in f.evidence]
        if f.status in (WARN, FAIL):
            if f.fix:
                out.append(f"          {paint('fix:', 'yellow')} {f.fix}")
            if f.fix_command:
                out.append(f"          {paint('run:', 'cyan')} {f.fix_command}")
    out += [f"{paint('NOTE   ', 'yellow')} {line}" for line in override_lines(stray_compilers(facts))]
    c = counts(findings)
    out.append(f"{c[FAIL]} failed, {c[WARN]} warning(s), {c[OK]} ok, {c[SKIPPED]} skipped")
    return "\n".join(out) + "\n"


# ---- --dll ------------------------------------------------------------------------------------


def dll_report(
    facts_host: Host,
    target: str,
    python: Interpreter | None,
    *,
    loader: str | None = None,
    dll_dirs: tuple[str, ...] = (),
) -> DepReport:
    """`--dll PATH|llama_cpp`: the PE (Windows) or ELF (Linux) dependency tree; `loader` and `dll_dirs`
    (os.add_dll_directory folders) say how a Windows program loads it (winloader.py)."""

    base = None
    if target.lower() in ("llama_cpp", "llama-cpp", "llama-cpp-python"):
        target, base = _llama_target(facts_host, python)
    head = _head(facts_host, target)
    if head[:2] == b"MZ":
        return resolve_pe(
            facts_host,
            target,
            python_exe=python.executable if python else None,
            base_dir=base,
            loader=loader or "llama_cpp",
            dll_dirs=dll_dirs,
        )
    if head[:4] == b"\x7fELF":
        if loader or dll_dirs:
            raise UsageError(
                f"{target} is an ELF library: --loader and --add-dll-dir are for Windows DLLs",
                "drop them; the ELF search order is ld.so's",
            )
        return resolve_elf(facts_host, target)
    kind = "a Windows DLL (PE)" if facts_host.platform == WINDOWS else "an ELF shared library"
    raise InputFileError(f"{target}: not a PE or ELF file", f"give {kind}, or llama_cpp for the installed package")


def _head(host: Host, path: str) -> bytes:
    try:
        if host.is_dir(path):
            raise InputFileError(f"{path} is a folder", "give the DLL/.so file itself, or llama_cpp")
        return host.read_bytes(path)[:64]
    except FileNotFoundError:
        raise InputFileError(f"{path}: no such file", "give the path of a DLL/.so, or llama_cpp") from None
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read it ({exc.strerror or exc})", "check the path") from None


def _llama_target(host: Host, python: Interpreter | None) -> tuple[str, str]:
    lib = host.env.get("LLAMA_CPP_LIB_PATH")
    sites = python.site_packages if python is not None else ()
    if not lib:
        lib = next(
            (join(host, s, "llama_cpp", "lib") for s in sites if host.is_dir(join(host, s, "llama_cpp", "lib"))), None
        )
    if lib is None:
        raise InputFileError(
            "llama_cpp is not installed in this Python (no llama_cpp/lib in site-packages)",
            "install llama-cpp-python, or give the path of its DLL/.so",
        )
    names, _ = safe_listdir(host, lib)
    order = ("ggml-cuda.dll", "llama.dll") if host.platform == WINDOWS else ("libggml-cuda.so", "libllama.so")
    for want in order:
        if want in names:
            return join(host, lib, want), lib
    raise InputFileError(f"{lib} has none of {', '.join(order)}", "reinstall llama-cpp-python")


def tree_json(node: DepNode) -> dict[str, Any]:
    return {
        "name": node.name,
        "path": node.path,
        "found_by": node.how or None,
        "missing": node.path is None,
        "why": node.why or node.bad or None,
        "unloadable": bool(node.bad),
        "note": node.note or None,
        "children": [tree_json(c) for c in node.children],
    }


def dll_duplicates(report: DepReport) -> tuple[Duplicate, ...]:
    """Duplicate runtimes among the files this resolution would load (two OpenMP runtimes, two CUDA runtime or
    cuBLAS majors in one tree): what `verify --after` finds in a live process, read statically."""
    return duplicates(dict.fromkeys(_tree_paths(report.root)))


def _tree_paths(node: DepNode) -> Iterable[str]:
    if node.path:
        yield node.path
    for child in node.children:
        yield from _tree_paths(child)


def dll_json(report: DepReport) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "kind": report.kind,
        "loader": report.loader,
        "search": list(report.search),
        "loads": report.loads,
        "blocked": report.blocked or None,
        "ignored_dll_dirs": list(report.ignored),
        "tree": tree_json(report.root),
        "missing": [{"name": m.name, "why": m.why} for m in report.missing()],
        "unloadable": [{"name": m.name, "path": m.path, "why": m.bad} for m in report.unloadable()],
        "missing_entry_points": [entry_json(e) for e in report.entries],
        "duplicate_runtimes": [
            {"family": d.family, "what": list(d.what), "paths": list(d.paths), "fix": d.fix}
            for d in dll_duplicates(report)
        ],
    }


_ENTRY_WORDS = {"pe": "entry point(s) not found ([WinError 127])", "elf": "symbol version(s) not found"}


def render_tree(report: DepReport, paint: Callable[..., str]) -> str:
    out = [paint(report.root.name, "bold") + f"  {report.root.path}", f"loader: {report.loader}"]

    def walk(node: DepNode, prefix: str) -> None:
        for i, child in enumerate(node.children):
            last = i == len(node.children) - 1
            branch = "`-- " if last else "|-- "
            if child.path is None:
                line = f"{paint(child.name, 'red', 'bold')}  {paint('NOT FOUND', 'red')}: {child.why}"
            elif child.bad:
                line = f"{paint(child.name, 'red', 'bold')}  {child.path}  {paint('CANNOT LOAD', 'red')}: {child.bad}"
            else:
                note = f"  ({child.note})" if child.note else ""
                line = f"{child.name}  {paint(child.path, 'dim')}  [{child.how}]{note}"
            out.append(prefix + branch + line)
            walk(child, prefix + ("    " if last else "|   "))

    if report.root.bad:
        out.append(f"{paint('CANNOT LOAD', 'red')}: {report.root.bad}")
    walk(report.root, "")
    if report.blocked:
        out.append(f"{paint('BLOCKED', 'red')}: {report.blocked}")
    for entry in report.entries:
        lines = entry_lines(entry)
        out.append(
            f"{paint('ENTRY POINT NOT FOUND' if report.kind == 'pe' else 'VERSION NOT FOUND', 'red')}: {lines[0]}"
        )
        out += lines[1:]
    for dup in dll_duplicates(report):
        out += [f"{paint('DUPLICATE RUNTIMES', 'yellow')}: {dup.line}", f"  fix: {dup.fix}"]
    missing, bad = report.missing(), report.unloadable()
    out.append(
        f"{len(missing)} missing"
        + (": " + ", ".join(m.name for m in missing) if missing else "")
        + (f"; {len(bad)} cannot load: " + ", ".join(m.name for m in bad) if bad else "")
        + (
            f"; {len(report.entries)} {_ENTRY_WORDS[report.kind]}: "
            + ", ".join(f"{e.function} in {e.dll}" for e in report.entries)
            if report.entries
            else ""
        )
    )
    return "\n".join(out) + "\n"
