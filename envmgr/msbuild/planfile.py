"""The plan file handed to the elevated step, and the checks that step makes before trusting it.

The elevated process trusts nothing in the file: every source must sit directly in a discovered
toolkit's MSBuildExtensions folder, every destination directly in a discovered instance's
BuildCustomizations folder, every name must be a CUDA integration name of that toolkit's version,
no path may hold `..` or pass through a link or junction, and every entry must match, hashes
included, the plan it makes itself from a fresh discovery.
"""

from __future__ import annotations

import time
from pathlib import PureWindowsPath
from typing import Any

from envmgr.errors import InputFileError, PlanRejected
from envmgr.files.nested import loads_json
from envmgr.files.read import read_regular
from envmgr.msbuild.fileops import FileOps
from envmgr.msbuild.names import integration_version, same
from envmgr.msbuild.plan import FileAction, Plan

PLAN_KIND = "envmgr-msbuild-plan"
_FIELDS = ("source", "dest", "source_sha256", "dest_sha256")
PLAN_LIMIT = 16 * 1024 * 1024  # a plan lists a few dozen copies: a few kB


def plan_document(plan: Plan) -> dict[str, Any]:
    return {
        "schema": 1,
        "kind": PLAN_KIND,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "copies": [
            {"source": c.source, "dest": c.dest, "source_sha256": c.source_sha256, "dest_sha256": c.dest_sha256}
            for c in plan.copies
        ],
    }


def load_plan_file(path: str) -> dict[str, Any]:
    try:
        doc: dict[str, Any] = loads_json(read_regular(path, PLAN_LIMIT).decode("utf-8"))  # a FIFO: refused at once
    except OSError as exc:
        raise InputFileError(
            f"{path}: not a readable plan file ({exc.strerror or exc})", "make a new plan with envmgr fix-msbuild"
        ) from None
    except ValueError as exc:
        raise InputFileError(
            f"{path}: not a readable plan file ({exc})", "make a new plan with envmgr fix-msbuild"
        ) from None
    ok = (
        isinstance(doc, dict)
        and doc.get("kind") == PLAN_KIND
        and doc.get("schema") == 1
        and isinstance(doc.get("copies"), list)
        and all(isinstance(c, dict) and all(k in c for k in _FIELDS) for c in doc["copies"])
    )
    if not ok:
        raise PlanRejected(
            f"{path}: not an envmgr fix-msbuild plan (schema 1)", "make a new plan with envmgr fix-msbuild"
        )
    return doc


def path_problem(path: object) -> str | None:
    """Shape checks that need no machine: absolute, drive-rooted, no `.`/`..`, no stream or device names."""
    if not isinstance(path, str) or not path:
        return "not a path"
    win = PureWindowsPath(path)
    if len(win.drive) != 2 or not win.root:
        return "not an absolute X:\\ path"
    if "/" in path or any(p in (".", "..") for p in path.split("\\")):
        return "holds '..', '.' or '/'"
    if ":" in path[2:] or any(ch in path for ch in '<>"|?*') or any(ord(ch) < 32 for ch in path):
        return "holds a character Windows paths may not (':' stream, wildcard or control character)"
    return None


def check_destination(path: str, allowed: tuple[str, ...], ops: FileOps) -> str | None:
    """Why `path` may not be written by fix-msbuild, or None. Used for plans and for --undo manifests."""
    if problem := path_problem(path):
        return problem
    win = PureWindowsPath(path)
    if integration_version(win.name) is None:
        return f"{win.name!r} is not a CUDA integration file name"
    if not any(same(str(win.parent), a) for a in allowed):
        return "outside every discovered BuildCustomizations folder"
    if ops.is_link(path) or ops.is_link(str(win.parent)):
        return "passes through a link or junction"
    return None


def _entry_problem(entry: dict[str, Any], plan: Plan, ops: FileOps) -> str | None:
    source, dest = entry["source"], entry["dest"]
    if problem := path_problem(source):
        return f"source {source!r}: {problem}"
    folders = tuple(p.folder for p in plan.pairs)
    if problem := check_destination(dest, folders, ops):
        return f"destination {dest!r}: {problem}"
    src = PureWindowsPath(source)
    if src.name.lower() != PureWindowsPath(dest).name.lower():
        return f"source {source!r} and destination {dest!r} have different names"
    kits = [p for p in plan.pairs if same(str(src.parent), p.extensions)]
    if not kits:
        return f"source {source!r}: outside every discovered toolkit's MSBuildExtensions folder"
    if integration_version(src.name) != kits[0].cuda:
        return f"source {source!r}: not a file of CUDA {kits[0].cuda}'s integration"
    if ops.is_link(source) or ops.is_link(str(src.parent)):
        return f"source {source!r}: passes through a link or junction"
    return None


def validate(doc: dict[str, Any], fresh: Plan, ops: FileOps) -> tuple[FileAction, ...]:
    """The fresh plan's copies that the plan file names, or PlanRejected listing every problem."""
    problems, chosen = [], []
    for i, entry in enumerate(doc["copies"], 1):
        problem = _entry_problem(entry, fresh, ops)
        match = next(
            (
                c
                for c in fresh.copies
                if c.source is not None
                and same(c.source, entry["source"])
                and same(c.dest, entry["dest"])
                and c.source_sha256 == entry["source_sha256"]
                and c.dest_sha256 == entry["dest_sha256"]
            ),
            None,
        )
        if problem is None and match is None:
            problem = f"{entry['dest']}: does not match what this machine needs now (changed since planning?)"
        if problem:
            problems.append(f"entry {i}: {problem}")
        elif match is not None:  # always, when there is no problem
            chosen.append(match)
    if problems:
        raise PlanRejected(
            "refusing the plan file: nothing was written",
            "make a new plan with envmgr fix-msbuild",
            details=tuple(problems),
        )
    return tuple(chosen)
