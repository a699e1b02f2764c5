"""Duplicate runtimes in one process, from the module list verify's child reported (child_after.py). Pure.

Two OpenMP runtimes in one process (Intel's libiomp5 next to LLVM's libomp or GNU's libgomp, or two copies
of one) abort with "OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already
initialized", or silently oversubscribe the cores; two CUDA runtimes or cuBLAS libraries of different
majors (12 and 13) each keep their own context state and fail as soon as a pointer crosses between them.
The usual way in is an app that imported torch first (torch's wheels carry their own OpenMP and CUDA 12
or 13 runtime): the package then imports fine in a plain `python` and fails inside the app.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from pathlib import PurePosixPath, PureWindowsPath

from envmgr.verify.analyze import FAIL, OK, WARN, Step

# Matched against the file name, lower case. Wheel repair tools rename bundled copies (auditwheel:
# libgomp-a34b3233.so.1, delvewheel: libiomp5md-1a2b3c.dll): the hash part is allowed.
_HASH = r"(?:-[0-9a-f]{6,})?"
OPENMP = (
    ("Intel OpenMP", re.compile(rf"^libiomp5(?:md)?{_HASH}\.(?:dll|so)$")),
    ("LLVM OpenMP", re.compile(rf"^(?:libomp140\.(?:x86_64|aarch64)\.dll|libomp{_HASH}\.so(?:\.5)?|libomp{_HASH}\.dll)$")),
    ("GNU OpenMP", re.compile(rf"^(?:libgomp{_HASH}\.so\.1|libgomp-1\.dll)$")),
    ("MSVC OpenMP", re.compile(r"^vcomp1\d\d\.dll$")),
)
# (family, pattern whose group "major" is the major version)
MAJORS = (
    ("CUDA runtime", re.compile(rf"^(?:cudart64_(?P<w>\d+)\.dll|libcudart{_HASH}\.so\.(?P<l>\d+)(?:\.[\d.]+)?)$")),
    ("cuBLAS", re.compile(rf"^(?:cublas64_(?P<w>\d+)\.dll|libcublas{_HASH}\.so\.(?P<l>\d+)(?:\.[\d.]+)?)$")),
)
OPENMP_FIX = ("load one OpenMP runtime: import the package in the order that works and build or install both "
              "against the same OpenMP (torch's: the one its wheel carries; llama.cpp: -DGGML_OPENMP=OFF or a "
              "build with the same compiler's OpenMP); KMP_DUPLICATE_LIB_OK=TRUE hides Intel's abort and "
              "risks wrong results: a last resort only")
MAJOR_FIX = ("install the package built for the CUDA major the app already loads (the same CUDA 12 or 13 as "
             "torch: `python -c \"import torch; print(torch.version.cuda)\"`), so one runtime serves both")


@dataclass(frozen=True)
class Duplicate:
    family: str                      # "OpenMP" | "CUDA runtime" | "cuBLAS"
    what: tuple[str, ...]            # per path: "Intel OpenMP", "LLVM OpenMP"; "12", "13"
    paths: tuple[str, ...]
    fix: str

    @property
    def line(self) -> str:
        return f"two {self.family} runtimes in one process: " + "; ".join(
            f"{w}: {p}" for w, p in zip(self.what, self.paths))


def _name(path: str) -> str:
    return (PureWindowsPath(path).name if "\\" in path else PurePosixPath(path).name).lower()


def _same_file(a: str, b: str) -> bool:
    return a.lower() == b.lower() if "\\" in a or ":" in a else a == b


def duplicates(modules: list[str] | tuple[str, ...]) -> tuple[Duplicate, ...]:
    """The duplicate runtimes among a process's loaded modules (paths as the child listed them)."""
    omp: list[tuple[str, str]] = []
    majors: dict[str, dict[str, str]] = {family: {} for family, _ in MAJORS}
    for path in modules:
        name = _name(path)
        kind = next((k for k, rx in OPENMP if rx.match(name)), None)
        if kind is not None and not any(_same_file(path, p) for _, p in omp):
            omp.append((kind, path))
        for family, rx in MAJORS:
            m = rx.match(name)
            if m:
                majors[family].setdefault(m.group("w") or m.group("l"), path)
    out = []
    if len(omp) > 1:
        out.append(Duplicate("OpenMP", tuple(k for k, _ in omp), tuple(p for _, p in omp), OPENMP_FIX))
    for family, found in majors.items():
        if len(found) > 1:
            out.append(Duplicate(family, tuple(f"{family} {m}" for m in found), tuple(found.values()), MAJOR_FIX))
    return tuple(out)


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
        ev += [f"  {p}" for p in libs if any(rx.match(_name(p)) for _, rx in (*OPENMP, *MAJORS))]
    if len(records) < len(wanted):
        how = f"the child Python {died}" if died else "the child stopped"
        return Step("after", FAIL, f"--after: {how} while importing {wanted[len(records)]}", tuple(ev),
                    fix="the app's module itself crashes in a plain process of that Python: check it alone "
                        f"(python -c \"import {wanted[len(records)]}\")")
    return Step("after", OK, f"imported first, in the same process: {', '.join(wanted)}", tuple(ev))


def runtimes_step(record: dict[str, Any], package: str) -> Step | None:
    """`runtimes`: duplicates among everything loaded once the package was imported. None when the child did
    not get that far (it died, or an --after module failed)."""
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
