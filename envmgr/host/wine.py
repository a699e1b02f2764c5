"""WineHost: a Wine prefix seen as a Windows machine.

`C:\\...` is the prefix's drive_c (drive letters come from `$WINEPREFIX/dosdevices`, where Wine
itself keeps them), programs run through Wine's 64-bit loader, and the registry is read with the
prefix's own reg.exe. Measured behaviour this relies on: tests/setup/WINE-NOTES.md.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import PureWindowsPath

from envmgr.host.base import WINDOWS, Completed, FileStat, Interpreter, RegValue, normalize_key, which_in
from envmgr.host.live import memory_mib
from envmgr.host.regquery import parse_reg_query, parse_reg_subkeys
from envmgr.winenv import WindowsEnv, expand

WINE64 = "/usr/lib/wine/wine64"
# No Mono/Gecko install prompt, no menu entries written into the user's desktop, no debug chatter.
QUIET = {"WINEDEBUG": "-all", "WINEDLLOVERRIDES": "mscoree,mshtml=;winemenubuilder.exe=d"}
REG_TIMEOUT = 30.0
# Wine's reg.exe writes in the OEM code page, which is cp437 for the C/English locales we pin it
# to; characters outside cp437 arrive as '?' (a reg.exe limit, WINE-NOTES.md "Registry").
REG_ENCODING = "cp437"
MACHINE_ENV = "HKLM\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment"
VOLATILE_ENV = "HKCU\\Volatile Environment"
USER_ENV = "HKCU\\Environment"
# Wine's own layout; the registry's machine environment is laid over these.
DEFAULT_ENV = {
    "SystemDrive": "C:",
    "SystemRoot": "C:\\windows",
    "windir": "C:\\windows",
    "ProgramFiles": "C:\\Program Files",
    "ProgramFiles(x86)": "C:\\Program Files (x86)",
    "ProgramW6432": "C:\\Program Files",
    "CommonProgramFiles": "C:\\Program Files\\Common Files",
    "CommonProgramFiles(x86)": "C:\\Program Files (x86)\\Common Files",
    "ProgramData": "C:\\ProgramData",
    "ALLUSERSPROFILE": "C:\\ProgramData",
    "PUBLIC": "C:\\users\\Public",
    "ComSpec": "C:\\windows\\system32\\cmd.exe",
    "OS": "Windows_NT",
    "PROCESSOR_ARCHITECTURE": "AMD64",
    "PATH": "C:\\windows\\system32;C:\\windows",
    "PATHEXT": ".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH",
}


class WineHost:
    platform = WINDOWS
    runs_programs = True
    writes_files = True  # through the prefix's drive folders (local_path)
    default_shell: str | None = "cmd"  # Wine's cmd.exe: the prefix has no PowerShell (only a stub)

    def __init__(self, prefix: str, *, wine: str = WINE64, env: Mapping[str, str] | None = None) -> None:
        self.prefix = os.path.abspath(os.path.expanduser(prefix))
        self.wine = wine
        self._overrides = dict(env or {})
        self._env: WindowsEnv | None = None
        self._drive_map: dict[str, str] | None = None
        self._reg: dict[str, tuple[dict[str, RegValue], list[str]] | None] = {}
        self._lock = threading.Lock()

    # ---- paths -------------------------------------------------------------------------------
    def _drives(self) -> dict[str, str]:
        """Drive letter -> real Unix folder, from dosdevices (c: -> ../drive_c, z: -> / by default)."""
        if self._drive_map is None:
            found = {"c": os.path.join(self.prefix, "drive_c"), "z": "/"}
            dos = os.path.join(self.prefix, "dosdevices")
            for name in os.listdir(dos) if os.path.isdir(dos) else ():
                if len(name) == 2 and name[1] == ":" and os.path.isdir(os.path.join(dos, name)):
                    found[name[0].lower()] = os.path.join(dos, name)
            self._drive_map = {letter: os.path.realpath(root) for letter, root in found.items()}
        return self._drive_map

    def unix_path(self, path: str) -> str | None:
        """The Unix path of a `X:\\...` path, matching each component case-insensitively as Wine does."""
        win = PureWindowsPath(path)
        if len(win.drive) != 2 or not win.root:
            return None  # relative, drive-relative or UNC: nothing in the prefix names them
        current = self._drives().get(win.drive[0].lower())
        if current is None:
            return None
        for part in win.parts[1:]:
            current = os.path.join(current, _match_case(current, part))
        return current

    def windows_path(self, unix: str) -> str | None:
        """`/…/drive_c/x` -> `C:\\x` through the drive whose folder holds it most closely."""
        best: tuple[int, str, str] | None = None
        for letter, root in self._drives().items():
            if unix == root or unix.startswith(root.rstrip("/") + "/"):
                if best is None or len(root) > best[0]:
                    best = (len(root), letter, root)
        if best is None:
            return None
        rest = unix[len(best[2]) :].strip("/").replace("/", "\\")
        return f"{best[1].upper()}:\\{rest}"

    def _mapped(self, path: str) -> str:
        unix = self.unix_path(path)
        if unix is None:
            raise FileNotFoundError(2, "not a path on one of the Wine prefix's drives", path)
        return unix

    def read_bytes(self, path: str) -> bytes:
        with open(self._mapped(path), "rb") as fh:
            return fh.read()

    def read_text(self, path: str) -> str:
        return self.read_bytes(path).decode("utf-8-sig", errors="replace")

    def exists(self, path: str) -> bool:
        unix = self.unix_path(path)
        return unix is not None and os.path.exists(unix)

    def is_dir(self, path: str) -> bool:
        unix = self.unix_path(path)
        return unix is not None and os.path.isdir(unix)

    def _is_file(self, path: str) -> bool:
        unix = self.unix_path(path)
        return unix is not None and os.path.isfile(unix)

    def listdir(self, path: str) -> list[str]:
        return os.listdir(self._mapped(path))

    def stat(self, path: str) -> FileStat:
        unix = self._mapped(path)
        st = os.stat(unix)
        return FileStat(size=st.st_size, mtime_ns=st.st_mtime_ns, is_dir=os.path.isdir(unix))

    def realpath(self, path: str) -> str:
        """Links resolved and the names' real case, as a Windows path (like Windows' final path name)."""
        unix = self.unix_path(path)
        found = self.windows_path(os.path.realpath(unix)) if unix is not None else None
        return found or str(PureWindowsPath(path))

    # ---- registry ----------------------------------------------------------------------------
    def _query(self, key: str) -> tuple[dict[str, RegValue], list[str]] | None:
        """One `reg query KEY` gives both the values and the subkey names; cached (each costs 0.1-0.5 s)."""
        norm = normalize_key(key)
        with self._lock:
            if norm.lower() in self._reg:
                return self._reg[norm.lower()]
        rc, out, _, timed_out = self._wine(
            ["reg", "query", norm, "/reg:64"], timeout=REG_TIMEOUT, extra={"LC_ALL": "C.UTF-8"}
        )
        result = None
        if rc == 0:  # a missing key is exit 1 and one line on stdout (WINE-NOTES.md)
            text = out.decode(REG_ENCODING, errors="replace")
            keys = parse_reg_query(text)
            values = next((v for k, v in keys.items() if k.lower() == norm.lower()), {})
            result = (values, parse_reg_subkeys(text, norm))
        if not timed_out:
            with self._lock:
                self._reg[norm.lower()] = result
        return result

    def reg_values(self, key: str) -> dict[str, RegValue] | None:
        found = self._query(key)
        return dict(found[0]) if found is not None else None

    def reg_subkeys(self, key: str) -> list[str] | None:
        found = self._query(key)
        return list(found[1]) if found is not None else None

    # ---- environment -------------------------------------------------------------------------
    @property
    def env(self) -> Mapping[str, str]:
        if self._env is None:
            self._env = self._build_env()
        return self._env

    def _build_env(self) -> WindowsEnv:
        """What a new process sees: machine values, then the session's and the user's (PATH appended)."""
        env = WindowsEnv(DEFAULT_ENV)
        machine_path = None
        for key in (MACHINE_ENV, VOLATILE_ENV, USER_ENV):
            values = [
                (v.name, v.type, v.data)
                for v in (self.reg_values(key) or {}).values()
                if isinstance(v.data, str) and v.name
            ]
            # REG_SZ first, then REG_EXPAND_SZ, so expandable values can use plain ones of the same key.
            for name, kind, data in sorted(values, key=lambda v: v[1] == "REG_EXPAND_SZ"):
                text = expand(data, env) if kind == "REG_EXPAND_SZ" else data
                if key == USER_ENV and name.upper() == "PATH" and machine_path:
                    text = f"{machine_path};{text}"
                env[name] = text
            if key == MACHINE_ENV:
                machine_path = env.get("PATH")
        for name, value in self._overrides.items():
            env[name] = value
        return env

    # ---- processes ---------------------------------------------------------------------------
    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        encoding: str | None = "utf-8",
    ) -> Completed:
        """Run a Windows program; `C:\\...` program paths go to Wine as they are (it maps them itself)."""
        argv_t = tuple(argv)
        if not argv_t:
            return Completed(argv_t, 127, start_error="empty command")
        program = PureWindowsPath(argv_t[0])
        if program.drive and program.root and not self._is_file(argv_t[0]):
            return Completed(argv_t, 127, start_error="not found")
        extra = {}
        if env is not None:
            # Wine builds a program's environment from the registry plus the Unix environment; PATH is
            # the exception (Unix PATH is not imported), so a caller's PATH goes in through WINEPATH.
            given = WindowsEnv(env)
            extra = {k: v for k, v in given.items() if k.upper() != "PATH"}
            if "PATH" in given:
                extra["WINEPATH"] = given["PATH"]
        rc, out, err, timed_out = self._wine(list(argv_t), timeout=timeout, extra=extra)
        stderr = _decode(err, encoding or "utf-8")
        start_error = ""
        # Wine reports a program it cannot load with exit code 53 and one line on stderr; a bare name
        # it cannot find goes through start.exe, which says so on stdout.
        if rc == 53 and ("wine: cannot find" in stderr or "wine: failed to open" in stderr):
            start_error = "not found: " + stderr.strip().splitlines()[-1]
        elif rc != 0 and b"ShellExecuteEx failed: File not found" in out:
            start_error = "not found"
        if encoding is None:
            return Completed(argv_t, rc, "", stderr, timed_out=timed_out, start_error=start_error, stdout_bytes=out)
        return Completed(argv_t, rc, _decode(out, encoding), stderr, timed_out=timed_out, start_error=start_error)

    def interactive(self, argv: Sequence[str], env: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
        """argv and Unix environment that start a Windows program under Wine in the foreground
        (`envmgr --wine-prefix P shell --shell cmd`), with `env` as its Windows environment."""
        given = WindowsEnv(env)
        proc_env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "PATH")}
        proc_env.update({k: v for k, v in given.items() if k.upper() != "PATH"})
        proc_env.update(QUIET, WINEPREFIX=self.prefix, PATH=os.environ.get("PATH", "/usr/bin:/bin"))
        if "PATH" in given:
            proc_env["WINEPATH"] = given["PATH"]
        return [self.wine, *argv], proc_env

    def _wine(self, args: list[str], *, timeout: float, extra: Mapping[str, str]) -> tuple[int, bytes, bytes, bool]:
        """Run `wine64 ARGS` -> (exit code, stdout, stderr, timed out). Output goes to temp files, not
        pipes: a wineserver that this call starts inherits them and would keep a pipe open for seconds
        after the program has exited (measured: 2.5 s instead of 0.5 s per cold call)."""
        proc_env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        proc_env.update(QUIET, WINEPREFIX=self.prefix, **extra)
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            try:
                proc = subprocess.Popen(
                    (self.wine, *args),
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    env=proc_env,
                    start_new_session=True,
                )
            except OSError as exc:
                return 127, b"", f"cannot start {self.wine}: {exc.strerror or exc}".encode(), False
            timed_out = False
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                # The program's Windows children share its process group; wineserver detaches itself.
                _kill_group(proc)
                rc, timed_out = -1, True
            out.seek(0)
            err.seek(0)
            return rc, out.read(), err.read(), timed_out

    def write_temp(self, name: str, data: bytes) -> str:
        """A file in a new folder under the prefix's C:\\windows\\temp; returns its Windows path."""
        temp = os.path.join(self._drives()["c"], "windows", "temp")
        os.makedirs(temp, exist_ok=True)
        folder = tempfile.mkdtemp(prefix="envmgr-", dir=temp)
        with open(os.path.join(folder, name), "wb") as fh:
            fh.write(data)
        return self.windows_path(os.path.join(os.path.realpath(folder), name)) or ""

    def remove(self, path: str) -> None:
        unix = self.unix_path(path)
        if unix is None:
            return
        try:
            os.unlink(unix)
            os.rmdir(os.path.dirname(unix))
        except OSError:
            pass

    def which(self, name: str) -> str | None:
        env = self.env
        return which_in(WINDOWS, name, env.get("PATH", ""), env.get("PATHEXT", ""), self._is_file)

    def interpreter(self, python: str | None = None) -> Interpreter | None:
        return None  # envmgr runs on the Unix side; a Windows Python in the prefix is not looked for

    @property
    def name(self) -> str:
        return f"the Wine prefix {self.prefix}"

    @property
    def cpu_count(self) -> int:
        return os.cpu_count() or 1  # Windows programs under Wine run on this machine's processors

    @property
    def cpu_flags(self) -> tuple[str, ...] | None:
        return None  # asked of the target Python, which runs under Wine on this CPU

    @property
    def memory_mib(self) -> int | None:
        return memory_mib()  # Windows programs under Wine use this machine's memory

    @property
    def system(self) -> tuple[str, str] | None:
        import platform as _platform  # start-up: asked only by the verdicts after a failure

        return "win32", _platform.machine() or ""  # Windows programs on this machine's processor

    def local_path(self, path: str) -> str | None:
        return self.unix_path(path)

    def needs_elevation(self) -> bool:
        return False  # a Wine prefix's "Program Files" belongs to the user who owns the prefix


def _match_case(folder: str, name: str) -> str:
    """`name` as it is spelled in `folder` (exact first, then case-insensitively); as given if absent."""
    if name in ("", ".", "..") or os.path.lexists(os.path.join(folder, name)):
        return name
    try:
        entries = os.listdir(folder)
    except OSError:
        return name
    wanted = name.casefold()
    return next((e for e in sorted(entries) if e.casefold() == wanted), name)


def _decode(data: bytes, encoding: str) -> str:
    text = data.decode(encoding, errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()
