"""Duplicate runtimes in one process: which loaded (or resolved) modules are two OpenMP runtimes, or CUDA
runtimes / cuBLAS libraries of two majors. Pure; used by `verify` (the modules its child listed,
verify/runtimes.py) and `doctor --dll` (the files its resolution would load).

Two OpenMP runtimes in one process (Intel's libiomp5 next to LLVM's libomp or GNU's libgomp, or two copies
of one) abort with "OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already
initialized", or silently oversubscribe the cores; two CUDA runtimes or cuBLAS libraries of different
majors (12 and 13) each keep their own context state and fail as soon as a pointer crosses between them.
The usual way in is an app that imported torch first (torch's wheels carry their own OpenMP and CUDA 12
or 13 runtime): the package then imports fine in a plain `python` and fails inside the app.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath

# Matched against the file name, lower case. Wheel repair tools rename bundled copies (auditwheel:
# libgomp-a34b3233.so.1, delvewheel: libiomp5md-1a2b3c.dll): the hash part is allowed.
_HASH = r"(?:-[0-9a-f]{6,})?"
OPENMP = (
    ("Intel OpenMP", re.compile(rf"^libiomp5(?:md)?{_HASH}\.(?:dll|so)$")),
    ("LLVM OpenMP", re.compile(rf"^(?:libomp140\.(?:x86_64|aarch64)\.dll|libomp{_HASH}\.(?:so(?:\.5)?|dll))$")),
    ("GNU OpenMP", re.compile(rf"^(?:libgomp{_HASH}\.so\.1|libgomp-1\.dll)$")),
    ("MSVC OpenMP", re.compile(r"^vcomp1\d\d\.dll$")),
)
# (family, pattern: group "w" (Windows) or "l" (Linux) is the major version)
MAJORS = (
    ("CUDA runtime", re.compile(rf"^(?:cudart64_(?P<w>\d+)\.dll|libcudart{_HASH}\.so\.(?P<l>\d+)(?:\.[\d.]+)?)$")),
    ("cuBLAS", re.compile(rf"^(?:cublas64_(?P<w>\d+)\.dll|libcublas{_HASH}\.so\.(?P<l>\d+)(?:\.[\d.]+)?)$")),
)
OPENMP_FIX = (
    "load one OpenMP runtime: import the package in the order that works and build or install both "
    "against the same OpenMP (torch's: the one its wheel carries; llama.cpp: -DGGML_OPENMP=OFF or a "
    "build with the same compiler's OpenMP); KMP_DUPLICATE_LIB_OK=TRUE hides Intel's abort and "
    "risks wrong results: a last resort only"
)
MAJOR_FIX = (
    "install the package built for the CUDA major the app already loads (the same CUDA 12 or 13 as "
    'torch: `python -c "import torch; print(torch.version.cuda)"`), so one runtime serves both'
)


@dataclass(frozen=True)
class Duplicate:
    family: str  # "OpenMP" | "CUDA runtime" | "cuBLAS"
    what: tuple[str, ...]  # per path: "Intel OpenMP", "LLVM OpenMP"; "12", "13"
    paths: tuple[str, ...]
    fix: str

    @property
    def line(self) -> str:
        return f"two {self.family} runtimes in one process: " + "; ".join(
            f"{w}: {p}" for w, p in zip(self.what, self.paths, strict=True)
        )


def file_name(path: str) -> str:
    return (PureWindowsPath(path).name if "\\" in path else PurePosixPath(path).name).lower()


def _same_file(a: str, b: str) -> bool:
    return a.lower() == b.lower() if "\\" in a or ":" in a else a == b


def duplicates(modules: Iterable[str]) -> tuple[Duplicate, ...]:
    """The duplicate runtimes among a process's loaded modules (paths as the child listed them)."""
    omp: list[tuple[str, str]] = []
    majors: dict[str, dict[str, str]] = {family: {} for family, _ in MAJORS}
    for path in modules:
        name = file_name(path)
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
