from __future__ import annotations

import os
import subprocess
import venv
from pathlib import Path

import pytest

from tests.conftest import need

CUDA_13_0 = Path("/usr/local/cuda-13.0")
PIP_CUDA_13_2 = (
    "nvidia-cuda-nvcc==13.2.*",
    "nvidia-nvvm==13.2.*",
    "nvidia-cuda-crt==13.2.*",
    "nvidia-cuda-runtime==13.2.*",
    "nvidia-cuda-cccl==13.2.*",
)


@pytest.fixture(scope="session")
def cuda_13_0() -> Path:
    need((CUDA_13_0 / "bin" / "nvcc").exists(), f"{CUDA_13_0}/bin/nvcc is not installed")
    return CUDA_13_0


@pytest.fixture(scope="session")
def pip_cuda_venv(tmp_path_factory) -> Path:
    """A venv holding NVIDIA's CUDA 13.2 compiler wheels: a second, pip-installed toolkit.

    ENVMGR_TEST_CUDA_VENV reuses an existing one (the test command keeps one in .cache/).
    """
    reuse = os.environ.get("ENVMGR_TEST_CUDA_VENV")
    if reuse and (Path(reuse) / "bin" / "python").exists():
        return Path(reuse)
    where = tmp_path_factory.mktemp("cu132") / "venv"
    venv.EnvBuilder(with_pip=True).create(where)
    py = where / "bin" / "python"
    done = subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", *PIP_CUDA_13_2],
        capture_output=True,
        text=True,
    )
    need(done.returncode == 0, f"pip could not install the CUDA 13.2 wheels: {done.stderr[-400:]}")
    return where
