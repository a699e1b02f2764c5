"""The CUDA MSBuild integration's file names, where they live, and which VS/CUDA pairs they support.

The rules themselves (how many files per CUDA, which VS each CUDA supports, the folders) live in
envmgr.knowledge; this module applies them to discovered instances and toolkits.
"""

from __future__ import annotations

import re
from pathlib import PureWindowsPath

from envmgr import knowledge
from envmgr.discover.model import CudaToolkit, VsInstance
from envmgr.knowledge import HostLimits, integration_names
from envmgr.winenv import same_path

# Every name the integration uses; group 1 or 2 is the CUDA version it belongs to.
INTEGRATION_NAME = re.compile(
    r"^(?:CUDA (\d+\.\d+)(?:\.Version)?\.(?:props|targets|xml)|Nvda\.Build\.CudaTasks\.v(\d+\.\d+)\.dll)$",
    re.IGNORECASE,
)

expected_names = integration_names


def integration_version(name: str) -> str | None:
    """`CUDA 12.4.props` -> "12.4"; `masm.props` -> None."""
    m = INTEGRATION_NAME.match(name)
    return (m.group(1) or m.group(2)) if m else None


def extensions_dir(cuda_path: str) -> str:
    return str(PureWindowsPath(cuda_path, *knowledge.INTEGRATION_SUBDIR))


def support_problem(vs: VsInstance, kit: CudaToolkit, limits: HostLimits | None) -> str | None:
    """Why this toolkit's integration does not belong in this instance, or None when it does."""
    problem = knowledge.integration_problem(vs.major, kit.short)
    if problem is not None:
        return f"{vs.label}: {problem}" if "not handled" in problem else problem
    msc = [t.msc_ver for t in vs.toolsets if t.msc_ver]
    if limits is not None and msc and not any(limits.msvc_ok(v) for v in msc):
        have = ", ".join(t.version for t in vs.toolsets)
        return (
            f"CUDA {kit.short}'s nvcc accepts {limits.describe_msvc()}; this instance has MSVC {have} "
            f"(from {limits.source})"
        )
    return None


same = same_path  # Windows paths: case-insensitive, trailing separators ignored
