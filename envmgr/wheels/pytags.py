"""The wheel tags a target Python accepts, from what that Python says of itself (pure).

The target (`--python`, or another machine's interpreter) is asked by a child run: its own
`packaging.tags.sys_tags()` (packaging, or the copy pip vendors) is the truth when it has either; a
Python with neither (the embeddable CPython, a venv made --without-pip) still reports, from its
standard library, its implementation, version, ABI flags, platform and C library, and the tags are
derived here from those with envmgr's own `packaging.tags` for that version and platform, never for
the interpreter running envmgr.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from packaging import tags as ptags

# Run by the TARGET Python (any 3.x). Line 1, standard library only, is printed and flushed first: the
# second, its own packaging's sys_tags(), can kill the process (CPython 3.13 under Wine 8: platform's WMI
# query calls an unimplemented propsys function), and the facts still arrive.
FACTS_SCRIPT = (
    "import json, os, sys, sysconfig\n"
    "libc = os.confstr('CS_GNU_LIBC_VERSION') if hasattr(os, 'confstr') else None\n"
    "print(json.dumps({'platform': sysconfig.get_platform(), 'impl': sys.implementation.name,\n"
    "    'version': list(sys.version_info[:2]), 'soabi': sysconfig.get_config_var('SOABI') or '',\n"
    "    'nogil': bool(sysconfig.get_config_var('Py_GIL_DISABLED')), 'debug': hasattr(sys, 'gettotalrefcount'),\n"
    "    'libc': libc or ''}))\n"
    "sys.stdout.flush()\n"
    "try:\n"
    "    from packaging import tags\n"
    "except ImportError:\n"
    "    try:\n        from pip._vendor.packaging import tags\n"
    "    except ImportError:\n        tags = None\n"
    "print(json.dumps([str(t) for t in tags.sys_tags()][:5000] if tags else []))\n"
)
MAX_TAGS = 5000
_GLIBC = re.compile(r"^glibc (\d+)\.(\d+)")
_MAC = re.compile(r"^macosx-(\d+)\.(\d+)-(\w+)$")


def platform_tag(platform: str) -> str:
    """sysconfig.get_platform() as a wheel's platform tag: win-amd64 -> win_amd64."""
    return re.sub(r"[-. ]", "_", platform)


def _platforms(facts: Mapping[str, Any]) -> list[str]:
    plat = str(facts.get("platform", ""))
    mac = _MAC.match(plat)
    if mac:
        return list(ptags.mac_platforms((int(mac.group(1)), int(mac.group(2))), mac.group(3)))
    tag = platform_tag(plat)
    glibc = _GLIBC.match(str(facts.get("libc", "")))
    if tag.startswith("linux_") and glibc:
        arch, minor = tag[len("linux_") :], int(glibc.group(2))
        many = [f"manylinux_{glibc.group(1)}_{m}_{arch}" for m in range(minor, 4, -1)]
        legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
        many += [f"{legacy[m]}_{arch}" for m in sorted(legacy, reverse=True) if m <= minor]
        return [*many, tag]
    return [tag]


def derived(facts: Mapping[str, Any]) -> tuple[str, ...]:
    """Every tag the described Python accepts, best first (what its own sys_tags() would say)."""
    version = tuple(int(v) for v in facts.get("version", [])[:2])
    if len(version) != 2:
        return ()
    platforms = _platforms(facts)
    digits = f"{version[0]}{version[1]}"
    if facts.get("impl") == "cpython":
        abi = f"cp{digits}{'t' if facts.get('nogil') else ''}{'d' if facts.get('debug') else ''}"
        found = [
            *ptags.cpython_tags(version, [abi], platforms),
            *ptags.compatible_tags(version, f"cp{digits}", platforms),
        ]
    else:
        interp = f"{ptags.INTERPRETER_SHORT_NAMES.get(str(facts.get('impl')), str(facts.get('impl')))}{digits}"
        abi = platform_tag(str(facts.get("soabi", ""))) or "none"
        found = [*ptags.generic_tags(interp, [abi], platforms), *ptags.compatible_tags(version, interp, platforms)]
    return tuple(dict.fromkeys(str(t) for t in found))[:MAX_TAGS]


def accepted(facts: Mapping[str, Any], own: list[Any] | None, why_not: str = "") -> tuple[tuple[str, ...], str]:
    """(the tags, "cp313 on win_amd64"): the target's own sys_tags() when it gave them, else derived from its
    facts (why_not: why its own could not be had)."""
    mine = [t for t in own or [] if isinstance(t, str) and t.count("-") == 2][:MAX_TAGS]
    found = tuple(mine) or derived(facts)
    if not found:
        return (), ""
    why = why_not or "it has neither packaging nor pip"
    how = "" if mine else f" (tags derived from its version and platform: {why})"
    return found, f"{found[0].split('-')[0]} on {platform_tag(str(facts.get('platform', '?')))}{how}"
