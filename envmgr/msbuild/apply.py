"""Applying and undoing as transactions (design.md habit 10).

Every step checks that its file is still what the plan saw, backs up what it will overwrite, writes
the new bytes to a temporary name in the same folder, verifies them by hash and renames them into
place. If any step fails, the steps already done are reversed, so the folder ends byte-identical to
before; the manifest records the outcome either way.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PureWindowsPath

from envmgr.errors import ApplyFailed, UndoRefused
from envmgr.msbuild.fileops import FileOps
from envmgr.msbuild.plan import FileAction
from envmgr.msbuild.store import APPLIED, APPLYING, ROLLED_BACK, UNDONE, Change, Store, changes_of, new_id


@dataclass(frozen=True)
class Step:
    path: str
    data: bytes | None  # None: remove the file
    before_sha256: str | None  # what the file must hold now (None: it must not exist)


@dataclass(frozen=True)
class Outcome:
    run_id: str
    changes: tuple[Change, ...]
    manifest: str


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def current_sha(ops: FileOps, path: str) -> str | None:
    return _sha(ops.read(path)) if ops.exists(path) else None


def write_verified(ops: FileOps, path: str, data: bytes) -> None:
    """Temp file beside the target, hash-checked, then an atomic rename; no partial file survives."""
    target = PureWindowsPath(path)
    tmp = str(target.with_name(f".{target.name}.envmgr-{secrets.token_hex(4)}.tmp"))
    try:
        ops.write_new(tmp, data)
        if _sha(ops.read(tmp)) != _sha(data):
            raise OSError(f"{tmp}: the written bytes do not match (disk or antivirus interference?)")
        ops.replace(tmp, path)
    except BaseException:
        try:
            if ops.exists(tmp):
                ops.remove(tmp)
        except OSError:
            pass
        raise


def _do(ops: FileOps, step: Step) -> None:
    if step.data is None:
        ops.remove(step.path)
    else:
        write_verified(ops, step.path, step.data)


def _undo_step(ops: FileOps, store: Store, step: Step) -> None:
    if step.before_sha256 is None:
        if ops.exists(step.path):
            ops.remove(step.path)
    else:
        write_verified(ops, step.path, store.read_backup(step.before_sha256))


def _rollback(ops: FileOps, store: Store, done: list[Step]) -> list[str]:
    failures = []
    for step in reversed(done):
        try:
            _undo_step(ops, store, step)
        except OSError as exc:
            failures.append(f"{step.path}: {exc.strerror or exc}")
    return failures


def _change(step: Step) -> Change:
    action = "remove" if step.data is None else ("create" if step.before_sha256 is None else "replace")
    return Change(step.path, action, step.before_sha256, None if step.data is None else _sha(step.data))


def transaction(ops: FileOps, store: Store, steps: Sequence[Step], command: str) -> Outcome:
    changed = [s.path for s in steps if current_sha(ops, s.path) != s.before_sha256]
    if changed:
        raise ApplyFailed(
            "files changed since the plan was made; nothing was written",
            "run the command again to plan from the current state",
            details=tuple(changed),
        )
    try:
        for step in steps:  # every backup exists before the first destination is touched
            if step.before_sha256 is not None:
                store.save_backup(ops.read(step.path))
    except OSError as exc:
        raise ApplyFailed(
            f"cannot back up {getattr(exc, 'filename', None) or 'a file'}: {exc.strerror or exc}; nothing was written",
            f"check that {store.root} is writable",
        ) from None
    run_id = new_id()
    changes = tuple(_change(s) for s in steps)
    store.write_manifest(run_id, APPLYING, changes, command)
    done: list[Step] = []
    try:
        for step in steps:
            _do(ops, step)
            done.append(step)
    except BaseException as exc:
        failures = _rollback(ops, store, done)
        store.write_manifest(run_id, ROLLED_BACK if not failures else APPLYING, changes, command)
        if not isinstance(exc, Exception):
            raise  # Ctrl+C: rolled back, now let it stop the program
        what = getattr(exc, "filename", None) or ""
        detail = (f"{exc.strerror or exc}" if isinstance(exc, OSError) else str(exc)) + (f": {what}" if what else "")
        if failures:
            raise ApplyFailed(
                f"{command} failed ({detail}) and could not restore every file",
                f"the originals are in {store.root / 'backups'}; manifest {run_id}",
                details=tuple(failures),
            ) from None
        raise ApplyFailed(
            f"{command} failed ({detail}); all {len(done)} change(s) made so far were rolled back, "
            "the folders are as before",
            _remedy(exc),
        ) from None
    path = store.write_manifest(run_id, APPLIED, changes, command)
    return Outcome(run_id, changes, str(path))


def _remedy(exc: BaseException) -> str:
    if isinstance(exc, PermissionError):
        return "writing under Program Files needs an elevated (administrator) prompt"
    return "fix the cause above and run it again"


def apply_copies(ops: FileOps, store: Store, copies: Sequence[FileAction]) -> Outcome:
    steps = []
    for c in copies:
        assert c.source is not None  # a copy always names its source (plan.py)
        try:
            data = ops.read(c.source)
        except OSError as exc:
            raise ApplyFailed(
                f"cannot read {c.source}: {exc.strerror or exc}; nothing was written",
                "check the toolkit's installation",
            ) from None
        if _sha(data) != c.source_sha256:
            raise ApplyFailed(
                f"{c.source} changed since the plan was made; nothing was written", "run the command again"
            )
        steps.append(Step(c.dest, data, c.dest_sha256))
    return transaction(ops, store, steps, "apply")


def undo_last(ops: FileOps, store: Store, check_path: Callable[[str], None] | None = None) -> Outcome | None:
    """Reverse the newest applied run exactly; refuse, naming them, if its files changed since."""
    doc = store.last_applied()
    if doc is None:
        return None
    changes = changes_of(doc)
    if check_path is not None:
        for c in changes:
            check_path(c.path)
    edited = [c.path for c in changes if current_sha(ops, c.path) != c.after_sha256]
    if edited:
        raise UndoRefused(
            f"refusing to undo run {doc['id']}: {len(edited)} file(s) changed since it wrote them",
            "restore or remove them by hand; envmgr will not overwrite someone else's change",
            details=tuple(edited),
        )
    steps = [
        Step(c.path, None if c.before_sha256 is None else store.read_backup(c.before_sha256), c.after_sha256)
        for c in reversed(changes)
    ]
    outcome = transaction(ops, store, steps, "undo")
    store.write_manifest(doc["id"], UNDONE, changes, "apply")
    return outcome
