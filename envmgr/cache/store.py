"""The snapshot cache: one TOML file per selection, valid while a few cheap stats are unchanged.

A hit costs a hash and a dozen stat() calls: no discovery, no vcvars. The key holds everything
that decides the result before looking at the disk (selectors, the environment variables discovery
reads, envmgr's version); the entry holds stats of every file and folder whose change could change
the result (vcvarsall.bat, the toolset and SDK folders, the CUDA root and nvcc, the folders that
new installs appear in). Writes are atomic; a corrupt entry is rebuilt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from envmgr import __version__
from envmgr.cache import key as cachekey
from envmgr.cache.fast import forget, remember
from envmgr.cache.key import ABSENT, KEY_ENV, stat_token, token  # noqa: F401  (the key rule lives in cache/key.py)
from envmgr.files.atomic import atomic_write
from envmgr.files.jsondoc import dumps
from envmgr.files.nested import loads_json
from envmgr.host import dirs
from envmgr.host.base import Host, host_path, join

if TYPE_CHECKING:
    from envmgr.discover.model import Inventory
    from envmgr.snapshot.select import Choice

cache_dir = dirs.cache_dir


def cache_key(platform: str, selectors: Mapping[str, object], env: Mapping[str, str]) -> str:
    base = None
    if platform == "windows":
        from envmgr.snapshot.capture import (
            base_environment,  # vcvars runs from it: a different base, a different capture
        )

        base = base_environment(env)
    return cachekey.cache_key(platform, selectors, env, __version__, base)


@dataclass(frozen=True)
class Entry:
    key: str
    path: Path
    snapshot_toml: str
    validity: dict[str, str]


def _entry_path(key: str) -> Path:
    return cache_dir() / "snapshots" / f"{key}.toml"


def host_token(host: Host | None, path: str) -> str:
    """stat_token through the host (a Wine prefix's C:\\ paths are its drive_c files); the same text for
    this machine's files as stat_token, which the fast path compares without a host."""
    if host is None:
        return stat_token(path)
    try:
        st = host.stat(path)
    except OSError:
        return ABSENT
    return token(st.mtime_ns, st.size)


def lookup(key: str, warn: Callable[[str], None] | None = None, host: Host | None = None) -> str | None:
    """The cached snapshot TOML when its entry exists, parses and all its stats (through `host`; None:
    this machine's) still match.

    An entry that exists but cannot be read (not UTF-8, no header, a disk error) is a miss too,
    reported through `warn`: the caller captures again and overwrites it."""
    path = _entry_path(key)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        _unreadable(path, exc.strerror or str(exc), warn)
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        _unreadable(path, f"not UTF-8 at byte {exc.start}", warn)
        return None
    head, sep, body = text.partition("\n# ---- snapshot ----\n")
    if not sep or not head.startswith("#envmgr-cache "):
        _unreadable(path, "no envmgr cache header", warn)
        return None
    try:
        validity = loads_json(head[len("#envmgr-cache ") :])
    except ValueError:
        validity = None
    if not isinstance(validity, dict):
        _unreadable(path, "a malformed cache header", warn)
        return None
    if any(host_token(host, p) != t for p, t in validity.items()):
        return None
    return body


def _unreadable(path: Path, why: str, warn: Callable[[str], None] | None) -> None:
    if warn is not None:
        warn(f"the cached snapshot {path} is unreadable ({why}); capturing it again")
    return None


def store(key: str, snapshot_toml: str, watch: list[str], host: Host | None = None) -> Path:
    validity = {p: host_token(host, p) for p in dict.fromkeys(watch)}
    text = "#envmgr-cache " + dumps(validity, sort_keys=True) + "\n# ---- snapshot ----\n" + snapshot_toml
    path = _entry_path(key)

    forget(path)
    atomic_write(path, text.encode("utf-8"), backup=False)
    remember(path, snapshot_toml, validity)
    return path


def entries() -> list[Entry]:
    folder = cache_dir() / "snapshots"
    out = []
    for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
        try:
            text = path.read_text(encoding="utf-8")
            head, _, body = text.partition("\n# ---- snapshot ----\n")
            validity = loads_json(head[len("#envmgr-cache ") :])
        except (OSError, ValueError):
            out.append(Entry(path.stem, path, "", {}))
            continue
        out.append(Entry(path.stem, path, body, validity))
    return out


def clear() -> int:
    count = 0
    for entry in entries():
        try:
            entry.path.unlink()
            count += 1
            from envmgr.cache.fast import forget

            forget(entry.path)
        except OSError:
            pass
    records = cache_dir() / "records"  # kept parses of large machine records (host/recorded.py)
    for copy in records.glob("*.marshal") if records.is_dir() else []:
        try:
            copy.unlink()
        except OSError:
            pass
    return count


def watch_list(host: Host, choice: Choice, inv: Inventory) -> list[str]:
    """The files and folders whose stats decide whether a cached snapshot still holds."""

    paths: list[str] = []
    if choice.vs is not None:
        vs = choice.vs
        paths += [
            vs.vcvarsall or "",
            join(host, vs.path, "VC", "Tools", "MSVC"),
            join(host, vs.path, "VC", "Auxiliary", "Build", "Microsoft.VCToolsVersion.default.txt"),
        ]
        if choice.toolset is not None:
            paths.append(choice.toolset.path)
        from envmgr.discover.sdk import kits_root
        from envmgr.discover.vs import instances_dir

        paths += [join(host, kits_root(host), "Include"), instances_dir(host)]
    for kit in inv.cuda:
        paths.append(kit.path)
        if kit.nvcc:
            paths.append(kit.nvcc)
        paths.append(str(host_path(host, kit.path).parent))
    if host.platform != "windows":
        paths.append("/usr/local")
    else:
        pf = host.env.get("ProgramFiles") or "C:\\Program Files"
        paths.append(join(host, pf, "NVIDIA GPU Computing Toolkit", "CUDA"))
    for cc in inv.host_compilers:
        paths.append(cc.path)
    return [p for p in paths if p]
