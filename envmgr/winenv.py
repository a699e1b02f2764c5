"""Windows' rules for paths and environment names, in one place, whatever the host runs on.

Paths are PureWindowsPath in the domain and compare case-insensitively with trailing separators
ignored; environment names are case-insensitive (the first spelling seen is kept); `%NAME%`
expands the way cmd and the registry's REG_EXPAND_SZ do: unknown names stay as written.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import PurePosixPath, PureWindowsPath


def path_key(path: str, windows: bool = True) -> str:
    """What two spellings of one PATH entry share: trailing separators dropped, case folded on
    Windows. The scripts envmgr generates apply this same rule at run time (shellkit)."""
    entry = path.rstrip("\\/") or path
    return entry.lower() if windows else entry


def same_path(a: str, b: str, windows: bool = True) -> bool:
    """One folder however it is spelled (`C:\\A\\` and `c:/a` on Windows)."""
    pure = PureWindowsPath if windows else PurePosixPath
    return path_key(str(pure(a)), windows) == path_key(str(pure(b)), windows)


class WindowsEnv(Mapping[str, str]):
    """Environment with Windows' case-insensitive names (keeps the first spelling it saw)."""

    def __init__(self, values: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> None:
        self._data: dict[str, tuple[str, str]] = {}
        for name, value in dict(values).items():
            self[name] = value

    def __setitem__(self, name: str, value: str) -> None:
        old = self._data.get(name.upper())
        self._data[name.upper()] = (old[0] if old else name, str(value))

    def __getitem__(self, name: str) -> str:
        return self._data[name.upper()][1]

    def __iter__(self) -> Iterator[str]:
        return (n for n, _ in self._data.values())

    def __len__(self) -> int:
        return len(self._data)


def env_mapping(values: Mapping[str, str], windows: bool) -> Mapping[str, str]:
    """The host's environment as its programs see it: case-insensitive names on Windows."""
    return WindowsEnv(values) if windows else {k: str(v) for k, v in values.items()}


def env_key(env: Mapping[str, str], name: str, windows: bool) -> str | None:
    """The spelling `env` uses for `name` (Path vs PATH on Windows), or None when it is not set."""
    if not windows:
        return name if name in env else None
    return next((k for k in env if k.upper() == name.upper()), None)


def env_get(env: Mapping[str, str], name: str, windows: bool, default: str | None = None) -> str | None:
    key = env_key(env, name, windows)
    return env[key] if key is not None else default


def expand(text: str, env: Mapping[str, str]) -> str:
    """%NAME% expansion as Windows does it: unknown names stay as written."""
    out, rest = [], text
    while "%" in rest:
        head, _, tail = rest.partition("%")
        name, found, after = tail.partition("%")
        if not found:
            break
        if name in env:
            out.append(head + env[name])
            rest = after
        else:
            out.append(head + "%" + name)
            rest = "%" + after
    return "".join(out) + rest
