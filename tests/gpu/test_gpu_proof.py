"""The GPU tier: runs only where ENVMGR_GPU_TESTS is set (the device machine), from the repo root,
with .device/ prepared by tests/gpu/prepare.sh. Takes about 10 minutes (two CUDA builds)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.gpu
def test_gpu_proof(tmp_path):
    done = subprocess.run(["bash", str(ROOT / "tests" / "gpu" / "gpu_proof.sh"), str(tmp_path)], cwd=ROOT)
    assert done.returncode == 0, (tmp_path / "gpu_proof.log").read_text(errors="replace")[-4000:]
