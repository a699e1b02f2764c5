"""Writes are transactions: a temporary file in the same folder, fsync, then an atomic rename."""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

# Windows refuses a rename onto a file another process has open or is renaming onto at that moment
# (ERROR_ACCESS_DENIED, WinError 5; seen under Windows CPython with two writers filling one cache
# entry). pip and other tools retry for the same reason; the window is short.
_REPLACE_TRIES = 20
_REPLACE_PAUSE_S = 0.05


def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    """os.replace, retried on Windows while another process holds the target."""
    for attempt in range(_REPLACE_TRIES):
        try:
            os.replace(src, dst)
            return
        except PermissionError:
            if sys.platform != "win32" or attempt == _REPLACE_TRIES - 1:
                raise
            import time

            time.sleep(_REPLACE_PAUSE_S * (attempt + 1) / 4)


def atomic_write(path: str | os.PathLike[str], data: bytes, *, backup: bool = True) -> Path | None:
    """Write `data` to `path` atomically; an existing file is first copied to `<path>.bak`.

    Returns the backup's path when one was made. Readers never see a half-written file, and an
    interrupted write leaves only a temporary file that is removed.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    saved = None
    if backup and target.exists():
        saved = target.with_name(target.name + ".bak")
        shutil.copy2(target, saved)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return saved
