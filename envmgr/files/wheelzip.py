"""The one reader of wheels and other zip files that an index, a cache or a user hands us (issue 34, N9/N13).

Every caller (the prebuilt plan, install's store and --wheel-index check, doctor's pip-cache check, the
publish and list commands through the cache) opens a wheel here, so a new route gets the guards without
thinking. The guards, decided from the central directory before a byte is inflated:

* only a regular file is opened (a FIFO blocks, `/dev/zero` never ends), non-blocking;
* a central directory over `MAX_DIRECTORY` bytes or `MAX_MEMBERS` entries is refused from the end records,
  before zipfile builds an object per entry;
* each member is listed once: a central directory that names one member twice, or whose entries
  overlap (CVE-2024-0450: Python before 3.11.8 inflates the same data once per entry), is refused;
* an encrypted member, or one compressed with a method other than stored/deflate/bzip2/LZMA, is refused;
* a member read that claims to inflate more than `MAX_RATIO` times its compressed size (past
  `RATIO_FLOOR`) is a zip bomb and refused before it is inflated (members only listed are not judged);
  a member over `MAX_MEMBER` is listed as too large by its callers, never read;
* a total inflate budget (`TOTAL_BUDGET`) covers every member read from one wheel, each counted once;
* a member is read through a stream capped at its declared size (zipfile stops there, and checks the
  CRC at the end): corrupt deflate/LZMA/bzip2 data or a wrong CRC is refused.

Every refusal is `BadWheel` (an InputFileError, exit 2) with one line; nothing else escapes.
"""

from __future__ import annotations

import errno
import hashlib
import io
import lzma
import os
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from envmgr.errors import BadWheel

__all__ = ["BadWheel", "Member", "Wheel", "member_names", "open_wheel", "sha256_regular"]

MAX_FILE = 8 << 30  # a wheel file; the largest real CUDA wheels (torch, cuDNN) are under 3 GiB
MAX_MEMBER = 2 << 30  # one member inflated; a native library larger than this is listed, not read
TOTAL_BUDGET = 4 << 30  # every member read from one wheel together, each counted once
MAX_MEMBERS = 200_000  # central directory entries
# zipfile holds a few bytes per byte of the central directory while it lists it (a ZipInfo per entry, ~4x),
# before anything can be judged: its size is checked first. torch's CUDA wheels list ~15,000 files in ~2 MiB.
MAX_DIRECTORY = 16 << 20
MAX_RATIO = 200  # real libraries deflate 2-10x; CUDA fat binaries are compressed already
RATIO_FLOOR = 16 << 20  # below this inflated size the ratio is not judged (small text files compress well)
_METHODS = {
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflate",
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "LZMA",
}
_CHUNK = 1 << 20
# What zipfile and its decompressors raise on damaged input (BadZipFile covers a wrong CRC):
_BROKEN = (
    OSError,
    EOFError,
    ValueError,
    NotImplementedError,
    RuntimeError,
    zlib.error,
    lzma.LZMAError,
    zipfile.BadZipFile,
    struct.error,
    KeyError,
    IndexError,
    OverflowError,
    MemoryError,
    RecursionError,
)


@dataclass(frozen=True)
class Member:
    name: str
    size: int  # declared inflated size
    compressed: int
    index: int  # position in the central directory (a stable identity for the budget)

    @property
    def is_dir(self) -> bool:
        return self.name.endswith("/")


class Wheel:
    """An open wheel: its members (checked as above) and a budgeted read of each."""

    def __init__(self, zf: zipfile.ZipFile, label: str, budget: int) -> None:
        self._zf, self._label, self._left, self._budget = zf, label, budget, budget
        self._infos = zf.infolist()
        self._read: set[int] = set()
        self.members = tuple(_check(self._infos, label, _end_of_entries(zf)))

    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.members)

    def read(self, member: Member) -> bytearray:
        """The member's bytes (a bytearray: no second copy of a large library); BadWheel when it is
        too large, over the wheel's budget, or damaged."""
        if member.size > MAX_MEMBER:
            raise BadWheel(
                self._label,
                f"member {member.name} inflates to {_mib(member.size)}, over the "
                f"{_mib(MAX_MEMBER)} limit for one member",
            )
        if member.size > RATIO_FLOOR and member.size > MAX_RATIO * max(member.compressed, 1):
            raise BadWheel(
                self._label,
                f"refused: member {member.name!r} inflates {_mib(member.size)} from "
                f"{member.compressed} bytes (a zip bomb)",
            )
        if member.index not in self._read:
            if member.size > self._left:
                raise BadWheel(
                    self._label, f"refused: inflates beyond {_mib(self._budget)} in all (at member {member.name})"
                )
            self._left -= member.size
            self._read.add(member.index)
        return _inflate(self._zf, self._infos[member.index], self._label)


def _mib(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n >> 20} MiB"


def _end_of_entries(zf: zipfile.ZipFile) -> int | None:
    start = getattr(zf, "start_dir", None)
    return start if isinstance(start, int) else None


def _check(infos: list[zipfile.ZipInfo], label: str, end: int | None) -> Iterator[Member]:
    if len(infos) > MAX_MEMBERS:
        raise BadWheel(label, f"{len(infos)} members, over the {MAX_MEMBERS} limit")
    seen: set[str] = set()
    for i, info in enumerate(infos):
        name = info.filename
        if name in seen:
            raise BadWheel(label, f"not a readable wheel (it lists member {name!r} more than once)")
        seen.add(name)
        if info.flag_bits & 0x1:
            raise BadWheel(label, f"not a readable wheel (encrypted member {name!r})")
        if info.compress_type not in _METHODS:
            raise BadWheel(
                label,
                f"not a readable wheel (member {name!r} uses compression method "
                f"{info.compress_type}, not stored/deflate/bzip2/LZMA)",
            )
        yield Member(name, info.file_size, info.compress_size, i)
    _no_overlap(infos, label, end)


def _no_overlap(infos: list[zipfile.ZipInfo], label: str, end: int | None) -> None:
    """Entries sharing or overlapping their data (a member counted many times by one central directory)."""
    spans = sorted((info.header_offset, info.compress_size, info.filename) for info in infos)
    for (off, size, name), (nxt, _, other) in zip(spans, spans[1:], strict=False):
        if off + 30 + size > nxt:  # 30: the fixed part of a local header
            raise BadWheel(label, f"not a readable wheel (members {name!r} and {other!r} overlap)")
    if spans and end is not None and spans[-1][0] + 30 + spans[-1][1] > end:
        raise BadWheel(label, f"not a readable wheel (member {spans[-1][2]!r} runs into the central directory)")


def _inflate(zf: zipfile.ZipFile, info: zipfile.ZipInfo, label: str) -> bytearray:
    out = bytearray()
    try:
        with zf.open(info) as fh:
            while len(out) < info.file_size:
                block = fh.read(min(_CHUNK, info.file_size - len(out)))
                if not block:
                    break
                out += block
            if fh.read(1):  # zipfile stops at the declared size; this also runs its CRC check
                raise BadWheel(label, f"member {info.filename!r} holds more than it declares")
    except BadWheel:
        raise
    except _BROKEN as exc:
        raise BadWheel(label, f"not a readable wheel (member {info.filename!r}: {_words(exc)})") from None
    if len(out) != info.file_size:
        raise BadWheel(label, f"not a readable wheel (member {info.filename!r} is cut short)")
    return out


def _words(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, RuntimeError) and "encrypted" in text:
        return "encrypted"
    return text[:200]


def sha256_regular(path: str | os.PathLike[str]) -> str:
    """The sha256 of a wheel (or any regular file): OSError for a FIFO, a device or a folder, never a hang."""
    digest = hashlib.sha256()
    with _open_regular(Path(path)) as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _open_regular(path: Path) -> io.BufferedReader:
    """A regular file, opened without blocking on a FIFO; OSError otherwise."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "it is a folder", str(path))
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if st.st_size > MAX_FILE:
            raise OSError(errno.EFBIG, f"too large ({_mib(st.st_size)}; the limit is {_mib(MAX_FILE)})", str(path))
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


@contextmanager
def open_wheel(
    source: str | os.PathLike[str] | bytes, label: str | None = None, *, budget: int = TOTAL_BUDGET
) -> Iterator[Wheel]:
    """The wheel at a path (or in bytes read through a Host), checked; BadWheel for anything unsafe or broken."""
    shown = label or (Path(os.fsdecode(source)).name if not isinstance(source, bytes) else "the wheel")
    try:
        fh: io.BufferedIOBase = io.BytesIO(source) if isinstance(source, bytes) else _open_regular(Path(source))
    except OSError as exc:
        raise BadWheel(shown, f"cannot be read ({exc.strerror or exc})") from None
    with fh:
        _directory_size(fh, shown)
        try:
            zf = zipfile.ZipFile(fh)
        except _BROKEN as exc:
            raise BadWheel(shown, f"not a readable zip file ({_words(exc)})") from None
        with zf:
            try:
                wheel = Wheel(zf, shown, budget)
            except BadWheel:
                raise
            except _BROKEN as exc:
                raise BadWheel(shown, f"not a readable zip file ({_words(exc)})") from None
            yield wheel


def _directory_size(fh: io.BufferedIOBase, label: str) -> None:
    """Refuse a central directory over MAX_DIRECTORY bytes or MAX_MEMBERS entries, read from the end records
    (the ones zipfile itself follows) before zipfile lists a single entry."""
    try:
        end = fh.seek(0, os.SEEK_END)
        fh.seek(max(0, end - (22 + 0xFFFF)))
        tail = fh.read()
        i = tail.rfind(b"PK\x05\x06")
        if i < 0 or len(tail) - i < 22:
            return  # no end record: zipfile says so
        entries, size = struct.unpack_from("<HI", tail, i + 10)
        if i >= 20 and tail[i - 20 : i - 16] == b"PK\x06\x07":  # zip64: the locator names the real record
            (where,) = struct.unpack_from("<Q", tail, i - 20 + 8)
            fh.seek(where)
            record = fh.read(56)
            if len(record) == 56 and record[:4] == b"PK\x06\x06":
                entries, size = struct.unpack_from("<QQ", record, 32)
        fh.seek(0)
    except (OSError, ValueError, struct.error, OverflowError) as exc:
        raise BadWheel(label, f"not a readable zip file ({_words(exc)})") from None
    if size > MAX_DIRECTORY or entries > MAX_MEMBERS:
        raise BadWheel(
            label,
            f"refused: its central directory lists {entries} members in {_mib(size)} "
            f"(the limits are {MAX_MEMBERS} and {_mib(MAX_DIRECTORY)})",
        )


def member_names(source: str | os.PathLike[str] | bytes, label: str | None = None) -> tuple[str, ...]:
    with open_wheel(source, label) as wheel:
        return wheel.names()
