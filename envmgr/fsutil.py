"""Writes are transactions: a temporary file in the same folder, fsync, then an atomic rename."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def atomic_write(path: str | os.PathLike, data: bytes, *, backup: bool = True) -> Path | None:
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
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return saved
