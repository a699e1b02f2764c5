"""The prebuilt plan's downloads, `<cache>/prebuilt/<slot>/` (wheels/prebuilt.py; their folder and file names
live here, light to import for `cache clear`): listed by `wheels list` and removed by `wheels clear` and
`cache clear` (audit N16: they were never cleared, by any command, and each plan downloads up to 8
candidates of hundreds of MB).

Only envmgr's own folders are touched: a slot is named by 24 hex digits (the sha256 of the wheel's URL) and
holds facts.json; `.download-*` is a download that was killed before it was kept, `.<slot>.<n>.tmp` a stale
slot set aside by an install that was killed before it removed it. Anything else under
`<cache>/prebuilt` (a link, a file, a folder of another name) is left alone, as `wheels clear` does for
`<cache>/wheels`.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from envmgr.errors import InputFileError
from envmgr.files.jsondoc import read_json_file
from envmgr.host import dirs

FACTS = "facts.json"
MAX_AGE_DAYS = 30  # a download no plan has used for this long is removed before the next download
_SLOT = re.compile(r"^[0-9a-f]{24}$")
_LEFTOVER = re.compile(r"^\.(download-|[0-9a-f]{24}\.\d+\.tmp$)")  # a killed download; a stale slot set aside


@dataclass(frozen=True)
class Download:
    folder: Path
    wheel: str  # "" when facts.json cannot be read
    size: int  # bytes in the folder


def downloads_dir() -> Path:
    return dirs.cache_dir() / "prebuilt"


def _size(folder: Path) -> int:
    total = 0
    for p in folder.iterdir():
        try:
            if p.is_file() and not p.is_symlink():
                total += p.stat().st_size
        except OSError:
            continue
    return total


def _ours(folder: Path) -> bool:
    return folder.is_dir() and not folder.is_symlink() and bool(_SLOT.match(folder.name))


def listed() -> list[Download]:
    """Every kept download, oldest name first; one whose facts.json is unreadable still counts (its size)."""
    root = downloads_dir()
    out = []
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        if not _ours(folder):
            continue
        try:
            data = read_json_file(folder / FACTS, "download record", "")  # a FIFO or /dev/zero: refused at once
            wheel = str(data["wheel"])
        except (InputFileError, OSError, KeyError, TypeError):
            wheel = ""
        out.append(Download(folder, wheel, _size(folder)))
    return out


def clear() -> int:
    """Remove every kept download and the leftovers of killed ones; the number of downloads removed."""
    root = downloads_dir()
    count = 0
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        if _ours(folder):
            shutil.rmtree(folder, ignore_errors=True)
            count += not folder.exists()
        elif _LEFTOVER.match(folder.name) and folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder, ignore_errors=True)
    return count


def used(slot: Path) -> None:
    """Mark a download as used now (its facts.json's time), so that prune keeps it."""
    try:
        os.utime(slot / FACTS)
    except OSError:
        pass


def prune(max_age_days: float = MAX_AGE_DAYS, now: float | None = None) -> int:
    """Remove the downloads not used for max_age_days (by their facts.json's time, else the folder's)."""
    root = downloads_dir()
    cutoff = (time.time() if now is None else now) - max_age_days * 86400
    count = 0
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        if not _ours(folder):
            continue
        try:
            stamp = (folder / FACTS).stat().st_mtime if (folder / FACTS).is_file() else folder.stat().st_mtime
        except OSError:
            continue
        if stamp < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
            count += not folder.exists()
    return count
