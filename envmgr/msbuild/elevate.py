"""Re-running only the apply step elevated, on Windows: PowerShell's `Start-Process -Verb RunAs`.

The command line is built by a pure function (tested everywhere); launching it is a few lines that
only run on Windows. The elevated process gets a plan file, never a shell string made from paths.
"""

from __future__ import annotations

import subprocess
import sys

from envmgr.shellkit.ps1 import quote

ERROR_CANCELLED = 1223  # the user said No in the UAC prompt (Win32 ERROR_CANCELLED)


def elevation_argv(python: str, args: list[str]) -> list[str]:
    """powershell argv that runs `python -m envmgr ARGS` elevated, waits, and exits with its code.

    Start-Process joins an -ArgumentList array without quoting, so the arguments go as one string
    quoted the way the C runtime parses it (list2cmdline). A declined UAC prompt exits 1223.
    """
    cmdline = subprocess.list2cmdline(["-m", "envmgr", *args])
    script = (
        f"try {{ $p = Start-Process -FilePath {quote(python)} -ArgumentList {quote(cmdline)} "
        f"-Verb RunAs -Wait -PassThru -WindowStyle Hidden -ErrorAction Stop; exit $p.ExitCode }} "
        f"catch {{ exit {ERROR_CANCELLED} }}"
    )
    return ["powershell.exe", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command", script]


def run_elevated(args: list[str]) -> int:  # pragma: no cover - needs Windows and a person at the UAC prompt
    return subprocess.run(elevation_argv(sys.executable, args)).returncode
