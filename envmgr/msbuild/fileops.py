"""The writer seam: the Host protocol only reads, so applying a plan goes through FileOps.

Paths given to FileOps are the host's own (Windows) paths; `LocalFileOps` maps them to files this
process can open: unchanged on Windows, through the prefix's drives for a Wine prefix. A recorded
machine has no files to write, so it gets no FileOps at all.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Protocol

from envmgr.errors import CannotWrite
from envmgr.files.atomic import replace
from envmgr.host.base import Host


class FileOps(Protocol):
    def read(self, path: str) -> bytes: ...

    def exists(self, path: str) -> bool: ...

    def is_link(self, path: str) -> bool: ...

    def write_new(self, path: str, data: bytes) -> None: ...

    def replace(self, src: str, dst: str) -> None: ...

    def remove(self, path: str) -> None: ...


class LocalFileOps:
    def __init__(self, to_local: Callable[[str], str]) -> None:
        self._to_local = to_local

    def local(self, path: str) -> str:
        return self._to_local(path)

    def read(self, path: str) -> bytes:
        with open(self.local(path), "rb") as fh:
            return fh.read()

    def exists(self, path: str) -> bool:
        return os.path.lexists(self.local(path))

    def is_link(self, path: str) -> bool:
        """True when the path or any folder above it is a symlink or junction (realpath resolves both)."""
        local = os.path.abspath(self.local(path))
        if os.path.islink(local) or _is_junction(local):
            return True
        return os.path.normcase(os.path.realpath(local)) != os.path.normcase(local)

    def write_new(self, path: str, data: bytes) -> None:
        """Create a file that must not exist yet (O_EXCL: never follows a planted link), then fsync."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(self.local(path), flags, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())

    def replace(self, src: str, dst: str) -> None:
        replace(self.local(src), self.local(dst))

    def remove(self, path: str) -> None:
        os.unlink(self.local(path))


def _is_junction(local: str) -> bool:
    check = getattr(os.path, "isjunction", None)  # Python 3.12+
    return bool(check and check(local))


def ops_for_host(host: Host) -> LocalFileOps:
    """The FileOps that write to the host's files (where its `local_path` puts them), or CannotWrite."""
    if not host.writes_files:
        raise CannotWrite(f"recorded machines are for planning: {host.name} has no real files to write")

    def to_local(path: str) -> str:
        local = host.local_path(path)
        if local is None:
            raise FileNotFoundError(2, f"not a file on {host.name}", path)
        return local

    return LocalFileOps(to_local)
