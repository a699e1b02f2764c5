"""LiveHost: the real machine. winreg is imported lazily, and only on Windows."""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from envmgr.files.nested import loads_json
from envmgr.files.read import read_regular
from envmgr.host.base import (
    LINUX,
    WINDOWS,
    Completed,
    FileStat,
    Host,
    Interpreter,
    RegValue,
    normalize_key,
    which_in,
)
from envmgr.host.child import run_bounded
from envmgr.host.process import environ

_REG_TYPES = {1: "REG_SZ", 2: "REG_EXPAND_SZ", 3: "REG_BINARY", 4: "REG_DWORD", 7: "REG_MULTI_SZ", 11: "REG_QWORD"}

PY_SITE_SCRIPT = (
    "import sys,site,sysconfig,json;"
    "p=[sysconfig.get_paths()['purelib'],sysconfig.get_paths()['platlib']];"
    "p+=[x for x in getattr(site,'getsitepackages',lambda:[])() if x not in p];"
    "print(json.dumps({'executable':sys.executable,'version':'%d.%d.%d'%sys.version_info[:3],'site':p}))"
)


class LiveHost:
    name = "this machine"
    runs_programs = True
    writes_files = True
    default_shell: str | None = None  # the shell envmgr runs in (shellhost.detect_shell)

    def __init__(self) -> None:
        self.platform = WINDOWS if sys.platform == "win32" else LINUX

    @property
    def cpu_count(self) -> int:
        return os.cpu_count() or 1

    @property
    def cpu_flags(self) -> tuple[str, ...] | None:
        return None  # asked of the target Python, which runs here (wheels/cpucode.py)

    @property
    def memory_mib(self) -> int | None:
        return memory_mib()

    @property
    def system(self) -> tuple[str, str] | None:
        if sys.platform == "win32":
            # Windows' own words for the processor (AMD64, ARM64, x86), as platform.machine() gives them: from 3.12
            # it asks WMI first, which Wine 8 never answers (the record stops there)
            env = os.environ
            return sys.platform, env.get("PROCESSOR_ARCHITEW6432") or env.get("PROCESSOR_ARCHITECTURE", "")
        import platform as _platform  # start-up: asked only by the verdicts after a failure

        return sys.platform, _platform.machine() or ""

    def local_path(self, path: str) -> str | None:
        return path

    def needs_elevation(self) -> bool:
        """Whether writing under Program Files needs a UAC prompt first (Windows, not elevated)."""
        return self.platform == WINDOWS and not is_admin()

    def interactive(self, argv: Sequence[str], env: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
        return list(argv), dict(env)

    @property
    def env(self) -> Mapping[str, str]:
        return environ()

    def read_bytes(self, path: str) -> bytes:
        return read_regular(path)

    def read_text(self, path: str) -> str:
        return self.read_bytes(path).decode("utf-8-sig", errors="replace")

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(path)

    def listdir(self, path: str) -> list[str]:
        return os.listdir(path)

    def stat(self, path: str) -> FileStat:
        st = os.stat(path)
        return FileStat(size=st.st_size, mtime_ns=st.st_mtime_ns, is_dir=os.path.isdir(path))

    def realpath(self, path: str) -> str:
        return os.path.realpath(path)

    def _open_key(self, key: str) -> Any:  # a winreg.HKEYType (its stub exists on Windows only)
        if sys.platform != "win32":  # never: reg_values/reg_subkeys ask only on Windows (mypy reads it)
            raise OSError("no registry on this platform")
        import winreg  # lazily: only Windows has it

        hive_name, _, sub = normalize_key(key).partition("\\")
        hive = getattr(winreg, hive_name)
        # Read the 64-bit view: CUDA and the Windows SDK write there (32-bit Python would be redirected).
        return winreg.OpenKey(hive, sub, 0, winreg.KEY_READ | winreg.KEY_WOW64_64KEY)

    def reg_values(self, key: str) -> dict[str, RegValue] | None:
        if self.platform != WINDOWS or sys.platform != "win32":  # the same test; mypy reads the second
            return None
        import winreg

        try:
            handle = self._open_key(key)
        except OSError:
            return None
        values: dict[str, RegValue] = {}
        with handle:
            index = 0
            while True:
                try:
                    name, data, kind = winreg.EnumValue(handle, index)
                except OSError:
                    break
                if isinstance(data, list):
                    data = tuple(data)
                values[name] = RegValue(name, _REG_TYPES.get(kind, f"REG_{kind}"), data)
                index += 1
        return values

    def reg_subkeys(self, key: str) -> list[str] | None:
        if self.platform != WINDOWS or sys.platform != "win32":  # the same test; mypy reads the second
            return None
        import winreg

        try:
            handle = self._open_key(key)
        except OSError:
            return None
        names = []
        with handle:
            index = 0
            while True:
                try:
                    names.append(winreg.EnumKey(handle, index))
                except OSError:
                    break
                index += 1
        return names

    def write_temp(self, name: str, data: bytes) -> str:
        folder = tempfile.mkdtemp(prefix="envmgr-")
        path = os.path.join(folder, name)
        with open(path, "wb") as fh:
            fh.write(data)
        return path

    def remove(self, path: str) -> None:
        try:
            os.unlink(path)
            os.rmdir(os.path.dirname(path))
        except OSError:
            pass

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        encoding: str | None = "utf-8",
    ) -> Completed:
        argv_t = tuple(argv)
        flags = 0x08000000 if self.platform == WINDOWS else 0  # CREATE_NO_WINDOW: no console flashes
        try:
            done = run_bounded(argv_t, timeout=timeout, env=env, creationflags=flags)
        except FileNotFoundError:
            return Completed(argv_t, 127, start_error="not found")
        except PermissionError:
            return Completed(argv_t, 126, start_error="not executable (permission denied)")
        except OSError as exc:
            return Completed(argv_t, 126, start_error=str(exc))
        if done.overflowed:
            return Completed(argv_t, -1, "", _decode(done.stderr[-4096:], "utf-8"), overflowed=True)
        if encoding is None:
            return Completed(
                argv_t,
                done.returncode,
                "",
                _decode(done.stderr, "utf-8"),
                timed_out=done.timed_out,
                stdout_bytes=done.stdout,
            )
        return Completed(
            argv_t,
            done.returncode,
            _decode(done.stdout, encoding),
            _decode(done.stderr, encoding),
            timed_out=done.timed_out,
            lingered=done.lingered,
        )

    def which(self, name: str) -> str | None:
        return which_in(
            self.platform,
            name,
            os.environ.get("PATH", ""),
            os.environ.get("PATHEXT", ""),
            lambda p: os.path.isfile(p) and (self.platform == WINDOWS or os.access(p, os.X_OK)),
        )

    def interpreter(self, python: str | None = None) -> Interpreter | None:
        if python is None:
            import sysconfig

            paths = sysconfig.get_paths()
            site = [paths["purelib"], paths["platlib"]]
            return Interpreter(sys.executable, "{}.{}.{}".format(*sys.version_info[:3]), tuple(dict.fromkeys(site)))
        return interpreter_from_run(self, python)


def is_admin() -> bool:
    """Whether this Windows process runs elevated (False elsewhere)."""
    if sys.platform != "win32":
        return False
    import ctypes  # lazily: Windows only

    try:
        return bool(ctypes.windll.shell32.IsUserAnAdmin())
    except (AttributeError, OSError):
        return False


def interpreter_from_run(host: Host, python: str) -> Interpreter | None:
    done = host.run([python, "-c", PY_SITE_SCRIPT], timeout=20)
    if not done.ok:
        return None
    try:
        data = loads_json(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    return interpreter_from_answer(data)


def interpreter_from_answer(data: object) -> Interpreter | None:
    """PY_SITE_SCRIPT's answer, when it has exactly that shape: the program may be anything that prints
    JSON (a wrapper, another language), and a path with NUL or a site entry that is no string is no path."""
    if not isinstance(data, dict):
        return None
    exe, version, site = data.get("executable"), data.get("version"), data.get("site")
    if not (
        isinstance(exe, str)
        and exe
        and isinstance(version, str)
        and re.fullmatch(r"\d+\.\d+\.\d+", version)
        and isinstance(site, list)
        and all(isinstance(p, str) and p for p in site)
    ):
        return None
    if "\0" in exe or any("\0" in p for p in site):
        return None
    return Interpreter(exe, version, tuple(dict.fromkeys(site)))


def _decode(data: bytes | None, encoding: str | None) -> str:
    if not data or encoding is None:
        return ""
    text = data.decode(encoding, errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def memory_mib() -> int | None:
    """This machine's memory in MiB (None when psutil cannot tell): LiveHost's and WineHost's answer."""
    import psutil  # here, not at the top: every command imports the host, few ask for memory

    try:
        return int(psutil.virtual_memory().total // (1 << 20))
    except (OSError, RuntimeError, AttributeError):
        return None
