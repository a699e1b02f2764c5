"""envmgr/files/read.py: only regular files, never more than a limit, refused before a byte is read."""

from __future__ import annotations

import errno
import os
import sys

import pytest

from envmgr.files.read import TEXT_LIMIT, read_regular


def test_a_regular_file_is_read_exactly(tmp_path):
    f = tmp_path / "snap.toml"
    f.write_bytes(b"schema = 1\r\n\xef\xbb\xbf")
    assert read_regular(f) == b"schema = 1\r\n\xef\xbb\xbf"
    assert read_regular(str(f), limit=len(b"schema = 1\r\n\xef\xbb\xbf")) == f.read_bytes()


def test_a_folder_is_refused(tmp_path):
    # Linux's open() itself refuses a folder opened for reading ("Is a directory"), Windows' with "Permission
    # denied"; the fstat check covers the systems that open it. Callers take any OSError as one line.
    with pytest.raises(OSError) as caught:
        read_regular(tmp_path)
    assert caught.value.errno == (errno.EACCES if sys.platform == "win32" else errno.EISDIR)


def test_a_file_over_the_limit_is_refused_from_its_size(tmp_path):
    f = tmp_path / "big.log"
    with open(f, "wb") as fh:
        fh.truncate(3 * 1024 * 1024)  # sparse: the size is what is checked
    with pytest.raises(OSError) as caught:
        read_regular(f, limit=2 * 1024 * 1024)
    assert caught.value.errno == errno.EFBIG
    assert caught.value.strerror == "too large (3 MiB; the limit is 2 MiB)"
    assert TEXT_LIMIT == 64 * 1024 * 1024


@pytest.mark.posix
def test_a_fifo_and_dev_zero_are_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # no writer: a plain open would block here
    for path in (fifo, "/dev/zero"):
        with pytest.raises(OSError) as caught:
            read_regular(path)
        assert caught.value.errno == errno.EINVAL and caught.value.strerror == "not a regular file"
