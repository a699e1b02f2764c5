"""EnvDelta: an environment expressed as operations against a base (set / prepend / append / unset).

Pure: no TOML, no shells. Path-like variables are tuples of entries; the separator is the
platform's (';' on Windows, ':' elsewhere). Applying a delta never stacks: entries it prepends
or appends are first removed from the current value.
"""

from __future__ import annotations

from dataclasses import dataclass

from envmgr.winenv import env_key, path_key

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the fast path imports this module
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

SET, PREPEND, APPEND, UNSET, REMOVE = "set", "prepend", "append", "unset", "remove"

# Variables whose value is a list of folders (vcvars prepends to all of these).
PATH_LIKE = frozenset(
    n.upper()
    for n in (
        "PATH",
        "INCLUDE",
        "LIB",
        "LIBPATH",
        "EXTERNAL_INCLUDE",
        "WindowsLibPath",
        "__VSCMD_PREINIT_PATH",
        "LD_LIBRARY_PATH",
        "CPATH",
        "LIBRARY_PATH",
        "PKG_CONFIG_PATH",
    )
)


@dataclass(frozen=True)
class VarOp:
    name: str
    op: str  # set | prepend | append | unset | remove (entries from a list)
    value: str | tuple[str, ...] = ""

    @property
    def entries(self) -> tuple[str, ...]:
        return self.value if isinstance(self.value, tuple) else (self.value,)


@dataclass(frozen=True)
class EnvDelta:
    platform: str
    ops: tuple[VarOp, ...]

    @property
    def sep(self) -> str:
        return ";" if self.platform == "windows" else ":"

    def names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(op.name for op in self.ops))

    def apply(self, env: Mapping[str, str]) -> dict[str, str]:
        """The environment after applying every op to `env` (names case-insensitive on Windows)."""
        out = dict(env)
        fold = self.platform == "windows"
        for op in self.ops:
            key = _find(out, op.name, fold)
            if op.op == UNSET:
                if key is not None:
                    del out[key]
                continue
            if op.op == SET:
                if key is not None and key != op.name:
                    del out[key]
                out[op.name] = str(op.value)
                continue
            current = out.get(key, "") if key is not None else ""
            if op.op == REMOVE:
                if key is not None:
                    out[key] = self.sep.join(
                        e for e in split_list(current, self.sep) if not _member(e, op.entries, fold)
                    )
                continue
            add = list(op.entries)
            rest = [e for e in split_list(current, self.sep) if not _member(e, add, fold)]
            merged = add + rest if op.op == PREPEND else rest + add
            if key is not None and key != op.name:
                del out[key]
            out[op.name] = self.sep.join(dedupe(merged, fold))
        return out


def _find(env: Mapping[str, str], name: str, fold: bool) -> str | None:
    return name if name in env else env_key(env, name, fold)


def _member(entry: str, group: Iterable[str], fold: bool) -> bool:
    n = path_key(entry, fold)
    return any(path_key(g, fold) == n for g in group)


def split_list(value: str, sep: str) -> list[str]:
    return [e for e in value.split(sep) if e.strip()]


def dedupe(entries: Iterable[str], fold: bool) -> list[str]:
    """Keep the first occurrence of each folder (vcvars prepends blindly on every call)."""
    seen: set[str] = set()
    out = []
    for e in entries:
        n = path_key(e, fold)
        if n not in seen:
            seen.add(n)
            out.append(e)
    return out


def diff(platform: str, base: Mapping[str, str], after: Mapping[str, str]) -> EnvDelta:
    """Express `after` as ops against `base`: new/changed scalars are `set`, path-like lists become
    `prepend` (entries before the base's) and `append` (after), removed names `unset`."""
    fold = platform == "windows"
    sep = ";" if fold else ":"
    ops: list[VarOp] = []
    base_keys = {(k.upper() if fold else k): k for k in base}
    for name in sorted(after, key=str.upper):
        value = after[name]
        bkey = base_keys.get(name.upper() if fold else name)
        old = base.get(bkey, None) if bkey is not None else None
        if old == value:
            continue
        if name.upper() in PATH_LIKE:
            ops += _list_ops(name, old or "", value, sep, fold)
        else:
            ops.append(VarOp(name, SET, value))
    after_keys = {(k.upper() if fold else k) for k in after}
    for key, name in sorted(base_keys.items()):
        if key not in after_keys:
            ops.append(VarOp(name, UNSET))
    return EnvDelta(platform, tuple(ops))


def _list_ops(name: str, old: str, new: str, sep: str, fold: bool) -> list[VarOp]:
    new_entries = dedupe(split_list(new, sep), fold)
    old_entries = split_list(old, sep)
    old_norm = {path_key(e, fold) for e in old_entries}
    first_old = next((i for i, e in enumerate(new_entries) if path_key(e, fold) in old_norm), len(new_entries))
    before = [e for e in new_entries[:first_old] if path_key(e, fold) not in old_norm]
    after = [e for e in new_entries[first_old:] if path_key(e, fold) not in old_norm]
    ops = []
    if before:
        ops.append(VarOp(name, PREPEND, tuple(before)))
    if after:
        ops.append(VarOp(name, APPEND, tuple(after)))
    return ops


def combine(platform: str, *deltas: EnvDelta) -> EnvDelta:
    """One op set per variable, in the order: set/unset, remove, prepend, append. A later delta's
    prepends go in front of an earlier one's (it was applied last), its sets win."""
    fold = platform == "windows"
    order: list[str] = []
    table: dict[str, dict[str, Any]] = {}  # per variable: its name, then one entry per kind of op
    for delta in deltas:
        for op in delta.ops:
            key = op.name.upper() if fold else op.name
            if key not in table:
                order.append(key)
                table[key] = {"name": op.name, SET: None, UNSET: False, REMOVE: [], PREPEND: [], APPEND: []}
            t = table[key]
            if op.op == SET:
                t.update({SET: op.value, UNSET: False, REMOVE: [], PREPEND: [], APPEND: []})
            elif op.op == UNSET:
                t.update({SET: None, UNSET: True, REMOVE: [], PREPEND: [], APPEND: []})
            elif t[SET] is not None and op.op in (PREPEND, APPEND, REMOVE):
                sep = ";" if fold else ":"
                current = [e for e in split_list(t[SET], sep) if not _member(e, op.entries, fold)]
                merged = {PREPEND: [*op.entries, *current], APPEND: [*current, *op.entries]}.get(op.op, current)
                t[SET] = sep.join(dedupe(merged, fold))
            elif op.op == PREPEND:
                t[PREPEND] = dedupe([*op.entries, *t[PREPEND]], fold)
            elif op.op == APPEND:
                t[APPEND] = dedupe([*t[APPEND], *op.entries], fold)
            elif op.op == REMOVE:
                t[REMOVE] = dedupe([*t[REMOVE], *op.entries], fold)
    ops: list[VarOp] = []
    for key in order:
        t = table[key]
        if t[UNSET]:
            ops.append(VarOp(t["name"], UNSET))
            continue
        if t[SET] is not None:
            ops.append(VarOp(t["name"], SET, t[SET]))
            continue
        keep = [e for e in t[REMOVE] if not _member(e, t[PREPEND] + t[APPEND], fold)]
        for kind in (REMOVE, PREPEND, APPEND):
            entries = keep if kind == REMOVE else t[kind]
            if entries:
                ops.append(VarOp(t["name"], kind, tuple(entries)))
    return EnvDelta(platform, tuple(ops))
