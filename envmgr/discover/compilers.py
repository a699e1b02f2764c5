"""Host C/C++ compilers on Linux (gcc, g++, clang and their -N alternatives): nvcc's limits need them."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

from envmgr.discover.model import HostCompiler
from envmgr.host.base import WINDOWS, Host

_VERSION = re.compile(r"\b(\d+)\.(\d+)(?:\.(\d+))?\b")
TIMEOUT = 10.0


def parse_compiler_version(text: str) -> str | None:
    """First line of `gcc --version` / `clang --version`: the last version-looking token of gcc's line
    (`gcc (Debian 12.2.0-14+deb12u1) 12.2.0`), the one after `version` for clang."""
    first = text.replace("\r", "").strip().splitlines()[:1]
    if not first:
        return None
    line = first[0]
    m = re.search(r"version (\d+\.\d+(?:\.\d+)?)", line)
    if m:
        return m.group(1)
    found = _VERSION.findall(line.split(")")[-1]) or _VERSION.findall(line)
    if not found:
        return None
    major, minor, patch = found[-1]
    return ".".join(x for x in (major, minor, patch) if x)


# Versioned names Debian/Ubuntu/Fedora use for alternatives (g++-12, clang-18 ...).
CANDIDATES = tuple(
    f"{base}{suffix}"
    for base in ("gcc", "g++", "clang", "clang++")
    for suffix in ("", *(f"-{n}" for n in range(7, 23)))
)


def find_compilers(host: Host) -> list[tuple[str, str]]:
    """Each candidate name found on PATH (a `which`, so a record stays small and replays exactly)."""
    found = [(name, host.which(name)) for name in CANDIDATES]
    return [(name, path) for name, path in found if path]


def probe_compiler(host: Host, name: str, path: str) -> HostCompiler:
    done = host.run([path, "--version"], timeout=TIMEOUT)
    version = parse_compiler_version(done.stdout) if done.ok else None
    if version is None:
        problem = done.describe_failure() if not done.ok else "printed no version"
        return HostCompiler(name, path, "?", None, (f"{name} --version: {problem}",))
    return HostCompiler(name, path, version, int(version.split(".")[0]))


def discover_compilers(host: Host) -> tuple[HostCompiler, ...]:
    if host.platform == WINDOWS:
        return ()  # MSVC toolsets are listed per Visual Studio instance
    found = find_compilers(host)
    if not found:
        return ()
    with ThreadPoolExecutor(max_workers=min(8, len(found))) as pool:
        return tuple(pool.map(lambda nf: probe_compiler(host, *nf), found))
