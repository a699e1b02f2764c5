"""vcvars capture: run vcvarsall.bat once in a generated .cmd file and turn its `set` dump into an EnvDelta.

Why a file and markers (facts/windows.md §3.6, peers.md §0): `cmd /c "call ... && set"` needs
quoting games, AutoRun (`/d` stops it) can print anything, vcvars exits 0 even on errors, and
`=C:`-style keys and duplicate PATH entries leak into naive parsers.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from .envdelta import EnvDelta, diff
from .errors import EnvmgrError
from .host.base import Host

MARK = "::envmgr::"
BEGIN, END, LEVEL = f"{MARK}set-begin", f"{MARK}set-end", f"{MARK}errorlevel="
CAPTURE_TIMEOUT = 120.0

# The documented base environment vcvars runs from (docs/snapshot.md): what Windows itself sets for a
# new process, minus the user's PATH additions, plus the telemetry opt-out.
BASE_NAMES = ("SystemRoot", "SystemDrive", "windir", "ComSpec", "PATHEXT", "TEMP", "TMP", "USERPROFILE",
              "USERNAME", "HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA", "ProgramData", "ProgramFiles",
              "ProgramFiles(x86)", "ProgramW6432", "CommonProgramFiles", "CommonProgramFiles(x86)",
              "CommonProgramW6432", "ALLUSERSPROFILE", "PUBLIC", "OS", "PROCESSOR_ARCHITECTURE",
              "NUMBER_OF_PROCESSORS", "COMPUTERNAME")


class CaptureError(EnvmgrError):
    exit_code = 1


@dataclass(frozen=True)
class CaptureOutput:
    messages: tuple[str, ...]        # what vcvars printed (banner, [ERROR:...] and [DEBUG:...] lines)
    env: dict                        # the `set` dump after vcvars
    errorlevel: int | None

    @property
    def errors(self) -> tuple[str, ...]:
        return tuple(m for m in self.messages if re.match(r"^\[ERROR:", m.strip()))


def base_environment(env) -> dict[str, str]:
    root = env.get("SystemRoot") or "C:\\Windows"
    base = {n: env[n] for n in BASE_NAMES if env.get(n)}
    base["PATH"] = f"{root}\\system32;{root};{root}\\System32\\Wbem;{root}\\System32\\WindowsPowerShell\\v1.0\\"
    base["VSCMD_SKIP_SENDTELEMETRY"] = "1"
    return base


def vcvars_args(arch: str, toolset: str | None, sdk: str | None = None) -> tuple[str, ...]:
    args = [arch]
    if sdk:
        args.append(sdk)
    if toolset:
        args.append(f"-vcvars_ver={toolset}")
    return tuple(args)


def capture_script(vcvarsall: str, args: tuple[str, ...]) -> str:
    """The .cmd file. `%` is doubled because batch files expand it even inside quotes."""
    quoted = '"' + vcvarsall.replace("%", "%%") + '"'
    lines = ["@echo off", f"call {quoted} {' '.join(args)}", f"echo {LEVEL}%ERRORLEVEL%", f"echo {BEGIN}", "set",
             f"echo {END}"]
    return "\r\n".join(lines) + "\r\n"


def decode_cmd_output(data: bytes) -> str:
    """cmd /u writes its own output (echo, set) as UTF-16LE, but programs that vcvars runs write
    8-bit text into the same stream. The `set` dump (from our marker on) is pure UTF-16; before it,
    each line is decoded in the encoding it is in."""
    marker = f"\r\n{BEGIN}".encode("utf-16-le")
    at = data.find(marker)
    if at < 0:
        head, tail = data, b""
    else:
        head, tail = data[:at], data[at:]
    text = "\r\n".join(_decode_piece(p) for p in head.split("\r\n".encode("utf-16-le")))
    if len(tail) % 2:
        tail += b"\x00"
    return text + tail.decode("utf-16-le", errors="replace")


def _decode_piece(piece: bytes) -> str:
    """One UTF-16 line of cmd's, possibly preceded by 8-bit lines (ending in a bare CRLF) of a child."""
    *eight_bit, last = piece.split(b"\r\n")
    parts = [p.decode("utf-8", errors="replace") for p in eight_bit]
    if b"\x00" in last:
        start = max(last.index(b"\x00") - 1, 0)
        head, tail = last[:start], last[start:]
        if len(tail) % 2:
            tail += b"\x00"
        parts.append(head.decode("utf-8", errors="replace") + tail.decode("utf-16-le", errors="replace"))
    else:
        parts.append(last.decode("utf-8", errors="replace"))
    return "\r\n".join(parts)


def parse_set_dump(lines: list[str]) -> dict[str, str]:
    """`set` output: split on the first `=`; `=C:=C:\\x` (cmd's per-drive cwd) and `=ExitCode` are dropped."""
    env: dict[str, str] = {}
    for line in lines:
        if not line or line.startswith("=") or "=" not in line:
            continue
        name, _, value = line.partition("=")
        env[name] = value
    return env


def parse_capture_output(text: str) -> CaptureOutput:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    try:
        begin = lines.index(BEGIN)
    except ValueError:
        return CaptureOutput(tuple(l for l in lines if l.strip()), {}, None)
    end = lines.index(END, begin) if END in lines[begin:] else len(lines)
    level = None
    messages = []
    for line in lines[:begin]:
        if line.startswith(LEVEL):
            tail = line[len(LEVEL):].strip()
            level = int(tail) if re.fullmatch(r"-?\d+", tail) else None
        elif line.strip():
            messages.append(line)
    return CaptureOutput(tuple(messages), parse_set_dump(lines[begin + 1:end]), level)


def check_capture(out: CaptureOutput, vcvarsall: str) -> None:
    """vcvars exits 0 even when it failed: trust `[ERROR:` lines and a missing VCToolsInstallDir."""
    if out.errors:
        raise CaptureError(f"vcvarsall.bat failed: {out.errors[0].strip()}",
                           "check the --toolset/--arch you asked for; vcvars said: " + " | ".join(
                               e.strip() for e in out.errors[1:3]) if len(out.errors) > 1 else
                           "check the --toolset/--arch you asked for, or repair Visual Studio",
                           details=tuple(m.strip() for m in out.messages[:12]))
    if not out.env:
        raise CaptureError("vcvarsall.bat produced no environment (the capture script did not reach `set`)",
                           f"run \"{vcvarsall}\" x64 in cmd.exe to see what it says",
                           details=tuple(m.strip() for m in out.messages[:12]))
    if not any(k.upper() == "VCTOOLSINSTALLDIR" for k in out.env):
        raise CaptureError("vcvarsall.bat ran but set no VCToolsInstallDir: the C++ toolset is not usable",
                           "install or repair 'Desktop development with C++' in the Visual Studio Installer",
                           details=tuple(m.strip() for m in out.messages[:12]))


def capture_vcvars(host: Host, vcvarsall: str, args: tuple[str, ...], base: dict[str, str],
                   timeout: float = CAPTURE_TIMEOUT) -> tuple[EnvDelta, CaptureOutput]:
    script = capture_script(vcvarsall, args)
    digest = hashlib.sha256(script.encode()).hexdigest()[:12]
    path = host.write_temp(f"envmgr-vcvars-{digest}.cmd", script.encode("utf-8"))
    try:
        done = host.run(["cmd.exe", "/d", "/u", "/c", path], timeout=timeout, env=base, encoding=None)
    finally:
        host.remove(path)
    if done.timed_out:
        raise CaptureError(f"vcvarsall.bat did not finish within {timeout:.0f} s (killed)",
                           "something in it waits for input or hangs; run it by hand in cmd.exe to see where")
    if done.start_error:
        raise CaptureError(f"cmd.exe could not be started: {done.start_error}", "is this Windows?")
    out = parse_capture_output(decode_cmd_output(done.stdout_bytes))
    check_capture(out, vcvarsall)
    return diff("windows", base, out.env), out
