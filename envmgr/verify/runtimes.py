"""verify's steps for `--after`, duplicate runtimes and sonames reused from the app, from the child's records
(child_after.py). Pure but for reuse_found, which reads the package's libraries through the host; the judgements
themselves are binaries/runtimes.py (doctor --dll uses it too) and binaries/reuse.py.
"""

from __future__ import annotations

import re
from typing import Any

from envmgr.binaries.reuse import Reused, reused
from envmgr.binaries.runtimes import MAJORS, OPENMP, OPENMP_FIX, duplicates, file_name
from envmgr.binaries.winreuse import win_reused
from envmgr.host.base import LINUX, WINDOWS, Host
from envmgr.verify.analyze import FAIL, OK, WARN, Step
from envmgr.verify.report import ChildRun, death
from envmgr.wheels import defer

# libiomp5's abort when it finds another OpenMP runtime initialised (Intel's message, as users quote it).
_OMP_ABORT = re.compile(r"OMP: Error #15: Initializing [^\n]*already initialized\.?")


def after_step(records: list[dict[str, Any]], wanted: tuple[str, ...], python: str, died: str = "") -> Step | None:
    """`after`: what each --after module loaded, or the one that did not import (FAIL: the package was not
    imported after it). None without --after. `died`: how the child ended when it ended abnormally."""
    if not wanted:
        return None
    ev: list[str] = []
    for rec in records:
        module = str(rec.get("module"))
        if not rec.get("ok"):
            return Step(
                "after",
                FAIL,
                f"--after {module}: cannot import it in {python}: {rec.get('error_type')}: {rec.get('error')}",
                tuple(ev),
                fix=f"install {module} into that Python, or name the app's modules as it imports them "
                f"(--after torch,numpy); the package was not imported",
            )
        libs = [str(p) for p in rec.get("libraries") or []]
        count = rec.get("library_count", len(libs))
        version = f" {rec['version']}" if rec.get("version") else ""
        ev.append(f"{module}{version} ({rec.get('file')}) loaded {count} shared libraries")
        ev += [f"  {p}" for p in libs if any(rx.match(file_name(p)) for _, rx in (*OPENMP, *MAJORS))]
    if len(records) < len(wanted):
        how = f"the child Python {died}" if died else "the child stopped"
        return Step(
            "after",
            FAIL,
            f"--after: {how} while importing {wanted[len(records)]}",
            tuple(ev),
            fix="the app's module itself crashes in a plain process of that Python: check it alone "
            f'(python -c "import {wanted[len(records)]}")',
        )
    return Step("after", OK, f"imported first, in the same process: {', '.join(wanted)}", tuple(ev))


def package_roots(run: ChildRun) -> list[str]:
    """The package's native folders: llama_cpp's lib folder, or the folders of any package's libraries."""
    pkg = run.get("package")
    if pkg.get("lib_dir"):
        return [str(pkg["lib_dir"])]
    libs = [str(p) for p in pkg.get("libraries") or [] if isinstance(p, str)]
    return list(dict.fromkeys(p[: max(p.rfind("/"), p.rfind("\\"))] for p in libs))


def runtimes_step(record: dict[str, Any], package: str, log: str = "", roots: list[str] | None = None) -> Step | None:
    """`runtimes`: duplicates among everything loaded once the package was imported. None when the child did
    not get that far (it died, or an --after module failed), unless its log (stderr) has Intel's abort."""
    abort = _OMP_ABORT.search(log)
    if abort is not None:
        return Step(
            "runtimes",
            FAIL,
            "Intel's OpenMP runtime aborted the process: a second OpenMP runtime was already loaded",
            (abort.group(0).strip(),),
            fix=OPENMP_FIX,
        )
    if not record:
        return None
    found = duplicates([str(p) for p in record.get("modules") or []])
    if not found:
        return Step(
            "runtimes",
            OK,
            "one OpenMP runtime at most, one CUDA runtime and cuBLAS major at most "
            f"in the process with {package} loaded",
        )
    ev = tuple(d.line for d in found)
    defers = defer.plan(found, roots or [])
    fixes = tuple(dict.fromkeys([*(defer.words(d) for d in defers), *(d.fix for d in found)]))
    return Step(
        "runtimes",
        WARN,
        f"duplicate runtimes in one process: {', '.join(d.family for d in found)}",
        ev,
        fix="; or ".join(fixes) if defers else "; ".join(fixes),
        fix_command="envmgr verify --after ... --fix" if defers else "",
    )


def framed(
    steps: tuple[Step, ...], after: Step | None, runtimes: Step | None, reuse: Step | None = None
) -> tuple[Step, ...]:
    """The --after step first (what the app loaded before the package), the duplicate-runtime and soname-reuse
    checks last."""
    return (*((after,) if after else ()), *steps, *((runtimes,) if runtimes else ()), *((reuse,) if reuse else ()))


def app_libraries(records: list[dict[str, Any]]) -> dict[str, str]:
    """Each shared library an --after module loaded -> that module (the child's `after` records)."""
    return {str(p): str(rec.get("module")) for rec in records if rec.get("ok") for p in rec.get("libraries") or []}


def reuse_step(found: tuple[Reused, ...], package: str) -> Step | None:
    """`reuse`: the package's libraries bound to an app's copy of a soname or DLL name, not the copy they load
    alone (a warning with both copies: the same name can be another release, built for another runtime; on
    Windows a failure when the app's copy lacks a function the package imports: [WinError 127])."""
    if not found:
        return None
    names = ", ".join(dict.fromkeys(r.soname for r in found))
    if any("\\" in r.mapped for r in found):
        return _windows_reuse_step(found, package, names)
    folder = ":".join(dict.fromkeys(r.mapped.rsplit("/", 1)[0] for r in found))
    return Step(
        "reuse",
        WARN,
        f"{package} runs with the app's copy of {names}, not the one it loads alone",
        tuple(r.line for r in found),
        fix=(
            f"ld.so binds a soname already in the process, whatever the package's RUNPATH says. Check the "
            f"package alone with the app's copy: LD_LIBRARY_PATH={folder} envmgr verify (no --after); "
            f"if that fails too, install or build the package against the app's release of "
            f"{names} (for CUDA libraries: the toolkit release of the app's nvidia wheels), or import "
            f"the package before the app"
        ),
    )


def ran_model(run: ChildRun) -> bool:
    """The child ran the model to its tokens and ended normally."""
    return run.returncode == 0 and not run.timed_out and bool(run.get("generated").get("tokens"))


def _ended(run: ChildRun) -> str:
    if ran_model(run):
        return f"runs the model ({len(run.get('generated').get('tokens') or [])} tokens generated)"
    return f"fails too ({death(run.returncode, run.timed_out) or f'exit code {run.returncode}'})"


def alone_step(
    after: tuple[str, ...], package: str, alone: ChildRun, copies: ChildRun | None, found: tuple[Reused, ...]
) -> Step:
    """`alone`: a run that failed with --after, against the same child without the app's modules (alone) and, where
    the package reused the app's copies of sonames, alone with those copies first on LD_LIBRARY_PATH (copies): does
    the failure follow the app, and within the app, its copies?"""
    app = ", ".join(after)
    names = ", ".join(dict.fromkeys(r.soname for r in found))
    ev = [f"the same child without --after: {_ended(alone)}"]
    if copies is not None:
        ev.append(f"without --after, the app's copies of {names} first on LD_LIBRARY_PATH: {_ended(copies)}")
    if not ran_model(alone):
        return Step(
            "alone",
            WARN,
            f"{package} fails without {app} as well: the app is not the cause",
            tuple(ev),
            fix="the steps above name what fails; --after is not needed to show it",
        )
    if copies is not None and not ran_model(copies):
        return Step(
            "alone",
            FAIL,
            f"{package} fails only with {app} imported first, and alone with the app's copies of {names}: "
            "the failure follows those copies",
            tuple(ev),
            fix=f"install or build {package} against the app's release of {names} (for CUDA libraries: the "
            "toolkit release of the app's nvidia wheels), or run it in a process of its own",
        )
    cleared = f"; the app's copies of {names} are not the cause (alone with them it runs)" if copies else ""
    return Step(
        "alone",
        FAIL,
        f"{package} runs the model alone and fails only with {app} imported first{cleared}",
        tuple(ev),
        fix=f"something else {app} does in the process breaks {package} (symbols it makes global, its "
        f"threads, allocator or signal handlers): run {package} in a process of its own (a subprocess or its "
        f"server), or try importing it before {app}; report it to both projects with "
        f"`envmgr verify --after {','.join(after)} --json`",
    )


def _windows_reuse_step(found: tuple[Reused, ...], package: str, names: str) -> Step:
    """The Windows loader uses a loaded module of the same base name whatever folder it came from: the fix is
    to make the package's own copy the one loaded first, by full path; never a copy into System32."""
    lacking = [r for r in found if r.missing]
    own = ", ".join(dict.fromkeys(r.alone for r in (lacking or found)))
    first = "; ".join(f'ctypes.WinDLL(r"{p}")' for p in dict.fromkeys(r.alone for r in (lacking or found)))
    fix = (
        f"the Windows loader uses a DLL of that name already in the process, wherever it came from. Load the "
        f"package's copy first by full path, before the app's import ({first}), or import {package} before "
        f"the app; or make the package load its own copy by path under a name of its own (a delvewheel-style "
        f"name-mangled copy) so the names differ. Never copy DLLs into System32 or the app's folders"
    )
    if lacking:
        what = "; ".join(f"{r.soname} lacks {', '.join(r.missing)}" for r in lacking)
        return Step(
            "reuse",
            FAIL,
            f"{package} cannot import after the app: the app's copy of {names} is used instead of its own "
            f"({own}), and {what} ([WinError 127])",
            tuple(r.line for r in found),
            fix=fix,
        )
    return Step(
        "reuse",
        WARN,
        f"{package} runs with the app's copy of {names}, not the one it loads alone ({own})",
        tuple(r.line for r in found),
        fix=fix + "; check the package against the app's release of " + names,
    )


def reuse_found(
    host: Host, run: ChildRun, roots: list[str], after: tuple[str, ...], loader: str = "ctypes"
) -> tuple[Reused, ...]:
    """With --after: the package's NEEDED sonames (Linux) or imported DLL names (Windows) the process bound to a
    copy an --after module loaded rather than the one the loader picks for the package alone (binaries/reuse.py,
    binaries/winreuse.py). `host`: the child's (its env). loader: how the package loads its DLLs on Windows
    (binaries/winloader.py; llama_cpp's own)."""
    modules = [str(m) for m in run.get("runtimes").get("modules") or []]
    if not after or not modules or host.platform not in (LINUX, WINDOWS):
        return ()
    folders = [r for r in roots if isinstance(r, str)]
    app = app_libraries(run.records("after"))
    if host.platform == WINDOWS:
        python = run.get("package").get("python")
        return win_reused(host, modules, folders, app, str(python) if python else None, loader)
    return reused(host, modules, folders, app)
