"""The one home of the snapshot cache's key rule and its validity stats, free of imports.

Both the full CLI (cache/store.py) and the console script's fast path (fastpath/main.py) use these functions,
so a cached `export` answered without click computes exactly the key the full path computes.
Nothing here imports json, hashlib, pathlib or platformdirs: each costs milliseconds of start-up
on the fast path (hashlib loads OpenSSL; json loads re). `dumps` is json.dumps(sort_keys=True)
for the values a key holds (str, None, bool, int, lists, dicts), checked against json by the tests.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the fast path imports this module
if TYPE_CHECKING:
    from collections.abc import Mapping

KEY_ENV = (
    "CUDA_PATH",
    "CUDA_HOME",
    "CUDA_ROOT",
    "CUDAToolkit_ROOT",
    "CONDA_PREFIX",
    "ProgramFiles",
    "ProgramFiles(x86)",
    "ProgramData",
    "SystemRoot",
)
VERSIONED_PREFIX = "CUDA_PATH_V"  # CUDA_PATH_V12_4 ... (matched case-insensitively)

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _sha256_hex(data: bytes) -> str:
    try:
        from _sha256 import sha256  # CPython <= 3.11: the builtin module, no OpenSSL
    except ImportError:
        try:
            from _sha2 import sha256  # CPython 3.12+
        except ImportError:
            from hashlib import sha256
    digest: str = sha256(data).hexdigest()
    return digest


def _string(s: str, ascii_only: bool) -> str:
    out = []
    for ch in s:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        elif ascii_only and ch > "~":
            code = ord(ch)
            if code > 0xFFFF:
                code -= 0x10000
                out.append(f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}")
            else:
                out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def dumps(value: object, *, ensure_ascii: bool = True, sort_keys: bool = True) -> str:
    """json.dumps(value, sort_keys=sort_keys, ensure_ascii=ensure_ascii) for str/None/bool/int/list/dict."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _string(value, ensure_ascii)
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(dumps(v, ensure_ascii=ensure_ascii, sort_keys=sort_keys) for v in value) + "]"
    if isinstance(value, dict):
        items = sorted(value.items()) if sort_keys else value.items()
        return (
            "{"
            + ", ".join(
                f"{_string(str(k), ensure_ascii)}: {dumps(v, ensure_ascii=ensure_ascii, sort_keys=sort_keys)}"
                for k, v in items
            )
            + "}"
        )
    raise TypeError(f"cannot encode {type(value).__name__}")


def key_env(env: Mapping[str, str]) -> dict[str, object]:
    """The environment variables that decide discovery's result (values; '' when unset)."""
    relevant: dict[str, object] = {k: env.get(k, "") for k in KEY_ENV}
    relevant.update({k: v for k, v in env.items() if k.upper().startswith(VERSIONED_PREFIX)})
    return relevant


def cache_key(
    platform: str,
    selectors: Mapping[str, object],
    env: Mapping[str, str],
    version: str,
    base: Mapping[str, str] | None = None,
) -> str:
    """The cache entry's name. `base` is the Windows base environment vcvars runs from (None elsewhere)."""
    relevant = key_env(env)
    if base is not None:
        relevant["base"] = base
    blob = dumps({"platform": platform, "sel": selectors, "env": relevant, "envmgr": version})
    return _sha256_hex(blob.encode())[:24]


ABSENT = "absent"


def token(mtime_ns: int, size: int) -> str:
    """What a cache entry keeps of a watched path's stat (ABSENT for none)."""
    return f"{mtime_ns}:{size}"


def stat_token(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return ABSENT
    return token(st.st_mtime_ns, st.st_size)


def entry_token(path: str) -> str:
    """Which write of a cache entry this is: atomic writes rename a new file, so a new inode."""
    try:
        st = os.stat(path)
    except OSError:
        return ABSENT
    return f"{st.st_ino}:{st.st_mtime_ns}:{st.st_size}"


def still_valid(validity: Mapping[str, str]) -> bool:
    return all(stat_token(p) == t for p, t in validity.items())
