"""From selectors (or --from FILE) to a Snapshot: cache first, then discover -> choose -> compose."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from envmgr.discover import discover
from envmgr.discover.limits import read_limits
from envmgr.errors import InputFileError
from envmgr.files.utf8 import check_utf8
from envmgr.host.base import Host
from envmgr.snapshot import compose
from envmgr.snapshot import form as snapmod
from envmgr.snapshot.form import Snapshot, missing_paths
from envmgr.snapshot.select import choose
from envmgr.snapshot.selectors import Selectors, with_real_paths


def resolve(
    host: Host,
    sel: Selectors,
    *,
    from_file: str | None = None,
    refresh: bool = False,
    strict: bool = False,
    pythons: tuple[str, ...] = (),
    use_cache: bool = True,
    warn: Callable[[str], None] | None = None,
    progress: Callable[[str], AbstractContextManager[object]] | None = None,
) -> tuple[Snapshot, str]:
    """The snapshot and where it came from ("file", "cache" or "captured"). `warn` and `progress`
    (compose's slow-step context manager) are the caller's UI; the core prints nothing."""

    warn = warn or (lambda msg: None)
    if from_file:
        snap = snapmod.load(from_file)
        _check_paths(host, snap, strict, from_file, warn)
        return snap, "file"

    sel = with_real_paths(host, sel)
    key = None
    if use_cache:
        from envmgr.cache import store as cache

        key = snapshot_key(host, sel, pythons)
        if not refresh:
            cached = cache.lookup(key, warn, host)
            if cached is not None:
                try:
                    return snapmod.from_toml(cached, "<cache>"), "cache"
                except Exception:  # a corrupt entry is rebuilt, never fatal
                    warn("a cached snapshot was unreadable; capturing it again")

    inv = discover(host, (None, *pythons))
    choice = choose(inv, sel, read_limits(host, inv))
    for note in choice.notes:
        warn(note)
    snap = compose.compose(host, choice, inv, progress)
    check_utf8(
        [
            *((op.name, e) for op in snap.delta.ops for e in op.entries),
            *snap.summary,
            *snap.identity,
            *(("notes", n) for n in snap.notes),
        ],
        "the environment for this selection",
        "give that folder a UTF-8 name, or choose another one (--cuda, --vs, --pip-cuda-python)",
    )
    if key is not None:
        from envmgr.cache import store as cache

        try:
            cache.store(key, snapmod.to_toml(snap), cache.watch_list(host, choice, inv), host)
        except OSError as exc:
            warn(f"could not write the snapshot cache in {cache.cache_dir()}: {exc.strerror or exc}")
    return snap, "captured"


def snapshot_key(host: Host, sel: Selectors, pythons: tuple[str, ...] = ()) -> str:
    """The cache key resolve() files the snapshot of `sel` under (`hook status` looks it up again)."""
    from envmgr.cache import store as cache  # start-up: export's fast path has its own key

    sel = with_real_paths(host, sel)
    return cache.cache_key(host.platform, {**sel._asdict(), "python": list(pythons)}, host.env)


def _check_paths(host: Host, snap: Snapshot, strict: bool, origin: str, warn: Callable[[str], None]) -> None:
    if snap.platform != host.platform:
        raise InputFileError(
            f"{origin}: this snapshot is for {snap.platform}, this machine is {host.platform}",
            "export a snapshot on this machine",
        )
    missing = missing_paths(snap, host.exists)
    if not missing:
        return
    listing = tuple(missing[:20]) + ((f"... and {len(missing) - 20} more",) if len(missing) > 20 else ())
    if strict:
        raise InputFileError(
            f"{origin}: {len(missing)} path(s) in the snapshot do not exist on this machine",
            "export the snapshot again on this machine, or drop --strict",
            details=listing,
        )
    warn(f"{origin}: {len(missing)} path(s) in the snapshot do not exist here: " + "; ".join(listing))
