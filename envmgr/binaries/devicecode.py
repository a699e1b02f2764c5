"""What CUDA a binary carries: its device code (the fat binaries' cubins and PTX) and the CUDA libraries it imports.

Pure: `read_binary(data, name)` takes a shared library's bytes (ELF or PE, either platform on either) and
returns a frozen `BinaryCode`; it never raises on hostile input: a cut, foreign or garbled file comes
back with `problems`. No toolkit is needed: the fat binary's container and entry headers are read
directly (layout below, checked against NVIDIA's `cuobjdump --list-elf/--list-ptx` by
tests/linux/test_devicecode_oracle.py on binaries from nvcc 13.0 and NVIDIA's Windows DLLs).

Where the fat binaries are: nvcc puts them in the ELF section `.nv_fatbin` (`__nv_relfatbin` for
relocatable device code), and in the PE section `.nv_fatb` (PE names are cut at 8 bytes); the host
registration wrapper (`.nvFatBinSegment` / `.nvFatBi`) points at them. A section holds one fat binary
per translation unit, each 8-byte aligned. A linker that merged `.nv_fatbin` into another section
(`.rodata`) leaves only the wrappers: {u32 magic 0x466243B1, u32 version, pointer to the fat binary,
pointer}; their pointers are followed (the value in place, else the R_*_RELATIVE relocation's addend,
as lld leaves it) to the fat binaries that no device-code section holds. cuobjdump finds them so too.

What runs: with relocatable device code (-rdc, CMake's CUDA_SEPARABLE_COMPILATION) `__nv_relfatbin`
holds each object's code as the device linker's input, and `.nv_fatbin` the linked image the runtime
loads; cuobjdump lists only the latter unless given -all. Entries of `__nv_relfatbin` are kept, marked
`relocatable`, and left out of `cubin`/`ptx`: their PTX is no JIT route (bitsandbytes 0.50.1 built for
90: PTX compute_90 in `__nv_relfatbin`, the linked image sm_90 only).

Container header (16 bytes): u32 magic 0xBA55ED50, u16 version, u16 header size, u64 size of the entries.
Entry header (its own size in the second u32): u16 kind (1 PTX, 2 ELF cubin), u16 version, u32 header size,
u64 payload size, u32 compressed size, u32 -, u16 minor, u16 major (the PTX ISA version for PTX), u32 arch
(75, 90, 120), u32 name offset, u32 name length, u64 flags. Flags seen (nvcc 13.0): 0x100000 an
arch-specific target (`sm_90a`), 0x200000 a family target (`sm_120f`), 0x8000 / 0x2000 a compressed
payload (the header is still plain: no need to decompress to list architectures).
"""

from __future__ import annotations

import mmap
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from envmgr.binaries.dll import _MACHINES, pe_imports
from envmgr.errors import InputFileError

Data = bytes | bytearray | mmap.mmap  # a binary's bytes: anything with find() and slicing
FATBIN_MAGIC = 0xBA55ED50
_MAGIC = struct.pack("<I", FATBIN_MAGIC)
MAX_FATBINS = 65536  # per binary; cuBLASLt has a few thousand
MAX_ENTRIES = 1 << 20
_ELF_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
_RELOCATABLE = "__nv_relfatbin"
_WRAPPER_MAGIC = 0x466243B1  # the registration wrapper's (.nvFatBinSegment)
_RELATIVE = {8, 1027}  # R_X86_64_RELATIVE / R_386_RELATIVE, R_AARCH64_RELATIVE
MAX_RELOCATION_BYTES = 256 << 20
_PE_SECTIONS = (".nv_fatb",)
_KINDS = {1: "ptx", 2: "cubin"}
_FLAG_ARCH_SPECIFIC, _FLAG_FAMILY = 0x100000, 0x200000
_FLAG_COMPRESSED = 0x8000 | 0x2000
# The CUDA runtime, driver and libraries, and the CUDA parts of frameworks, as a binary names them in
# its NEEDED entries / import table (libcudart.so.13, cublas64_13.dll, libc10_cuda.so, nvcuda.dll).
CUDA_LIBRARY = re.compile(
    r"^(lib)?(cuda|nvcuda|cudart|cublas|cublasLt|cufft|cufftw|curand|cusparse|cusolver|cusolverMg|nvrtc|"
    r"nvJitLink|nvjpeg|npp[a-z]*|cudnn[a-z_]*|nccl|c10_cuda|torch_cuda|nvToolsExt|cupti|nvblas)"
    r"(64)?([_.]\d[\w.]*)?\.(so(\.\d+)*|dll)$",
    re.I,
)


@dataclass(frozen=True)
class FatEntry:
    kind: str  # "cubin" | "ptx" | "kind-N" (another kind, e.g. LTO IR)
    arch: str  # "sm_90a" for a cubin, "compute_90" for PTX
    compressed: bool = False
    ptx_isa: str = ""  # "9.0": the PTX ISA version (PTX only)
    relocatable: bool = False  # from __nv_relfatbin: the device linker's input, not what the runtime loads


@dataclass(frozen=True)
class BinaryCode:
    name: str
    format: str  # "elf" | "pe" | "" (neither)
    machine: str = ""  # "x86-64", "AArch64", "x64"
    entries: tuple[FatEntry, ...] = ()  # every entry, in file order (cuobjdump's order)
    imports: tuple[str, ...] = ()  # NEEDED entries / imported DLLs
    problems: tuple[str, ...] = ()  # why part of it could not be read

    @property
    def cubin(self) -> tuple[str, ...]:
        return arch_sorted({e.arch for e in self.entries if e.kind == "cubin" and not e.relocatable})

    @property
    def ptx(self) -> tuple[str, ...]:
        return arch_sorted({e.arch for e in self.entries if e.kind == "ptx" and not e.relocatable})

    @property
    def cuda_imports(self) -> tuple[str, ...]:
        return tuple(n for n in self.imports if CUDA_LIBRARY.match(n))

    @property
    def has_device_code(self) -> bool:
        return bool(self.entries)

    @property
    def is_cuda(self) -> bool:
        return bool(self.entries or self.cuda_imports)


def arch_number(arch: str) -> int:
    """75 from sm_75 / compute_75; 90 from sm_90a; 0 when it is not an architecture name."""
    m = re.match(r"^(sm|compute)_(\d+)[a-z]?$", arch)
    return int(m.group(2)) if m else 0


def arch_sorted(archs: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(archs, key=lambda a: (arch_number(a), a)))


def read_binary(data: Data, name: str) -> BinaryCode:
    """The device code and imports of one ELF or PE file (bytes, or an mmap)."""
    head = bytes(data[:4])
    if head == b"\x7fELF":
        return _read_elf(data, name)
    if head[:2] == b"MZ":
        return _read_pe(data, name)
    return BinaryCode(name, "", problems=("neither an ELF nor a PE file",))


# ---- fat binaries -------------------------------------------------------------------------------


def parse_fatbins(data: Data, start: int, end: int) -> tuple[tuple[FatEntry, ...], tuple[str, ...]]:
    """Every entry of the fat binaries laid one after another in data[start:end] (a section)."""
    entries: list[FatEntry] = []
    problems: list[str] = []
    off, count = start, 0
    while off + 16 <= end and count < MAX_FATBINS:
        # Between fat binaries and after the last: zero padding (8 bytes in ELF, 16 in PE), nothing else.
        found = data.find(_MAGIC, off, end)
        if bytes(data[off : found if found >= 0 else end]).strip(b"\0"):
            problems.append(f"unrecognized data at offset {off - start} of the device-code section")
            break
        if found < 0 or found + 16 > end:
            break
        off = found
        _magic, _ver, hsize, size = struct.unpack_from("<IHHQ", data, off)
        count += 1
        if hsize < 16 or off + hsize + size > end:
            problems.append(
                f"a truncated fat binary at offset {off - start}: it declares {size} bytes, "
                f"{max(0, end - off - hsize)} are there"
            )
            size = max(0, end - off - hsize)
        problems += _parse_entries(data, off + hsize, off + hsize + size, entries)
        off = (off + hsize + size + 7) & ~7
        if len(entries) >= MAX_ENTRIES:
            problems.append(f"more than {MAX_ENTRIES} device-code entries: the rest not read")
            break
    if count >= MAX_FATBINS and off + 16 <= end:
        problems.append(f"more than {MAX_FATBINS} fat binaries: the rest not read")
    return tuple(entries), tuple(problems)


def _parse_entries(data: Data, off: int, end: int, out: list[FatEntry]) -> list[str]:
    while off + 64 <= end and len(out) < MAX_ENTRIES:
        kind, _v, hsize, size = struct.unpack_from("<HHIQ", data, off)
        minor, major, arch = struct.unpack_from("<HHI", data, off + 24)
        flags = struct.unpack_from("<Q", data, off + 40)[0]
        if hsize < 64 or arch > 10000:
            return [f"an unreadable device-code entry header at offset {off}"]
        if off + hsize + size > end:
            return [f"a truncated device-code entry at offset {off} ({_KINDS.get(kind, kind)} for {arch})"]
        out.append(_entry(kind, arch, flags, minor, major))
        off += hsize + size
    return [] if off >= end or not any(bytes(data[off:end])) else [f"a cut device-code entry at offset {off}"]


def _entry(kind: int, arch: int, flags: int, minor: int, major: int) -> FatEntry:
    suffix = "a" if flags & _FLAG_ARCH_SPECIFIC else "f" if flags & _FLAG_FAMILY else ""
    name = _KINDS.get(kind, f"kind-{kind}")
    prefix = "compute" if name == "ptx" else "sm"
    return FatEntry(
        name, f"{prefix}_{arch}{suffix}", bool(flags & _FLAG_COMPRESSED), f"{major}.{minor}" if name == "ptx" else ""
    )


# ---- ELF ----------------------------------------------------------------------------------------

_ELF_MACHINES = {3: "x86", 62: "x86-64", 183: "AArch64", 40: "ARM"}


def _read_elf(data: Data, name: str) -> BinaryCode:
    if len(data) < 64 or data[5] != 1 or data[4] not in (1, 2):
        return BinaryCode(name, "elf", problems=("a truncated or big-endian ELF header",))
    is64 = data[4] == 2
    machine = _ELF_MACHINES.get(struct.unpack_from("<H", data, 18)[0], "another machine")
    try:
        sections = _elf_sections(data, is64)
    except ValueError as exc:
        return BinaryCode(name, "elf", machine, problems=(str(exc),))
    entries: list[FatEntry] = []
    problems: list[str] = []
    spans: list[tuple[int, int]] = []
    for sname, _type, off, size, _link, _addr in sections:
        if sname in _ELF_SECTIONS:
            if off + size > len(data):
                problems.append(f"{sname} is cut: the file ends {off + size - len(data)} bytes early")
            found, why = parse_fatbins(data, off, min(off + size, len(data)))
            entries += [replace(e, relocatable=True) for e in found] if sname == _RELOCATABLE else found
            problems += why
            spans.append((off, off + size))
    found, why = _wrapped_fatbins(data, sections, is64, spans)
    needed, why_needed = _elf_needed(data, sections, is64)
    return BinaryCode(name, "elf", machine, tuple(entries) + found, needed, tuple(problems) + why + why_needed)


def _elf_sections(data: Data, is64: bool) -> list[Section]:
    """[(name, type, offset, size, link, address)] in table order; ValueError when the table is cut or garbled."""
    if is64:
        (shoff,) = struct.unpack_from("<Q", data, 40)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
        fmt = "<IIQQQQIIQQ"
    else:
        (shoff,) = struct.unpack_from("<I", data, 32)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 46)
        fmt = "<IIIIIIIIII"
    if shnum == 0 or shnum > 65535 or shentsize < struct.calcsize(fmt):
        raise ValueError("no section table (a stripped or cut ELF file)")
    if shoff + shnum * shentsize > len(data) or shstrndx >= shnum:
        raise ValueError(
            f"a truncated ELF file: its section table needs {shoff + shnum * shentsize} bytes, {len(data)} are there"
        )
    raw = []
    for i in range(shnum):
        f = struct.unpack_from(fmt, data, shoff + i * shentsize)
        raw.append((f[0], f[1], f[4], f[5], f[6], f[3]))  # name, type, offset, size, link, address
    _, _, stroff, strsize, _, _ = raw[shstrndx]
    strtab = bytes(data[stroff : stroff + min(strsize, 1 << 20)])
    return [
        (strtab[n : strtab.find(b"\0", n)].decode("ascii", "replace"), t, off, size, link, addr)
        for n, t, off, size, link, addr in raw
    ]


Section = tuple[str, int, int, int, int, int]  # name, type, offset, size, link, address
_NOBITS, _RELA = 8, 4


def _wrapped_fatbins(
    data: Data, sections: list[Section], is64: bool, spans: list[tuple[int, int]]
) -> tuple[tuple[FatEntry, ...], tuple[str, ...]]:
    """The fat binaries the .nvFatBinSegment wrappers point at outside every device-code section."""
    seg = next((s for s in sections if s[0] == ".nvFatBinSegment" and s[1] != _NOBITS), None)
    if seg is None:
        return (), ()
    _n, _t, off, size, _l, addr = seg
    step, fmt = (24, "<IIQ") if is64 else (16, "<III")
    wrappers: list[tuple[int, int]] = []
    for p in range(off, min(off + size, len(data), off + step * MAX_FATBINS) - step + 1, step):
        magic, _version, ptr = struct.unpack_from(fmt, data, p)
        if magic == _WRAPPER_MAGIC:
            wrappers.append((p, ptr))
    addends = _relative_addends(data, sections, is64, {addr + p - off + 8 for p, ptr in wrappers if not ptr})
    entries: list[FatEntry] = []
    problems: list[str] = []
    done: set[int] = set()
    for p, ptr in wrappers:
        where = _file_offset(sections, ptr or addends.get(addr + p - off + 8, 0))
        if where is None or where in done or any(a <= where < b for a, b in spans):
            continue
        done.add(where)
        if bytes(data[where : where + 4]) != _MAGIC or where + 16 > len(data):
            problems.append(f"a .nvFatBinSegment wrapper points at no fat binary (file offset {where})")
            continue
        _magic, _ver, hsize, fsize = struct.unpack_from("<IHHQ", data, where)
        found, why = parse_fatbins(data, where, min(len(data), where + hsize + fsize))
        entries += found
        problems += why
    return tuple(entries), tuple(problems)


def _file_offset(sections: list[Section], address: int) -> int | None:
    """The file offset of a virtual address, through the section that holds it; None outside every one."""
    for _n, kind, off, size, _l, addr in sections:
        if address and kind != _NOBITS and addr and addr <= address < addr + size:
            return off + address - addr
    return None


def _relative_addends(data: Data, sections: list[Section], is64: bool, wanted: set[int]) -> dict[int, int]:
    """{address: addend} of the R_*_RELATIVE relocations (RELA) at the wanted addresses."""
    found: dict[int, int] = {}
    for _n, kind, off, size, _l, _a in sections if wanted else ():
        if kind != _RELA or off + size > len(data) or size > MAX_RELOCATION_BYTES:
            continue
        fmt = "<QQq" if is64 else "<IIi"
        step = struct.calcsize(fmt)
        for where, info, addend in struct.iter_unpack(fmt, bytes(data[off : off + size - size % step])):
            if where in wanted and (info & (0xFFFFFFFF if is64 else 0xFF)) in _RELATIVE:
                found[where] = addend
    return found


def _elf_needed(data: Data, sections: list[Section], is64: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    dyn = next((s for s in sections if s[0] == ".dynamic"), None)
    if dyn is None:
        return (), ()
    _n, _t, off, size, link, _a = dyn
    if link >= len(sections) or off + size > len(data):
        return (), (".dynamic is cut or its string table is missing",)
    stroff, strsize = sections[link][2], sections[link][3]
    fmt, step = ("<qQ", 16) if is64 else ("<iI", 8)
    names = []
    for p in range(off, off + size - step + 1, step):
        tag, val = struct.unpack_from(fmt, data, p)
        if tag == 0:
            break
        if tag == 1 and val < strsize and stroff + val < len(data):
            end = bytes(data[stroff + val : stroff + val + 256]).split(b"\0", 1)[0]
            names.append(end.decode("ascii", "replace"))
    return tuple(names), ()


# ---- PE -----------------------------------------------------------------------------------------


def _read_pe(data: Data, name: str) -> BinaryCode:
    import pefile  # start-up: paid only when a PE file is read (issue 33)

    try:
        pe = pefile.PE(data=bytes(data[: _pe_header_end(data)]), fast_load=True)
    except pefile.PEFormatError as exc:
        return BinaryCode(name, "pe", problems=(f"not a PE file ({exc.value})",))
    machine = _MACHINES.get(pe.FILE_HEADER.Machine, (f"machine 0x{pe.FILE_HEADER.Machine:x}", 0))[0]
    entries: list[FatEntry] = []
    problems: list[str] = []
    for section in pe.sections:
        sname = section.Name.rstrip(b"\0").decode("ascii", "replace")
        if sname in _PE_SECTIONS:
            off, size = section.PointerToRawData, min(section.SizeOfRawData, section.Misc_VirtualSize or 1 << 62)
            if off + size > len(data):
                problems.append(f"{sname} is cut: the file ends {off + size - len(data)} bytes early")
            found, why = parse_fatbins(data, off, min(off + size, len(data)))
            entries += found
            problems += why
    try:
        imports = pe_imports(bytes(data), name)
    except InputFileError as exc:
        imports, problems = (), [*problems, exc.message]
    return BinaryCode(name, "pe", machine, tuple(entries), imports, tuple(problems))


def _pe_header_end(data: Data) -> int:
    """Bytes enough for pefile to read the headers and the section table (not the sections)."""
    if len(data) < 0x40:
        return len(data)
    off: int = struct.unpack_from("<I", data, 0x3C)[0]
    return min(len(data), max(4096, off + 24 + 0xF0 + 40 * 96 + 4096))


# ---- a set of binaries (a wheel, an installed package) --------------------------------------------

BINARY_NAME = re.compile(r"\.(so(\.\d+)*|pyd|dll)$", re.I)
LOOKED_FOR = (
    "device code (the fat binaries of ELF .nv_fatbin / PE .nv_fatb sections: cubins, PTX) or an "
    "import of a CUDA library (libcudart/cudart64, libcuda/nvcuda, cuBLAS, c10_cuda, ...)"
)


@dataclass(frozen=True)
class DeviceCode:
    binaries: tuple[BinaryCode, ...] = ()  # every native library read
    skipped: tuple[str, ...] = ()  # "name (why)": not read (too large)
    recorded_isa: tuple[str, ...] = ()  # the PTX ISA as a cache entry recorded it (from_json)

    @property
    def cubin(self) -> tuple[str, ...]:
        return arch_sorted({a for b in self.binaries for a in b.cubin})

    @property
    def ptx(self) -> tuple[str, ...]:
        return arch_sorted({a for b in self.binaries for a in b.ptx})

    @property
    def cuda_imports(self) -> tuple[str, ...]:
        return tuple(sorted({n for b in self.binaries for n in b.cuda_imports}, key=str.lower))

    @property
    def is_cuda(self) -> bool:
        return any(b.is_cuda for b in self.binaries)

    @property
    def ptx_isa(self) -> str:
        """The newest PTX ISA version among the PTX entries ("9.0"); "" without PTX."""
        isas = {e.ptx_isa for b in self.binaries for e in b.entries if e.ptx_isa} | set(self.recorded_isa)
        return max(isas, key=lambda v: tuple(int(x) for x in v.split(".") if x.isdigit()), default="")

    @property
    def problems(self) -> tuple[str, ...]:
        return tuple(f"{b.name}: {p}" for b in self.binaries for p in b.problems)

    def summary(self) -> str:
        """`cubin sm_75 sm_90a; PTX compute_90` / `CUDA imports only (libcudart.so.13)` / `none`."""
        parts = []
        if self.cubin:
            parts.append("cubin " + " ".join(self.cubin))
        if self.ptx:
            parts.append("PTX " + " ".join(self.ptx))
        if not parts and self.cuda_imports:
            parts.append(f"no device code; imports {', '.join(self.cuda_imports)}")
        return "; ".join(parts) or "none"

    def to_json(self) -> dict[str, Any]:
        return {
            "cubin": list(self.cubin),
            "ptx": list(self.ptx),
            "ptx_isa": self.ptx_isa,
            "cuda_imports": list(self.cuda_imports),
            "binaries": [
                {
                    "name": b.name,
                    "format": b.format,
                    "machine": b.machine,
                    "cubin": list(b.cubin),
                    "ptx": list(b.ptx),
                    "cuda_imports": list(b.cuda_imports),
                }
                for b in self.binaries
            ],
            "skipped": list(self.skipped),
            "problems": list(self.problems),
        }


def from_json(data: object) -> DeviceCode | None:
    """A DeviceCode as recorded by to_json (wheel cache entries); None for anything else."""
    if not isinstance(data, dict) or not isinstance(data.get("binaries"), list):
        return None
    out = []
    for b in data["binaries"][:4096]:
        if not isinstance(b, dict) or not isinstance(b.get("name"), str):
            return None
        entries = [FatEntry("cubin", a) for a in b.get("cubin") or () if isinstance(a, str)]
        entries += [FatEntry("ptx", a) for a in b.get("ptx") or () if isinstance(a, str)]
        machine = b.get("machine")
        out.append(
            BinaryCode(
                b["name"],
                str(b.get("format", "")),
                machine if isinstance(machine, str) else "",
                entries=tuple(entries),
                imports=tuple(n for n in b.get("cuda_imports") or () if isinstance(n, str)),
            )
        )
    isa = data.get("ptx_isa")
    return DeviceCode(
        tuple(out),
        tuple(s for s in data.get("skipped") or () if isinstance(s, str)),
        (isa,) if isinstance(isa, str) and re.match(r"^\d+\.\d+$", isa) else (),
    )
