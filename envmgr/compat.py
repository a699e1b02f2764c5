"""Compatibility limits: which host compilers a CUDA's nvcc accepts, and which CUDA an MSVC STL accepts.

The real limits are read from the toolkit's own `include/crt/host_config.h` and the toolset's
`include/yvals_core.h` when present; the tables below are the fallback (facts/windows.md §7).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# CUDA (major, minor) from which a row applies -> (_MSC_VER min, _MSC_VER max exclusive, gcc max)
_TABLE = (
    ((13, 2), 1920, 1960, 15),
    ((13, 0), 1920, 1950, 15),
    ((12, 8), 1910, 1950, 14),
    ((12, 4), 1910, 1950, 13),
    ((12, 0), 1910, 1940, 12),
    ((11, 8), 1910, 1940, 11),
    ((11, 0), 1910, 1940, 10),
)

# MSVC toolset (14.xx) from which the STL demands at least this CUDA (STL1002). [facts §7.1]
_STL_TABLE = (((14, 50), "13.2"), ((14, 40), "12.4"))


@dataclass(frozen=True)
class HostLimits:
    msc_min: int | None          # _MSC_VER must be >= this
    msc_max_excl: int | None     # _MSC_VER must be < this
    gcc_max: int | None          # __GNUC__ must be <= this
    clang_max_excl: int | None   # __clang_major__ must be < this
    source: str                  # "host_config.h" or "table"

    def msvc_ok(self, msc_ver: int) -> bool:
        lo = self.msc_min if self.msc_min is not None else 0
        hi = self.msc_max_excl if self.msc_max_excl is not None else 10**6
        return lo <= msc_ver < hi

    def describe_msvc(self) -> str:
        if self.msc_min is None or self.msc_max_excl is None:
            return "unknown"
        return f"_MSC_VER {self.msc_min}..{self.msc_max_excl - 1} (MSVC 14.{self.msc_min - 1900}..14.{self.msc_max_excl - 1901})"


def parse_host_config(text: str) -> HostLimits | None:
    """Limits from nvcc's crt/host_config.h (`#if _MSC_VER < 1920 || _MSC_VER >= 1960`, `#if __GNUC__ > 15`)."""
    msc = re.search(r"#if\s+_MSC_VER\s*<\s*(\d{4})\s*\|\|\s*_MSC_VER\s*>=\s*(\d{4})", text)
    gcc = re.search(r"#if\s+__GNUC__\s*>\s*(\d+)", text)
    clang = re.search(r"#if\s+\(__clang_major__\s*>=\s*(\d+)\)\s*\|\|\s*\(__clang_major__\s*<\s*3\)", text)
    if not (msc or gcc):
        return None
    return HostLimits(int(msc.group(1)) if msc else None, int(msc.group(2)) if msc else None,
                      int(gcc.group(1)) if gcc else None, int(clang.group(1)) if clang else None,
                      "host_config.h")


def table_limits(cuda_short: str) -> HostLimits | None:
    version = _mm(cuda_short)
    if version is None:
        return None
    for since, lo, hi, gcc in _TABLE:
        if version >= since:
            return HostLimits(lo, hi, gcc, None, "table")
    return None


def parse_stl_min_cuda(text: str) -> str | None:
    """The CUDA the MSVC STL demands, from yvals_core.h's STL1002 message."""
    m = re.search(r"expected CUDA (\d+\.\d+) or newer", text)
    return m.group(1) if m else None


def table_stl_min_cuda(toolset: str) -> str | None:
    version = _mm(toolset)
    if version is None:
        return None
    for since, cuda in _STL_TABLE:
        if version >= since:
            return cuda
    return None


def _mm(version: str) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", version)
    return (int(m.group(1)), int(m.group(2))) if m else None


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version))


def cuda_at_least(cuda_short: str, minimum: str) -> bool:
    return version_tuple(cuda_short)[:2] >= version_tuple(minimum)[:2]


def read_limits(host, inv):
    """The limits `select.choose` needs, read through the host: each toolkit's host_config.h (table
    fallback) and each toolset's yvals_core.h (table fallback)."""
    from .host.base import join, safe_read_text
    from .select import Limits

    host_limits = {}
    for kit in inv.cuda:
        text, _ = safe_read_text(host, join(host, kit.path, "include", "crt", "host_config.h"))
        host_limits[kit.path] = (parse_host_config(text) if text else None) or table_limits(kit.short)
    stl = {}
    for vs in inv.visual_studio:
        for t in vs.toolsets:
            text, _ = safe_read_text(host, join(host, t.path, "include", "yvals_core.h"))
            stl[t.path] = (parse_stl_min_cuda(text) if text else None) or table_stl_min_cuda(t.version)
    return Limits(host_limits, stl)
