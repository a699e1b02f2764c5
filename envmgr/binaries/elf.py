"""`doctor --dll` on Linux: an ELF file's NEEDED entries, resolved as ld.so does (pyelftools parses).

Order (ld.so(8)): DT_RPATH of the object (only when it has no DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH,
the ld.so.cache (`ldconfig -p`, run through the Host), then the default folders. $ORIGIN expands to the
folder of the object that has the entry.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from envmgr.binaries.dll import MAX_READ, DepNode, DepReport, read_binary
from envmgr.binaries.elfsyms import Versions, check_versions, parse_versions
from envmgr.errors import InputFileError
from envmgr.host.base import Host, host_path, join

DEFAULT_DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib")
# glibc and the compiler runtime: resolved, never expanded.
_SYSTEM = re.compile(r"^(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux[-\w]*|libgomp)\.so")
_CACHE_LINE = re.compile(r"^\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)")


@dataclass(frozen=True)
class ElfInfo:
    bits: int
    needed: tuple[str, ...]
    rpath: tuple[str, ...]
    runpath: tuple[str, ...]
    soname: str = ""


def parse_elf(data: bytes, where: str) -> ElfInfo:
    if data[:4] != b"\x7fELF":
        raise InputFileError(f"{where}: not an ELF shared library", "give a .so file, or llama_cpp")
    # start-up: pyelftools costs ~50 ms of imports, paid only when an ELF file is read (issue 33)
    from elftools.common.exceptions import ELFError
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    try:
        elf = ELFFile(io.BytesIO(data))
        end = max(
            (s["sh_offset"] + s["sh_size"] for s in elf.iter_sections() if s["sh_type"] != "SHT_NOBITS"), default=0
        )
        if end > len(data):
            raise InputFileError(
                f"{where}: truncated ELF file ({len(data)} bytes, its sections need {end})",
                "reinstall the package that provided it",
            )
        needed, rpath, runpath, soname = [], [], [], ""
        for section in elf.iter_sections():
            if not isinstance(section, DynamicSection):
                continue
            for tag in section.iter_tags():
                if tag.entry.d_tag == "DT_NEEDED":
                    needed.append(tag.needed)  # type: ignore[attr-defined]  # set per tag by pyelftools
                elif tag.entry.d_tag == "DT_RPATH":
                    rpath += tag.rpath.split(":")  # type: ignore[attr-defined]  # set per tag by pyelftools
                elif tag.entry.d_tag == "DT_RUNPATH":
                    runpath += tag.runpath.split(":")  # type: ignore[attr-defined]  # set per tag by pyelftools
                elif tag.entry.d_tag == "DT_SONAME":
                    soname = tag.soname  # type: ignore[attr-defined]  # set per tag by pyelftools
        return ElfInfo(elf.elfclass, tuple(needed), tuple(rpath), tuple(runpath), soname)
    except InputFileError:
        raise
    except (ELFError, ValueError, EOFError, IndexError, KeyError, AssertionError, OSError) as exc:
        raise InputFileError(
            f"{where}: unreadable ELF file ({exc.__class__.__name__}: {exc})", "reinstall the package that provided it"
        ) from None
    except Exception as exc:  # construct's StreamError etc. on cut files: still one line, never a traceback
        raise InputFileError(
            f"{where}: unreadable ELF file ({exc.__class__.__name__})", "reinstall the package that provided it"
        ) from None


def parse_ldconfig(text: str, bits: int = 64) -> dict[str, str]:
    """`ldconfig -p` -> {soname: path} for the word size asked for (first entry wins, as ld.so's cache)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _CACHE_LINE.match(line)
        if not m:
            continue
        is64 = "64" in m.group(2)
        if is64 == (bits == 64):
            out.setdefault(m.group(1), m.group(3))
    return out


def ld_cache(host: Host, bits: int = 64) -> tuple[dict[str, str], str]:
    for exe in ("/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"):
        if exe != "ldconfig" and not host.exists(exe):
            continue
        done = host.run([exe, "-p"], timeout=5)
        if done.ok:
            return parse_ldconfig(done.stdout, bits), ""
        return {}, done.describe_failure()
    return {}, "ldconfig not found"


def _expand(entries: Iterable[str], origin: str) -> list[str]:
    return [e.replace("$ORIGIN", origin).replace("${ORIGIN}", origin) for e in entries if e]


def resolve_elf(host: Host, path: str, *, cache: dict[str, str] | None = None) -> DepReport:
    data = _read(host, path)
    info = parse_elf(data, path)
    if cache is None:
        cache, _ = ld_cache(host, info.bits)
    ld_path = [p for p in host.env.get("LD_LIBRARY_PATH", "").split(":") if p]
    walk = _ElfWalk(host, cache, ld_path)
    root = walk.expand(host_path(host, path).name, path, "given", info, 0)
    entries = check_versions(_edges(root), _version_reader(host), walk.copies)
    return DepReport(
        root,
        "elf",
        "ld.so: RPATH (without RUNPATH), LD_LIBRARY_PATH, RUNPATH, ld.so.cache, "
        "default folders; $ORIGIN is the object's folder",
        _search(info, ld_path, cache),
        entries=entries,
    )


def _search(info: ElfInfo, ld_path: list[str], cache: dict[str, str]) -> tuple[str, ...]:
    """The search order for the root object, one line a step."""
    search = (
        ([f"RPATH: {':'.join(info.rpath)}"] if info.rpath else [])
        + [f"LD_LIBRARY_PATH: {':'.join(ld_path) or '(not set)'}"]
        + ([f"RUNPATH: {':'.join(info.runpath)}"] if info.runpath else [])
        + [f"ld.so.cache: {len(cache)} libraries", "default: " + ":".join(DEFAULT_DIRS)]
    )
    return tuple(search)


class _ElfWalk:
    """resolve_elf's recursive walk: each NEEDED entry found in ld.so's order, each library opened once."""

    def __init__(self, host: Host, cache: dict[str, str], ld_path: list[str]) -> None:
        self.host, self.cache, self.ld_path = host, cache, ld_path
        self.seen: set[str] = set()
        self.infos: dict[str, tuple[ElfInfo, str]] = {}  # path -> (its ElfInfo, its $ORIGIN)

    def every(self, name: str, info: ElfInfo, origin: str) -> Iterator[tuple[str, str]]:
        """Each (path, search step) of `name` needed by an object with `info` in `origin`."""
        return _every(self.host, name, _steps(info, origin, self.ld_path), self.cache)

    def copies(self, importer: str, name: str) -> list[tuple[str, str]]:
        """Every copy of `name` that `importer` (an expanded path) could load, in ld.so's order."""
        info, origin = self.infos[importer]
        return list(dict.fromkeys(self.every(name, info, origin)))

    def expand(self, name: str, where: str, how: str, info: ElfInfo, depth: int) -> DepNode:
        """The node of the object at `where`, its NEEDED entries resolved."""
        host = self.host
        self.seen.add(name)
        origin = str(host_path(host, host.realpath(where)).parent)
        self.infos[where] = (info, origin)
        kids = []
        for dep in info.needed:
            found = next(self.every(dep, info, origin), None)
            if found is None:
                kids.append(DepNode(dep, None, "", why=explain_missing_so(host, dep)))
            elif dep in self.seen or _SYSTEM.match(dep) or depth > 6:
                kids.append(DepNode(dep, found[0], found[1], note="system" if _SYSTEM.match(dep) else "seen above"))
            else:
                kids.append(self._open(dep, found, depth))
        return DepNode(name, where, how, children=tuple(kids))

    def _open(self, dep: str, found: tuple[str, str], depth: int) -> DepNode:
        """A found library expanded, or a leaf when it is too big or unreadable."""
        try:
            size = self.host.stat(found[0]).size
        except OSError:
            size = 0
        if size > MAX_READ:
            self.seen.add(dep)
            return DepNode(dep, found[0], found[1], note=f"not opened: {size // (1024 * 1024)} MiB")
        try:
            sub = parse_elf(self.host.read_bytes(found[0]), found[0])
        except (InputFileError, OSError) as exc:
            self.seen.add(dep)
            return DepNode(dep, found[0], found[1], note=f"unreadable: {getattr(exc, 'message', exc)}")
        return self.expand(dep, found[0], found[1], sub, depth + 1)


def _steps(info: ElfInfo, origin: str, ld_path: list[str]) -> list[tuple[str, str]]:
    """The folders ld.so searches for an object with `info` in `origin`, before the cache and the defaults."""
    steps = [(d, "RPATH") for d in _expand(info.rpath, origin)] if not info.runpath else []
    steps += [(d, "LD_LIBRARY_PATH") for d in ld_path]
    return steps + [(d, "RUNPATH") for d in _expand(info.runpath, origin)]


def _every(host: Host, name: str, steps: list[tuple[str, str]], cache: dict[str, str]) -> Iterator[tuple[str, str]]:
    """Each (path, search step) of `name` in ld.so's order."""
    for folder, label in steps:
        if host.exists(join(host, folder, name)):
            yield join(host, folder, name), f"{label} {folder}"
    if name in cache and host.exists(cache[name]):
        yield cache[name], "ld.so.cache"
    for folder in DEFAULT_DIRS:
        if host.exists(join(host, folder, name)):
            yield join(host, folder, name), f"default {folder}"


def _edges(root: DepNode) -> list[tuple[str, str, str, str]]:
    """(importer path, library name, loaded path, search step) for each NEEDED entry that resolved, the
    system libraries included (libstdc++'s GLIBCXX_* versions are the common failure)."""
    out, stack = [], [root]
    while stack:
        node = stack.pop()
        if node.path and (node.children or node is root):
            out += [(node.path, c.name, c.path, c.how) for c in node.children if c.path]
        stack.extend(node.children)
    return out


def _version_reader(host: Host) -> Callable[[str], Versions]:
    cache: dict[str, Versions] = {}

    def read(path: str) -> Versions:
        if path not in cache:
            try:
                small = host.stat(path).size <= MAX_READ
                cache[path] = parse_versions(host.read_bytes(path)) if small else Versions()
            except OSError:
                cache[path] = Versions()
        return cache[path]

    return read


def _read(host: Host, path: str) -> bytes:
    return read_binary(host, path, "a shared library")


def explain_missing_so(host: Host, name: str) -> str:
    if name == "libcuda.so.1":
        stubs = [
            d
            for d in ("/usr/local/cuda/lib64/stubs", "/usr/local/cuda/targets/x86_64-linux/lib/stubs")
            if host.exists(join(host, d, "libcuda.so"))
        ]
        extra = f"; only the link stub {stubs[0]}/libcuda.so exists" if stubs else ""
        return "libcuda.so.1 comes with the NVIDIA driver: no driver here (Docker without --gpus?)" + extra
    m = re.match(r"^lib(cudart|cublas|cublasLt|nvrtc|cufft|curand|cusparse)\.so\.(\d+)$", name)
    if not m:
        return "not in RPATH/RUNPATH, LD_LIBRARY_PATH, ld.so.cache or the default folders"
    want = m.group(2)
    for root in ("/usr/local/cuda", *(f"/usr/local/{n}" for n in _cuda_dirs(host))):
        for sub in ("lib64", "targets/x86_64-linux/lib"):
            if host.exists(join(host, root, sub, name)):
                return f"{join(host, root, sub, name)} exists but is not on LD_LIBRARY_PATH or in ld.so.cache"
    return f"no CUDA {want} runtime is installed where the loader looks (CUDA {want} libraries are not bundled)"


def _cuda_dirs(host: Host) -> list[str]:
    try:
        return sorted(n for n in host.listdir("/usr/local") if n.startswith("cuda-"))
    except OSError:
        return []
