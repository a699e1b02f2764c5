"""The CUDA MSBuild integration's file names, where they live, and which VS/CUDA pairs they support.

Sources: facts/windows.md §5.5 (4 files in CUDA 10.x-12.x, 5 from 13.0 with `CUDA X.Y.Version.props`),
§6.1 (BuildCustomizations folder per VS; VS 2026 supported only from CUDA 13.2) and §7 (host compiler
limits; CUDA 13.0 dropped VS 2017).
"""
from __future__ import annotations

import re
from pathlib import PureWindowsPath

from ..compat import HostLimits, cuda_at_least
from ..discover.model import CudaToolkit, VsInstance

# Every name the integration uses; group 1 or 2 is the CUDA version it belongs to.
INTEGRATION_NAME = re.compile(
    r"^(?:CUDA (\d+\.\d+)(?:\.Version)?\.(?:props|targets|xml)|Nvda\.Build\.CudaTasks\.v(\d+\.\d+)\.dll)$",
    re.IGNORECASE)

EXTENSIONS_SUBDIR = ("extras", "visual_studio_integration", "MSBuildExtensions")

# The CMake generator of each VS major (CMake's own names).
GENERATORS = {15: "Visual Studio 15 2017", 16: "Visual Studio 16 2019", 17: "Visual Studio 17 2022",
              18: "Visual Studio 18 2026"}


def integration_version(name: str) -> str | None:
    """`CUDA 12.4.props` -> "12.4"; `masm.props` -> None."""
    m = INTEGRATION_NAME.match(name)
    return (m.group(1) or m.group(2)) if m else None


def expected_names(short: str) -> tuple[str, ...]:
    names = [f"CUDA {short}.props", f"CUDA {short}.targets", f"CUDA {short}.xml",
             f"Nvda.Build.CudaTasks.v{short}.dll"]
    if cuda_at_least(short, "13.0"):
        names.insert(2, f"CUDA {short}.Version.props")
    return tuple(names)


def extensions_dir(cuda_path: str) -> str:
    return str(PureWindowsPath(cuda_path, *EXTENSIONS_SUBDIR))


def support_problem(vs: VsInstance, kit: CudaToolkit, limits: HostLimits | None) -> str | None:
    """Why this toolkit's integration does not belong in this instance, or None when it does."""
    if vs.major is None or vs.major < 15:
        return f"{vs.label}: Visual Studio 2015 or older is not handled by fix-msbuild"
    if vs.major >= 18 and not cuda_at_least(kit.short, "13.2"):
        return (f"CUDA {kit.short} does not support Visual Studio 2026 (supported from CUDA 13.2); "
                "install CUDA 13.2+ or use VS 2022")
    if vs.major == 15 and cuda_at_least(kit.short, "13.0"):
        return f"CUDA {kit.short} dropped Visual Studio 2017 (CUDA 13 needs VS 2019 or newer)"
    msc = [t.msc_ver for t in vs.toolsets if t.msc_ver]
    if limits is not None and msc and not any(limits.msvc_ok(v) for v in msc):
        have = ", ".join(t.version for t in vs.toolsets)
        return (f"CUDA {kit.short}'s nvcc accepts {limits.describe_msvc()}; this instance has MSVC {have} "
                f"(from {limits.source})")
    return None


def same(a: str, b: str) -> bool:
    """Windows paths compare case-insensitively, trailing separators ignored."""
    return str(PureWindowsPath(a)).rstrip("\\").lower() == str(PureWindowsPath(b)).rstrip("\\").lower()
