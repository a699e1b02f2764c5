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
        out.append((p, data[p + 46:p + 46 + nl].decode("utf-8", "replace"), local))
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
    cd = data[off:off + size] * times
    return data[:off] + cd + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n * times, n * times, len(cd), off, 0)


def nul_names(data: bytes, placeholder: bytes = b"\x01") -> bytes:
    """NUL bytes in member names, where the writer had `placeholder` (zipfile cuts a name at NUL when writing)."""
    b = bytearray(data)
    for cd, name, local in central_entries(data):
        raw = name.encode("utf-8")
        for start in (cd + 46, local + 30):
            if b[start:start + len(raw)] == raw:
                b[start:start + len(raw)] = raw.replace(placeholder, b"\x00")
    return bytes(b)
