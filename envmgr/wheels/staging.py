"""The staging folders `wheels publish` copies an entry into before renaming it into place, and their
cleanup after a publisher was killed (audit M9: `kill -9` left 400 MB `.<digest>.<hex>.tmp` folders in
DEST/<project>/ for good, where a static server serves them).

A staging folder `.<digest>.<hex>.tmp` (or `.old`, the entry being replaced) has a sibling
`.<digest>.<hex>.lock` that its publisher holds locked (flock, or msvcrt.locking on Windows) while it
works: the system releases the lock when the process ends, however it ends. `sweep` removes the
folders whose lock it can take, so it never touches a live concurrent publisher's work; a folder with
no lock file (a publisher killed between the two steps, or an older envmgr) goes once it is an hour old.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_LEFTOVER = re.compile(r"^\.([0-9a-f]{20})\.([0-9a-f]{12})\.(tmp|old)$")
ORPHAN_AGE_S = 3600


def _lock(fd: int) -> bool:
    """Take the lock on fd without waiting; False when another process holds it."""
    try:
        if sys.platform == "win32":
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


@contextmanager
def held(target: Path) -> Iterator[tuple[Path, Path]]:
    """(staging, old): two names beside target for this publisher, locked until the block ends; both
    folders are removed at the end, whatever is left in them."""
    stem = f".{target.name}.{uuid.uuid4().hex[:12]}"
    target.parent.mkdir(parents=True, exist_ok=True)
    lock = target.with_name(stem + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _lock(fd)
        yield target.with_name(stem + ".tmp"), target.with_name(stem + ".old")
    finally:
        for leftover in (stem + ".tmp", stem + ".old"):
            shutil.rmtree(target.with_name(leftover), ignore_errors=True)
        os.close(fd)
        try:
            os.unlink(lock)
        except OSError:
            pass


def sweep(project: Path) -> list[str]:
    """Remove the staging folders in project that no live publisher holds; their names."""
    try:
        names = os.listdir(project)
    except OSError:
        return []
    gone = []
    for name in names:
        m = _LEFTOVER.match(name)
        if m is None or not (project / name).is_dir():
            continue
        lock = project / f".{m.group(1)}.{m.group(2)}.lock"
        if _orphan(project / name, lock):
            shutil.rmtree(project / name, ignore_errors=True)
            gone.append(name)
    return gone


def _orphan(folder: Path, lock: Path) -> bool:
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:  # no lock file: only an old folder is an orphan
        try:
            return time.time() - folder.stat().st_mtime > ORPHAN_AGE_S
        except OSError:
            return False
    try:
        free = _lock(fd)
    finally:
        os.close(fd)
    if free:
        try:
            os.unlink(lock)
        except OSError:
            pass
    return free
