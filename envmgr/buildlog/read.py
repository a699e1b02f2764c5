"""Reading a build log as a stream of text: bounded memory whatever the file's size (issue 13 item 5).

The encoding is decided from the first block: a BOM, the NUL pattern of UTF-16 without one (what
PowerShell 5's `>` writes, and .NET pipes that drop the BOM), else UTF-8, falling back to cp1252 from
the first byte that is not UTF-8 (the bytes before it were valid UTF-8, so nothing is decoded twice).
A log can change encoding on the way: one program starts it and Windows PowerShell 5.1's `>>` appends
UTF-16LE. So the UTF-8 (or cp1252) stream switches to UTF-16LE where four ASCII characters in that
form appear, and back where a run of 33 ASCII bytes without NUL does; a few NULs in a text log are
text, not "binary data" (more than a tenth of control characters is).
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
from typing import BinaryIO

from envmgr.errors import LogInputError

BLOCK = 1 << 20  # bytes read at a time
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
    # the UTF-16 pattern from the first byte on (a UTF-8 start, then UTF-16, is _Decoder's switch)
    if len(sample) >= 4 and sample[1] == 0 and odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.1 * len(even):
        return "utf-16-le"
    if len(sample) >= 4 and sample[0] == 0 and even.count(0) > 0.4 * len(even) and odd.count(0) < 0.1 * len(odd):
        return "utf-16-be"
    control = sum(1 for b in sample if b < 32 and b not in b"\t\n\r\f\b\x1b")
    return None if control > 0.1 * len(sample) else "utf-8"


def looks_binary(text: str) -> bool:
    sample = text[:8192]
    if not sample:
        return False
    control = sum(1 for c in sample if ord(c) < 32 and c not in "\t\n\r\f\b\x1b")
    return control > 0.1 * len(sample)


# The patterns are found with bytes.find over a copy of the block with each byte replaced by its class
# (a: an ASCII text byte, 0: NUL, x: anything else): C speed, where a regular expression took ~60 ms a MiB.
_CLASSES = bytes(
    ord("a") if b in b"\t\n\r" or 0x20 <= b <= 0x7E else ord("0") if b == 0 else ord("x") for b in range(256)
)
_UTF16LE_RUN = b"a0" * 4  # four ASCII characters as UTF-16LE
_ASCII_RUN = b"a" * 33  # in UTF-16LE: text that is not


class _Decoder:
    """Incremental decoding with the UTF-8 -> cp1252 fallback and the switches to and from UTF-16LE
    described above. Bytes that may start a switch at the end of a block wait for the next block."""

    def __init__(self, codec: str) -> None:
        self.codec = codec
        self._pending = b""
        self._dec = self._decoder(codec)

    @staticmethod
    def _decoder(codec: str) -> codecs.IncrementalDecoder:
        return codecs.getincrementaldecoder(codec)("strict" if codec == "utf-8" else "replace")

    def decode(self, data: bytes, final: bool = False) -> str:
        buf, self._pending, out = self._pending + data, b"", []
        while buf:
            classes = buf.translate(_CLASSES) if self.codec == "utf-16-le" or b"\x00" in buf else b""
            if self.codec in ("utf-8", "cp1252"):
                start = classes.find(_UTF16LE_RUN)  # none without a NUL
                if start < 0:
                    hold = 0 if final else min(7, len(buf))  # a run may start in the last 7 bytes
                    out.append(self._bytes(buf[: len(buf) - hold], final))
                    self._pending = buf[len(buf) - hold :]
                    break
                out.append(self._bytes(buf[:start], True))
                self._switch("utf-16-le")
                buf = buf[start:]
            elif self.codec == "utf-16-le":
                start = classes.find(_ASCII_RUN)
                cut = None if start < 0 else start + (start & 1)  # on a character boundary
                if cut is None:
                    tail = len(classes) - len(classes.rstrip(b"a"))  # a run may go on in the next block
                    hold = 0 if final else min(tail, 32)
                    hold += 0 if final else (len(buf) - hold) & 1  # what is decoded stays character-aligned
                    out.append(self._dec.decode(buf[: len(buf) - hold], final))
                    self._pending = buf[len(buf) - hold :]
                    break
                out.append(self._dec.decode(buf[:cut], True))
                self._switch("utf-8")
                buf = buf[cut:]
            else:
                out.append(self._dec.decode(buf, final))
                break
        if final and not buf:
            out.append(self._dec.decode(b"", True))
        return "".join(out)

    def _switch(self, codec: str) -> None:
        self.codec, self._dec = codec, self._decoder(codec)

    def _bytes(self, data: bytes, final: bool) -> str:
        """UTF-8, falling back to cp1252 (for the rest of this stretch) at the first byte that is not."""
        if self.codec != "utf-8":
            return self._dec.decode(data, final)
        try:
            return self._dec.decode(data, final)
        except UnicodeDecodeError:
            pending, _ = self._dec.getstate()
            self._switch("cp1252")
            return self._dec.decode(pending + data, final)


def _open(path: str | Path) -> tuple[BinaryIO, int]:
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
    return _opened(path, block)[0]


def _opened(path: str | Path, block: int) -> tuple[Iterator[str], int]:
    """`stream_text`'s pieces and the file's size in bytes (from the open file: no second look at the path)."""
    fh, size = _open(path)
    try:
        head = fh.read(block)
    except OSError as e:
        fh.close()
        raise LogInputError(
            f"cannot read log file {path}: {e.strerror or errno.errorcode.get(e.errno or -1, e)}", _REMEDY
        ) from None
    if not head:
        fh.close()
        raise LogInputError(
            f"{path} is empty (0 bytes): the command wrote nothing to it",
            "capture both streams: pip install -v ... > build.log 2>&1",
        )
    codec = sniff(head)
    dec = _Decoder(codec) if codec else None
    first = dec.decode(head) if dec else ""
    if dec is None or looks_binary(first):
        fh.close()
        raise LogInputError(
            f"{path} is not a text log (binary data)",
            "pass the text output of the build, not an executable, archive or image",
        )
    return _rest(fh, dec, first, block), size


REPLAY = 24 << 20  # characters of a log's text kept for the scan's next pass (the wrap width reads up to 16 Mi first)


class LogText:
    """A log read once for every pass of one scan (issue 35: the wrap width, the scan, a paste read again with another
    width): the first pass pulls the pieces from the file and keeps them, each later pass gets the kept pieces and
    then pulls the rest. Memory stays bounded: past REPLAY characters nothing more is kept, and a later pass (only
    a log of more than REPLAY characters whose wrap-width pass read beyond that: one line of 100 MB) opens the file
    again; so a log under REPLAY characters is opened and read once whatever the wrap width. `pieces(last=True)`
    lets go of each kept piece once given (no pass comes after it). LogInputError as `stream_text`."""

    def __init__(self, path: str | Path, block: int = BLOCK, keep: int = REPLAY) -> None:
        self.path, self.block, self.keep = path, block, keep
        self._stream, self.size = _opened(path, block)  # size: the file's bytes when opened
        self._kept: list[str] = []
        self._held = 0  # characters in _kept
        self._whole = True  # _kept holds every piece pulled from _stream so far

    def pieces(self, last: bool = False) -> Iterator[str]:
        if not self._whole:  # a piece was not kept: read the file again
            yield from stream_text(self.path, self.block)
            return
        if last:
            self._whole = False  # nothing is kept from here on
            while self._kept:
                self._held -= len(self._kept[0])
                yield self._kept.pop(0)
            yield from self._stream
            return
        i = 0
        while True:
            if i < len(self._kept):
                i += 1
                yield self._kept[i - 1]
                continue
            piece = next(self._stream, None)
            if piece is None:
                return
            if self._whole and self._held + len(piece) <= self.keep:
                self._kept.append(piece)
                self._held += len(piece)
                i += 1
            elif self._whole:
                self._whole, self._kept, self._held = False, [], 0
            yield piece


def _rest(fh: BinaryIO, dec: _Decoder, first: str, block: int) -> Iterator[str]:
    """The pieces after the first; the bytes the decoder holds back at the end of the last block join that block's
    piece (else a small log's last line came as a piece, and a batch, of its own, apart from the lines before it)."""
    with fh:
        piece = first
        while True:
            data = fh.read(block)
            if not data:
                break
            yield piece
            piece = dec.decode(data)
        piece += dec.decode(b"", final=True)
        if piece:
            yield piece
