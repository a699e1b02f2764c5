"""Before "done" on Windows: the installed llama_cpp's CUDA DLL closure under its own loader, in a plain
process of the target Python (wheels/closure.py); the fix offered, applied only with --fix, undoable with
`envmgr install --undo-dll-fix MANIFEST`."""
from __future__ import annotations

from pathlib import Path
from typing import Protocol

from envmgr.cli.main import Ctx
from envmgr.commands.install_fix import FixReport
from envmgr.doctor.checks import Facts
from envmgr.errors import InputFileError
from envmgr.host import dirs
from envmgr.host.base import WINDOWS, Host, join
from envmgr.output import say
from envmgr.wheels import closure


class Reporting(Protocol):
    """The install flow's report, as far as the closure writes into it."""
    lines: list[str]
    fixes: FixReport


_WHERE = ("import importlib.util, sys, sysconfig\ns = importlib.util.find_spec('llama_cpp')\n"
          "print(list(s.submodule_search_locations)[0] if s and s.submodule_search_locations else '')\n"
          "print(sysconfig.get_paths()['purelib'])\n")


def lib_dir(local: Host, python: str) -> tuple[str, str]:
    """(llama_cpp\\lib, site-packages) of the target Python, found without importing llama_cpp."""
    done = local.run([python, "-c", _WHERE], timeout=60)
    lines = done.stdout.splitlines() if done.ok else []
    if len(lines) < 2 or not lines[0].strip():
        return "", ""
    return join(local, lines[0].strip(), "lib"), lines[1].strip()


def close(obj: Ctx, facts: Facts | None, python: str, fix: bool, rep: Reporting) -> None:
    """Check the closure (Windows only); say and record what is missing, the fix, and what --fix changed."""
    local = obj.local
    if local.platform != WINDOWS:
        return
    lib, site = lib_dir(local, python)
    if not lib:
        return
    found = closure.check(local, python, lib)
    if not found.missing:
        if found.checked:
            rep.lines.append(f"DLL closure: the CUDA DLLs of {', '.join(found.checked)} resolve under "
                             "llama_cpp's loader")
        return
    bins = {t.short: t.bin_dirs for t in facts.inv.cuda} if facts is not None and obj.here else {}
    plan = closure.plan_fix(local, found, bins, (site,))
    say(f"envmgr: DLL closure: {', '.join(found.missing)} do not resolve under llama_cpp's loader (F15): "
        + "; ".join(found.why[:3]))
    if not fix or not plan.copies:
        say(f"envmgr: the fix{'' if plan.copies else ' (not applied: nothing here to copy)'}: {plan.offer}"
            + (" (add --fix to apply it)" if plan.copies else ""))
        rep.lines.append(f"DLL closure: missing {', '.join(found.missing)}; fix offered: {plan.offer}")
        return
    lines, manifest = closure.apply(plan, dirs.data_dir() / "dll-fixes")
    for line in lines:
        say(f"envmgr: --fix: {line}")
    undo = f"envmgr install --undo-dll-fix {manifest}"
    rep.lines.append(rep.fixes.add("F15", "dll-copied", "; ".join(lines), manifest=str(manifest), undo=undo))
    say(f"envmgr: undo with: {undo}")


def undo(manifest: str) -> int:
    """`envmgr install --undo-dll-fix MANIFEST`."""
    path = Path(manifest).expanduser()
    if not path.is_file():
        raise InputFileError(f"{manifest}: no such file", "give the manifest the --fix run named")
    for line in closure.undo(path):
        say(f"envmgr: {line}")
    return 0
