"""A Visual Studio 2022 Community tree (tests/wine/vsfake: HAND-MADE vcvarsall.bat and state.json, see
their headers), a Windows SDK and its registry key, laid out in a Wine prefix.

Used by the Wine tests and by tests/run-win32.sh, which gives the Windows-CPython tier a machine shaped
like a GitHub Windows runner (Visual Studio with C++ tools, a Windows SDK) before its tests start:
    python -m tests.wine.layout PREFIX
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Callable

FAKE = Path(__file__).parent / "vsfake"
VS = "C:\\Program Files\\Microsoft Visual Studio\\2022\\Community"
DEFAULT_TOOLSET, OLDER_TOOLSET = "14.44.35207", "14.39.33519"
INSTANCE_ID = "a1b2c3d4"
KITS = "C:\\Program Files (x86)\\Windows Kits\\10\\"
SDK_KEY = "HKLM\\SOFTWARE\\Microsoft\\Microsoft SDKs\\Windows\\v10.0"
SDK = "10.0.22621.0"
INSTANCES = "C:\\ProgramData\\Microsoft\\VisualStudio\\Packages\\_Instances"


def unix(drive_c: Path, windows_path: str) -> Path:
    assert windows_path[:3].upper() == "C:\\", windows_path
    return drive_c.joinpath(*windows_path[3:].split("\\"))


def lay_out_vs(drive_c: Path, root: str) -> None:
    """VC\\Tools\\MSVC with two toolsets, the default-version file and the fake vcvarsall.bat (CRLF,
    as Microsoft ships it)."""
    base = unix(drive_c, root)
    for version in (DEFAULT_TOOLSET, OLDER_TOOLSET):
        tools = base / "VC" / "Tools" / "MSVC" / version
        for sub in ("bin/Hostx64/x64", "include", "ATLMFC/include", "lib/x64"):
            (tools / sub).mkdir(parents=True, exist_ok=True)
        (tools / "bin" / "Hostx64" / "x64" / "cl.exe").write_bytes(b"")
    build = base / "VC" / "Auxiliary" / "Build"
    build.mkdir(parents=True, exist_ok=True)
    (build / "Microsoft.VCToolsVersion.default.txt").write_bytes(DEFAULT_TOOLSET.encode() + b"\r\n")
    text = (FAKE / "vcvarsall.bat").read_bytes().replace(b"\r\n", b"\n")
    assert text.isascii()
    (build / "vcvarsall.bat").write_bytes(text.replace(b"\n", b"\r\n"))


def lay_out_instance(drive_c: Path) -> None:
    """The installer's record of the VS instance (read when vswhere.exe is absent)."""
    instance = unix(drive_c, INSTANCES) / INSTANCE_ID
    instance.mkdir(parents=True, exist_ok=True)
    shutil.copy2(FAKE / "state.json", instance / "state.json")


def lay_out_sdk(drive_c: Path, reg: Callable[..., object]) -> None:
    um = unix(drive_c, KITS + "Include\\" + SDK + "\\um")
    um.mkdir(parents=True, exist_ok=True)
    (um / "winsdkver.h").write_bytes(b"")
    (um / "windows.h").write_bytes(b"")
    reg("add", SDK_KEY, "/v", "InstallationFolder", "/t", "REG_SZ", "/d", KITS, "/f")


def lay_out_runner_like(drive_c: Path, reg: Callable[..., object]) -> None:
    lay_out_vs(drive_c, VS)
    lay_out_instance(drive_c)
    lay_out_sdk(drive_c, reg)


def main(prefix: str) -> int:
    import os
    import subprocess

    env = {**os.environ, "WINEPREFIX": prefix, "WINEDEBUG": "-all"}

    def reg(*args: str) -> None:
        subprocess.run(
            ["/usr/lib/wine/wine64", "reg", *args],
            env=env,
            check=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            timeout=120,
        )

    lay_out_runner_like(Path(prefix) / "drive_c", reg)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
