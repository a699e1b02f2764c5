"""Snapshot <-> TOML (docs/snapshot.md). The only module that knows the snapshot file format."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import tomlkit

from envmgr.files.schema import SNAPSHOT, check, check_env, check_version
from envmgr.files.tomlread import load_toml, read_text_file
from envmgr.snapshot.envdelta import APPEND, PREPEND, REMOVE, SET, UNSET, EnvDelta, VarOp

SCHEMA = 1
READS = (1,)
_LIST_OPS = (REMOVE, PREPEND, APPEND)


@dataclass(frozen=True)
class Snapshot:
    platform: str
    delta: EnvDelta
    summary: tuple[tuple[str, str], ...] = ()  # vs, toolset, arch, cuda, gpu, host_compiler
    identity: tuple[tuple[str, str], ...] = ()  # what it was captured from (cache key parts)
    notes: tuple[str, ...] = ()
    envmgr: str = ""
    created: str = ""
    # The TOML this snapshot was read from (cache or --from): printed as is by `export`, which
    # spares loading tomlkit on the hot path. Never compared.
    text: str = field(default="", compare=False, repr=False)

    def headline(self) -> str:
        d = dict(self.summary)
        parts = [
            d.get("vs", ""),
            f"MSVC {d['toolset']}" if d.get("toolset") else "",
            d.get("arch", ""),
            f"CUDA {d['cuda']}" if d.get("cuda") else "",
            f"host compiler {d['host_compiler']}" if d.get("host_compiler") else "",
            f"GPU {d['gpu']}" if d.get("gpu") else "",
        ]
        return " · ".join(p for p in parts if p) or "no toolchain"

    def marker(self) -> str:
        """Short text for a prompt: `cuda-12.4 vs2022-community`."""
        d = dict(self.summary)
        parts = [f"cuda-{d['cuda_short']}" if d.get("cuda_short") else "", d.get("vs_short", "")]
        return " ".join(p for p in parts if p) or "envmgr"


def to_toml(snap: Snapshot) -> str:
    doc = tomlkit.document()
    doc.add(tomlkit.comment(f"envmgr environment snapshot ({snap.platform})"))
    doc.add(tomlkit.comment(snap.headline()))
    doc.add(
        tomlkit.comment(
            "Use it: envmgr shell --from FILE | envmgr run --from FILE -- CMD | "
            "envmgr export --from FILE --format ps1|cmd|sh|fish|dotenv|github"
        )
    )
    doc.add(
        tomlkit.comment(
            "Operations apply to the environment of whoever uses it: a string sets the variable, "
            "prepend/append add folders (removing duplicates), remove drops folders, unset deletes."
        )
    )
    doc.add(tomlkit.nl())
    doc.add("schema", SCHEMA)
    doc.add("platform", snap.platform)
    if snap.envmgr:
        doc.add("envmgr", snap.envmgr)
    if snap.created:
        doc.add("created", snap.created)
    if snap.notes:
        doc.add("notes", list(snap.notes))
    for name, pairs in (("summary", snap.summary), ("identity", snap.identity)):
        table = tomlkit.table()
        for k, v in pairs:
            table.add(k, v)
        doc.add(name, table)
    env = tomlkit.table()
    grouped: dict[str, list[VarOp]] = {}
    for op in snap.delta.ops:
        grouped.setdefault(op.name, []).append(op)
    for name, ops in grouped.items():
        env.add(name, _var_item(ops))
    doc.add("env", env)
    return tomlkit.dumps(doc)


def _var_item(ops: list[VarOp]) -> str | tomlkit.items.Table:
    if len(ops) == 1 and ops[0].op == SET:
        return str(ops[0].value)
    table = tomlkit.table()
    for op in ops:
        if op.op == UNSET:
            table.add("unset", True)
        elif op.op == SET:
            table.add("set", str(op.value))
        else:
            arr = tomlkit.array()
            arr.extend(op.entries)
            arr.multiline(len(op.entries) > 1)
            table.add(op.op, arr)
    return table


def from_toml(text: str, origin: str = "<snapshot>") -> Snapshot:
    data = load_toml(text, origin, "snapshot", "fix the TOML at that line, or export it again")
    check_version(data, READS, origin, "snapshot", "upgrade envmgr, or export the snapshot again")
    check(data, SNAPSHOT, origin, "snapshot", "see docs/snapshot.md, or export the snapshot again")
    platform = data["platform"]
    env = data.get("env", {})
    check_env(env, [], "env", platform, origin, "snapshot", "see docs/snapshot.md, or export the snapshot again")
    ops: list[VarOp] = []
    for name, item in env.items():
        ops += _read_var(name, item)
    return Snapshot(
        platform,
        EnvDelta(platform, tuple(ops)),
        _pairs(data.get("summary")),
        _pairs(data.get("identity")),
        tuple(str(n) for n in data.get("notes", [])),
        str(data.get("envmgr", "")),
        str(data.get("created", "")),
        text,
    )


def _pairs(table: Mapping[object, object] | None) -> tuple[tuple[str, str], ...]:
    return tuple((str(k), str(v)) for k, v in (table or {}).items())


def _read_var(name: str, item: str | dict[str, Any]) -> list[VarOp]:
    """One [env] entry, already checked against schema.SNAPSHOT_VAR."""
    if isinstance(item, str):
        return [VarOp(name, SET, item)]
    if item.get("unset") is True:
        return [VarOp(name, UNSET)]
    if "set" in item:
        return [VarOp(name, SET, item["set"])]
    return [VarOp(name, kind, tuple(item[kind])) for kind in _LIST_OPS if kind in item]


def load(path: str) -> Snapshot:
    text = read_text_file(path, "snapshot", "check the path given to --from", "a snapshot is a TOML file")
    return from_toml(text, path)


def missing_paths(snap: Snapshot, exists: Callable[[str], bool]) -> list[str]:
    """Folders and files the snapshot names that do not exist on this machine."""
    missing = []
    for op in snap.delta.ops:
        if op.op in (PREPEND, APPEND):
            candidates = op.entries
        elif op.op == SET and isinstance(op.value, str) and _looks_like_path(op.value, snap.platform):
            candidates = (op.value,)
        else:
            continue
        missing += [c for c in candidates if _looks_like_path(c, snap.platform) and not exists(c)]
    return list(dict.fromkeys(missing))


def _looks_like_path(value: str, platform: str) -> bool:
    if platform == "windows":
        return len(value) > 2 and value[1] == ":" and value[2] in "\\/" and ";" not in value
    return value.startswith("/") and ":" not in value
