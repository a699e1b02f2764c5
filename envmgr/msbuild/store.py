"""Where fix-msbuild keeps what it needs to undo: content-addressed backups and one manifest per run.

Layout under `platformdirs.user_data_dir("envmgr")/msbuild` (or `$ENVMGR_DATA_DIR/msbuild`):
    backups/<sha256>        the bytes of every file a run overwrote (or an undo removed)
    manifests/<id>.json     every change of one run, with hashes and its state
    plans/<id>.json         plan files handed to the elevated step
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from envmgr.errors import InputFileError
from envmgr.files.atomic import atomic_write
from envmgr.files.jsondoc import dumps, read_json_file
from envmgr.host import dirs

MANIFEST_KIND = "envmgr-msbuild-manifest"
APPLYING, APPLIED, ROLLED_BACK, UNDONE = "applying", "applied", "rolled-back", "undone"


def data_dir() -> Path:
    return dirs.data_dir() / "msbuild"


@dataclass(frozen=True)
class Change:
    path: str
    action: str  # create | replace | remove
    before_sha256: str | None  # None: the file did not exist
    after_sha256: str | None  # None: the file no longer exists


def new_id() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)


class Store:
    def __init__(self, root: Path | None = None) -> None:
        self.root = root or data_dir()

    # ---- backups --------------------------------------------------------------------------------
    def save_backup(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        path = self.root / "backups" / digest
        if not (path.exists() and hashlib.sha256(path.read_bytes()).hexdigest() == digest):
            atomic_write(path, data, backup=False)
        return digest

    def read_backup(self, digest: str) -> bytes:
        data = (self.root / "backups" / digest).read_bytes()
        if hashlib.sha256(data).hexdigest() != digest:
            raise OSError(f"backup {digest[:12]}… is damaged")
        return data

    # ---- manifests ------------------------------------------------------------------------------
    def manifest_path(self, run_id: str) -> Path:
        return self.root / "manifests" / f"{run_id}.json"

    def write_manifest(self, run_id: str, state: str, changes: tuple[Change, ...], command: str) -> Path:
        doc = {
            "schema": 1,
            "kind": MANIFEST_KIND,
            "id": run_id,
            "command": command,
            "state": state,
            "updated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "changes": [asdict(c) for c in changes],
        }
        path = self.manifest_path(run_id)
        atomic_write(path, (dumps(doc, indent=2) + "\n").encode("utf-8"), backup=False)
        return path

    def manifests(self) -> list[dict[str, Any]]:
        folder = self.root / "manifests"
        out = []
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
            doc = read_json_file(path, "manifest", "remove or repair the file")  # a FIFO, too deep: one line
            if isinstance(doc, dict) and doc.get("kind") == MANIFEST_KIND:
                out.append(doc)
        return out

    def last_applied(self) -> dict[str, Any] | None:
        """The newest run that is still in place (an apply, not yet undone)."""
        runs = [m for m in self.manifests() if m.get("command") == "apply" and m.get("state") == APPLIED]
        return runs[-1] if runs else None


def changes_of(doc: dict[str, Any]) -> tuple[Change, ...]:
    try:
        return tuple(
            Change(str(c["path"]), str(c["action"]), c["before_sha256"], c["after_sha256"]) for c in doc["changes"]
        )
    except (KeyError, TypeError) as exc:
        raise InputFileError(
            f"manifest {doc.get('id')}: malformed change list ({exc})", "remove or repair the manifest"
        ) from None
