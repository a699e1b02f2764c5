"""The fix for two copies of one OpenMP runtime in one process (issue 37): the package's copy defers to the copy
the app already loaded. `verify --after APP --fix` applies it, `verify --undo-fix MANIFEST` takes it back.

Two copies of the same runtime (torch's torch/lib/libgomp.so.1 and a package's bundled, auditwheel-renamed
libgomp-a34b3233.so.1; two libiomp5md.dll on Windows) are two OpenMP thread pools, or Intel's abort ("OMP: Error
#15"). The package's copy is replaced by a link to the app's file: ld.so does not map a file it has mapped already
(it compares device and inode), nor does Wine's loader (the file id), so in the app's process the package binds
to the app's copy, and alone it still loads, from the same path. Linux takes a hard link, else a symbolic link;
Windows a hard link (same volume; proven under Wine, whose loader matches the file id). Done only where the
app's copy defines everything the package's copy does (ELF symbol versions, PE export names), so nothing the
package's libraries import can go missing. The original is kept beside it (NAME.envmgr-orig) and a manifest
lists each change; undo puts the original back when the link is still the one the fix made.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from envmgr.binaries.dllsyms import pe_exports
from envmgr.binaries.elfsyms import parse_versions
from envmgr.binaries.runtimes import OPENMP, Duplicate, file_name
from envmgr.errors import InputFileError
from envmgr.files.atomic import atomic_write
from envmgr.files.jsondoc import dumps, read_json_file

SCHEMA = 1
BACKUP = ".envmgr-orig"
MAX_RUNTIME = 64 * 1024 * 1024


@dataclass(frozen=True)
class Defer:
    package_copy: str  # the package's copy of the runtime: replaced by a link
    app_copy: str  # the copy the app loaded, which both then use
    what: str  # "GNU OpenMP"


def plan(dups: Iterable[Duplicate], roots: Iterable[str]) -> tuple[Defer, ...]:
    """Pure: for each OpenMP duplicate, the package's copies (under `roots`) of a runtime the app loaded too (the
    same kind: two GNU OpenMPs, not GNU and Intel, whose one cannot stand in for the other)."""
    prefixes = tuple(_folder(r) for r in roots if r)
    out: list[Defer] = []
    for dup in dups:
        if dup.family != "OpenMP":
            continue
        pairs = list(zip(dup.what, dup.paths, strict=True))
        app = [(w, p) for w, p in pairs if not _under(p, prefixes)]
        for what, path in pairs:
            other = next((p for w, p in app if w == what), None)
            if _under(path, prefixes) and other is not None:
                out.append(Defer(path, other, what))
    return tuple(out)


def _folder(root: str) -> str:
    if "\\" in root or ":" in root:  # a Windows path: compared case-insensitively
        return root.rstrip("/\\").lower() + "\\"
    return root.rstrip("/") + "/"


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any((path.lower() if p.endswith("\\") else path).startswith(p) for p in prefixes)


def words(d: Defer) -> str:
    return (
        f"make the package's {d.what} defer to the app's: {d.package_copy} becomes a link to {d.app_copy} "
        f"(the original kept as {file_name(d.package_copy)}{BACKUP}): `envmgr verify --after ... --fix`, "
        f"undone by `envmgr verify --undo-fix MANIFEST`"
    )


def lacking(d: Defer) -> str:
    """What the package's copy has that the app's lacks ("" when the app's can stand in for it)."""
    try:
        own, app = _read(d.package_copy), _read(d.app_copy)
    except OSError as exc:
        return f"cannot read {exc.filename}: {exc.strerror}"
    if own[:2] == b"MZ":
        mine, theirs = pe_exports(own).names, pe_exports(app).names
    else:
        mine, theirs = parse_versions(own).defines, parse_versions(app).defines
    missing = sorted(mine - theirs)
    return f"{d.app_copy} lacks {', '.join(missing[:5])} of {d.package_copy}" if missing else ""


def _read(path: str) -> bytes:
    if os.path.getsize(path) > MAX_RUNTIME:
        raise OSError(0, "larger than an OpenMP runtime", path)
    with open(path, "rb") as fh:
        return fh.read()


def apply(defers: Iterable[Defer], manifest_dir: Path) -> tuple[list[str], Path | None]:
    """Link each package copy to the app's copy, keeping the original; (lines said, the manifest or None)."""
    done: list[dict[str, str]] = []
    lines: list[str] = []
    for d in defers:
        why = lacking(d)
        backup = d.package_copy + BACKUP
        if why or os.path.lexists(backup):
            lines.append(f"{d.package_copy}: left as it is ({why or backup + ' exists: an earlier fix not undone'})")
            continue
        sha, how = _sha(d.package_copy), ""
        try:
            os.replace(d.package_copy, backup)
            how = _link(d.app_copy, d.package_copy)
        finally:  # no link made (or Ctrl-C between the two): the original goes back where it was
            if not how and os.path.lexists(backup) and not os.path.lexists(d.package_copy):
                os.replace(backup, d.package_copy)
        if not how:
            lines.append(f"{d.package_copy}: left as it is (no link to {d.app_copy} can be made here)")
            continue
        done.append({"path": d.package_copy, "target": d.app_copy, "backup": backup, "sha256": sha, "link": how})
        lines.append(f"{d.package_copy} -> {d.app_copy} ({how}; the original is {backup})")
    if not done:
        return lines, None
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    manifest = manifest_dir / f"runtime-defer-{stamp}.json"
    manifest_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(manifest, dumps({"schema": SCHEMA, "deferred": done}, indent=1).encode(), backup=False)
    return lines, manifest


def _link(target: str, path: str) -> str:
    try:
        os.link(target, path)
        return "hard link"
    except OSError:
        if os.name == "nt":
            return ""
    try:
        os.symlink(target, path)
        return "symbolic link"
    except OSError:
        return ""


def undo(manifest: Path) -> list[str]:
    """Put each original back, only where the path is still the fix's link to its target and the kept original
    is the file it moved (sha256): a manifest is input and names nothing else to remove (N18)."""
    remedy = "give the manifest `verify --fix` named"
    data = read_json_file(manifest, "runtime-defer manifest", remedy)
    items = data.get("deferred") if isinstance(data, dict) and data.get("schema") == SCHEMA else None
    if not isinstance(items, list):
        raise InputFileError(f"{manifest}: not an envmgr runtime-defer manifest", remedy)
    return [_undo_one(item if isinstance(item, dict) else {}) for item in items]


def _undo_one(item: dict[str, object]) -> str:
    path, target = str(item.get("path", "")), str(item.get("target", ""))
    backup = path + BACKUP
    if not path or not any(rx.match(file_name(path)) for _, rx in OPENMP):
        return f"{path or '?'}: skipped (not an OpenMP runtime a fix links)"
    if not os.path.isfile(backup) or _sha(backup) != item.get("sha256"):
        return f"{path}: skipped ({backup} is gone or changed)"
    if not (os.path.lexists(path) and os.path.exists(target) and os.path.samefile(path, target)):
        return f"{path}: skipped (no longer the link to {target})"
    os.remove(path)
    os.replace(backup, path)
    return f"restored {path}"


def _sha(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
