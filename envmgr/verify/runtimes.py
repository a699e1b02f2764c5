"""verify's steps for `--after` and duplicate runtimes, from the child's records (child_after.py). Pure; the
judgement itself is binaries/runtimes.py (doctor --dll uses it too).
"""
from __future__ import annotations

import re
from typing import Any

from envmgr.binaries.runtimes import MAJORS, OPENMP, OPENMP_FIX, duplicates, file_name
from envmgr.verify.analyze import FAIL, OK, WARN, Step

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
            return Step("after", FAIL, f"--after {module}: cannot import it in {python}: "
                        f"{rec.get('error_type')}: {rec.get('error')}", tuple(ev),
                        fix=f"install {module} into that Python, or name the app's modules as it imports them "
                            f"(--after torch,numpy); the package was not imported")
        libs = [str(p) for p in rec.get("libraries") or []]
        count = rec.get("library_count", len(libs))
        version = f" {rec['version']}" if rec.get("version") else ""
        ev.append(f"{module}{version} ({rec.get('file')}) loaded {count} shared libraries")
        ev += [f"  {p}" for p in libs if any(rx.match(file_name(p)) for _, rx in (*OPENMP, *MAJORS))]
    if len(records) < len(wanted):
        how = f"the child Python {died}" if died else "the child stopped"
        return Step("after", FAIL, f"--after: {how} while importing {wanted[len(records)]}", tuple(ev),
                    fix="the app's module itself crashes in a plain process of that Python: check it alone "
                        f"(python -c \"import {wanted[len(records)]}\")")
    return Step("after", OK, f"imported first, in the same process: {', '.join(wanted)}", tuple(ev))


def runtimes_step(record: dict[str, Any], package: str, log: str = "") -> Step | None:
    """`runtimes`: duplicates among everything loaded once the package was imported. None when the child did
    not get that far (it died, or an --after module failed), unless its log (stderr) has Intel's abort."""
    abort = _OMP_ABORT.search(log)
    if abort is not None:
        return Step("runtimes", FAIL, "Intel's OpenMP runtime aborted the process: a second OpenMP runtime was "
                    "already loaded", (abort.group(0).strip(),), fix=OPENMP_FIX)
    if not record:
        return None
    found = duplicates([str(p) for p in record.get("modules") or []])
    if not found:
        return Step("runtimes", OK, "one OpenMP runtime at most, one CUDA runtime and cuBLAS major at most "
                    f"in the process with {package} loaded")
    ev = tuple(d.line for d in found)
    fixes = tuple(dict.fromkeys(d.fix for d in found))
    return Step("runtimes", WARN, f"duplicate runtimes in one process: {', '.join(d.family for d in found)}",
                ev, fix="; ".join(fixes))


def framed(steps: tuple[Step, ...], after: Step | None, runtimes: Step | None) -> tuple[Step, ...]:
    """The --after step first (what the app loaded before the package), the duplicate-runtime check last."""
    return (*((after,) if after else ()), *steps, *((runtimes,) if runtimes else ()))
