"""What every shell module shares: the refusal error, name/value checks and the reference
semantics a rendered script must have (`expected_env`), which the tests compare real shells to."""

from __future__ import annotations

import re

from envmgr.errors import UnrepresentableValue as UnrepresentableValue  # (as: re-exported to the renderers)
from envmgr.snapshot.envdelta import APPEND, PREPEND, SET, UNSET, EnvDelta, VarOp
from envmgr.winenv import env_key

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the fast path renders through here
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping


def check_text(fmt: str, name: str, text: str, forbidden: str = "", *, what: str = "value", why: str = "") -> None:
    """Refuse NUL (no environment can hold it), lone surrogates (not encodable) and `forbidden`."""
    for ch in text:
        if ch == "\0":
            raise UnrepresentableValue(fmt, name, "environment strings cannot contain NUL", ch, what=what)
        if ch in forbidden:
            raise UnrepresentableValue(fmt, name, why or f"{fmt} cannot hold this character", ch, what=what)
        if 0xD800 <= ord(ch) <= 0xDFFF:
            raise UnrepresentableValue(fmt, name, "lone surrogate, not encodable", ch, what=what)


def check_name(fmt: str, name: str, pattern: re.Pattern[str], rule: str) -> None:
    if not name:
        raise UnrepresentableValue(fmt, name, "empty variable name", what="name")
    check_text(fmt, name, name, "=", what="name", why="'=' cannot be part of a variable name")
    if not pattern.fullmatch(name):
        bad = next((c for c in name if not pattern.fullmatch(c) and not pattern.fullmatch("A" + c)), None)
        raise UnrepresentableValue(fmt, name, f"{fmt} variable names must be {rule}", bad, what="name")


def list_text(delta: EnvDelta, op: VarOp) -> str:
    """The text a prepend/append adds: its non-empty entries joined by the delta's separator
    (an empty entry would leave a stray separator, which on POSIX means "the current directory")."""
    return delta.sep.join(e for e in op.entries if e != "")


def drop_entries(delta: EnvDelta, op: VarOp, unsearchable: str = "") -> list[str]:
    """What a prepend/append first removes from the current value, so that applying a script twice
    gives what applying it once gives: the non-empty entries of the text it adds, each compared
    with the current value's entries exactly (case-insensitively on Windows). A format that cannot
    search for some characters (cmd: '=' and '%') names them in `unsearchable`: entries holding
    one are not removed first."""
    return list(
        dict.fromkeys(e for e in list_text(delta, op).split(delta.sep) if e and not any(c in e for c in unsearchable))
    )


def without(current: str, drop: Iterable[str], sep: str, fold: bool) -> str:
    """`current` minus the entries in `drop`; its other entries, empty ones included, stay as they were."""
    gone = {d.lower() if fold else d for d in drop}
    return sep.join(e for e in current.split(sep) if (e.lower() if fold else e) not in gone)


def expected_env(
    delta: EnvDelta, env: Mapping[str, str], *, fold: bool | None = None, unsearchable: str = ""
) -> dict[str, str]:
    """What running a rendered script in a shell whose environment is `env` must leave behind.

    A prepend first removes its own entries from the value current at run time (so applying twice
    equals applying once), then puts them in front of what is left, joined by the separator only
    when that is non-empty. Unlike `EnvDelta.apply`, other duplicates and trailing slashes stay.
    """
    fold = delta.platform == "windows" if fold is None else fold
    out = dict(env)
    for op in delta.ops:
        key = env_key(out, op.name, fold)
        current = out.pop(key) if key is not None else None
        if op.op == UNSET:
            continue
        if op.op == SET:
            out[op.name] = str(op.value)
            continue
        text = list_text(delta, op)
        if not text:
            if key is not None and current is not None:  # (a current value was found under key)
                out[key] = current
            continue
        rest = without(current or "", drop_entries(delta, op, unsearchable), delta.sep, fold)
        if rest:
            text = text + delta.sep + rest if op.op == PREPEND else rest + delta.sep + text
        out[op.name] = text
    return out


def ops_of(delta: EnvDelta) -> Iterable[VarOp]:
    for op in delta.ops:
        if op.op not in (SET, PREPEND, APPEND, UNSET):
            raise UnrepresentableValue("envdelta", op.name, f"unknown operation {op.op!r}", what="operation")
        yield op
