"""`doctor --dll`: a PE file's imports, resolved recursively the way llama_cpp's loader will load them.

llama_cpp/_ctypes_extensions.py (0.3.x) prepends llama_cpp\\lib to PATH, calls os.add_dll_directory for
CUDA_PATH\\bin and \\lib, then loads with winmode=0: LoadLibraryExW(path, NULL, 0), the legacy standard
search order (python.exe's folder, System32, the Windows folder, then PATH), in which the
add_dll_directory folders are NOT consulted (docs/knowledge.md#failures-and-the-windows-loader). So every
dependency must be on PATH.
Bytes are read through the Host; pefile parses them. The ELF side lives in elf.py.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from envmgr.binaries.dllsyms import Exports, Imported, MissingEntry, check_entries, pe_exports, pe_import_functions
from envmgr.binaries.winloader import LoaderModel, loader_model
from envmgr.errors import InputFileError
from envmgr.host.base import Host, host_path, join

MAX_READ = 48 * 1024 * 1024  # larger DLLs (cublasLt is ~500 MB) are resolved but not opened
_API_SET = re.compile(r"^(api|ext)-ms-", re.I)
# Always resolvable system DLLs (KnownDLLs and the core of System32); not recorded on machine files.
KNOWN = {
    n.lower()
    for n in (
        "kernel32.dll",
        "kernelbase.dll",
        "ntdll.dll",
        "user32.dll",
        "gdi32.dll",
        "advapi32.dll",
        "shell32.dll",
        "ole32.dll",
        "oleaut32.dll",
        "ws2_32.dll",
        "msvcrt.dll",
        "ucrtbase.dll",
        "sechost.dll",
        "rpcrt4.dll",
        "combase.dll",
        "shlwapi.dll",
        "bcrypt.dll",
        "crypt32.dll",
        "version.dll",
        "setupapi.dll",
        "dbghelp.dll",
        "comdlg32.dll",
        "imm32.dll",
        "psapi.dll",
        "iphlpapi.dll",
        "winmm.dll",
        "cfgmgr32.dll",
    )
}
# What a big DLL we do not open is known to import (cuBLAS loads cuBLASLt of the same major).
IMPLIED = {re.compile(r"^cublas64_(\d+)\.dll$", re.I): "cublasLt64_{0}.dll"}
_MACHINES = {0x14C: ("x86 (32-bit)", 32), 0x8664: ("x64", 64), 0xAA64: ("ARM64", 64), 0x1C4: ("ARM", 32)}
_ELF_MACHINES = {3: "x86", 62: "x86-64", 183: "AArch64", 40: "ARM"}


@dataclass(frozen=True)
class DepNode:
    name: str
    path: str | None  # where it resolves; None when missing
    how: str  # which search step found it ("PATH entry 3", "System32", "RUNPATH $ORIGIN")
    why: str = ""  # for a missing one: the explanation
    children: tuple[DepNode, ...] = ()
    note: str = ""  # "seen above", "not opened: 480 MiB", "system library"
    bad: str = ""  # found, but the loader rejects it (another machine, truncated): why


@dataclass(frozen=True)
class DepReport:
    root: DepNode
    kind: str  # "pe" or "elf"
    loader: str  # the loader model, in words
    search: tuple[str, ...]  # the search order used, one folder per line
    blocked: str = ""  # why the load never starts (llama_cpp's add_dll_directory raising)
    ignored: tuple[str, ...] = ()  # os.add_dll_directory folders the loader model does not search
    entries: tuple[MissingEntry, ...] = ()  # imported functions the loaded DLL does not export (dllsyms.py)

    def _nodes(self, keep: Callable[[DepNode], bool]) -> tuple[DepNode, ...]:
        out, stack = [], [self.root]
        while stack:
            node = stack.pop()
            if keep(node):
                out.append(node)
            stack.extend(reversed(node.children))
        return tuple({n.name.lower(): n for n in out}.values())

    def missing(self) -> tuple[DepNode, ...]:
        return self._nodes(lambda n: n.path is None)

    def unloadable(self) -> tuple[DepNode, ...]:
        """Found first in the search order, yet not loadable: the loader fails there, it does not search on."""
        return self._nodes(lambda n: bool(n.bad))

    @property
    def loads(self) -> bool:
        return not (self.blocked or self.missing() or self.unloadable() or self.entries)


def binary_machine(head: bytes) -> tuple[str, int] | None:
    """(architecture, bits) from a PE or ELF header; None for anything else."""
    if head[:4] == b"\x7fELF" and len(head) >= 20:
        bits = 64 if head[4] == 2 else 32
        machine = struct.unpack_from("<H" if head[5] == 1 else ">H", head, 18)[0]
        return _ELF_MACHINES.get(machine, f"machine {machine}"), bits
    if head[:2] != b"MZ" or len(head) < 0x40:
        return None
    off = struct.unpack_from("<I", head, 0x3C)[0]
    if off + 6 > len(head) or head[off : off + 4] != b"PE\0\0":
        return None
    machine = struct.unpack_from("<H", head, off + 4)[0]
    return _MACHINES.get(machine, (f"machine 0x{machine:x}", 0))


def pe_imports(data: bytes, where: str) -> tuple[str, ...]:
    """The DLL names a PE file imports (normal and delay-load); InputFileError for a bad or cut file."""
    import pefile  # start-up: paid only when a PE file is read (issue 33)

    try:
        pe = pefile.PE(data=data, fast_load=True)
    except pefile.PEFormatError as exc:
        raise InputFileError(
            f"{where}: not a Windows DLL/EXE ({exc.value})",
            "give a .dll/.pyd/.exe file, or llama_cpp for the installed package",
        ) from None
    # A file cut inside its headers parses with fewer sections than it declares (or none): not a DLL
    # with "0 missing" imports, a truncated one.
    headers = getattr(getattr(pe, "OPTIONAL_HEADER", None), "SizeOfHeaders", 0)
    end = max([headers, *(s.PointerToRawData + s.SizeOfRawData for s in pe.sections)])
    if end > len(data) or len(pe.sections) < pe.FILE_HEADER.NumberOfSections:
        raise InputFileError(
            f"{where}: truncated PE file ({len(data)} bytes, its headers and sections need {end})",
            "reinstall the package that provided it",
        )
    pe.parse_data_directories(
        directories=[
            pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_IMPORT"],
            pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_DELAY_IMPORT"],
        ]
    )
    names = [e.dll for e in getattr(pe, "DIRECTORY_ENTRY_IMPORT", [])]
    names += [e.dll for e in getattr(pe, "DIRECTORY_ENTRY_DELAY_IMPORT", [])]
    return tuple(dict.fromkeys(n.decode("ascii", "replace") for n in names if n))


def resolve_pe(
    host: Host,
    dll: str,
    *,
    python_exe: str | None = None,
    base_dir: str | None = None,
    loader: str = "llama_cpp",
    dll_dirs: tuple[str, ...] = (),
) -> DepReport:
    """The dependency tree of `dll` as `loader` (winloader.LOADERS) resolves it, with `dll_dirs` given to
    os.add_dll_directory; raises InputFileError when `dll` itself is unreadable or not a PE file."""

    model = loader_model(host, loader, base_dir or str(host_path(host, dll).parent), python_exe, dll_dirs)
    data = _read(host, dll)
    walk = _PeWalk(host, loader, model, _python_machine(host, python_exe))
    root = walk.expand(host_path(host, dll).name, dll, "given", data, 0)
    if root.bad:  # ctypes.CDLL of the file itself fails: [WinError 193]
        root = DepNode(root.name, root.path, root.how, bad=f"{root.bad} (ctypes: [WinError 193])")
    base = base_dir or str(host_path(host, dll).parent)
    entries = check_entries(host, _edges(root), walk.functions, model.dirs, base, _export_reader(host))
    return DepReport(
        root,
        "pe",
        model.description,
        tuple(f"{label}: {d}" for d, label in model.dirs),
        model.blocked,
        model.ignored,
        entries,
    )


class _PeWalk:
    """resolve_pe's recursive walk: each DLL found in the loader's search order is opened once."""

    def __init__(self, host: Host, loader: str, model: LoaderModel, want: tuple[str, int] | None) -> None:
        self.host, self.loader, self.model, self.want = host, loader, model, want
        self.dirs = model.dirs
        self.seen: set[str] = set()
        self.functions: dict[str, dict[str, tuple[Imported, ...]]] = {}  # path -> its imported functions

    def expand(self, name: str, path: str, how: str, data: bytes | None, depth: int) -> DepNode:
        """The node of a DLL found at `path`, its imports resolved (not when `data` is None: not opened)."""
        self.seen.add(name.lower())
        if data is None:
            return DepNode(name, path, how, note=_unread_note(self.host, path))
        bad = _rejected(data, path, self.want, check_cut=depth > 0)  # a cut root is bad input: exit 2
        if bad:
            return DepNode(name, path, how, bad=bad)
        self.functions[path] = _functions(data)
        return DepNode(name, path, how, children=tuple(self.child(dep, depth) for dep in pe_imports(data, path)))

    def child(self, dep: str, depth: int) -> DepNode:
        """The node of one import `dep` of a DLL at `depth`."""
        low = dep.lower()
        if _API_SET.match(dep):
            return DepNode(dep, "(API set)", "Windows API set", note="system")
        if low in self.seen:
            found = _find(self.host, dep, self.dirs)
            return DepNode(
                dep,
                found[0] if found else None,
                found[1] if found else "",
                note="seen above",
                why="" if found else explain_missing(self.host, dep, loader=self.loader),
            )
        found = _find(self.host, dep, self.dirs)
        if found is None:
            if low in KNOWN:
                return DepNode(dep, "(system)", "KnownDLLs / System32", note="system")
            self.seen.add(low)
            return DepNode(
                dep, None, "", why=explain_missing(self.host, dep, loader=self.loader, ignored=self.model.ignored)
            )
        path, how = found
        if how in ("System32", "the Windows folder") or depth > 6:
            self.seen.add(low)
            return DepNode(dep, path, how, note="system" if how != "" else "")
        return self._open(dep, path, how, depth)

    def _open(self, dep: str, path: str, how: str, depth: int) -> DepNode:
        """A found DLL expanded; one too big to read gets what it is known to import (IMPLIED) as children."""
        size_ok = _size(self.host, path) <= MAX_READ
        node = self.expand(dep, path, how, _read(self.host, path) if size_ok else None, depth + 1)
        if not size_ok:
            implied = [self.child(t.format(m.group(1)), depth + 1) for rx, t in IMPLIED.items() if (m := rx.match(dep))]
            node = DepNode(node.name, node.path, node.how, node.why, tuple(implied), node.note)
        return node


def _functions(data: bytes) -> dict[str, tuple[Imported, ...]]:
    import pefile  # start-up: paid only when a PE file is read (issue 33)

    try:
        return pe_import_functions(data)
    except (pefile.PEFormatError, ValueError, IndexError):
        return {}


def _edges(root: DepNode) -> list[tuple[str, str, str, str]]:
    """(importer path, DLL name, loaded path, search step) for every import that resolved to a real file."""
    out, stack = [], [root]
    while stack:
        node = stack.pop()
        for child in node.children:
            if child.path and not child.path.startswith("(") and not child.bad and node.path:
                out.append((node.path, child.name, child.path, child.how))
        stack.extend(reversed(node.children))
    return out


def _export_reader(host: Host) -> Callable[[str], Exports | None]:
    cache: dict[str, Exports | None] = {}

    def read(path: str) -> Exports | None:
        import pefile  # start-up: paid only when a PE file is read (issue 33)

        key = path.lower()
        if key not in cache:
            try:
                cache[key] = pe_exports(host.read_bytes(path)) if _size(host, path) <= MAX_READ else None
            except (OSError, pefile.PEFormatError, ValueError, IndexError):
                cache[key] = None
        return cache[key]

    return read


def _python_machine(host: Host, python_exe: str | None) -> tuple[str, int] | None:
    """python.exe's machine; None when unknown or not a PE (a Linux python looking at a Windows DLL)."""
    if not python_exe:
        return None
    try:
        head = host.read_bytes(python_exe)[:4096]
    except OSError:
        return None
    return binary_machine(head) if head[:2] == b"MZ" else None


def _rejected(data: bytes, path: str, want: tuple[str, int] | None, check_cut: bool) -> str:
    """Why the loader refuses a PE it found (STATUS_INVALID_IMAGE_FORMAT, 0xc000007b); "" when it maps it.
    It fails there: a wrong-machine or cut copy first in the search order hides a good one behind it."""
    have = binary_machine(data[:4096])
    if want is not None and have is not None and have[0] != want[0]:
        return f"{have[0]} DLL, but python.exe is {want[0]}"
    if not check_cut:
        return ""
    try:
        pe_imports(data, path)
    except InputFileError as exc:
        return exc.message
    return ""


def _read(host: Host, path: str) -> bytes:
    return read_binary(host, path, "a DLL")


def read_binary(host: Host, path: str, what: str) -> bytes:
    try:
        return host.read_bytes(path)
    except FileNotFoundError:
        raise InputFileError(f"{path}: no such file", f"give the path of {what}, or llama_cpp") from None
    except OSError as exc:
        raise InputFileError(
            f"{path}: cannot read it ({exc.strerror or exc})", "check the path and permissions"
        ) from None


def _size(host: Host, path: str) -> int:
    try:
        return host.stat(path).size
    except OSError:
        return 0


def _unread_note(host: Host, path: str) -> str:
    return f"not opened: {_size(host, path) // (1024 * 1024)} MiB"


def _find(host: Host, name: str, dirs: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    for folder, label in dirs:
        candidate = join(host, folder, name)
        if host.exists(candidate):
            return candidate, label
    return None


def explain_missing(host: Host, name: str, *, loader: str = "llama_cpp", ignored: tuple[str, ...] = ()) -> str:
    """Why a DLL is not found, in the terms of the CUDA installs the host has and the loader's search order."""
    low = name.lower()
    skipped = next((d for d in ignored if host.exists(join(host, d, name))), None)
    if skipped is not None:
        return (
            f"{join(host, skipped, name)} exists, but winmode=0 does not search os.add_dll_directory "
            "folders: put that folder on PATH"
        )
    env = host.env
    if low == "nvcuda.dll":
        return "nvcuda.dll comes with the NVIDIA driver (System32): no driver installed"
    if low.startswith(("msvcp140", "vcruntime140", "concrt140")):
        return "the Visual C++ x64 redistributable is not installed"
    m = re.match(r"^(cudart|cublas|cublaslt|cufft|curand|cusparse|cusolver|nvrtc|nvjitlink)64_(\d+)", low)
    if not m:
        if loader == "ctypes":
            return "not in the DLL's folder, the python.exe folder, an os.add_dll_directory folder or System32"
        return "not in the python.exe folder, System32, the Windows folder or any PATH entry"
    want = int(m.group(2)[:2]) if len(m.group(2)) > 2 else int(m.group(2))
    cuda_path = env.get("CUDA_PATH", "")
    mm = re.search(r"v?(\d+)\.(\d+)\\?$", cuda_path)
    have = int(mm.group(1)) if mm else None
    if cuda_path and mm is not None and have != want:
        return f"{name} is CUDA {want}'s; CUDA_PATH points at {mm.group(1)}.{mm.group(2)} ({cuda_path})"
    for folder in _cuda_bins(host):
        if host.exists(join(host, folder, name)):
            if loader == "ctypes":
                return (
                    f"{join(host, folder, name)} exists but {folder} is not an os.add_dll_directory folder "
                    "(ctypes.CDLL does not search PATH; CUDA 13 keeps its DLLs in bin\\x64)"
                )
            return (
                f"{join(host, folder, name)} exists but {folder} is not on PATH "
                "(winmode=0 ignores os.add_dll_directory; CUDA 13 keeps its DLLs in bin\\x64)"
            )
    where = "an os.add_dll_directory folder" if loader == "ctypes" else "PATH"
    return f"no CUDA {want} toolkit provides it on {where} (install CUDA {want}.x, or add its bin to {where})"


def _cuda_bins(host: Host) -> list[str]:
    out = []
    for name, value in host.env.items():
        if name.upper().startswith("CUDA_PATH") and value:
            out += [join(host, value, "bin"), join(host, value, "bin", "x64")]
    return list(dict.fromkeys(out))
