"""Reading a file the user named, safely: only regular files, never more than a limit.

`/dev/zero` never ends and a FIFO blocks until a writer comes (O_NONBLOCK opens it at once), so
both are refused before a byte is read; a huge file is refused from its size, not after reading it.
"""

from __future__ import annotations

import errno
import os
import stat

TEXT_LIMIT = 64 * 1024 * 1024  # snapshots, recipes, machine records, logs: far below this


def read_regular(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of a regular file; OSError (with a strerror fit for a message) for anything else."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "it is a folder", str(path))
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if limit is not None and st.st_size > limit:
            raise OSError(
                errno.EFBIG,
                f"too large ({st.st_size // (1024 * 1024)} MiB; the limit is {limit // (1024 * 1024)} MiB)",
                str(path),
            )
        return fh.read()
