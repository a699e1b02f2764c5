"""Windows SDK versions, the way vcvars' winsdk.bat finds them (docs/knowledge.md#windows-sdk)."""

from __future__ import annotations

from envmgr.host.base import Host, join, safe_listdir
from envmgr.version import Version

_ROOT_KEYS = (
    "HKLM\\SOFTWARE\\Microsoft\\Windows Kits\\Installed Roots",
    "HKLM\\SOFTWARE\\WOW6432Node\\Microsoft\\Windows Kits\\Installed Roots",
)


def kits_root(host: Host) -> str:
    for key in _ROOT_KEYS:
        values = host.reg_values(key) or {}
        root = values.get("KitsRoot10")
        if root is not None and isinstance(root.data, str) and root.data:
            return root.data
    pf86 = host.env.get("ProgramFiles(x86)") or "C:\\Program Files (x86)"
    return join(host, pf86, "Windows Kits", "10")


def discover_sdks(host: Host) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Usable SDK versions (newest first) and problems for partly removed ones."""
    root = kits_root(host)
    include = join(host, root, "Include")
    names, err = safe_listdir(host, include)
    problems = [err] if err else []
    usable = []
    for name in names:
        if not name.startswith("10."):
            continue
        has_header = host.exists(join(host, include, name, "um", "windows.h")) or host.exists(
            join(host, include, name, "um", "winsdkver.h")
        )
        if has_header:
            usable.append(name)
        else:
            problems.append(f"Windows SDK {name} is incomplete (Include\\{name}\\um has no windows.h)")
    usable.sort(key=Version.of, reverse=True)
    return tuple(usable), tuple(problems)
