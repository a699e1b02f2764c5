"""How a GPU runs a binary's device code: a native cubin, PTX compiled by the driver (JIT), or not at all.

Pure. The rules (CUDA C Programming Guide, "Binary Compatibility" and "PTX Compatibility"; the
arch-specific and family targets: CUDA 12.9 release notes):
- a cubin `sm_XY` runs on compute capability X.Z with Z >= Y (same major); `sm_XYa` only on X.Y;
  `sm_XYf` on the family X.Z, Z >= Y;
- PTX `compute_XY` is compiled by the driver for any compute capability >= X.Y (`compute_XYa` only for
  X.Y, `compute_XYf` within the family); the first run is slower (the JIT; the driver caches it), and
  the driver must know the PTX's ISA version, or CUDA answers "the provided PTX was compiled with an
  unsupported toolchain";
- neither: "no kernel image is available for execution on the device" (catalog F14).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from envmgr import knowledge
from envmgr.binaries.devicecode import arch_number

NATIVE, PTX_JIT, NONE = "native", "ptx-jit", "none"
_ARCH = re.compile(r"^(sm|compute)_(\d+)(\d)([af]?)$")


@dataclass(frozen=True)
class Fit:
    gpu: str  # "GPU 0 NVIDIA H100 80GB HBM3 (compute capability 9.0)"
    cc: str  # "9.0"
    how: str  # native | ptx-jit | none
    via: str  # the cubin or PTX that runs ("sm_90", "compute_90"); "" for none
    detail: str  # in words, with the consequence

    def to_json(self) -> dict[str, str]:
        return {"gpu": self.gpu, "compute_capability": self.cc, "how": self.how, "via": self.via, "detail": self.detail}


def ptx_cuda(isa: str) -> str:
    """The CUDA release whose nvcc writes PTX ISA `isa` ("9.0" -> "13.0"); "" when unknown.
    PTX ISA release notes; 9.0 (nvcc 13.0) and 9.2 (nvcc 13.2) seen here."""
    m = re.match(r"^(\d+)\.(\d+)$", isa)
    if not m:
        return ""
    major, minor = int(m.group(1)), int(m.group(2))
    if major in (7, 9):
        return f"{major + 4}.{minor}"
    return (
        {0: "12.0", 1: "12.1", 2: "12.2", 3: "12.3", 4: "12.4", 5: "12.5", 7: "12.8", 8: "12.9"}.get(minor, "")
        if major == 8
        else ""
    )


def _parts(arch: str) -> tuple[int, int, str] | None:
    m = _ARCH.match(arch)
    return (int(m.group(2)), int(m.group(3)), m.group(4)) if m else None


def _minor(arch: str) -> int:
    p = _parts(arch)
    return p[1] if p else 0


def cubin_runs(arch: str, cc: tuple[int, int]) -> bool:
    p = _parts(arch)
    if p is None or p[0] != cc[0]:
        return False
    return cc[1] == p[1] if p[2] == "a" else cc[1] >= p[1]


def ptx_runs(arch: str, cc: tuple[int, int]) -> bool:
    p = _parts(arch)
    if p is None:
        return False
    if p[2] == "a":
        return (p[0], p[1]) == cc
    if p[2] == "f":
        return p[0] == cc[0] and cc[1] >= p[1]
    return (p[0], p[1]) <= cc


def fit(
    cubin: tuple[str, ...],
    ptx: tuple[str, ...],
    cc: str,
    gpu: str = "",
    ptx_isa: str = "",
    driver: str = "",
    windows: bool = False,
) -> Fit:
    """How a GPU of compute capability `cc` ("12.0") runs device code with these cubins and PTX."""
    m = re.match(r"^(\d+)\.(\d+)$", cc or "")
    label = gpu or f"compute capability {cc}"
    if not m:
        return Fit(label, cc or "", NONE, "", "the GPU's compute capability is unknown: cannot tell")
    want = (int(m.group(1)), int(m.group(2)))
    sm = f"sm_{want[0]}{want[1]}"
    native = [a for a in cubin if cubin_runs(a, want)]
    if native:
        best = max(native, key=lambda a: (_minor(a), a))
        how = "its own cubin" if best.startswith(sm) else f"the compatible cubin {best}"
        return Fit(label, cc, NATIVE, best, f"runs natively on {sm} ({how}): no JIT")
    jit = [a for a in ptx if ptx_runs(a, want)]
    if jit:
        return _jit(label, cc, sm, max(jit, key=lambda a: (arch_number(a), a)), ptx_isa, driver, windows)
    have = " ".join([*cubin, *ptx]) or "nothing"
    return Fit(
        label,
        cc,
        NONE,
        "",
        f"cannot run on {sm}: no cubin for it and no PTX at or below compute_"
        f"{want[0]}{want[1]} (it has {have}); CUDA will answer 'no kernel image is available for "
        "execution on the device' (catalog F14): rebuild for this GPU's architecture",
    )


def _jit(label: str, cc: str, sm: str, via: str, isa: str, driver: str, windows: bool) -> Fit:
    cuda = ptx_cuda(isa)
    need = f"PTX ISA {isa} (CUDA {cuda})" if cuda else f"PTX ISA {isa}" if isa else "the PTX's ISA version"
    floor = knowledge.driver_minimum(cuda, windows) if cuda else None
    if floor and driver and _older(driver, floor):
        return Fit(
            label,
            cc,
            NONE,
            via,
            f"no cubin for {sm}, and its PTX {via} is {need}: the driver {driver} is "
            f"older than CUDA {cuda.split('.')[0]}'s minimum {floor}, so it cannot compile it ('the "
            "provided PTX was compiled with an unsupported toolchain', catalog F14): update the driver",
        )
    return Fit(
        label,
        cc,
        PTX_JIT,
        via,
        f"runs through PTX JIT: no cubin for {sm}, so the driver compiles "
        f"{via} on first use (a slower first run, cached afterwards; the driver must know {need}); "
        f"a build for {sm.replace('sm_', '')} runs natively",
    )


def _older(driver: str, floor: str) -> bool:
    def nums(v: str) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", v)[:3])

    return bool(nums(driver)) and nums(driver) < nums(floor)
