"""What the console script's fast path (fastpath/main.py) reads: a cache entry's answers, rendered once.

Beside each cache entry `KEY.toml`, `KEY.fast` holds (marshal: no import to read it) the entry's
validity stats, the stat of `KEY.toml` itself (so a rewritten or cleared entry orphans it), and
what `export` prints for each format whose output depends on nothing but the snapshot: toml, json
and the sh/fish/ps1/cmd scripts of a snapshot without `remove` operations (those resolve against the
caller's environment). It also holds the operations and marker that `run` and `export --activate`
apply to the caller's environment. Everything here is rendered from `from_toml(entry)`, exactly as
the full path renders a cache hit, so the two cannot differ; a failure writes nothing (the fast path
then falls back to the full CLI).
"""

from __future__ import annotations

import io
import marshal
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from envmgr.cache.key import entry_token
from envmgr.output import emit_json
from envmgr.snapshot.form import from_toml
from envmgr.snapshot.form_json import snapshot_json

VERSION = 1
SCRIPT_FORMATS = ("sh", "fish", "ps1", "cmd")


def fast_path_of(entry: str | os.PathLike[str]) -> str:
    return os.path.splitext(os.fspath(entry))[0] + ".fast"


def forget(entry: str | os.PathLike[str]) -> None:
    try:
        os.unlink(fast_path_of(entry))
    except OSError:
        pass


def answers(snapshot_toml: str) -> dict[str, object]:
    """format -> what `export --format FORMAT` prints on a hit (str: through sys.stdout; bytes: raw)."""

    snap = from_toml(snapshot_toml, "<cache>")
    out: dict[str, str | bytes] = {"toml": snap.text}
    buf = io.StringIO()
    emit_json(snapshot_json(snap), buf)
    out["json"] = buf.getvalue()
    if not any(op.op == "remove" for op in snap.delta.ops):
        from envmgr.errors import EnvmgrError
        from envmgr.shellkit import render, stream_encoding

        for fmt in SCRIPT_FORMATS:
            try:
                out[fmt] = render(snap.delta, fmt, {}).encode(stream_encoding(fmt))
            except (EnvmgrError, UnicodeError):
                continue  # the full path reports it
    ops = [(op.name, op.op, op.value) for op in snap.delta.ops]
    return {"out": out, "platform": snap.platform, "marker": snap.marker(), "ops": ops}


def remember(entry: str | os.PathLike[str], snapshot_toml: str, validity: Mapping[str, str]) -> None:
    """Write KEY.fast beside the entry just written; never fails the caller."""
    if sys.platform == "win32":
        return  # the fast path does not run there (vcvars' base environment is in the key)
    try:
        from envmgr.files.atomic import atomic_write

        data = {
            "v": VERSION,
            "entry": entry_token(os.fspath(entry)),
            "validity": dict(validity),
            **answers(snapshot_toml),
        }
        atomic_write(Path(fast_path_of(entry)), marshal.dumps(data), backup=False)
    except Exception:  # broad on purpose; an optimisation: the full path answers without it
        forget(entry)
