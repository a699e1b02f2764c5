"""A real Windows CPython (python.org's embeddable build) running envmgr under Wine.

tests/setup/windows-python.sh builds the interpreter in .cache/winpy; each test session gets a fresh,
booted Wine prefix so registry keys and files laid out by one run never leak into the next.
Wine 8 quirks handled here (../shared/facts/windows-python-under-wine.md): python.exe dies when its
stdout or stderr is a regular file, so output always goes through pipes and stdin is /dev/null.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from tests.conftest import ROOT, need
from tests.wine.conftest import WINE64, WinePrefix, new_prefix

VERSION = os.environ.get("ENVMGR_WINPY_VERSION", "3.11")


def windows_path(path: Path | str) -> str:
    """Wine maps Z: to /, so every file of this machine has a Windows name."""
    return "Z:" + str(path).replace("/", "\\")


@dataclass(frozen=True)
class WinPython:
    exe: Path  # the interpreter's python.exe, as a Linux path
    prefix: WinePrefix

    def run(
        self, *args: str, env: dict | None = None, cwd: Path | None = None, timeout: float = 180, utf8_mode: bool = True
    ) -> subprocess.CompletedProcess:
        """python.exe ARGS under Wine; output through pipes, decoded as UTF-8 (python runs -X utf8
        unless utf8_mode is False: then it runs as on a default Windows, ANSI code page and all)."""
        full_env = {**self.prefix.env, "NO_COLOR": "1", "PYTHONPYCACHEPREFIX": "C:\\pycache", **(env or {})}
        mode = ["-X", "utf8"] if utf8_mode else []
        return subprocess.run(
            [str(WINE64), str(self.exe), *mode, *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=full_env,
            cwd=cwd or ROOT,
            timeout=timeout,
            encoding="utf-8",
            errors="replace",
        )

    def envmgr(self, *args: str, env: dict | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
        return self.run("-m", "envmgr", *args, env=env, timeout=timeout)


def build_interpreter(version: str) -> Path:
    done = subprocess.run(
        ["bash", str(ROOT / "tests" / "setup" / "windows-python.sh"), version],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode != 0:
        pytest.fail(f"windows-python.sh {version} failed ({done.returncode}):\n{done.stderr}")
    return Path(done.stdout.strip().splitlines()[-1]) / "python.exe"


@pytest.fixture(scope="session")
def winpy(tmp_path_factory) -> Iterator[WinPython]:
    need(WINE64.exists(), f"{WINE64} is missing: run tests/setup/install-system.sh")
    exe = build_interpreter(VERSION)
    with new_prefix(tmp_path_factory.mktemp("winpy")) as pfx:
        yield WinPython(exe, pfx)
