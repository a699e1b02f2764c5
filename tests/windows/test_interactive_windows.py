"""Windows-only twin of tests/linux/test_interactive.py: PowerShell and cmd started by `envmgr shell`,
driven through a real ConPTY with pywinpty. Runs in .github/workflows/windows.yml."""
from __future__ import annotations

import os
import re
import sys
import time

import pytest

pytestmark = pytest.mark.windows
winpty = pytest.importorskip("winpty") if sys.platform == "win32" else None

SNAPSHOT = """schema = 1
platform = "windows"

[summary]
cuda_short = "12.4"

[env]
CUDA_PATH = 'C:\\envmgr-test\\CUDA\\v12.4'
CMAKE_ARGS = "-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=89"
"""


def drive(argv: list[str], steps: list[tuple[str, str]], tmp_path) -> tuple[str, int]:
    env = {**os.environ, "NO_COLOR": "1", "ENVMGR_CACHE_DIR": str(tmp_path / "cache")}
    proc = winpty.PtyProcess.spawn(argv, env=env, dimensions=(40, 200))
    seen = ""
    for send, expect in steps:
        deadline = time.time() + 60
        if send:
            proc.write(send + "\r\n")
        while not re.search(expect, seen) and time.time() < deadline:
            try:
                seen += proc.read(4096)
            except EOFError:
                break
    proc.write("exit 4\r\n")
    while proc.isalive():
        try:
            seen += proc.read(4096)
        except EOFError:
            break
    proc.wait()
    return seen, proc.exitstatus


@pytest.mark.parametrize("shell,echo", [("powershell", "Write-Output \"CP=$env:CUDA_PATH\""),
                                        ("cmd", "echo CP=%CUDA_PATH%")])
def test_shell_on_windows_has_marker_values_and_exit_code(shell, echo, tmp_path):
    snap = tmp_path / "env.toml"
    snap.write_text(SNAPSHOT, encoding="utf-8")
    argv = [sys.executable, "-m", "envmgr", "shell", "--shell", shell, "--from", str(snap)]
    out, code = drive(argv, [("", r"\(envmgr cuda-12\.4\)"), (echo, r"CP=C:\\envmgr-test\\CUDA\\v12\.4")], tmp_path)
    assert "(envmgr cuda-12.4)" in out
    assert "CP=C:\\envmgr-test\\CUDA\\v12.4" in out
    assert code == 4
