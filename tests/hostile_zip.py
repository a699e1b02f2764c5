"""Hostile zip files for the wheel reader's tests (envmgr/files/wheelzip.py): hand-made, as no real sample
of these exists; each is built from a well-formed zip and then damaged the way the audit of 2026-12-07
(../shared/audits/hostile-input-2026-12.md, N9 and N13) damaged its wheels.
"""

from __future__ import annotations

import io
import struct
import zipfile

EOCD = b"PK\x05\x06"


def make_zip(members: dict[str, bytes], method: int = zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def central_entries(data: bytes) -> list[tuple[int, str, int]]:
    """(offset of the central directory entry, name, offset of its local header) for each entry."""
    eocd = data.rfind(EOCD)
    _n, size, off = struct.unpack_from("<HII", data, eocd + 10)
    out, p = [], off
    while p < off + size:
        nl, el, cl = struct.unpack_from("<HHH", data, p + 28)
        (local,) = struct.unpack_from("<I", data, p + 42)
        out.append((p, data[p + 46 : p + 46 + nl].decode("utf-8", "replace"), local))
        p += 46 + nl + el + cl
    return out


def set_flag(data: bytes, suffix: str, bit: int = 1) -> bytes:
    """Set a general purpose flag bit (1: encrypted) on the members whose name ends with suffix."""
    b = bytearray(data)
    for cd, name, local in central_entries(data):
        if name.endswith(suffix):
            for q in (cd + 8, local + 6):
                b[q] |= bit
    return bytes(b)


def set_method(data: bytes, suffix: str, method: int) -> bytes:
    """Claim another compression method (14: LZMA) for members whose stored data is not that."""
    b = bytearray(data)
    for cd, name, local in central_entries(data):
        if name.endswith(suffix):
            struct.pack_into("<H", b, cd + 10, method)
            struct.pack_into("<H", b, local + 8, method)
    return bytes(b)


def break_crc(data: bytes, suffix: str) -> bytes:
    b = bytearray(data)
    for cd, name, local in central_entries(data):
        if name.endswith(suffix):
            for q in (cd + 16, local + 14):
                b[q] ^= 0xFF
    return bytes(b)


def repeat_central_directory(data: bytes, times: int) -> bytes:
    """The central directory written `times` times: every entry names the same local data again."""
    eocd = data.rfind(EOCD)
    n, size, off = struct.unpack_from("<HII", data, eocd + 10)
    cd = data[off : off + size] * times
    return data[:off] + cd + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n * times, n * times, len(cd), off, 0)


def nul_names(data: bytes, placeholder: bytes = b"\x01") -> bytes:
    """NUL bytes in member names, where the writer had `placeholder` (zipfile cuts a name at NUL when writing)."""
    b = bytearray(data)
    for cd, name, local in central_entries(data):
        raw = name.encode("utf-8")
        for start in (cd + 46, local + 30):
            if b[start : start + len(raw)] == raw:
                b[start : start + len(raw)] = raw.replace(placeholder, b"\x00")
    return bytes(b)


def fatbin(arch: int) -> bytes:
    """One fat binary holding one cubin entry for sm_<arch> (the audit's mk.py layout; hand-made)."""
    entry = struct.pack("<HHIQII", 2, 0x101, 64, 64, 0, 0) + struct.pack("<HHI", 0, 0, arch)
    entry = entry.ljust(64, b"\0") + b"\0" * 64
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entry)) + entry


def mini_elf(arch: int, e_machine: int = 62) -> bytes:
    """A minimal 64-bit ELF whose .nv_fatbin holds one sm_<arch> cubin; e_machine 62 x86-64, 183 AArch64, 3 x86."""
    body, names = fatbin(arch), b"\0.nv_fatbin\0.shstrtab\0"
    off_fat = 64
    off_str = off_fat + len(body)
    off_sh = (off_str + len(names) + 7) & ~7
    out = bytearray(off_sh + 3 * 64)
    out[:16] = b"\x7fELF\x02\x01\x01" + b"\0" * 9
    struct.pack_into("<HHIQQQIHHHHHH", out, 16, 3, e_machine, 1, 0, 0, off_sh, 0, 64, 56, 0, 64, 3, 2)
    out[off_fat : off_fat + len(body)] = body
    out[off_str : off_str + len(names)] = names
    struct.pack_into("<IIQQQQIIQQ", out, off_sh + 64, 1, 1, 2, 0x1000, off_fat, len(body), 0, 0, 8, 0)
    struct.pack_into("<IIQQQQIIQQ", out, off_sh + 128, 12, 3, 0, 0, off_str, len(names), 0, 0, 1, 0)
    return bytes(out)
