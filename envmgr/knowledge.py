"""What envmgr knows about CUDA, MSVC, Visual Studio and GPUs: rows of data, each with its source,
and pure lookups. No I/O: discovery reads the machine, this module answers questions about it.

A new CUDA X.Y is one row in CUDA_RELEASES (plus a CUDA_MAJORS row for a new major); a new MSVC
14.NN that changes the STL's CUDA minimum is one row in MSVC_RELEASES; a new Visual Studio is one row
in VS_MAJORS. Lookups take the newest row at or below the version asked about, so a release without a
row of its own inherits its predecessor's rules. docs/knowledge.md explains each table with sources.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from envmgr.version import Version, mm

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TypeVar

    _Row = TypeVar("_Row", "CudaRelease", "MsvcRelease")


@dataclass(frozen=True)
class CudaRelease:
    since: str  # the row applies from this CUDA X.Y up to the next row
    msc_min: int  # crt/host_config.h rejects _MSC_VER < msc_min ...
    msc_max_excl: int  # ... and _MSC_VER >= msc_max_excl
    gcc_max: int  # ... and __GNUC__ > gcc_max
    integration_files: int  # files in extras\visual_studio_integration\MSBuildExtensions
    fallback_archs: str  # the real architectures a recipe builds when no GPU is visible
    source: str


@dataclass(frozen=True)
class CudaMajor:
    major: int
    driver_min_linux: str  # minor-version compatibility: any X.y runs on this driver
    driver_min_windows: str
    min_cc: str | None  # architectures below this were dropped (applies to later majors too)
    source: str


@dataclass(frozen=True)
class MsvcRelease:
    since: str  # MSVC toolset 14.NN from which the row applies
    stl_min_cuda: str  # yvals_core.h's STL1002: "expected CUDA X.Y or newer"
    source: str


@dataclass(frozen=True)
class VsMajor:
    major: int  # installationVersion major
    year: str
    generator: str | None  # CMake's generator name (None: envmgr does not drive it)
    generator_cmake: str | None  # the CMake release that added that generator
    bc_subdir: tuple[str, ...] | None  # BuildCustomizations under the instance, None: not handled
    cuda_from: str | None = None  # the CUDA integration supports this VS from this CUDA
    cuda_before: str | None = None  # ... and dropped it at this CUDA
    source: str = ""


@dataclass(frozen=True)
class ComputeCapability:
    cc: str
    first_cuda: str
    gpus: str
    source: str


_HOST_CONFIG = "crt/host_config.h of each toolkit (docs/knowledge.md#host-compilers)"
_GCC = "conda-forge and NVIDIA's installation guides (docs/knowledge.md#host-compilers; 12.4 row unverified)"
_INTEGRATION = "NVIDIA MSBuildExtensions listings: 4 files up to 12.x, 5 from 13.0 (docs/knowledge.md#msbuild)"
_ARCHS = "CMake CMakeCUDAArchitecturesAll.cmake and CUDA release notes (docs/knowledge.md#architectures)"

# Newest first. CUDA 13.2 is the first to accept VS 2026's MSVC 14.5x (NVIDIA Nsight VSE docs).
CUDA_RELEASES = (
    CudaRelease(
        "13.2",
        1920,
        1960,
        15,
        5,
        "75;80;86;89;90;100;120",
        f"{_HOST_CONFIG}; NVIDIA: VS 2026 supported from CUDA 13.2; {_INTEGRATION}; {_ARCHS}",
    ),
    CudaRelease(
        "13.0",
        1920,
        1950,
        15,
        5,
        "75;80;86;89;90;100;120",
        f"{_HOST_CONFIG} (VS 2017 dropped); {_GCC}; {_INTEGRATION}; CUDA 13.0 dropped sm < 75 ({_ARCHS})",
    ),
    CudaRelease(
        "12.8",
        1910,
        1950,
        14,
        4,
        "61;70;75;80;86;89;90;100;120",
        f"{_HOST_CONFIG}; {_GCC}; CUDA 12.8 added Blackwell sm_100/sm_120 ({_ARCHS})",
    ),
    CudaRelease("12.4", 1910, 1950, 13, 4, "52;61;70;75;80;86;89;90", f"{_HOST_CONFIG} (accepts 14.40-14.49); {_GCC}"),
    CudaRelease("12.0", 1910, 1940, 12, 4, "52;61;70;75;80;86;89;90", f"{_HOST_CONFIG}; {_GCC}"),
    CudaRelease(
        "11.8",
        1910,
        1940,
        11,
        4,
        "52;61;70;75;80;86;89;90",
        f"{_HOST_CONFIG}; {_GCC}; CUDA 11.8 added sm_89/sm_90 ({_ARCHS})",
    ),
    CudaRelease("11.0", 1910, 1940, 10, 4, "52;61;70;75;80;86", f"{_HOST_CONFIG}; {_GCC}"),
)
# Below the oldest row: no host-compiler table (host_config.h itself still answers).
OLDEST_FALLBACK_ARCHS = "52;61;70;75;80;86"
OLDEST_INTEGRATION_FILES = 4

_COMPAT = "docs.nvidia.com/deploy/cuda-compatibility, CUDA release notes Table 3 (docs/knowledge.md#drivers)"
CUDA_MAJORS = (
    CudaMajor(13, "580.65.06", "580.00", "7.5", f"{_COMPAT}; CUDA 13.0 removed every architecture below sm_75"),
    CudaMajor(12, "525.60.13", "528.33", None, _COMPAT),
    CudaMajor(11, "450.80.02", "452.39", None, _COMPAT),
)

_STL = "MSVC yvals_core.h STL1002 (docs/knowledge.md#stl)"
MSVC_RELEASES = (
    MsvcRelease("14.50", "13.2", f"{_STL}: VS 2026's STL expects CUDA 13.2 or newer"),
    MsvcRelease("14.40", "12.4", f"{_STL}: VS 17.10+ STL expects CUDA 12.4 or newer"),
)

_VS = "CMake MSVC_VERSION.rst / generator names; NVIDIA installer folders (docs/knowledge.md#visual-studio)"
_V = ("MSBuild", "Microsoft", "VC")
VS_MAJORS = (
    VsMajor(
        18,
        "2026",
        "Visual Studio 18 2026",
        "4.2",
        (*_V, "v180", "BuildCustomizations"),
        cuda_from="13.2",
        source=f"{_VS}; NVIDIA Nsight VSE 'Using Visual Studio 2026': supported from CUDA 13.2",
    ),
    VsMajor(17, "2022", "Visual Studio 17 2022", "3.21", (*_V, "v170", "BuildCustomizations"), source=_VS),
    VsMajor(16, "2019", "Visual Studio 16 2019", "3.14", (*_V, "v160", "BuildCustomizations"), source=_VS),
    VsMajor(
        15,
        "2017",
        "Visual Studio 15 2017",
        "3.7",
        ("Common7", "IDE", "VC", "VCTargets", "BuildCustomizations"),
        cuda_before="13.0",
        source=f"{_VS}; VS 2017 keeps VCTargets under Common7\\IDE; CUDA 13.0 dropped it",
    ),
    VsMajor(14, "2015", None, None, None, source=_VS),
    VsMajor(12, "2013", None, None, None, source=_VS),
    VsMajor(11, "2012", None, None, None, source=_VS),
    VsMajor(10, "2010", None, None, None, source=_VS),
)
DEFAULT_GENERATOR = "Visual Studio 17 2022"

# The Visual Studio Installer component that installs one pinned MSVC toolset side by side:
# Microsoft.VisualStudio.Component.VC.<MSVC 14.NN>.<the VS release that shipped it>.x86.x64. VS 2026's
# catalog still offers the v143 14.44 toolset as such a component (GitHub's windows-latest image has it
# installed; a VS-2026-only laptop usually does not). Only ids seen in Microsoft's VS 2026 catalog.
_COMPONENTS = (
    "Microsoft's 'Visual Studio Enterprise 2026 workload and component IDs' (2025-11-11): "
    "'MSVC v143 - VS 2022 C++ x64/x86 build tools (v14.44-17.14)', 'MSVC Build Tools v14.50 for x64/x86' "
    "(docs/knowledge.md#visual-studio)"
)
TOOLSET_COMPONENTS = (
    ("14.50", "Microsoft.VisualStudio.Component.VC.14.50.18.0.x86.x64", _COMPONENTS),
    ("14.44", "Microsoft.VisualStudio.Component.VC.14.44.17.14.x86.x64", _COMPONENTS),
)
# The installer every instance shares; `modify --installPath <instance> --add <component id>` adds a
# component to that instance (learn.microsoft.com/en-us/visualstudio/install/
# use-command-line-parameters-to-install-visual-studio).
VS_INSTALLER = "C:\\Program Files (x86)\\Microsoft Visual Studio\\Installer\\vs_installer.exe"

# Not monotonic: 10.3 needs 12.9 while 12.0 needs 12.8; a CC without a row takes the nearest below.
COMPUTE_CAPABILITIES = (
    ComputeCapability("12.1", "12.9", "DGX Spark GB10", _ARCHS),
    ComputeCapability("12.0", "12.8", "RTX 50, RTX PRO Blackwell", _ARCHS),
    ComputeCapability("11.0", "12.8", "Thor (sm_101 renamed sm_110 in 13.0)", _ARCHS),
    ComputeCapability("10.3", "12.9", "B300", _ARCHS),
    ComputeCapability("10.0", "12.8", "B200", _ARCHS),
    ComputeCapability("9.0", "11.8", "H100, H200", _ARCHS),
    ComputeCapability("8.9", "11.8", "RTX 40, L4, L40", _ARCHS),
    ComputeCapability("8.7", "11.4", "Orin", _ARCHS),
    ComputeCapability("8.6", "11.1", "RTX 30", _ARCHS),
    ComputeCapability("8.0", "11.0", "A100", _ARCHS),
)

# The CUDA releases that build an architecture, for archs older than the table above (a build log that asks
# an nvcc for an arch outside its span failed because of it): the first CUDA with the arch, and the first
# CUDA without it (None: still built). CUDA 9.0 dropped sm_2x, 11.0 sm_3x but 35/37, 12.0 sm_35/37, 13.0
# everything below sm_75 (CUDA_MAJORS above). [NVIDIA CUDA release notes, "Deprecated and dropped features"]
ARCH_SPANS = (
    ("7.5", "10.0", None),
    ("7.2", "10.0", "13.0"),
    ("7.0", "9.0", "13.0"),
    ("6.0", "8.0", "13.0"),
    ("5.0", "6.0", "13.0"),
    ("3.5", "5.0", "12.0"),
    ("3.0", "4.2", "11.0"),
    ("2.0", "3.0", "9.0"),
)


def arch_span(cc: str) -> tuple[str, str | None] | None:
    """(first CUDA, first CUDA without it) for compute capability `cc` ("6.1" -> the 6.0 row), or None
    for an arch the tables do not know. From 8.0 the first CUDA is COMPUTE_CAPABILITIES'."""
    want = Version.of(cc)
    if want >= (8, 0):
        first = min_cuda_for(cc)
        return (first, None) if first else None
    row = next((r for r in ARCH_SPANS if Version.of(r[0]) <= want), None)
    return (row[1], row[2]) if row else None


# Used only when the driver cannot report compute_cap; first match wins. [NVIDIA's CUDA GPUs table]
GPU_NAMES = (
    (r"RTX PRO \d+ Blackwell|RTX 50\d\d", "12.0"),
    (r"B200|GB200", "10.0"),
    (r"B300|GB300", "10.3"),
    (r"GB10\b", "12.1"),
    (r"H100|H200|GH200|H800|H20\b", "9.0"),
    (r"RTX 40\d\d|L40S?|L4\b|RTX \d+ Ada|RTX 2000 Ada|RTX [4-6]000 Ada", "8.9"),
    (r"RTX 30\d\d|A10\b|A40\b|A16\b|A2\b|RTX A\d+", "8.6"),
    (r"A100|A30\b|A800", "8.0"),
    (r"Orin", "8.7"),
    (r"RTX 20\d\d|GTX 16\d\d|T4\b|TITAN RTX|Quadro RTX", "7.5"),
    (r"TITAN V|V100", "7.0"),
    (r"GTX 10\d\d|TITAN X[p ]|P100|P40|P4\b|Quadro P", "6.1"),
    (r"GTX 9\d\d|TITAN X\b|M40|M60", "5.2"),
)

# The oldest CUDA llama.cpp still tests (ggml-org/llama.cpp#11696).
MIN_TESTED_CUDA = "11.7"
# Build logs are judged against the tables only from this CUDA on (older host_config.h rows vary).
LOG_JUDGED_FROM = "11.8"


# ---------------------------------------------------------------- host-compiler limits


@dataclass(frozen=True)
class HostLimits:
    msc_min: int | None  # _MSC_VER must be >= this
    msc_max_excl: int | None  # _MSC_VER must be < this
    gcc_max: int | None  # __GNUC__ must be <= this
    source: str  # "host_config.h" or "table"

    def msvc_ok(self, msc_ver: int) -> bool:
        lo = self.msc_min if self.msc_min is not None else 0
        hi = self.msc_max_excl if self.msc_max_excl is not None else 10**6
        return lo <= msc_ver < hi

    def describe_msvc(self) -> str:
        if self.msc_min is None or self.msc_max_excl is None:
            return "unknown"
        return (
            f"_MSC_VER {self.msc_min}..{self.msc_max_excl - 1} "
            f"(MSVC {msvc_of_msc(self.msc_min)}..{msvc_of_msc(self.msc_max_excl - 1)})"
        )


@dataclass(frozen=True)
class Limits:
    """What the choice needs beyond the inventory, read from the machine by discover.limits."""

    host: dict[str, HostLimits | None] = field(default_factory=dict)  # cuda path -> HostLimits
    stl: dict[str, str | None] = field(default_factory=dict)  # toolset path -> min CUDA ("12.4") or None


def _newest_at_or_below(rows: Sequence[_Row], version: str) -> _Row | None:
    want = mm(version)
    return next((r for r in rows if want >= mm(r.since)), None)


def cuda_release(cuda: str) -> CudaRelease | None:
    """The row whose rules apply to CUDA `cuda` ("12.4", "12.4.99"), None below the oldest row."""
    return _newest_at_or_below(CUDA_RELEASES, cuda) if Version.parse(cuda) else None


def host_limits(cuda: str) -> HostLimits | None:
    row = cuda_release(cuda)
    return HostLimits(row.msc_min, row.msc_max_excl, row.gcc_max, "table") if row else None


def integration_files(cuda: str) -> int:
    row = cuda_release(cuda)
    return row.integration_files if row else OLDEST_INTEGRATION_FILES


def fallback_architectures(cuda: str) -> tuple[str, ...]:
    row = cuda_release(cuda)
    return tuple((row.fallback_archs if row else OLDEST_FALLBACK_ARCHS).split(";"))


def cuda_at_least(cuda: str, minimum: str) -> bool:
    return mm(cuda) >= mm(minimum)


def driver_minimum(cuda: str, windows: bool) -> str | None:
    major = mm(cuda).major
    row = next((r for r in CUDA_MAJORS if r.major == major), None)
    return None if row is None else (row.driver_min_windows if windows else row.driver_min_linux)


def dropped_below(cuda: str) -> str | None:
    """The compute capability below which this CUDA builds nothing (CUDA 13: 7.5), or None."""
    major = mm(cuda).major
    return next((r.min_cc for r in CUDA_MAJORS if r.major <= major and r.min_cc), None)


def min_cuda_for(cc: tuple[int, ...] | str) -> str | None:
    """The first CUDA that builds for this compute capability (row for it, else the nearest below)."""
    want = Version.of(cc) if isinstance(cc, str) else Version(cc)
    rows = {Version.of(r.cc): r.first_cuda for r in COMPUTE_CAPABILITIES}
    below = [k for k in rows if k <= want]
    return rows.get(want) or (rows[max(below)] if below else None)


def cc_from_name(name: str) -> str | None:
    return next((cc for pattern, cc in GPU_NAMES if re.search(pattern, name, re.I)), None)


# ---------------------------------------------------------------- MSVC and Visual Studio


def stl_min_cuda(msvc: str) -> str | None:
    """The CUDA an MSVC toolset's STL demands (STL1002), from the table."""
    if Version.parse(msvc) is None:
        return None
    row = _newest_at_or_below(MSVC_RELEASES, msvc)
    return row.stl_min_cuda if row else None


def msc_ver(msvc: str) -> int | None:
    """Toolset 14.NN -> _MSC_VER 19NN (cl 19.NN); never _MSC_FULL_VER."""
    v = Version.parse(msvc)
    return 1900 + v.minor if v and len(v) > 1 else None


def msvc_of_msc(msc: int) -> str:
    return f"14.{msc - 1900}"


def msvc_of_msbuild17(minor: int) -> str:
    """MSBuild 17.N ships toolset 14.(30+N) as its default (17.10 -> 14.40)."""
    return f"14.{30 + minor}"


def vs_major(major: int | None) -> VsMajor | None:
    return next((r for r in VS_MAJORS if r.major == major), None)


def vs_year(major: int | None) -> str:
    row = vs_major(major)
    return row.year if row else ""


def generator(major: int | None) -> str | None:
    row = vs_major(major)
    return row.generator if row else None


def generator_since(major: int | None) -> Version | None:
    """The CMake version that added this VS major's generator (None: unknown)."""
    row = vs_major(major)
    return Version.of(row.generator_cmake) if row and row.generator_cmake else None


def build_customizations_subdir(major: int | None) -> tuple[str, ...] | None:
    """Where an instance of this VS major keeps BuildCustomizations (relative to its folder)."""
    row = vs_major(major)
    if row is not None:
        return row.bc_subdir
    if major is not None and major > VS_MAJORS[0].major:  # a VS newer than the table: the v{N}0 rule
        return (*_V, f"v{major}0", "BuildCustomizations")
    return None


INTEGRATION_SUBDIR = ("extras", "visual_studio_integration", "MSBuildExtensions")


def integration_names(cuda_short: str) -> tuple[str, ...]:
    """The MSBuildExtensions files of one CUDA X.Y, in the integration's order."""
    names = [
        f"CUDA {cuda_short}.props",
        f"CUDA {cuda_short}.targets",
        f"CUDA {cuda_short}.xml",
        f"Nvda.Build.CudaTasks.v{cuda_short}.dll",
    ]
    if integration_files(cuda_short) >= 5:
        names.insert(2, f"CUDA {cuda_short}.Version.props")
    return tuple(names)


def integration_problem(major: int | None, cuda_short: str) -> str | None:
    """Why CUDA's MSBuild integration does not support this VS major, or None when it does."""
    oldest = [r for r in VS_MAJORS if r.bc_subdir][-1]
    if major is None or major < oldest.major:
        return f"Visual Studio {vs_year(oldest.major - 1)} or older is not handled by fix-msbuild"
    row = vs_major(major)
    if row is None:
        return None
    if row.cuda_from and not cuda_at_least(cuda_short, row.cuda_from):
        older = vs_year(major - 1)
        return (
            f"CUDA {cuda_short} does not support Visual Studio {row.year} (supported from CUDA "
            f"{row.cuda_from}); install CUDA {row.cuda_from}+ or use VS {older}"
        )
    if row.cuda_before and cuda_at_least(cuda_short, row.cuda_before):
        newer = vs_year(major + 1)
        return (
            f"CUDA {cuda_short} dropped Visual Studio {row.year} (CUDA {mm(row.cuda_before).major} "
            f"needs VS {newer} or newer)"
        )
    return None


# ---------------------------------------------------------------- installer components


def toolset_component(cuda: str, host: HostLimits | None) -> tuple[str, str] | None:
    """(MSVC 14.NN, component id) of the newest pinnable toolset that CUDA `cuda` accepts: nvcc's
    host_config.h bounds (`host`, None: unknown) and the toolset's own STL minimum (STL1002), or None
    when the table has no such toolset."""
    for msvc, component, _ in TOOLSET_COMPONENTS:
        msc = msc_ver(msvc)
        if msc is None or (host is not None and not host.msvc_ok(msc)):
            continue
        stl = stl_min_cuda(msvc)
        if stl is None or cuda_at_least(cuda, stl):
            return msvc, component
    return None


def installer_command(install_path: str, component: str) -> str:
    """The command line that adds `component` to the instance at `install_path`."""
    return f'"{VS_INSTALLER}" modify --installPath "{install_path}" --add {component}'
