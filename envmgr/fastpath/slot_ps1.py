"""Re-activation without Python for PowerShell: a data slot that `Enter-Envmgr` checks and applies.

As fastpath/slot_sh.py's for bash/zsh and fastpath/slot_fish.py's, but the slot is data, not code: a .psd1
hashtable that shells/Envmgr.psm1 reads with Import-PowerShellDataFile (which runs nothing) and walks
in PowerShell alone, without starting a process: the arguments (exactly, `-ceq`), the variables that
decide the cache key as envmgr reads them (cachekey.KEY_ENV; on Windows also capture.BASE_NAMES, from
which vcvars' base environment and so the key are built; the variables that send envmgr past the
cache), the CUDA_PATH_V* set (names folded as Python's os.environ folds them on Windows), and the
LastWriteTimeUtc ticks, kind and file length (or absence) of every path the cache entry watches, of
the entry itself and its KEY.fast (`cache clear` and `--refresh` retire them) and of envmgr's version
file. .NET's ticks are `st_mtime_ns // 100 + TICKS_AT_UNIX_EPOCH`: exact on Windows (NTFS keeps
100 ns units); on Linux a change inside one 100 ns step with the same length would go unseen.

Then it does what `Enter-Envmgr` does with envmgr's answer: activation_delta of the snapshot against
this session (EnvDelta.apply: blank entries dropped, path_key duplicates dropped, case-folded on
Windows) set name by name, ENVMGR_ACTIVE and ENVMGR_RESTORE (json.dumps of the saved values) last.
What the PowerShell code could not answer exactly as Python does makes it apply nothing and run
envmgr: a value it reads that is not printable ASCII (Python's str.lower/strip and .NET's are not
proven equal beyond it, and envmgr's answer reaches PowerShell through the console's code page), an
active environment (restoring needs JSON parsing), a symbolic link or junction among the watched
paths (.NET reports the link, os.stat its target). The writer refuses (no slot) what the checker could
not hold: non-ASCII static values, `remove` operations, names colliding case-insensitively, arguments
PowerShell might pass on altered (anything but letters, digits and `._=+-`).
"""

from __future__ import annotations

import os
import stat
import sys

from envmgr.cache.key import ABSENT, KEY_ENV, VERSIONED_PREFIX, stat_token

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from envmgr.host.base import Host
    from envmgr.snapshot.form import Snapshot

FORMAT = 1
TICKS_AT_UNIX_EPOCH = 621355968000000000  # DateTime(1970, 1, 1).Ticks
_OPS = ("set", "unset", "prepend", "append")
# Besides the key: variables that make envmgr answer otherwise (another host, completion, an active
# environment to restore, another cache folder). Each must read as it did when the slot was written.
CONTROL_ENV = ("ENVMGR_RESTORE", "ENVMGR_MACHINE", "ENVMGR_WINEPREFIX", "_ENVMGR_COMPLETE", "ENVMGR_CACHE_DIR")
POSIX_CACHE_ENV = ("XDG_CACHE_HOME", "HOME")  # _fast.cache_dir's rule off Windows
_REPARSE = getattr(stat, "FILE_ATTRIBUTE_REPARSE_POINT", 0x400)


def _plain(text: str) -> bool:
    """Printable ASCII: what the checker reads and writes without doubt."""
    return all(" " <= c <= "~" for c in text)


def _arg_ok(arg: str) -> bool:
    return bool(arg) and all(c.isascii() and (c.isalnum() or c in "._=+-") for c in arg)


def _storable(text: str) -> bool:
    """A value the slot can hold and compare: no control character, no surrogate, no U+FFFD (.NET
    decodes bytes that are not UTF-8 as U+FFFD; Python keeps them as surrogates)."""
    return not any(c < " " or c == "\x7f" or "\ud800" <= c <= "\udfff" or c == "\ufffd" for c in text)


def env_names(windows: bool) -> list[str]:
    from envmgr.snapshot.capture import BASE_NAMES

    return list(dict.fromkeys([*KEY_ENV, *CONTROL_ENV, *(BASE_NAMES if windows else POSIX_CACHE_ENV)]))


def _ops_ok(ops: Sequence[Sequence[Any]], windows: bool) -> bool:
    sep = ";" if windows else ":"
    spelling: dict[str, str] = {}
    for name, op, value in ops:
        if (
            not name
            or not _plain(name)
            or any(c in name for c in '="\\')
            or op not in _OPS
            or name.upper() in ("ENVMGR_ACTIVE", "ENVMGR_RESTORE")
        ):
            return False
        if spelling.setdefault(name.upper(), name) != name:
            return False  # two spellings of one name: PowerShell's hashtables fold case
        entries = value if isinstance(value, tuple) else (value,)
        if not all(isinstance(e, str) and _plain(e) for e in entries):
            return False
        if op == "set" and value == "":
            return False  # shellkit/ps1.py refuses it (PowerShell deletes a variable set to '')
        if op in ("prepend", "append") and any(not e.strip() or sep in e for e in entries):
            return False
    return True


def _paths(watched: dict[str, str]) -> list[tuple[str, str, int, int]] | None:
    out = []
    for path, token in sorted(watched.items()):
        if not os.path.isabs(path) or not _storable(path):
            return None
        if token == ABSENT:
            out.append((path, "A", 0, 0))
            continue
        try:
            link = os.lstat(path)
            st = os.stat(path)
        except OSError:
            return None
        if (
            stat.S_ISLNK(link.st_mode)
            or getattr(link, "st_file_attributes", 0) & _REPARSE
            or f"{st.st_mtime_ns}:{st.st_size}" != token
            or st.st_mtime_ns < 0
        ):
            return None
        if stat.S_ISDIR(st.st_mode):
            out.append((path, "D", st.st_mtime_ns // 100 + TICKS_AT_UNIX_EPOCH, 0))
        elif stat.S_ISREG(st.st_mode):
            out.append((path, "F", st.st_mtime_ns // 100 + TICKS_AT_UNIX_EPOCH, st.st_size))
        else:
            return None
    return out


def ps1_slot(
    data: dict[str, Any], args: list[str], env: Mapping[str, str], stamps: str, extra: list[str]
) -> str | None:
    """The slot's text (a .psd1 data file), or None where PowerShell could not check or apply it
    exactly. `extra` starts with the entry's KEY.fast; the entry KEY.toml beside it is watched too.
    `env` is read as envmgr reads it (os.environ: case-insensitive names on Windows)."""
    from envmgr.shellkit.ps1 import quote

    windows = data.get("platform") == "windows"
    if env.get("ENVMGR_RESTORE") or not all(_arg_ok(a) for a in args):
        return None
    if not _ops_ok(data["ops"], windows) or not data["marker"] or not _plain(data["marker"]):
        return None
    checked = []
    for name in env_names(windows):
        value = env.get(name) or ""
        if not _storable(value):
            return None
        checked += [name, value]
    versioned = []
    for name, value in sorted(env.items()):
        if name.upper().startswith(VERSIONED_PREFIX):
            if not _plain(name) or not _storable(value):
                return None
            versioned += [name.upper() if windows else name, value]
    entry = os.path.splitext(extra[0])[0] + ".toml"
    paths = _paths({**data["validity"], **{p: stat_token(p) for p in [*extra, entry]}})
    if paths is None:
        return None
    flat = [item for path in paths for item in path]
    ops = []
    for name, op, value in data["ops"]:
        entries = () if op == "unset" else value if isinstance(value, tuple) else (value,)
        ops += [name, op, len(entries), *entries]

    def array(items: Sequence[str | int], per_line: int) -> str:
        if not items:
            return "@()"
        cells = [quote(i) if isinstance(i, str) else str(int(i)) for i in items]
        rows = [", ".join(cells[k : k + per_line]) for k in range(0, len(cells), per_line)]
        return "@(\r\n        " + ",\r\n        ".join(rows) + "\r\n    )"

    lines = [
        "# envmgr re-activation slot for Enter-Envmgr (shells/Envmgr.psm1): data only, read with",
        "# Import-PowerShellDataFile and checked there without starting a process (envmgr/fastpath/slot_ps1.py)",
        "@{",
        f"    Format = {FORMAT}",
        f"    Windows = {'$true' if windows else '$false'}",
        f"    Args = {array(args, 8)}",
        f"    Env = {array(checked, 2)}",
        f"    Versioned = {array(versioned, 2)}",
        f"    Paths = {array(flat, 4)}",
        f"    Ops = {_ops_array(ops, quote)}",
        f"    Marker = {quote(data['marker'])}",
        "}",
    ]
    return "\ufeff" + "\r\n".join(lines) + "\r\n"  # UTF-8 with a BOM, CRLF: shellkit/ps1.py's rule


def _ops_array(ops: Sequence[Any], quote: Callable[[str], str]) -> str:
    """NAME, OP, COUNT, ENTRY... per operation, one operation a line."""
    if not ops:
        return "@()"
    rows, i = [], 0
    while i < len(ops):
        n = ops[i + 2]
        rows.append(", ".join([quote(ops[i]), quote(ops[i + 1]), str(n), *(quote(e) for e in ops[i + 3 : i + 3 + n])]))
        i += 3 + n
    return "@(\r\n        " + ",\r\n        ".join(rows) + "\r\n    )"


def write_ps1_slot(
    slot: str, data: dict[str, Any] | None, args: list[str], env: Mapping[str, str], fast_file: str
) -> None:
    """For the fast path (POSIX) and the full CLI (everywhere): write the slot, or remove a stale one
    (`data` None, or a snapshot of another OS than this one)."""
    from envmgr.fastpath.slot_sh import write_slot

    ok = data is not None and (data.get("platform") == "windows") == (sys.platform == "win32")
    write_slot(ps1_slot if ok else (lambda *_: None), slot, data, args, env, fast_file)


def write_from_cli(slot: str, argv: list[str], host: Host, snap: Snapshot, env: Mapping[str, str]) -> None:
    """The full CLI answered `export --activate --format ps1 ARGS` (on Windows it always does): the
    slot for ARGS, from the cache entry those arguments name, when that entry holds the snapshot
    just served. Anything else (other flags, no entry, another snapshot): no slot."""
    from envmgr.cache import store as cache
    from envmgr.cache.fast import fast_path_of
    from envmgr.fastpath import argv as grammar

    data = None
    if argv[:4] == ["export", "--activate", "--format", "ps1"]:
        opts = grammar.parse_options(argv[4:], with_format=False)
        if opts is not None and not any(c in v for v in opts.values() for c in "\\/:"):
            data = _entry_data(cache.cache_key(host.platform, grammar.selectors(opts), env), snap)
    entry = data.pop("entry") if data is not None else os.devnull
    write_ps1_slot(slot, data, argv[4:], env, fast_path_of(entry))


def _entry_data(key: str, snap: Snapshot) -> dict[str, Any] | None:
    from envmgr.cache import store as cache
    from envmgr.files.nested import loads_json
    from envmgr.snapshot.form import from_toml

    entry = cache._entry_path(key)
    try:
        head, sep, body = entry.read_text(encoding="utf-8").partition("\n# ---- snapshot ----\n")
        validity = loads_json(head[len("#envmgr-cache ") :])
        cached = from_toml(body, "<cache>")
    except Exception:  # broad on purpose; no readable entry: no slot
        return None
    if not sep or cached.delta != snap.delta or cached.marker() != snap.marker() or not isinstance(validity, dict):
        return None
    return {
        "platform": cached.platform,
        "ops": [(op.name, op.op, op.value) for op in cached.delta.ops],
        "validity": validity,
        "marker": cached.marker(),
        "entry": str(entry),
    }
