"""`envmgr --wine-prefix P shell --shell cmd`: real cmd.exe started by envmgr sees the snapshot.

Driven through a pseudo-terminal, as a person would type: Wine's cmd reads a piped stdin in one
gulp and runs only its first line, and in a console it wants CR for Enter.
"""

from __future__ import annotations

import sys

import pytest

from tests.conftest import ROOT, Lazy

pexpect = Lazy("pexpect")  # imported by the tests that drive a terminal, when they do
pytestmark = pytest.mark.wine

CUDA = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v13.2"
SNAPSHOT = f"""schema = 1
platform = "windows"

[summary]
cuda = "13.2.86"
cuda_short = "13.2"

[env]
CUDA_PATH = '{CUDA}'
CUDA_PATH_V13_2 = '{CUDA}'
CMAKE_ARGS = "-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=89"

[env.PATH]
prepend = ['{CUDA}\\bin']
"""


def test_cmd_started_by_envmgr_prints_the_snapshots_cuda_path(wine_prefix, tmp_path):
    snap = tmp_path / "env.toml"
    snap.write_text(SNAPSHOT, encoding="utf-8")
    env = {k: v for k, v in wine_prefix.env.items() if not k.startswith(("CUDA", "ENVMGR_"))}
    env.update(PYTHONPATH=str(ROOT), NO_COLOR="1")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "envmgr", "--wine-prefix", str(wine_prefix.path), "shell", "--shell", "cmd", "--from", str(snap)],
        env=env,
        encoding="cp437",
        timeout=60,
        cwd=str(tmp_path),
    )
    child.expect_exact("(envmgr cuda-13.2)")  # the prompt marker
    child.expect(">")
    child.send("echo CP=%CUDA_PATH%\r")
    child.expect(r"CP=(C:\\[^\r\n\x1b]*)")
    assert child.match.group(1) == CUDA
    child.send("echo ARGS=%CMAKE_ARGS%\r")
    child.expect(r"ARGS=(-D[^\r\n\x1b]*)")
    assert child.match.group(1) == "-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=89"
    child.send("echo ACTIVE=%ENVMGR_ACTIVE%\r")
    child.expect(r"ACTIVE=(cuda[^\r\n\x1b]*)")
    assert child.match.group(1) == "cuda-13.2"
    child.send("exit 5\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 5
