"""Re-activation without Python: a script the shell sources after checking, itself, that it holds.

`envmgr_activate ARGS` (shells/envmgr.sh, bash and zsh) first looks for a slot file named after its
arguments. The slot checks, in shell code and without starting a process: the arguments (exactly),
the environment variables of the cache key (cachekey.KEY_ENV and every CUDA_PATH_V*) as a child
process is given them (a shell variable not exported is absent to envmgr, so to the slot), and the
modification time, to the nanosecond, of every file and folder the cache entry watches, of the
entry's KEY.fast (so `cache clear` and `--refresh` retire it) and of envmgr's version file; each is
compared with a stamp file whose mtime was copied from it when the slot was written (`-nt`/`-ot`);
a path that was absent must still be. Sizes are not compared (a shell cannot read them without a
process). Then it applies the snapshot as EnvDelta.apply does and sets ENVMGR_ACTIVE and
ENVMGR_RESTORE as activation.activation_delta does (path keys as winenv.path_key: a trailing run of
'/' and '\\' dropped). When anything differs, or a value it reads holds a control character, a
byte that is not UTF-8 (envmgr refuses it), a character beyond ASCII that str.strip() takes for
blank, or an environment is already active (restoring needs JSON parsing), the slot does nothing
and envmgr_activate runs envmgr, whose fast path writes the slot again.
"""

from __future__ import annotations

import os

from envmgr.cache.key import ABSENT, KEY_ENV, VERSIONED_PREFIX, stat_token

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

SEP = "\037"  # joins the arguments in the shell ("$*" with IFS=$'\037')


def _identifier(name: str) -> bool:
    return name.replace("_", "a").isalnum() and name.isascii() and not name[0].isdigit()


def sh_slot(data: dict[str, Any], args: list[str], env: Mapping[str, str], stamps: str, extra: list[str]) -> str | None:
    """The slot's text for bash/zsh, or None where the shell could not check or apply it exactly."""
    from envmgr.shellkit.sh import quote

    if env.get("ENVMGR_RESTORE") or any(SEP in a or "\0" in a for a in args):
        return None
    ops = data["ops"]
    listed = {name for name, op, _ in ops if op in ("prepend", "append")}
    for name, op, value in ops:
        if not _identifier(name) or op not in ("set", "unset", "prepend", "append"):
            return None
        entries = value if isinstance(value, tuple) else (value,)
        if "\0" in "".join(entries):
            return None
        if op in ("prepend", "append") and any(not e.strip() or ":" in e for e in entries):
            return None
        if op == "set" and name in listed and any(c < " " or (c.isspace() and c != " ") for c in value):
            return None  # a base the shell's split_list would read otherwise (blank: ' ' only)
    # First: the helpers this text calls are loaded (a shell that sourced an older envmgr.sh hands over).
    checks = ["typeset -f __envmgr_env >/dev/null", f'[ "$__envmgr_args" = {quote(SEP.join(args))} ]']
    for name in KEY_ENV:
        if _identifier(name):
            checks.append(f"__envmgr_env {name} {quote(env.get(name, ''))}")
        elif env.get(name):
            return None  # set, yet a shell cannot read it: let envmgr decide every time
    versioned = sorted((k, v) for k, v in env.items() if k.upper().startswith(VERSIONED_PREFIX))
    if any(not _identifier(k) for k, _ in versioned):
        return None
    checks.append(" ".join(["__envmgr_versioned", str(len(versioned)), *(quote(f"{k}={v}") for k, v in versioned)]))
    os.makedirs(stamps, exist_ok=True)
    watched = {**data["validity"], **{p: stat_token(p) for p in extra}}
    for i, (path, token) in enumerate(sorted(watched.items())):
        if token == ABSENT:
            checks.append(f"__envmgr_absent {quote(path)}")
            continue
        st = os.stat(path)
        if f"{st.st_mtime_ns}:{st.st_size}" != token:
            return None
        stamp = os.path.join(stamps, str(i))
        with open(stamp, "wb"):
            pass
        os.utime(stamp, ns=(st.st_atime_ns, st.st_mtime_ns))
        checks.append(f"__envmgr_fresh {quote(path)} {quote(stamp)}")
    names = list(dict.fromkeys(name for name, _, _ in ops))
    apply = [f"__envmgr_save {n}" for n in names]
    for name, op, value in ops:
        if op == "set":
            apply.append(f"export {name}={quote(value)}")
        elif op == "unset":
            apply.append(f"unset {name}")
        else:
            apply.append(" ".join(["__envmgr_list", name, op, *(quote(e) for e in value)]))
    apply.append(f"__envmgr_done {quote(data['marker'])}")
    return (
        "# envmgr re-activation (shells/envmgr.sh sources it): checked by the shell, no Python\n"
        "__envmgr_r='{' && " + " &&\n".join(checks + apply) + "\n"
    )


def write_sh_slot(slot: str, data: dict[str, Any], args: list[str], env: Mapping[str, str], fast_file: str) -> None:
    write_slot(sh_slot, slot, data, args, env, fast_file)


def write_slot(
    render: Callable[..., str | None],
    slot: str,
    data: dict[str, Any] | None,
    args: list[str],
    env: Mapping[str, str],
    fast_file: str,
) -> None:
    """Write the slot `render` makes (atomically), or remove a stale one; never fails the caller.
    ENVMGR_SLOT is a path from outside: only a regular file (or none) is written or removed, no
    folder is made for it but envmgr's own `<cache>/reactivate`, and its stamps go beside it only then."""
    from envmgr import __file__ as version_file
    from envmgr.files.atomic import write_user_file

    try:
        if not _slot_place(slot, env):
            return
        text = render(data, args, env, slot + ".stamps", [fast_file, version_file])
        if text is None:
            os.unlink(slot)
        else:
            write_user_file(slot, text.encode("utf-8"), regular_only=True)
    except Exception:  # broad on purpose; an optimisation: envmgr answers without it
        pass


def _slot_place(slot: str, env: Mapping[str, str]) -> bool:
    """The slot is a regular file or absent, in a folder that exists (made when it is <cache>/reactivate)."""
    import stat

    try:
        st = os.lstat(slot)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        return False  # a link, a device, a FIFO, a folder: not a slot envmgr wrote
    folder = os.path.dirname(os.path.abspath(slot))
    if not os.path.isdir(folder):  # the first slot of all: only envmgr's own folder is made
        from envmgr.host.dirs import cache_dir  # platformdirs: only on this rare branch

        if folder != os.path.join(os.path.abspath(env.get("ENVMGR_CACHE_DIR") or cache_dir()), "reactivate"):
            return False
        os.makedirs(folder, exist_ok=True)
    return True
