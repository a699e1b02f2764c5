"""Re-activation without Python for fish: the slot `envmgr_activate` (shells/envmgr.fish) sources.

As fastpath/slot_sh.py's for bash and zsh: the slot checks, in fish's builtins alone, the arguments
(exactly), the cache key's variables as a child process would see them (exported ones only:
`set -qx`; every CUDA_PATH_V*, any case, from `set -xn`), and every watched path's modification
time to the nanosecond (`test -nt`/`-ot` against stamp files, fish 3.6 compares nanoseconds). Then
it does what `envmgr export --activate --format fish` prints: activation_delta of the snapshot
against this shell, rendered by shellkit/fish.py. Static values are that renderer's very lines;
values computed from this shell's (prepend/append as EnvDelta.apply: blank entries dropped,
`path_key` duplicates dropped) go through the same `set -gx NAME VALUE`. "$NAME" is what a child
is given: fish joins a path variable's list with ':' (and stores an empty PATH/CDPATH entry as '.')
and other lists with ' '. Anything the fish code could not answer exactly as Python does (a value
with a control character, which JSON escapes; a character Python's str.strip() takes for blank and
fish would not; bytes that are not UTF-8, which fish keeps in U+F600..U+F6FF and Python refuses; an
active environment) makes the slot apply nothing, and envmgr answers.
"""

from __future__ import annotations

import os

from envmgr.cache.key import ABSENT, KEY_ENV, VERSIONED_PREFIX, stat_token
from envmgr.fastpath.slot_sh import _identifier

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

_OPS = ("set", "unset", "prepend", "append")


def _static_ok(text: str) -> bool:
    """A static value fish's list code reads as Python does: no whitespace but ' ', no control."""
    return not any((c.isspace() and c != " ") or c < " " for c in text)


def fish_slot(
    data: dict[str, Any], args: list[str], env: Mapping[str, str], stamps: str, extra: list[str]
) -> str | None:
    """The slot's text for fish, or None where fish could not check or apply it exactly."""
    from envmgr.shellkit.fish import DOT_FOR_EMPTY, NAME, READ_ONLY, quote

    if env.get("ENVMGR_RESTORE"):
        return None
    ops = data["ops"]
    listed = {name for name, op, _ in ops if op in ("prepend", "append")}
    for name, op, value in ops:
        if (
            not NAME.fullmatch(name)
            or name in READ_ONLY
            or name.startswith("__envmgr")
            or op not in _OPS
            or name in ("ENVMGR_ACTIVE", "ENVMGR_RESTORE")
        ):
            return None
        entries = value if isinstance(value, tuple) else (value,)
        if "\0" in "".join(entries):
            return None
        if op in ("prepend", "append") and any(not e.strip() or ":" in e or not _static_ok(e) for e in entries):
            return None
        if op == "set" and name in listed and not _static_ok(value):
            return None
        if op == "set" and name in DOT_FOR_EMPTY and "" in value.split(":"):
            return None
    checks = [f"contains -- (count $argv) {len(args)}"]
    checks += [f'contains -- "$argv[{i}]" {quote(a)}' for i, a in enumerate(args, 1)]
    for name in KEY_ENV:
        if _identifier(name):
            checks.append(f"__envmgr_env {name} {quote(env.get(name, ''))}")
        elif env.get(name):
            return None  # set, yet fish cannot read it: let envmgr decide every time
        else:
            checks.append(f"not set -qx {quote(name)}")
    versioned = sorted((k, v) for k, v in env.items() if k.upper().startswith(VERSIONED_PREFIX))
    if any(not _identifier(k) for k, _ in versioned):
        return None
    checks.append(" ".join(["__envmgr_versioned", str(len(versioned)), *(f"{k} {quote(v)}" for k, v in versioned)]))
    stamped = _stamps(data, stamps, extra, quote)
    if stamped is None:  # a watched path changed since the entry was written
        return None
    checks += stamped
    compute, apply = _apply(data, quote)
    return (
        "# envmgr re-activation (shells/envmgr.fish sources it): checked by fish, no Python\n"
        "set -g __envmgr_r '{'\nset -g __envmgr_vals\n"
        "if " + "\nand ".join(checks + compute) + "\n" + "".join(f"    {line}\n" for line in apply) + "end\n"
    )


def _stamps(data: dict[str, Any], stamps: str, extra: list[str], quote: Callable[[str], str]) -> list[str] | None:
    os.makedirs(stamps, exist_ok=True)
    watched = {**data["validity"], **{p: stat_token(p) for p in extra}}
    out = []
    for i, (path, token) in enumerate(sorted(watched.items())):
        if token == ABSENT:
            out.append(f"__envmgr_absent {quote(path)}")
            continue
        st = os.stat(path)
        if f"{st.st_mtime_ns}:{st.st_size}" != token:
            return None
        stamp = os.path.join(stamps, str(i))
        with open(stamp, "wb"):
            pass
        os.utime(stamp, ns=(st.st_atime_ns, st.st_mtime_ns))
        out.append(f"__envmgr_fresh {quote(path)} {quote(stamp)}")
    return out


def _apply(data: dict[str, Any], quote: Callable[[str], str]) -> tuple[list[str], list[str]]:
    """The computing steps (in the checks' chain: each may refuse) and the lines that apply: for each
    name, in activation_delta's order, `set -gx` of its final value or fish.render's unset line."""
    names = list(dict.fromkeys(name for name, _, _ in data["ops"]))
    listed = {name for name, op, _ in data["ops"] if op in ("prepend", "append")}
    compute, apply, kept = [], [], 0
    for n in names:
        compute.append(f"__envmgr_save {n}")
        final, computed = None, False
        for name, op, value in data["ops"]:
            if name != n:
                continue
            if op in ("set", "unset"):
                if n in listed:  # the base a later prepend/append works on
                    compute.append(f"set -g __envmgr_w {quote(value) if op == 'set' else repr('')}")
                final, computed = (value if op == "set" else None), False
            else:
                compute.append(" ".join(["__envmgr_list", op, *(quote(e) for e in value)]))
                computed = True
        if computed:
            kept += 1
            compute.append('set -ga __envmgr_vals "$__envmgr_w"')
            apply.append(f'set -gx {n} "$__envmgr_vals[{kept}]"')
        elif final is None:
            apply.append(f"set -q {n}; and set -e {n}")
        else:
            apply.append(f"set -gx {n} {quote(final)}")
    apply += [
        f"set -gx ENVMGR_ACTIVE {quote(data['marker'])}",
        'set -gx ENVMGR_RESTORE "$__envmgr_r}"',
        "set __envmgr_ok 1",
    ]
    return compute, apply


def write_fish_slot(slot: str, data: dict[str, Any], args: list[str], env: Mapping[str, str], fast_file: str) -> None:
    from envmgr.fastpath.slot_sh import write_slot

    write_slot(fish_slot, slot, data, args, env, fast_file)
