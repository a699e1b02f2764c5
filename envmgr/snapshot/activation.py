"""Activation bookkeeping (pure): what a shell or `Enter-Envmgr` must remember to undo exactly.

`ENVMGR_ACTIVE` holds the prompt marker; `ENVMGR_RESTORE` holds, as JSON, the value every touched
variable had before activation (null: it did not exist). Starting inside an active environment
first restores from it, so environments replace each other and PATHs never stack.
"""

from __future__ import annotations

from collections.abc import Mapping

from envmgr.files.jsondoc import dumps
from envmgr.files.nested import loads_json
from envmgr.snapshot.envdelta import SET, UNSET, EnvDelta, VarOp
from envmgr.winenv import env_get

ACTIVE = "ENVMGR_ACTIVE"
RESTORE = "ENVMGR_RESTORE"


def _get(env: Mapping[str, str], name: str, fold: bool) -> str | None:
    return env[name] if name in env else env_get(env, name, fold)


def base_of(env: Mapping[str, str], platform: str) -> dict[str, str]:
    """The environment as it was before the active envmgr environment (if any) was applied."""
    saved = _get(env, RESTORE, platform == "windows")
    if not saved:
        return dict(env)
    try:
        previous = loads_json(saved)
    except ValueError:
        return dict(env)
    return restore_delta(previous, platform).apply(env)


def restore_delta(previous: Mapping[str, str | None], platform: str) -> EnvDelta:
    ops = [VarOp(n, SET, v) if v is not None else VarOp(n, UNSET) for n, v in previous.items()]
    ops += [VarOp(ACTIVE, UNSET), VarOp(RESTORE, UNSET)]
    return EnvDelta(platform, tuple(ops))


def activation_delta(delta: EnvDelta, env: Mapping[str, str], marker: str) -> EnvDelta:
    """`delta` applied to the pre-activation base of `env`, plus the bookkeeping variables.

    The result is expressed as plain `set`/`unset` of final values against `env`, so it also undoes
    a previous activation's changes that the new one does not touch.
    """
    fold = delta.platform == "windows"
    base = base_of(env, delta.platform)
    after = delta.apply(base)
    previous_saved = _get(env, RESTORE, fold)
    names = list(delta.names())
    if previous_saved:
        try:
            names += [n for n in loads_json(previous_saved) if n not in names]
        except ValueError:
            pass
    saved = {n: _get(base, n, fold) for n in names}
    ops = [VarOp(n, SET, value) if (value := _get(after, n, fold)) is not None else VarOp(n, UNSET) for n in names]
    ops += [VarOp(ACTIVE, SET, marker), VarOp(RESTORE, SET, dumps(saved, ensure_ascii=False))]
    return EnvDelta(delta.platform, tuple(ops))


def deactivation_delta(env: Mapping[str, str], platform: str) -> EnvDelta | None:
    saved = _get(env, RESTORE, platform == "windows")
    if not saved:
        return None
    try:
        return restore_delta(loads_json(saved), platform)
    except ValueError:
        return None
