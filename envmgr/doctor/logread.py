"""Reading a build log as a stream of text: bounded memory whatever the file's size (issue 13 item 5).

The encoding is decided from the first block: a BOM, the NUL pattern of UTF-16 without one (what
PowerShell 5's `>` writes, and .NET pipes that drop the BOM), else UTF-8, falling back to cp1252 from
the first byte that is not UTF-8 (the bytes before it were valid UTF-8, so nothing is decoded twice).
Only regular files are read (files/read.py's reasons: /dev/zero never ends, a FIFO blocks); unlike other
inputs a log has no size limit, since it is never held whole.
"""
from __future__ import annotations

import codecs
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from envmgr.errors import LogInputError

BLOCK = 1 << 20          # bytes read at a time
_SNIFF = 4096


_REMEDY = "pass the path of a text log (for example pip install -v ... > build.log 2>&1)"


def sniff(head: bytes) -> str | None:
    """The codec for a file that starts with `head`; None for binary data."""
    if head.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    sample = head[:_SNIFF]
    even, odd = sample[0::2], sample[1::2]
    if len(sample) >= 4 and odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.1 * len(even):
        return "utf-16-le"
    if len(sample) >= 4 and even.count(0) > 0.4 * len(even) and odd.count(0) < 0.1 * len(odd):
        return "utf-16-be"
    if b"\x00" in sample:
        return None
    return "utf-8"


def looks_binary(text: str) -> bool:
    sample = text[:8192]
    if not sample:
        return False
    control = sum(1 for c in sample if ord(c) < 32 and c not in "\t\n\r\f\b\x1b")
    return "\x00" in sample or control > 0.1 * len(sample)


class _Decoder:
    """Incremental decoding with the UTF-8 -> cp1252 fallback described above."""

    def __init__(self, codec: str) -> None:
        self.codec = codec
        errors = "strict" if codec == "utf-8" else "replace"
        self._dec = codecs.getincrementaldecoder(codec)(errors)

    def decode(self, data: bytes, final: bool = False) -> str:
        if self.codec != "utf-8":
            return self._dec.decode(data, final)
        try:
            return self._dec.decode(data, final)
        except UnicodeDecodeError:
            pending, _ = self._dec.getstate()
            self.codec = "cp1252"
            self._dec = codecs.getincrementaldecoder("cp1252")("replace")
            return self._dec.decode(pending + data, final)


def _open(path: str | Path):
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as e:
        # Windows refuses to open a folder ("Permission denied") where POSIX opens it and fstat tells.
        what = "a folder" if os.path.isdir(path) else (e.strerror or e)
        raise LogInputError(f"cannot read log file {path}: {what}", _REMEDY) from None
    fh = os.fdopen(fd, "rb")
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode) or not stat.S_ISREG(st.st_mode):
        fh.close()
        what = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise LogInputError(f"cannot read log file {path}: {what}", _REMEDY)
    return fh, st.st_size


def stream_text(path: str | Path, block: int = BLOCK) -> Iterator[str]:
    """The log's text in pieces of about `block` bytes. LogInputError before the first piece for a
    file that cannot be opened, is not a regular file, is empty or holds binary data."""
    fh, size = _open(path)
    try:
        head = fh.read(block)
    except OSError as e:
        fh.close()
        raise LogInputError(f"cannot read log file {path}: {e.strerror or errno.errorcode.get(e.errno or -1, e)}",
                            _REMEDY) from None
    if not head:
        fh.close()
        raise LogInputError(f"{path} is empty (0 bytes): the command wrote nothing to it",
                            "capture both streams: pip install -v ... > build.log 2>&1")
    codec = sniff(head)
    dec = _Decoder(codec) if codec else None
    first = dec.decode(head) if dec else ""
    if dec is None or looks_binary(first):
        fh.close()
        raise LogInputError(f"{path} is not a text log (binary data)",
                            "pass the text output of the build, not an executable, archive or image")
    return _rest(fh, dec, first, block)


def _rest(fh, dec: _Decoder, first: str, block: int) -> Iterator[str]:
    with fh:
        yield first
        while True:
            data = fh.read(block)
            if not data:
                break
            yield dec.decode(data)
        tail = dec.decode(b"", final=True)
        if tail:
            yield tail
