"""vcvars capture: run vcvarsall.bat once in a generated .cmd file and turn its `set` dump into an EnvDelta.

Why a file and markers (docs/knowledge.md#capturing-vcvars): `cmd /c "call ... && set"` needs
quoting games, AutoRun (`/d` stops it) can print anything, vcvars exits 0 even on errors, and
`=C:`-style keys and duplicate PATH entries leak into naive parsers.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass

from envmgr.errors import CaptureError
from envmgr.host.base import Host
from envmgr.snapshot.envdelta import EnvDelta, diff
from envmgr.winenv import env_key

MARK = "::envmgr::"
BEGIN, END = f"{MARK}set-begin", f"{MARK}set-end"
# vcvars exits 0 even when it failed (check_capture reads its [ERROR: lines instead), so the errorlevel the
# script echoes is skipped, not read. The echo stays: the script's digest names it in the commands that
# `envmgr record --capture` stored, and a changed script would no longer replay from those records.
LEVEL = f"{MARK}errorlevel="
# The environment cmd.exe really starts vcvars from, dumped before the call: the delta is measured
# against it, not against the base we asked for, because the host can add to what we pass. Wine
# adds its WINE* variables, Windows defaults such as PROMPT and COMPUTERNAME, and every variable
# of the Unix environment that runs it (measured in tests/wine/test_wine_capture.py).
PRE_BEGIN, PRE_END = f"{MARK}env-begin", f"{MARK}env-end"
# cmd.exe reads a batch file in the OEM code page (Wine: always, even after `chcp 65001`), so a
# non-ASCII vcvarsall path written into the script would arrive mangled ("Can't recognize ...").
# Such a path reaches the script through this variable instead: environment blocks are UTF-16.
VCVARSALL_VAR = "ENVMGR_VCVARSALL"
CAPTURE_TIMEOUT = 120.0

# The documented base environment vcvars runs from (docs/snapshot.md): what Windows itself sets for a
# new process, minus the user's PATH additions, plus the telemetry opt-out.
BASE_NAMES = (
    "SystemRoot",
    "SystemDrive",
    "windir",
    "ComSpec",
    "PATHEXT",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "USERNAME",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "ProgramData",
    "ProgramFiles",
    "ProgramFiles(x86)",
    "ProgramW6432",
    "CommonProgramFiles",
    "CommonProgramFiles(x86)",
    "CommonProgramW6432",
    "ALLUSERSPROFILE",
    "PUBLIC",
    "OS",
    "PROCESSOR_ARCHITECTURE",
    "NUMBER_OF_PROCESSORS",
    "COMPUTERNAME",
)


@dataclass(frozen=True)
class CaptureOutput:
    messages: tuple[str, ...]  # what vcvars printed (banner, [ERROR:...] and [DEBUG:...] lines)
    env: dict[str, str]  # the `set` dump after vcvars
    before: dict[str, str] | None = None  # the `set` dump before vcvars (None in output without it)

    @property
    def errors(self) -> tuple[str, ...]:
        return tuple(m for m in self.messages if re.match(r"^\[ERROR:", m.strip()))


def base_environment(env: Mapping[str, str]) -> dict[str, str]:
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
    """The .cmd file. `%` is doubled because batch files expand it even inside quotes; a non-ASCII path
    is read from VCVARSALL_VAR (capture_vcvars sets it), since the script itself is read as OEM text."""
    quoted = '"' + (vcvarsall.replace("%", "%%") if vcvarsall.isascii() else f"%{VCVARSALL_VAR}%") + '"'
    lines = [
        "@echo off",
        f"echo {PRE_BEGIN}",
        "set",
        f"echo {PRE_END}",
        f"call {quoted} {' '.join(args)}",
        f"echo {LEVEL}%ERRORLEVEL%",
        f"echo {BEGIN}",
        "set",
        f"echo {END}",
    ]
    return "\r\n".join(lines) + "\r\n"


def decode_cmd_output(data: bytes) -> str:
    """cmd /u writes its own output (echo, set) as UTF-16LE, but programs that vcvars runs write
    8-bit text into the same stream. The `set` dump (from our marker on) is pure UTF-16; before it,
    each line is decoded in the encoding it is in. The dump before vcvars runs (up to PRE_END) is
    pure UTF-16 too: only builtins have written by then."""
    pre = f"{PRE_END}\r\n".encode("utf-16-le")
    cut = data.find(pre) if data.startswith(PRE_BEGIN.encode("utf-16-le")) else -1
    pre_text = ""
    if cut >= 0:
        pre_text, data = data[: cut + len(pre)].decode("utf-16-le", errors="replace"), data[cut + len(pre) :]
    marker = f"\r\n{BEGIN}".encode("utf-16-le")
    at = data.find(marker)
    if at < 0:
        head, tail = data, b""
    else:
        head, tail = data[:at], data[at:]
    text = pre_text + "\r\n".join(_decode_piece(p) for p in head.split("\r\n".encode("utf-16-le")))
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
    before = None
    if lines and lines[0] == PRE_BEGIN and PRE_END in lines:
        pre_end = lines.index(PRE_END)
        before, lines = parse_set_dump(lines[1:pre_end]), lines[pre_end + 1 :]
    try:
        begin = lines.index(BEGIN)
    except ValueError:
        return CaptureOutput(tuple(line for line in lines if line.strip()), {}, before)
    end = lines.index(END, begin) if END in lines[begin:] else len(lines)
    messages = tuple(line for line in lines[:begin] if line.strip() and not line.startswith(LEVEL))
    return CaptureOutput(messages, parse_set_dump(lines[begin + 1 : end]), before)


def check_capture(out: CaptureOutput, vcvarsall: str) -> None:
    """vcvars exits 0 even when it failed: trust `[ERROR:` lines and a missing VCToolsInstallDir."""
    if out.errors:
        raise CaptureError(
            f"vcvarsall.bat failed: {out.errors[0].strip()}",
            "check the --toolset/--arch you asked for; vcvars said: " + " | ".join(e.strip() for e in out.errors[1:3])
            if len(out.errors) > 1
            else "check the --toolset/--arch you asked for, or repair Visual Studio",
            details=tuple(m.strip() for m in out.messages[:12]),
        )
    if not out.env:
        raise CaptureError(
            "vcvarsall.bat produced no environment (the capture script did not reach `set`)",
            f'run "{vcvarsall}" x64 in cmd.exe to see what it says',
            details=tuple(m.strip() for m in out.messages[:12]),
        )
    if env_key(out.env, "VCToolsInstallDir", True) is None:
        raise CaptureError(
            "vcvarsall.bat ran but set no VCToolsInstallDir: the C++ toolset is not usable",
            "install or repair 'Desktop development with C++' in the Visual Studio Installer",
            details=tuple(m.strip() for m in out.messages[:12]),
        )


def capture_vcvars(
    host: Host, vcvarsall: str, args: tuple[str, ...], base: dict[str, str], timeout: float = CAPTURE_TIMEOUT
) -> tuple[EnvDelta, CaptureOutput]:
    script = capture_script(vcvarsall, args)
    digest = hashlib.sha256(script.encode()).hexdigest()[:12]
    path = host.write_temp(f"envmgr-vcvars-{digest}.cmd", script.encode("utf-8"))
    env = base if vcvarsall.isascii() else {**base, VCVARSALL_VAR: vcvarsall}
    try:
        done = host.run(["cmd.exe", "/d", "/u", "/c", path], timeout=timeout, env=env, encoding=None)
    finally:
        host.remove(path)
    if done.timed_out:
        raise CaptureError(
            f"vcvarsall.bat did not finish within {timeout:.0f} s (killed)",
            "something in it waits for input or hangs; run it by hand in cmd.exe to see where",
        )
    if done.start_error:
        if not host.runs_programs:  # a record: it holds discovery, not vcvars runs
            from envmgr.errors import InputFileError

            raise InputFileError(
                f"{host.name} holds no vcvars capture for {vcvarsall}",
                "a snapshot needs the real machine: run `envmgr export > env.toml` there and use --from env.toml here",
            )
        raise CaptureError(
            f"cmd.exe could not be started: {done.start_error}", "vcvars capture needs Windows (or --wine-prefix)"
        )
    out = parse_capture_output(decode_cmd_output(done.stdout_bytes))
    try:
        check_capture(out, vcvarsall)
    except CaptureError as exc:
        exc.details += _stderr_lines(done.stderr)
        raise
    if out.before is not None:
        return diff("windows", out.before, out.env), out
    after = {k: v for k, v in out.env.items() if k.upper() != VCVARSALL_VAR}
    return diff("windows", base, after), out


def _stderr_lines(stderr: str) -> tuple[str, ...]:
    """cmd /u writes its own complaints ("... is not recognized") to stderr in UTF-16 as well; the
    hosts decode stderr as UTF-8, which leaves a NUL after each ASCII character."""
    text = stderr.replace("\x00", "") if stderr.count("\x00") * 3 > len(stderr) else stderr
    return tuple(f"stderr: {line.strip()}" for line in text.splitlines() if line.strip())[:6]
