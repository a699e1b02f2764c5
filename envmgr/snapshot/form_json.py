"""The JSON form of a snapshot (docs/json.md): the same content as the TOML, for programs."""

from __future__ import annotations

from envmgr.snapshot.form import SCHEMA, Snapshot


def snapshot_json(snap: Snapshot) -> dict[str, object]:
    env: dict[str, dict[str, object]] = {}
    for op in snap.delta.ops:
        entry = env.setdefault(op.name, {})
        entry[op.op] = (
            list(op.entries) if op.op in ("prepend", "append", "remove") else (True if op.op == "unset" else op.value)
        )
    return {
        "schema": SCHEMA,
        "platform": snap.platform,
        "envmgr": snap.envmgr,
        "created": snap.created,
        "summary": dict(snap.summary),
        "identity": dict(snap.identity),
        "notes": list(snap.notes),
        "env": env,
    }
