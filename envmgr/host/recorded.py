"""RecordedHost: replays a machine file (docs/machine-record.md) as if it were the machine."""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from typing import Any

from envmgr.errors import InputFileError
from envmgr.files import names
from envmgr.files.schema import MACHINE, check, check_version
from envmgr.files.tomlfast import loads
from envmgr.files.tomlread import load_toml, read_text_file
from envmgr.host import dirs
from envmgr.host.base import (
    LINUX,
    WINDOWS,
    Completed,
    FileStat,
    Interpreter,
    RegValue,
    clean_parent,
    clean_path,
    normalize_key,
    which_in,
)
from envmgr.host.live import interpreter_from_run
from envmgr.winenv import env_mapping

SCHEMA_VERSIONS = (1,)
REG_TYPES = ("REG_SZ", "REG_EXPAND_SZ", "REG_MULTI_SZ", "REG_DWORD", "REG_QWORD", "REG_BINARY")


def _hex(value: str) -> bool:
    try:
        bytes.fromhex(value)
    except (TypeError, ValueError):
        return False
    return True


# What each registry type's `value` must be (the schema only knows "a string, integer or list").
_REG_FORMS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "REG_SZ": (lambda v: isinstance(v, str), "a string"),
    "REG_EXPAND_SZ": (lambda v: isinstance(v, str), "a string"),
    "REG_MULTI_SZ": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "a list of strings"),
    "REG_DWORD": (lambda v: isinstance(v, int) and 0 <= v < 2**32, "an integer from 0 to 4294967295"),
    "REG_QWORD": (lambda v: isinstance(v, int) and 0 <= v < 2**64, "an integer from 0 to 2**64-1"),
    "REG_BINARY": (
        lambda v: (
            _hex(v)
            if isinstance(v, str)
            else isinstance(v, list) and all(isinstance(x, int) and 0 <= x < 256 for x in v)
        ),
        "hex digits or a list of bytes (0-255)",
    ),
}


@dataclass(frozen=True)
class RecordedCommand:
    argv: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: str
    timed_out: bool
    start_error: str
    glob: bool = False  # argv elements are fnmatch patterns (for temporary file names)


class RecordedHost:
    """A machine read from TOML. Windows records compare paths, keys and env names case-insensitively."""

    runs_programs = False  # it answers the commands it holds and starts nothing
    writes_files = False  # planning only: there are no real files behind it
    default_shell: str | None = None
    _index: dict[str, dict[str, str]] | None  # _children(): built on first use, dropped on a change

    def __init__(self, data: dict[str, Any], *, origin: str = "<memory>", base_dir: Path | None = None) -> None:
        self.origin = self.name = origin
        self.base_dir = base_dir
        self.platform = data.get("platform", WINDOWS)
        if self.platform not in (WINDOWS, LINUX):
            raise InputFileError(
                f"{origin}: platform must be 'windows' or 'linux', not {self.platform!r}",
                "fix the machine file's `platform` key",
            )
        self.meta = dict(data.get("meta", {}))
        self._fold: Callable[[str], str] = (lambda s: s.lower()) if self.platform == WINDOWS else (lambda s: s)
        self._env = env_mapping(data.get("env", {}), self.platform == WINDOWS)
        self._files: dict[str, tuple[str, bytes | None]] = {}
        self._dirs: dict[str, str] = {}
        self._links: dict[str, str] = {}
        self._load_files(data.get("files", {}))
        for d in data.get("dirs", []):
            self._add_dir(d)
        for src, dst in data.get("links", {}).items():
            self._links[self._key(src)] = dst
        self._registry = self._load_registry(data.get("registry", {}))
        self._commands = [self._load_command(c) for c in data.get("commands", [])]
        py = data.get("python")
        self._python = (
            Interpreter(py.get("executable", "python"), py.get("version", ""), tuple(py.get("site_packages", [])))
            if py
            else None
        )

    # ---- loading -----------------------------------------------------------------------------
    def _pure(self, path: str) -> PurePath:
        return PureWindowsPath(path) if self.platform == WINDOWS else PurePosixPath(path)

    def _norm(self, path: str) -> str:
        """str(self._pure(path)); without a path object when the path is already in that form (a
        100-instance record made ~11,000 of them at load)."""
        return path if clean_path(path, self.platform == WINDOWS) else str(self._pure(path))

    def _parent(self, norm: str) -> str:
        windows = self.platform == WINDOWS
        return clean_parent(norm, windows) if clean_path(norm, windows) else str(self._pure(norm).parent)

    def _key(self, path: str) -> str:
        norm = self._norm(path)
        return self._fold(norm.rstrip("\\/") or norm)

    def _add_dir(self, path: str, clean: bool = False) -> None:
        """`clean`: the caller knows clean_path(path) (so are its parents)."""
        windows = self.platform == WINDOWS
        clean = clean or clean_path(path, windows)
        norm = path if clean else str(self._pure(path))
        self._index = None
        while True:
            key = self._fold(norm.rstrip("\\/") or norm)
            if key in self._dirs:  # its parents were added with it: stop (thousands of files share them)
                return
            self._dirs[key] = norm
            parent = clean_parent(norm, windows) if clean else self._parent(norm)
            if parent == norm:
                return
            norm = parent

    def _content(self, value: Any, where: str) -> bytes | None:
        if isinstance(value, str):
            return value.encode("utf-8")
        if isinstance(value, dict):
            if "text" in value:
                return str(value["text"]).encode("utf-8")
            if "from" in value:
                if self.base_dir is None:
                    raise InputFileError(f"{self.origin}: {where} uses `from` but the record has no folder")
                from envmgr.files.read import TEXT_LIMIT, read_regular

                base = self.base_dir.resolve()
                try:  # a record from someone else must not read this machine's files (S5: /etc/passwd)
                    ref = (base / names.relative_inside(value["from"])).resolve()
                    if base not in ref.parents:
                        raise names.BadName("leads outside the record's folder (through a link)")
                except names.BadName as exc:
                    raise InputFileError(
                        f"{self.origin}: {where}: `from` {exc}",
                        "keep referenced files in the record's folder or below it",
                    ) from None
                try:
                    return read_regular(ref, TEXT_LIMIT)
                except OSError as exc:
                    raise InputFileError(
                        f"{self.origin}: {where}: cannot read {ref}: {exc.strerror}",
                        "keep referenced files next to the machine file",
                    ) from None
            if "hex" in value:
                return bytes.fromhex(value["hex"])
            if "size" in value:
                return None  # present but its content was not recorded
        raise InputFileError(
            f"{self.origin}: {where}: expected a string or a table with from/hex/size", "see docs/machine-record.md"
        )

    def _load_files(self, files: Mapping[str, Any]) -> None:
        windows = self.platform == WINDOWS
        fold, table, parents = (str.lower if windows else str), self._files, set()
        for path, value in files.items():
            content = value.encode("utf-8") if isinstance(value, str) else self._content(value, f"files.{path!r}")
            if clean_path(path, windows):
                table[fold(path.rstrip("\\/") or path)] = (path, content)
                parent = clean_parent(path, windows)
                if parent not in parents:  # most files share their folder with the one before
                    parents.add(parent)
                    self._add_dir(parent, clean=True)
                continue
            norm = str(self._pure(path))
            self._files[self._fold(norm.rstrip("\\/") or norm)] = (norm, content)
            self._add_dir(self._parent(norm))

    def _load_registry(self, registry: Mapping[str, Any]) -> dict[str, dict[str, RegValue]]:
        out: dict[str, dict[str, RegValue]] = {}
        for key, values in registry.items():
            norm = normalize_key(key)
            parts = norm.split("\\")
            for i in range(1, len(parts)):  # parents exist too
                out.setdefault(self._fold("\\".join(parts[:i])), {})
            table = out.setdefault(self._fold(norm), {})
            for name, spec in values.items():
                table[self._fold(name)] = self._reg_value(key, name, spec)
            self._keynames = getattr(self, "_keynames", {})
            self._keynames[self._fold(norm)] = norm
        return out

    def _reg_value(self, key: str, name: str, spec: Any) -> RegValue:
        if isinstance(spec, str):
            return RegValue(name, "REG_SZ", spec)
        if not isinstance(spec, dict) or "type" not in spec or "value" not in spec:
            raise InputFileError(
                f"{self.origin}: registry {key!r} value {name!r} needs `type` and `value`",
                'write it as { type = "REG_SZ", value = "..." }',
            )
        kind, value = spec["type"], spec["value"]
        if kind not in REG_TYPES:
            raise InputFileError(
                f"{self.origin}: registry {key!r} value {name!r} has unknown type {kind!r}",
                f"use one of {', '.join(REG_TYPES)}",
            )
        if not _REG_FORMS[kind][0](value):
            raise InputFileError(
                f"{self.origin}: registry {key!r} value {name!r} ({kind}) must be {_REG_FORMS[kind][1]}",
                "see docs/machine-record.md",
            )
        if kind == "REG_MULTI_SZ":
            value = tuple(value)
        elif kind == "REG_BINARY":
            value = bytes.fromhex(value) if isinstance(value, str) else bytes(value)
        return RegValue(name, kind, value)

    def _load_command(self, spec: Mapping[str, Any]) -> RecordedCommand:
        if "argv" not in spec:
            raise InputFileError(f"{self.origin}: a [[commands]] entry has no argv", "see docs/machine-record.md")
        out = spec.get("stdout", "")
        if isinstance(out, dict):
            raw = (
                self._content({k: v for k, v in out.items() if k != "encoding"}, f"command {spec['argv'][0]!r} stdout")
                or b""
            )
            if "encoding" in out:  # e.g. cmd /u writes UTF-16LE: re-encode the stored text
                raw = self._reencode(raw, out["encoding"], spec["argv"][0])
        elif isinstance(out, str):
            raw = out.encode("utf-8")
        else:
            raise InputFileError(
                f"{self.origin}: command {spec['argv'][0]!r}: stdout must be text or a table",
                "see docs/machine-record.md",
            )
        return RecordedCommand(
            tuple(spec["argv"]),
            int(spec.get("returncode", 0)),
            raw,
            spec.get("stderr", ""),
            bool(spec.get("timed_out", False)),
            spec.get("start_error", ""),
            spec.get("match", "exact") == "glob",
        )

    def _reencode(self, raw: bytes, encoding: str, argv0: str) -> bytes:
        try:
            return raw.decode("utf-8").encode(encoding)
        except LookupError:
            raise InputFileError(
                f"{self.origin}: command {argv0!r}: unknown stdout encoding {encoding!r}",
                "use a Python codec name such as utf-16-le",
            ) from None
        except UnicodeError:
            raise InputFileError(
                f"{self.origin}: command {argv0!r}: its stdout cannot be written as {encoding}",
                "store the output as hex instead",
            ) from None

    # ---- the Host protocol --------------------------------------------------------------------
    @property
    def env(self) -> Mapping[str, str]:
        return self._env

    def _resolve(self, path: str) -> str:
        key = self._key(path)
        for _ in range(20):
            if key in self._links:
                key = self._key(self._links[key])
                continue
            # a link on a parent folder
            for link, target in self._links.items():
                if key.startswith(link + ("\\" if self.platform == WINDOWS else "/")):
                    key = self._key(target + key[len(link) :])
                    break
            else:
                return key
        return key

    def read_bytes(self, path: str) -> bytes:
        key = self._resolve(path)
        if key in self._files:
            content = self._files[key][1]
            if content is None:
                raise PermissionError(13, "content not recorded", path)
            return content
        if key in self._dirs:
            raise IsADirectoryError(21, "is a directory", path)
        raise FileNotFoundError(2, "no such file (not in the machine record)", path)

    def read_text(self, path: str) -> str:
        return self.read_bytes(path).decode("utf-8-sig", errors="replace")

    def exists(self, path: str) -> bool:
        key = self._resolve(path)
        return key in self._files or key in self._dirs

    def is_dir(self, path: str) -> bool:
        return self._resolve(path) in self._dirs

    def listdir(self, path: str) -> list[str]:
        key = self._resolve(path)
        if key not in self._dirs:
            raise FileNotFoundError(2, "no such folder (not in the machine record)", path)
        sep = "\\" if self.platform == WINDOWS else "/"
        prefix = key if key.endswith(sep) else key + sep
        names = dict(self._children(sep).get(prefix, {}))
        for k in self._links:
            if k.startswith(prefix) and sep not in k[len(prefix) :]:
                names[k[len(prefix) :]] = k[len(prefix) :]
        return sorted(names.values())

    def _children(self, sep: str) -> dict[str, dict[str, str]]:
        """Folder prefix ("C:\\VS\\") -> {child key name: its name}, built once: scanning every file
        and folder on each listdir cost 75 ms per `list` of a 100-instance record."""
        index = getattr(self, "_index", None)
        if index is None:
            index = {}
            # Every path in the tables is in pathlib's form (str(PurePath)), whose name is what follows
            # its last separator; pathlib is asked only when that is empty or a dot (an anchor).
            for pairs in (((k, v[0]) for k, v in self._files.items()), self._dirs.items()):
                for k, original in pairs:
                    cut = k.rfind(sep)
                    if cut < 0 or cut == len(k) - 1:
                        continue
                    name = original[original.rfind(sep) + 1 :]
                    if not name or name[0] == "." and name in (".", ".."):
                        name = self._pure(original).name
                    children = index.get(k[: cut + 1])
                    if children is None:
                        children = index[k[: cut + 1]] = {}
                    children[k[cut + 1 :]] = name
            self._index = index
        return index

    def stat(self, path: str) -> FileStat:
        key = self._resolve(path)
        if key in self._files:
            content = self._files[key][1]
            return FileStat(len(content or b""), 0, False)
        if key in self._dirs:
            return FileStat(0, 0, True)
        raise FileNotFoundError(2, "no such file (not in the machine record)", path)

    def realpath(self, path: str) -> str:
        key = self._resolve(path)
        if key in self._files:
            return self._files[key][0]
        if key in self._dirs:
            return self._dirs[key]
        return str(self._pure(path))

    def reg_values(self, key: str) -> dict[str, RegValue] | None:
        table = self._registry.get(self._fold(normalize_key(key)))
        if table is None:
            return None
        return {v.name: v for v in table.values()}

    def reg_subkeys(self, key: str) -> list[str] | None:
        norm = self._fold(normalize_key(key))
        if norm not in self._registry:
            return None
        prefix = norm + "\\"
        names = self.__dict__.get("_keynames", {})
        return sorted({names.get(k, k)[len(prefix) :].split("\\")[0] for k in self._registry if k.startswith(prefix)})

    def write_temp(self, name: str, data: bytes) -> str:
        """A deterministic path (so recorded commands can name it); the content lives in memory."""
        path = str(self._pure(self._temp_root()) / name)
        self._files[self._key(path)] = (path, data)
        self._add_dir(str(self._pure(path).parent))
        self._index = None
        return path

    def _temp_root(self) -> str:
        return "C:\\envmgr-temp" if self.platform == WINDOWS else "/tmp/envmgr-temp"

    def remove(self, path: str) -> None:
        self._files.pop(self._key(path), None)
        self._index = None

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        encoding: str | None = "utf-8",
    ) -> Completed:
        want = tuple(self._fold(a) if i == 0 else a for i, a in enumerate(argv))
        for cmd in self._commands:
            have = tuple(self._fold(a) if i == 0 else a for i, a in enumerate(cmd.argv))
            if have == want or (cmd.glob and _glob_match(have, want)):
                if encoding is None:
                    return Completed(
                        tuple(argv),
                        cmd.returncode,
                        "",
                        cmd.stderr,
                        cmd.timed_out,
                        cmd.start_error,
                        stdout_bytes=cmd.stdout,
                    )
                text = cmd.stdout.decode(encoding, errors="replace")
                return Completed(tuple(argv), cmd.returncode, text, cmd.stderr, cmd.timed_out, cmd.start_error)
        if not self.exists(argv[0]) and self.which(argv[0]) is None:
            return Completed(tuple(argv), 127, start_error="not found")
        return Completed(tuple(argv), 127, start_error="no result for this command in the machine record")

    def which(self, name: str) -> str | None:
        return which_in(
            self.platform,
            name,
            self._env.get("PATH", ""),
            self._env.get("PATHEXT", ""),
            lambda p: self._resolve(p) in self._files,
        )

    def interpreter(self, python: str | None = None) -> Interpreter | None:
        if python is None:
            return self._python

        return interpreter_from_run(self, python)

    @property
    def cpu_flags(self) -> tuple[str, ...] | None:
        """The recorded CPU's flags (`meta.cpu_flags`, /proc/cpuinfo's names: avx2, avx512f), or None: unknown."""
        value = self.meta.get("cpu_flags")
        if not isinstance(value, list) or not all(isinstance(f, str) for f in value):
            return None
        return tuple(f.lower() for f in value[:4096])

    @property
    def system(self) -> tuple[str, str] | None:
        """(`meta.os`, `meta.machine`) as `envmgr record` wrote them (sys.platform, platform.machine()), or None:
        a record made before they were kept says nothing of its OS beyond the path flavour."""
        os_name, machine = self.meta.get("os"), self.meta.get("machine")
        if not isinstance(os_name, str) or not os_name:
            return None
        return os_name[:40], machine[:40] if isinstance(machine, str) else ""

    @property
    def memory_mib(self) -> int | None:
        """The recorded machine's memory (`meta.memory_mib`), or None (records made before it was kept)."""
        value = self.meta.get("memory_mib")
        return value if isinstance(value, int) and value > 0 else None

    @property
    def cpu_count(self) -> int:
        """The recorded machine's processors (Windows' NUMBER_OF_PROCESSORS, else `meta.cpu_count`), or 1."""
        for value in (self._env.get("NUMBER_OF_PROCESSORS"), self.meta.get("cpu_count")):
            if value is None:
                continue
            try:
                if int(value) > 0:
                    return int(value)
            except (TypeError, ValueError):
                continue
        return 1

    def local_path(self, path: str) -> str | None:
        return None

    def needs_elevation(self) -> bool:
        return False

    def interactive(self, argv: Sequence[str], env: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
        raise InputFileError(
            f"{self.origin} is a machine record: nothing can be started on it",
            "drop --machine to start programs on this machine",
        )


def _glob_match(patterns: tuple[str, ...], argv: tuple[str, ...]) -> bool:
    return len(patterns) == len(argv) and all(fnmatchcase(a, p) for p, a in zip(patterns, argv, strict=True))


def load_machine(path: str) -> RecordedHost:
    """Read a machine file; any problem is one InputFileError line naming the file (exit 2)."""

    p = Path(path)
    text = read_text_file(
        path, "machine file", "check the path given to --machine / ENVMGR_MACHINE", "a machine file is TOML"
    )

    data = _parsed(text, str(path))
    check_version(
        data,
        SCHEMA_VERSIONS,
        str(path),
        "machine file",
        "record the machine with `envmgr record -o FILE` (or upgrade envmgr for a newer record)",
    )
    check(data, MACHINE, str(path), "machine file", "see docs/machine-record.md")
    try:
        return RecordedHost(data, origin=str(path), base_dir=p.parent)
    except (TypeError, ValueError, AttributeError, KeyError, LookupError):
        # schema.MACHINE has checked every type; what is left is a value of the right type but the
        # wrong form, which the loaders above name themselves. Never Python's own words here.
        raise InputFileError(f"{path}: malformed machine file", "see docs/machine-record.md") from None


# A record this large (a 100-instance one is 570 kB) takes ~30 ms to parse even with its strings decoded
# by json (tomlfast; tomllib alone took ~100 ms); a marshal copy reads in a few ms.
PARSED_COPY_FROM = 100_000


def _parsed(text: str, origin: str) -> dict[str, Any]:
    """tomllib's parse of text (tomlfast.loads); a large record's parse is kept (marshal, by the text's
    SHA-256) in the cache folder's records/, so replaying the same record again costs a read, not a parse."""

    copy = _parsed_copy(text) if len(text) >= PARSED_COPY_FROM else None
    if copy is not None:
        import marshal

        try:
            with open(copy, "rb") as fh:
                data = marshal.loads(fh.read())
            if isinstance(data, dict):
                return data
        except (OSError, ValueError, EOFError, TypeError):
            pass
    data = load_toml(
        text,
        origin,
        "TOML machine file",
        "fix the TOML syntax, or record the machine again with `envmgr record -o FILE`",
        loads,
    )
    if copy is not None:
        _keep(copy, data)
    return data


def _parsed_copy(text: str) -> str | None:
    try:
        folder = dirs.cache_dir() / "records"
    except Exception:  # broad on purpose; no cache folder: parse every time
        return None
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return os.path.join(folder, f"{digest}.{sys.implementation.cache_tag}.marshal")


def _keep(copy: str, data: dict[str, Any]) -> None:
    """Written atomically (temp file + rename); a value marshal cannot hold, or a folder we cannot
    write, means no copy (the next replay parses again)."""

    try:
        blob = marshal.dumps(data)
        os.makedirs(os.path.dirname(copy), exist_ok=True)
        tmp = f"{copy}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, copy)
    except (OSError, ValueError):
        pass
