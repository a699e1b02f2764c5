"""The flows judge a failed command's log by the machine (issue 36 part 2). `envmgr install --recipe`: a real pip
wheel of a tiny source folder whose backend prints a real train log (a llama.cpp server that cannot load
libcublas.so.11, F23) and fails; on a recorded machine without an NVIDIA GPU the id is ruled out, with the reason,
on the recorded machine with GPUs it stays. `envmgr run --log`: a real command on this machine."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envmgr.discover.gpu import CONTAINER_MARKS
from tests.conftest import CORPUS, MACHINES
from tests.linux.test_wheels_e2e import ROOT, fake_cuda_project, make_venv

LOG = CORPUS / "llama-server-libcublas.so.11-cannot-open-shared-object-llama.cpp-EXCERPT.txt"  # train, F23
BACKEND = f"""
import sys
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    with open({str(LOG)!r}, encoding="utf-8") as fh:
        sys.stdout.write(fh.read())
    raise SystemExit(1)
"""


def install(base: Path, machine: Path, src: Path, py: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "ENVMGR_CONFIG_DIR": str(base / "config"),
        "ENVMGR_CACHE_DIR": str(base / "cache"),
        "NO_COLOR": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PYTHONPATH": str(ROOT),
        "ENVMGR_WHEEL_INDEX": "",
    }
    env.pop("ENVMGR_MACHINE", None)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "envmgr",
            "--machine",
            str(machine),
            "install",
            "--recipe",
            "fake-cuda",
            "--arch-list",
            "90",
            "--python",
            str(py),
            "--no-index",
            str(src),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "machine, ruled_out",
    [(MACHINES / "verdicts" / "linux-x86-no-gpu.toml", True), (MACHINES / "linux-two-toolkits.toml", False)],
    ids=["no-gpu", "two-gpus"],
)
def test_a_failed_builds_candidates_are_judged_by_the_machine(tmp_path, machine, ruled_out):
    fake_cuda_project(tmp_path)
    src = tmp_path / "failing"
    src.mkdir()
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\n'
        'backend-path = ["."]\n[project]\nname = "failing"\nversion = "0.1"\n'
    )
    (src / "backend.py").write_text(BACKEND)
    r = install(tmp_path, machine, src, make_venv(tmp_path / "venv"))
    assert r.returncode == 1, r.stderr
    assert "envmgr: error: pip wheel failed with exit code 1" in r.stderr
    ruled = f"ruled out by the machine in {machine}: F23: this machine has no NVIDIA GPU (no nvidia-smi"
    assert (ruled in r.stderr) is ruled_out
    assert ("no known failure stands" in r.stderr) is ruled_out
    assert ("F23  libcuda.so.1 / CUDA libraries missing" in r.stderr) is not ruled_out


CPU_RUN = CORPUS / "llama.cpp-load_tensors-offloaded-0-of-29-layers-cpu-mapped-EXCERPT.txt"  # train, F18


@pytest.mark.skipif(sys.platform == "win32", reason="run --log's pty is POSIX here")
def test_run_log_judges_the_log_by_this_machine(tmp_path):
    """`run --log` on this machine: the verdict follows what this machine is (no nvidia-smi: ruled out; in a
    container, whose host may have a GPU it was not given: F18 stands)."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("ENVMGR_")},
        "NO_COLOR": "1",
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "PYTHONPATH": str(ROOT),
    }
    log = tmp_path / "run.log"
    done = subprocess.run(
        [sys.executable, "-m", "envmgr", "run", "--log", str(log), "--", "sh", "-c", f"cat '{CPU_RUN}'; exit 3"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 3, done.stderr
    if shutil.which("nvidia-smi") is None and not any(Path(m).exists() for m in CONTAINER_MARKS):
        assert "ruled out by this machine: F18: this machine has no NVIDIA GPU (no nvidia-smi" in done.stderr
        assert "no known failure stands: this machine rules out every catalog id the log suggests" in done.stderr
    else:  # a GPU machine or a container: F18 stands (confirmed only where doctor's own F18 check fails)
        assert "F18  Built or installed for the GPU but runs on the CPU" in done.stderr
        assert "ruled out by this machine" not in done.stderr
