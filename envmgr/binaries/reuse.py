"""Same soname, the app's copy (issue 37): a library the package needs by soname that ld.so did not look for,
because the process had already mapped a library of that soname, one an app module (torch) loaded first.

ld.so(8) searches for a DT_NEEDED name only when no object of that soname is loaded yet; otherwise it binds
the package to the loaded object, wherever it came from. So inside an app that imported torch first, llama.cpp's
libggml-cpu.so gets torch's torch/lib/libgomp.so.1 and libggml-cuda.so gets torch's nvidia/cu13 libcudart and
cuBLAS instead of the copies its own RUNPATH, LD_LIBRARY_PATH or ld.so.cache name: one copy of each by path
(the duplicate check sees nothing), but a runtime of another release than the one the package was built and
tested with (the H100 run of bench/results/2026-12-07-issue37-gpu-after-torch.md died in the model load so).

Here, for each library of the package that the process maps, each NEEDED soname is resolved as ld.so would for
the package alone (binaries/elf.py's search order) and compared with the copy the process maps under that soname;
a difference where the mapped copy is one the --after modules loaded is reported with both paths and what can
be read of their versions (the real file's name, the newest symbol version of each family the package needs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from envmgr.binaries.dll import MAX_READ
from envmgr.binaries.elf import _every, _steps, ld_cache, parse_elf
from envmgr.binaries.elfsyms import Versions, newest, parse_versions
from envmgr.errors import InputFileError
from envmgr.host.base import Host, host_path

MAX_IMPORTER = 512 * 1024 * 1024  # a libggml-cuda.so with every architecture's kernels is a few hundred MiB
MAX_IMPORTERS = 64


@dataclass(frozen=True)
class Reused:
    soname: str
    importer: str  # the package's library whose NEEDED entry it is
    mapped: str  # the copy the process maps (loaded by an --after module)
    alone: str  # the copy ld.so picks for the package alone
    how: str  # the search step that finds `alone` ("RUNPATH /x", "ld.so.cache", ...)
    mapped_version: str
    alone_version: str
    by: str  # the --after module that loaded the mapped copy
    # Windows (binaries/winreuse.py): the functions the importer needs that the mapped copy does not export;
    # any one fails the import with [WinError 127] (ELF: ld.so's version check fails the load instead)
    missing: tuple[str, ...] = ()

    @property
    def line(self) -> str:
        lacks = (
            f"; the app's copy lacks {', '.join(self.missing)}: the import fails ([WinError 127])"
            if self.missing
            else ""
        )
        return (
            f"{host_name(self.importer)} needs {self.soname}: reused the app's copy {self.mapped} "
            f"({self.mapped_version}; loaded by import {self.by}) instead of {self.alone} "
            f"({self.alone_version}; {self.how}), the copy it loads alone{lacks}"
        )

    def as_json(self) -> dict[str, str | list[str]]:
        return {
            "soname": self.soname,
            "importer": self.importer,
            "mapped": self.mapped,
            "alone": self.alone,
            "found_by": self.how,
            "mapped_version": self.mapped_version,
            "alone_version": self.alone_version,
            "loaded_by": self.by,
            "missing_functions": list(self.missing),
        }


def host_name(path: str) -> str:
    """The file name of a POSIX or a Windows path (the child's records are either)."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def reused(host: Host, modules: Sequence[str], roots: Sequence[str], app: Mapping[str, str]) -> tuple[Reused, ...]:
    """modules: every path the process maps (the child's `runtimes` record); roots: the package's folders
    (its libraries are the mapped ones under them); app: mapped path -> the --after module that loaded it.
    `host`'s environment is the child's (its LD_LIBRARY_PATH)."""
    prefixes = tuple(r.rstrip("/") + "/" for r in roots if r)
    importers = [m for m in modules if m.startswith(prefixes) and ".so" in host_name(m)][:MAX_IMPORTERS]
    if not importers or not app:
        return ()
    cache: dict[str, str] | None = None
    ld_path = [p for p in host.env.get("LD_LIBRARY_PATH", "").split(":") if p]
    versions: dict[str, Versions] = {}
    out: list[Reused] = []
    for importer in importers:
        try:
            if host.stat(importer).size > MAX_IMPORTER:
                continue
            data = host.read_bytes(importer)
            info = parse_elf(data, importer)
        except (OSError, InputFileError):
            continue
        needs = parse_versions(data)
        origin = str(host_path(host, host.realpath(importer)).parent)
        for soname in info.needed:
            mapped = _mapped(modules, soname)
            if mapped is None or mapped not in app:
                continue
            if cache is None:
                cache, _ = ld_cache(host, info.bits)
            alone = next(_every(host, soname, _steps(info, origin, ld_path), cache), None)
            if alone is None or _same(host, alone[0], mapped):
                continue
            wanted = needs.needed_of(soname)
            out.append(
                Reused(
                    soname,
                    importer,
                    mapped,
                    alone[0],
                    alone[1],
                    _version(host, mapped, wanted, versions),
                    _version(host, alone[0], wanted, versions),
                    app[mapped],
                )
            )
    return tuple(out)


def _mapped(modules: Sequence[str], soname: str) -> str | None:
    """The mapped copy of `soname`: /proc/self/maps names the real file, so libcudart.so.13.0.96 for a
    libcudart.so.13 reached through its symbolic link."""
    return next((m for m in modules if host_name(m) == soname or host_name(m).startswith(soname + ".")), None)


def _same(host: Host, a: str, b: str) -> bool:
    try:
        ra, rb = host.realpath(a), host.realpath(b)
        if ra == rb:
            return True
        sa, sb = host.stat(ra).size, host.stat(rb).size
        return sa == sb and sa <= MAX_READ and host.read_bytes(ra) == host.read_bytes(rb)
    except OSError:
        return False


def _version(host: Host, path: str, wanted: tuple[str, ...], cache: dict[str, Versions]) -> str:
    """The real file's name, its size, and the newest symbol version it defines of each family the package
    requires of it (GOMP_5.0, libcudart.so.13): what tells two copies of one soname apart."""
    try:
        real = host.realpath(path)
        size = host.stat(real).size
    except OSError:
        return "unreadable"
    words = [host_name(real), f"{size:,} bytes"]
    if wanted and size <= MAX_READ:
        if real not in cache:
            try:
                cache[real] = parse_versions(host.read_bytes(real))
            except OSError:
                cache[real] = Versions()
        families = dict.fromkeys(v.split("_")[0] for v in wanted)
        words += [n for n in (newest(cache[real].defines, f + "_") for f in families) if n]
    return ", ".join(words)
