"""Generated hostile zip files fed to the one wheel reader (envmgr/files/wheelzip.py, issue 34 deliverable 4).

Each example is a real zip written by zipfile (members with names built from separators, NUL, `..`, long
components and non-ASCII; stored, deflated, LZMA and nested zips; duplicate names), then damaged: a flag
set (encrypted), a method claimed that the data is not, a size, CRC or offset field overwritten (lying
headers), the central directory repeated, bytes flipped, the file cut. Whatever it is, reading every
member either succeeds or raises BadWheel (envmgr's InputFileError, one line), within a time and memory
budget. Not POSIX-only: this module also runs in the Windows-CPython tier.
"""

from __future__ import annotations

import io
import struct
import sys
import time
import tracemalloc
import warnings
import zipfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envmgr.files.wheelzip import BadWheel, open_wheel
from tests import hostile_zip as hz

PIECES = [
    "..",
    ".",
    "/",
    "\\",
    "C:",
    "\x00",
    "lib",
    "libggml-cuda.so",
    "x.dll",
    "ü",
    "dir/",
    ":",
    " ",
    "a" * 300,
    "llama_cpp/lib/",
    "\u202e",
    "%2e%2e",
]
NAMES = st.one_of(
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=6).map("".join), st.text(min_size=1, max_size=30)
)
DATA = st.one_of(
    st.binary(max_size=2048),
    st.integers(0, 1 << 20).map(bytes),  # zeros compress well
    st.sampled_from([b"\x7fELF" + bytes(60), b"MZ" + bytes(62)]),
)
METHODS = st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_LZMA, zipfile.ZIP_BZIP2])
MEMBERS = st.lists(st.tuples(NAMES, DATA, METHODS), min_size=0, max_size=6)
# Where a damage lands: a central directory field (offset within the 46-byte entry, width) or any byte.
FIELDS = [(8, 2), (10, 2), (16, 4), (20, 4), (24, 4), (28, 2), (30, 2), (42, 4)]
DAMAGE = st.one_of(
    st.tuples(st.just("field"), st.integers(0, 99), st.sampled_from(FIELDS), st.integers(0, 2**32 - 1)),
    st.tuples(st.just("flip"), st.integers(0, 1 << 30), st.integers(1, 255)),
    st.tuples(st.just("cut"), st.integers(0, 1 << 30)),
    st.tuples(st.just("repeat"), st.integers(2, 40)),
    st.tuples(st.just("encrypt"), st.integers(0, 99)),
)
BUDGET = 4 << 20  # the reader's total budget in these examples
# Generous (shared CI machines; Wine's Windows CPython is slower still): a hang or a bomb takes minutes.
SECONDS = 30.0 if sys.platform == "win32" else 15.0
PEAK = 48 << 20


def build(members: list[tuple[str, bytes, int]], nested: bool) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns on a duplicate name: wanted here
        with zipfile.ZipFile(buf, "w") as zf:
            for name, data, method in members:
                zf.writestr(zipfile.ZipInfo(_writable(name)), data, compress_type=method)
            if nested:
                zf.writestr("inner.whl", hz.make_zip({_writable(n): d for n, d, _ in members}, zipfile.ZIP_DEFLATED))
    return hz.nul_names(buf.getvalue())


def _writable(name: str) -> str:
    return name.replace("\x00", "\x01") or "x"  # NUL put back in the bytes by hz.nul_names


def damage(data: bytes, how: tuple) -> bytes:
    """The damage applied, or the data as it is where an earlier damage left nothing to aim at."""
    try:
        return _damage(data, how)
    except (struct.error, ValueError, IndexError):
        return data


def _damage(data: bytes, how: tuple) -> bytes:
    b = bytearray(data)
    kind = how[0]
    if kind == "field":
        entries = hz.central_entries(data)
        if entries:
            cd = entries[how[1] % len(entries)][0]
            (off, width), value = how[2], how[3]
            struct.pack_into("<H" if width == 2 else "<I", b, cd + off, value % (1 << (8 * width)))
    elif kind == "flip" and b:
        b[how[1] % len(b)] ^= how[2]
    elif kind == "cut":
        del b[how[1] % (len(b) + 1) :]
    elif kind == "repeat":
        return hz.repeat_central_directory(data, how[1])
    elif kind == "encrypt":
        entries = hz.central_entries(data)
        if entries:
            return hz.set_flag(data, entries[how[1] % len(entries)][1])
    return bytes(b)


def read_all(data: bytes) -> int:
    """Bytes read from every member; BadWheel is the only exception allowed through."""
    total = 0
    with open_wheel(data, budget=BUDGET) as wheel:
        for member in wheel.members:
            if not member.is_dir:
                total += len(wheel.read(member))
    return total


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(MEMBERS, st.booleans(), st.lists(DAMAGE, max_size=3))
def test_any_zip_is_read_or_refused_with_envmgrs_error_within_budget(members, nested, damages):
    data = build(members, nested)
    for how in damages:
        data = damage(data, how)
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        total = read_all(data)
    except BadWheel as exc:
        assert exc.message and "\n" not in exc.message and exc.exit_code == 2
        total = 0
    finally:
        _now, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert time.perf_counter() - t0 < SECONDS
    # zipfile's listing costs ~4 bytes per byte of central directory (capped by MAX_DIRECTORY in the reader)
    assert peak < PEAK + 6 * len(data) and total <= BUDGET


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(NAMES, DATA, METHODS), min_size=1, max_size=5), st.integers(2, 60))
def test_a_repeated_central_directory_never_inflates_twice(members, times):
    data = hz.repeat_central_directory(build(members, False), times)
    tracemalloc.start()
    try:
        try:
            read_all(data)
            raise AssertionError("a central directory listing each member again was read")
        except BadWheel as exc:
            assert "more than once" in exc.message or "overlap" in exc.message or "zip" in exc.message
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < PEAK + 6 * len(data)
