"""Writes are transactions: a temporary file in the same folder, fsync, then an atomic rename.

`write_user_file` is the one writer for a file at a path the user gave (`record -o`,
`verify --save-output`, a slot named by ENVMGR_SLOT, a plan's result): a regular file (or a link to
one) is replaced atomically, keeping the link; anything else is never renamed over. A character
device, a FIFO or a socket (or a link to one, /dev/stdout included) is written in place, and a FIFO
that nobody reads is refused at once rather than waited on; a folder and a block device are refused.
No folder is created for it and nothing is written beside it but the documented `.bak`.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

from envmgr.files.names import WINDOWS_DEVICE

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
    saved = target.with_name(target.name + ".bak") if backup and target.exists() else None
    _through_temp(str(target.parent), target.name, data, None, target, saved)
    return saved


def _through_temp(
    folder: str,
    name: str,
    data: bytes,
    mode: int | None,
    target: str | os.PathLike[str],
    backup: str | os.PathLike[str] | None = None,
) -> None:
    """data into a temporary file beside the target (with `mode`, when given), fsynced, then renamed over
    it; on any failure, Ctrl-C included, the temporary file is removed and the target left as it was.
    `backup`: the target is first copied there, itself through a temporary file and a rename, and only
    once the new data is safely written: a full disk never costs the previous backup (audit N25)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        if mode is not None:
            os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if backup is not None:
            _copy_through_temp(target, backup)
        replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _copy_through_temp(source: str | os.PathLike[str], dest: str | os.PathLike[str]) -> None:
    """source copied to dest (data and stat) without dest ever holding a partial copy."""
    folder, name = os.path.split(os.fspath(dest))
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder or ".")
    try:
        with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
            shutil.copyfileobj(src, out)
            out.flush()
            os.fsync(out.fileno())
        shutil.copystat(source, tmp)
        replace(tmp, dest)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _where(path: str) -> tuple[str, os.stat_result | None, bool]:
    """(where a write to path lands, what is there now or None, whether to write in place)."""
    if sys.platform == "win32" and WINDOWS_DEVICE.match(os.path.basename(path.rstrip("\\/ ."))):
        return path, None, True
    if os.name == "posix" and path.startswith(("/dev/", "/proc/")):  # /dev/stdout, /dev/fd/N: an open file
        return path, _stat(path), True
    real = os.path.realpath(path)
    st = _stat(real)
    if os.name == "posix" and real.startswith("/proc/"):
        return path, st, True
    in_place = st is not None and not stat.S_ISREG(st.st_mode)
    return (path if in_place else real), st, in_place


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def _in_place(path: str, data: bytes, st: os.stat_result | None, *, append: bool = False) -> None:
    """Write into what is at path: never blocks on a FIFO with no reader (ENXIO at once)."""
    flags = os.O_WRONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    if st is None or stat.S_ISREG(st.st_mode):
        flags |= os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, "nothing reads it (a FIFO or socket with no reader)", path) from None
        raise
    try:
        if os.name == "posix":
            os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def write_user_file(
    path: str | os.PathLike[str], data: bytes, *, backup: bool = False, regular_only: bool = False
) -> Path | None:
    """Write data at a path the user gave (see the module docstring); OSError with a strerror fit
    for a one-line message otherwise. `backup`: an existing regular file is first copied to
    `<file>.bak` (returned). `regular_only`: refuse anything but a regular file or a new one."""
    target, st, in_place = _where(os.fspath(path))
    _refuse(st, os.fspath(path))
    if in_place:
        if regular_only:
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        _in_place(target, data, st)
        return None
    folder = os.path.dirname(target) or "."
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, "its folder does not exist", os.fspath(path))
    saved = Path(target + ".bak") if backup and st is not None else None
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask()
    _through_temp(folder, os.path.basename(target), data, mode, target, saved)
    return saved


def append_user_file(path: str | os.PathLike[str], data: bytes) -> None:
    """Append data at a path the user (or a CI runner: $GITHUB_ENV) gave: in place, as the file is
    shared; a folder, a block device and a FIFO nobody reads are refused as by write_user_file, and no
    folder is made for it."""
    target, st, _ = _where(os.fspath(path))
    _refuse(st, os.fspath(path))
    if st is None and not os.path.isdir(os.path.dirname(target) or "."):
        raise FileNotFoundError(errno.ENOENT, "its folder does not exist", os.fspath(path))
    _in_place(target, data, st, append=True)


def _refuse(st: os.stat_result | None, shown: str) -> None:
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "it is a folder", shown)
    if st is not None and stat.S_ISBLK(st.st_mode):
        raise OSError(errno.EINVAL, "it is a block device (a disk); envmgr does not write to one", shown)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def hold_for_writing(path: str | os.PathLike[str]) -> int | None:
    """For a writer that opens path itself later (`run --log`): check it can be written without
    blocking; for a FIFO or socket, an open descriptor that keeps its reader from seeing an end of
    file until this process exits (None for anything else). OSError as write_user_file's."""
    target, st, in_place = _where(os.fspath(path))
    _refuse(st, os.fspath(path))
    if not in_place or st is None or stat.S_ISCHR(st.st_mode) or stat.S_ISREG(st.st_mode):
        with open(target, "ab"):  # a regular file or a device: opening cannot block
            pass
        return None
    try:
        return os.open(target, os.O_WRONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, "nothing reads it (a FIFO or socket with no reader)", target) from None
        raise
