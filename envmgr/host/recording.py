"""RecordingHost: wraps a host and writes down what discovery read, as a machine file (`envmgr record`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from envmgr.host.base import Completed, FileStat, Host, Interpreter, RegValue, host_path, normalize_key

MAX_CONTENT = 256 * 1024  # larger files are recorded by size only
# Read by discovery but never worth putting in a bug report.
_SECRET_HINTS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "API_KEY", "CREDENTIAL")


class _RecordingEnv(Mapping[str, str]):
    def __init__(self, inner: Mapping[str, str], seen: dict[str, str]) -> None:
        self._inner, self._seen = inner, seen

    def __getitem__(self, name: str) -> str:
        value = self._inner[name]
        if not any(h in name.upper() for h in _SECRET_HINTS):
            self._seen[name] = value
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._inner))

    def __len__(self) -> int:
        return len(self._inner)

    # Not an ItemsView: discovery scans names (CUDA_PATH_V*); values are recorded only when they are read.
    def items(self) -> list[tuple[str, str]]:  # type: ignore[override]
        return [(k, _Lazy(self, k)) for k in list(self._inner)]


class _Lazy(str):
    """A value handed out by items(): recorded once discovery actually uses it (tests truthiness/str)."""

    _env: _RecordingEnv
    _name: str

    def __new__(cls, env: _RecordingEnv, name: str) -> _Lazy:
        obj = super().__new__(cls, env._inner[name])
        obj._env, obj._name = env, name
        return obj

    def __bool__(self) -> bool:
        self._env[self._name]
        return len(self) > 0


class RecordingHost:
    def __init__(self, inner: Host) -> None:
        self.inner = inner
        self.platform = inner.platform
        self._lock = threading.Lock()
        self.env_seen: dict[str, str] = {}
        self.files: dict[str, dict[str, Any]] = {}
        self.dirs: set[str] = set()
        self.links: dict[str, str] = {}
        self.temp_names: dict[str, str] = {}
        self.registry: dict[str, dict[str, RegValue]] = {}
        self.commands: list[Completed] = []
        self.python: Interpreter | None = None
        self._env = _RecordingEnv(inner.env, self.env_seen)

    @property
    def env(self) -> Mapping[str, str]:
        return self._env

    def _file(self, path: str, content: bytes | None) -> None:
        with self._lock:
            if content is None or len(content) > MAX_CONTENT:
                self.files.setdefault(path, {"size": len(content) if content else 0})
            else:
                self.files[path] = {"content": content}

    def read_bytes(self, path: str) -> bytes:
        data = self.inner.read_bytes(path)
        self._file(path, data)
        return data

    def read_text(self, path: str) -> str:
        data = self.inner.read_bytes(path)
        self._file(path, data)
        return data.decode("utf-8-sig", errors="replace")

    def exists(self, path: str) -> bool:
        found = self.inner.exists(path)
        if found:
            self._note(path)
        return found

    def is_dir(self, path: str) -> bool:
        found = self.inner.is_dir(path)
        if found:
            self._note(path)
        return found

    def _link(self, path: str) -> bool:
        """Record a symbolic link (its own name differs from its real path); True when it is one."""
        real = self.inner.realpath(path)
        p = host_path(self.inner, path)
        parent_real = self.inner.realpath(str(p.parent))
        if real != path and real != str(host_path(self.inner, parent_real) / p.name):
            with self._lock:
                self.links[path] = real
            self._note(real)
            return True
        return False

    def _note(self, path: str) -> None:
        if self.platform != "windows" and self._link(path):
            return
        if self.inner.is_dir(path):
            with self._lock:
                self.dirs.add(path)
        else:
            with self._lock:
                self.files.setdefault(path, {"size": 0})

    def listdir(self, path: str) -> list[str]:
        names = self.inner.listdir(path)
        with self._lock:
            self.dirs.add(path)
        for name in names:
            self._note(str(host_path(self.inner, path) / name))
        return names

    def stat(self, path: str) -> FileStat:
        return self.inner.stat(path)

    def realpath(self, path: str) -> str:
        real = self.inner.realpath(path)
        if real != path and self.inner.exists(path):
            self._note(path)
        return real

    def reg_values(self, key: str) -> dict[str, RegValue] | None:
        values = self.inner.reg_values(key)
        if values is not None:
            with self._lock:
                self.registry.setdefault(normalize_key(key), {}).update(values)
        return values

    def reg_subkeys(self, key: str) -> list[str] | None:
        subs = self.inner.reg_subkeys(key)
        if subs is not None:
            with self._lock:
                self.registry.setdefault(normalize_key(key), {})
                for s in subs:
                    self.registry.setdefault(normalize_key(f"{key}\\{s}"), {})
        return subs

    def write_temp(self, name: str, data: bytes) -> str:
        """The real temporary file; commands that name it are recorded with the name a replaying
        RecordedHost gives the same file (its temp folder + the same, content-derived, name)."""
        real = self.inner.write_temp(name, data)
        root = "C:\\envmgr-temp" if self.platform == "windows" else "/tmp/envmgr-temp"
        with self._lock:
            self.temp_names[real] = str(host_path(self.inner, root) / name)
        return real

    def remove(self, path: str) -> None:
        self.inner.remove(path)

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        encoding: str | None = "utf-8",
    ) -> Completed:
        done = self.inner.run(argv, timeout=timeout, env=env, encoding=encoding)
        with self._lock:
            recorded_argv = tuple(self.temp_names.get(a, a) for a in done.argv)
            self.commands.append(replace(done, argv=recorded_argv))
        return done

    def which(self, name: str) -> str | None:
        self._env.get("PATH")
        self._env.get("PATHEXT")
        found = self.inner.which(name)
        if found:
            self._note(found)
        return found

    def interpreter(self, python: str | None = None) -> Interpreter | None:
        interp = self.inner.interpreter(python)
        if python is None:
            self.python = interp
        return interp

    def __getattr__(self, name: str) -> Any:
        """The capabilities (name, runs_programs, writes_files, cpu_count, local_path, ...) are the inner
        host's: recording watches what discovery reads, not what the host can do."""
        if name in _CAPABILITIES:
            return getattr(self.inner, name)
        raise AttributeError(name)


_CAPABILITIES = frozenset(
    {
        "name",
        "runs_programs",
        "writes_files",
        "default_shell",
        "cpu_count",
        "memory_mib",
        "cpu_flags",
        "system",
        "local_path",
        "needs_elevation",
        "interactive",
    }
)
