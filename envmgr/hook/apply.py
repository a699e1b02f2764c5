"""`hook install/remove/status` on this machine: probe the target Python, write the files plan.py
decides (the `.pth` last, so a half-done install never runs), undo them from the record (the `.pth`
first, so a half-done remove never runs a hook without its files), and report.

Every write is a transaction (files/atomic.py); an interruption (Ctrl-C included) during install
removes what was written and restores the ._pth before it propagates.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envmgr.errors import HookTargetError, InputFileError, UndoRefused
from envmgr.files.atomic import atomic_write
from envmgr.files.jsondoc import dumps, load_json, read_json_file
from envmgr.files.read import read_regular
from envmgr.hook import plan
from envmgr.host.base import Host

_REMEDY = "run `envmgr hook remove --python EXE` and install it again"


@dataclass(frozen=True)
class Target:
    probe: plan.Probe
    placement: plan.Placement

    @property
    def site(self) -> Path:
        return Path(self.placement.site)


def probe_target(host: Host, python: str) -> plan.Probe:
    done = host.run([python, "-I", "-B", "-c", plan.PROBE_SCRIPT], timeout=60)
    if not done.ok:
        raise HookTargetError(
            f"{python}: cannot ask it for its site folder: {done.describe_failure()}",
            "give --python a working Python interpreter",
        )
    line = (done.stdout.strip().splitlines() or [""])[-1]
    try:
        probe = plan.parse_probe(load_json(line, python, "site probe", ""))
    except InputFileError:
        probe = None
    if probe is None:
        raise HookTargetError(
            f"{python}: its answer about its site folder was not understood", "give --python a CPython 3.8 or newer"
        )
    return probe


def locate(host: Host, python: str) -> Target:
    probe = probe_target(host, python)
    placement = plan.place(probe, os.path.isdir, lambda p: read_regular(p, 1024 * 1024))
    if placement is None:
        raise HookTargetError(
            f"{python}: no site folder whose .pth files it reads at start-up "
            f"(looked at {', '.join((probe.purelib, *probe.sitepackages))})",
            "use a venv, a conda environment or an embeddable Python",
        )
    return Target(probe, placement)


def read_record(target: Target) -> dict[str, Any] | None:
    path = target.site / plan.RECORD
    if not path.exists():
        return None
    data = read_json_file(path, "hook record", _REMEDY)
    if not isinstance(data, dict) or data.get("schema") != plan.SCHEMA or not isinstance(data.get("created"), list):
        raise InputFileError(f"{path}: not an envmgr hook record this envmgr reads", _REMEDY)
    return data


def install(target: Target, files: Mapping[str, bytes], record: dict[str, Any]) -> list[str]:
    """Write the hook (files: name -> bytes, the .pth among them); the paths written, in order."""
    site, placement = target.site, target.placement
    order = [n for n in files if n != plan.PTH] + [plan.PTH]
    written: list[str] = []
    changed_pth = False
    try:
        for name in order[:-1]:
            atomic_write(site / name, files[name], backup=False)
            written.append(str(site / name))
        atomic_write(site / plan.RECORD, (dumps(record, indent=2) + "\n").encode("utf-8"), backup=False)
        written.append(str(site / plan.RECORD))
        if placement.pth_file:
            atomic_write(placement.pth_file, placement.pth_after, backup=False)
            changed_pth = True
        atomic_write(site / plan.PTH, files[plan.PTH], backup=False)
        written.append(str(site / plan.PTH))
    except BaseException as exc:  # Ctrl-C, a full disk: nothing of a half install stays
        for path in reversed(written):
            _unlink(Path(path))
        if changed_pth and placement.pth_file:
            atomic_write(placement.pth_file, placement.pth_before, backup=False)
        _drop_dirs(list(placement.new_dirs))
        if isinstance(exc, OSError):
            raise _cannot_write(site, exc, "nothing was installed") from None
        raise
    return written


def _cannot_write(site: Path, exc: OSError, what: str) -> HookTargetError:
    where = exc.filename or site
    return HookTargetError(
        f"{where}: cannot write: {exc.strerror or exc}; {what}",
        "run as a user who may write into that Python's folder, or hook a venv of your own",
    )


def remove(target: Target, record: Mapping[str, Any]) -> list[str]:
    """Undo the install `record` describes; the paths removed or restored. Refuses (and changes nothing)
    when a file the hook wrote was changed since, or the ._pth was edited after the hook's change."""
    try:
        return _remove(target, record)
    except OSError as exc:  # a read-only folder: what is done is done, and `hook remove` again finishes it
        raise _cannot_write(target.site, exc, "run `envmgr hook remove` again when it can") from None


def _remove(target: Target, record: Mapping[str, Any]) -> list[str]:
    site = target.site
    created = [(site / str(e.get("name", "")), str(e.get("sha256", ""))) for e in record["created"]]
    problems = [
        f"{path}: changed since `hook install` (sha256 differs)"
        for path, digest in created
        if path.exists() and plan.sha256(read_regular(path)) != digest
    ]
    restores = []
    for entry in record.get("changed", []):
        path = Path(str(entry["path"]))
        original = base64.b64decode(str(entry["original_base64"]))
        now = read_regular(path) if path.exists() else b""
        if now == original:  # restored already, by a remove that was interrupted after it
            continue
        if plan.sha256(now) != entry.get("sha256_after"):
            problems.append(f"{path}: edited since `hook install`; its original is kept in {site / plan.RECORD}")
        restores.append((path, original))
    if problems:
        raise UndoRefused(
            "the hook's files were changed after it was installed; nothing was removed",
            "restore or delete them by hand (docs/hook.md lists them)",
            details=tuple(problems),
        )
    done = []
    ordered = sorted(created, key=lambda c: c[0].name != plan.PTH)  # the .pth first: no hook runs half-removed
    for path, _ in ordered[:1]:
        done += _unlink(path)
    for path, original in restores:
        atomic_write(path, original, backup=False)
        done.append(str(path))
    for path, _ in ordered[1:]:
        done += _unlink(path)
    done += _drop_bytecode(site, bool(record.get("pycache_existed", True)))
    done += _unlink(site / plan.RECORD)
    return done + _drop_dirs([str(d) for d in record.get("new_dirs", [])])


def _drop_dirs(folders: list[str]) -> list[str]:
    """The folders install made, deepest first, each only while empty (a package installed there since stays)."""
    gone = []
    for folder in folders:
        try:
            os.rmdir(folder)
        except OSError:
            break
        gone.append(folder)
    return gone


def _drop_bytecode(site: Path, existed: bool) -> list[str]:
    """The .pyc the target compiled of the hook's module; __pycache__ itself when the hook's start made it."""
    cache = site / "__pycache__"
    gone = []
    if cache.is_dir():
        for pyc in sorted(cache.glob(f"{plan.MODULE}.*.pyc")):
            gone += _unlink(pyc)
        if not existed and not any(cache.iterdir()):
            cache.rmdir()
            gone.append(str(cache))
    return gone


def _unlink(path: Path) -> list[str]:
    try:
        path.unlink()
    except FileNotFoundError:
        return []
    return [str(path)]


def file_states(target: Target, record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each created file: present and as written, changed, or missing."""
    out = []
    for entry in record["created"]:
        path = target.site / str(entry.get("name", ""))
        state = (
            "missing"
            if not path.exists()
            else ("ok" if plan.sha256(read_regular(path)) == entry.get("sha256") else "changed")
        )
        out.append({"path": str(path), "state": state})
    for entry in record.get("changed", []):
        path = Path(str(entry["path"]))
        now = read_regular(path) if path.exists() else b""
        out.append({"path": str(path), "state": "ok" if plan.sha256(now) == entry.get("sha256_after") else "changed"})
    return out
