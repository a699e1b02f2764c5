"""Before "done" on Windows: the installed llama_cpp's CUDA DLL closure under its own loader, in a plain
process of the target Python (wheels/closure.py); the fix offered, applied only with --fix, undoable with
`envmgr install --undo-dll-fix MANIFEST`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from envmgr.binaries.dllsyms import entry_json
from envmgr.cli.main import Ctx
from envmgr.commands.install_fix import FixReport
from envmgr.discover.cuda import discover_cuda
from envmgr.doctor.checks import Facts
from envmgr.host import dirs
from envmgr.host.base import WINDOWS, Host, join
from envmgr.output import say
from envmgr.verify.plain import plain_host
from envmgr.wheels import closure


class Reporting(Protocol):
    """The install flow's report, as far as the closure writes into it."""

    lines: list[str]
    fixes: FixReport
    closure: dict[str, Any] | None


_WHERE = (
    "import importlib.util, sys, sysconfig\ns = importlib.util.find_spec('llama_cpp')\n"
    "print(list(s.submodule_search_locations)[0] if s and s.submodule_search_locations else '')\n"
    "print(sysconfig.get_paths()['purelib'])\n"
)


def lib_dir(local: Host, python: str) -> tuple[str, str]:
    """(llama_cpp\\lib, site-packages) of the target Python, found without importing llama_cpp."""
    done = local.run([python, "-c", _WHERE], timeout=60)
    lines = done.stdout.splitlines() if done.ok else []
    if len(lines) < 2 or not lines[0].strip():
        return "", ""
    return join(local, lines[0].strip(), "lib"), lines[1].strip()


def close(obj: Ctx, facts: Facts | None, python: str, fix: bool, rep: Reporting) -> None:
    """Check the closure (Windows only) as a plain new process of the target Python would load it; say and
    record what is missing, the fix, and what --fix changed (then check again)."""
    local = obj.local
    if local.platform != WINDOWS:
        return
    plain, _, _ = plain_host(local)
    lib, site = lib_dir(plain, python)
    if not lib:
        return
    found = closure.check(plain, python, lib)
    rep.closure = {
        "lib_dir": lib,
        "checked": list(found.checked),
        "missing": list(found.missing),
        "why": list(found.why),
        "fix": None,
        "fixed": [],
        "missing_after": None,
        "manifest": None,
        "undo": None,
        "missing_entry_points": [entry_json(e) for e in found.entries],
        "missing_entry_points_after": None,
    }
    if not found.missing and not found.entries:
        if found.checked:
            rep.lines.append(
                f"DLL closure: the CUDA DLLs of {', '.join(found.checked)} resolve under llama_cpp's loader"
            )
        return
    plan = closure.plan_fix(plain, found, _toolkit_bins(obj, facts), (site,))
    rep.closure["fix"] = plan.offer
    lost = [
        *found.missing,
        *(f"{e.function} in {e.dll} ({e.path}{f' {e.version}' if e.version else ''})" for e in found.entries),
    ]
    if found.missing:
        say(
            f"envmgr: DLL closure: {', '.join(found.missing)} do not resolve under llama_cpp's loader (F15): "
            + "; ".join(found.why[:3])
        )
    for e in found.entries:
        say(
            f"envmgr: DLL closure: entry point {e.function} not found in {e.path} "
            f"({e.version or 'no file version'}, {e.how}), imported by {e.importer}: [WinError 127] at import"
        )
    if not fix or not plan.copies:
        say(
            f"envmgr: the fix{'' if plan.copies else ' (not applied: nothing here to copy)'}: {plan.offer}"
            + (" (add --fix to apply it)" if plan.copies else "")
        )
        rep.lines.append(
            f"DLL closure: missing {', '.join(lost)}; fix offered: {plan.offer}"
            + (" (add --fix to apply it)" if plan.copies else "")
        )
        return
    _apply(plain, python, lib, plan, rep)


def _toolkit_bins(obj: Ctx, facts: Facts | None) -> dict[str, tuple[str, ...]]:
    """{"12.9": bin folders} of the toolkits on this machine (doctor's, or found now under --machine, whose
    record describes another machine's)."""
    kits = facts.inv.cuda if facts is not None and obj.here else discover_cuda(obj.local)
    return {t.short: t.bin_dirs for t in kits if t.short != "?" and t.bin_dirs}


def _apply(plain: Host, python: str, lib: str, plan: closure.FixPlan, rep: Reporting) -> None:
    lines, manifest = closure.apply(plan, dirs.data_dir() / "dll-fixes")
    for line in lines:
        say(f"envmgr: --fix: {line}")
    after = closure.check(plain, python, lib)
    undo = f"envmgr install --undo-dll-fix {manifest}" if manifest.is_file() else None
    assert rep.closure is not None
    copied = [c.name for c in plan.copies if f"copied {c.source} -> {c.dest}" in lines]  # not a failed copy (N29)
    rep.closure.update(
        {
            "fixed": copied,
            "missing_after": list(after.missing),
            "missing_entry_points_after": [entry_json(e) for e in after.entries],
            "manifest": str(manifest) if undo else None,
            "undo": undo,
        }
    )
    still = [*after.missing, *(f"{e.function} in {e.dll}" for e in after.entries)]
    state = (
        f"still missing {', '.join(still)}"
        if still
        else "every CUDA DLL and imported entry point now resolves under llama_cpp's loader"
    )
    rep.lines.append(
        rep.fixes.add(
            "F15", "dll-copied", "; ".join(lines) + f"; {state}", manifest=str(manifest) if undo else None, undo=undo
        )
    )
    say(f"envmgr: DLL closure after --fix: {state}" + (f"; undo with: {undo}" if undo else ""))


def undo(manifest: str) -> int:
    """`envmgr install --undo-dll-fix MANIFEST`."""
    for line in closure.undo(Path(manifest).expanduser()):  # a FIFO or a folder: "not a regular file"
        say(f"envmgr: {line}")
    return 0
