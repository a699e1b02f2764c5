"""The Host seam: the one protocol through which envmgr touches a machine.

Core code receives a Host and never imports os.environ, winreg or subprocess itself. Paths are
plain strings in the host's own flavour ("C:\\Program Files\\..." on a Windows host); use
`host_path()` to get the matching PurePath class.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath, PurePosixPath, PureWindowsPath
from typing import Protocol

from envmgr.winenv import same_path as same

OUTPUT_MIB = 16  # host/child.py OUTPUT_LIMIT, in MiB

RegData = str | int | tuple[str, ...] | bytes

WINDOWS = "windows"
LINUX = "linux"

# Hive abbreviations as reg.exe and winreg spell them; keys are stored with the long form.
HIVES = {
    "HKLM": "HKEY_LOCAL_MACHINE",
    "HKCU": "HKEY_CURRENT_USER",
    "HKCR": "HKEY_CLASSES_ROOT",
    "HKU": "HKEY_USERS",
}


def normalize_key(key: str) -> str:
    """`HKLM\\Software\\X` -> `HKEY_LOCAL_MACHINE\\Software\\X` (no trailing backslash)."""
    key = key.replace("/", "\\").strip("\\")
    hive, _, rest = key.partition("\\")
    hive = HIVES.get(hive.upper(), hive.upper())
    return f"{hive}\\{rest}" if rest else hive


@dataclass(frozen=True)
class RegValue:
    name: str
    type: str  # REG_SZ, REG_EXPAND_SZ, REG_MULTI_SZ, REG_DWORD, REG_QWORD, REG_BINARY
    data: RegData


@dataclass(frozen=True)
class Completed:
    """The result of running one external command; never raises for the command's own failure."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    # Set when the program could not be started at all (not found, not executable, not recorded).
    start_error: str = ""
    # The raw output, filled when run(..., encoding=None) asks for bytes (cmd /u's UTF-16).
    stdout_bytes: bytes = b""
    # Set when the program printed more than envmgr keeps of an answer (host/child.py): it was stopped there.
    overflowed: bool = False
    # Set when the program ended but a process it started kept its output open: reading stopped (host/child.py).
    lingered: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.start_error and not self.overflowed

    def describe_failure(self) -> str:
        name = self.argv[0] if self.argv else "?"
        if self.start_error:
            return f"{name} could not be started: {self.start_error}"
        if self.timed_out:
            return f"{name} did not finish in time (killed)"
        if self.overflowed:
            return f"{name} printed far more than an answer (over {OUTPUT_MIB} MiB; stopped)"
        first = (self.stdout.strip() or self.stderr.strip()).splitlines()[:1]
        tail = f": {first[0].strip()}" if first else ""
        return f"{name} exited with {self.returncode}{tail}"


@dataclass(frozen=True)
class FileStat:
    size: int
    mtime_ns: int
    is_dir: bool


@dataclass(frozen=True)
class Interpreter:
    """The Python that envmgr runs under (or one named with --python), as the host sees it."""

    executable: str
    version: str
    site_packages: tuple[str, ...] = field(default_factory=tuple)


class Host(Protocol):
    """What envmgr may ask of a machine. Code outside host/ asks these capabilities and never which kind
    of host it holds: `runs_programs` (False for a record, which only replays), `writes_files` (may its
    files be changed), `local_path` (where a host path lies in this process's file system),
    `interactive` (argv and environment that start a program in the foreground there)."""

    platform: str
    runs_programs: bool  # False: a record answers from what it holds and starts nothing
    writes_files: bool  # False: planning only (a record)
    default_shell: str | None  # the shell `envmgr shell` starts when none is named and none is detected

    @property
    def name(self) -> str: ...  # how messages name it: "this machine", "the Wine prefix P", "rec.toml"

    @property
    def cpu_count(self) -> int: ...

    @property
    def memory_mib(self) -> int | None: ...  # physical memory (the recipes' MAX_JOBS); None: unknown

    @property
    def cpu_flags(self) -> tuple[str, ...] | None: ...  # a record's CPU flags (meta.cpu_flags); None: not

    # recorded, or a host that runs programs (its target Python is asked: wheels/cpucode.py)

    @property
    def system(self) -> tuple[str, str] | None: ...  # (sys.platform, platform.machine()) of the machine:

    # ("darwin", "arm64"), ("linux", "aarch64"), ("win32", "AMD64"); None: not known (a record made before
    # `meta.os`/`meta.machine` were kept). `platform` is the path flavour only: a macOS record says "linux"

    @property
    def env(self) -> Mapping[str, str]: ...

    def read_bytes(self, path: str) -> bytes: ...

    def read_text(self, path: str) -> str: ...

    def exists(self, path: str) -> bool: ...

    def is_dir(self, path: str) -> bool: ...

    def listdir(self, path: str) -> list[str]: ...

    def stat(self, path: str) -> FileStat: ...

    def realpath(self, path: str) -> str: ...

    def reg_values(self, key: str) -> dict[str, RegValue] | None: ...

    def reg_subkeys(self, key: str) -> list[str] | None: ...

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        encoding: str | None = "utf-8",
    ) -> Completed: ...

    def write_temp(self, name: str, data: bytes) -> str: ...

    def remove(self, path: str) -> None: ...

    def which(self, name: str) -> str | None: ...

    def interpreter(self, python: str | None = None) -> Interpreter | None: ...

    def local_path(self, path: str) -> str | None: ...

    def needs_elevation(self) -> bool: ...

    def interactive(self, argv: Sequence[str], env: Mapping[str, str]) -> tuple[list[str], dict[str, str]]: ...


def path_class(platform: str) -> type[PurePath]:
    return PureWindowsPath if platform == WINDOWS else PurePosixPath


def host_path(host: Host, path: str) -> PurePath:
    return path_class(host.platform)(path)


def join(host: Host, base: str, *parts: str) -> str:
    windows = host.platform == WINDOWS
    if clean_path(base, windows) and all(_plain_name(p, windows) for p in parts):
        sep = "\\" if windows else "/"
        return (base if base.endswith(sep) else base + sep) + sep.join(parts) if parts else base
    return str(path_class(host.platform)(base, *parts))


def clean_path(path: str, windows: bool) -> bool:
    """Whether `path` is an absolute path already as str(PureWindowsPath(path)) (or PurePosixPath) writes
    it, so string operations give pathlib's answers: discovery of a 100-instance record spent most of
    its time making path objects for such paths (tests/unit/test_host_paths.py holds it to pathlib)."""
    if windows:
        return (
            len(path) >= 3
            and path[1] == ":"
            and path[2] == "\\"
            and path[0].isascii()
            and path[0].isalpha()
            and "/" not in path
            and "\\\\" not in path
            and "\\.\\" not in path
            and (len(path) == 3 or not path.endswith(("\\", "\\.")))
        )
    return (
        path.startswith("/")
        and "//" not in path
        and "/./" not in path
        and (path == "/" or not path.endswith(("/", "/.")))
    )


def clean_parent(path: str, windows: bool) -> str:
    """str(PurePath(path).parent) for a clean_path."""
    cut = path.rfind("\\" if windows else "/")
    head = path[:cut]
    if windows:
        return head if len(head) > 2 else path[:3]
    return head or "/"


def _plain_name(part: str, windows: bool) -> bool:
    """One folder or file name that pathlib appends as it is."""
    if windows:
        return bool(part) and part != "." and not any(c in part for c in "\\/:")
    return bool(part) and part != "." and "/" not in part


def same_path(platform: str, a: str, b: str) -> bool:
    return same(a, b, platform == WINDOWS)


def safe_listdir(host: Host, path: str) -> tuple[list[str], str | None]:
    """listdir that turns an unreadable folder into a problem string instead of an exception."""
    try:
        return sorted(host.listdir(path)), None
    except FileNotFoundError:
        return [], None
    except OSError as exc:
        return [], f"cannot read {path}: {exc.strerror or exc}"


def safe_read_text(host: Host, path: str) -> tuple[str | None, str | None]:
    try:
        return host.read_text(path), None
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}"


def which_in(platform: str, name: str, path_value: str, pathext: str, is_file: Callable[[str], bool]) -> str | None:
    """PATH search shared by every host: Windows tries PATHEXT, and a name with an extension as is."""
    sep = ";" if platform == WINDOWS else ":"
    cls = path_class(platform)
    names = [name]
    if platform == WINDOWS and not cls(name).suffix:
        exts = [e for e in (pathext or ".COM;.EXE;.BAT;.CMD").split(";") if e]
        names = [name + e.lower() for e in exts]
    for entry in path_value.split(sep):
        entry = entry.strip().strip('"')
        if not entry:
            continue
        for candidate in names:
            full = str(cls(entry, candidate))
            if is_file(full):
                return full
    return None
