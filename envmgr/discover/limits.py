"""The compatibility limits a machine states itself: each toolkit's `include/crt/host_config.h` and
each MSVC toolset's `include/yvals_core.h`. Where a file is missing, the knowledge base answers."""

from __future__ import annotations

import re

from envmgr import knowledge
from envmgr.discover.model import Inventory
from envmgr.host.base import Host, join, safe_read_text
from envmgr.knowledge import HostLimits, Limits

_MSC = re.compile(r"#if\s+_MSC_VER\s*<\s*(\d{4})\s*\|\|\s*_MSC_VER\s*>=\s*(\d{4})")
_GCC = re.compile(r"#if\s+__GNUC__\s*>\s*(\d+)")
_STL = re.compile(r"expected CUDA (\d+\.\d+) or newer")


def parse_host_config(text: str) -> HostLimits | None:
    """Limits from nvcc's crt/host_config.h (`#if _MSC_VER < 1920 || _MSC_VER >= 1960`, `#if __GNUC__ > 15`)."""
    msc, gcc = _MSC.search(text), _GCC.search(text)
    if not (msc or gcc):
        return None
    return HostLimits(
        int(msc.group(1)) if msc else None,
        int(msc.group(2)) if msc else None,
        int(gcc.group(1)) if gcc else None,
        "host_config.h",
    )


def parse_stl_min_cuda(text: str) -> str | None:
    """The CUDA the MSVC STL demands, from yvals_core.h's STL1002 message."""
    m = _STL.search(text)
    return m.group(1) if m else None


def read_limits(host: Host, inv: Inventory) -> Limits:
    """Each toolkit's host_config.h (table fallback) and each toolset's yvals_core.h (table fallback)."""
    host_limits = {}
    for kit in inv.cuda:
        text, _ = safe_read_text(host, join(host, kit.path, "include", "crt", "host_config.h"))
        host_limits[kit.path] = (parse_host_config(text) if text else None) or knowledge.host_limits(kit.short)
    stl = {}
    for vs in inv.visual_studio:
        for t in vs.toolsets:
            text, _ = safe_read_text(host, join(host, t.path, "include", "yvals_core.h"))
            stl[t.path] = (parse_stl_min_cuda(text) if text else None) or knowledge.stl_min_cuda(t.version)
    return Limits(host_limits, stl)
