"""Blocking findings whose fix is another installed toolkit print it as a command to paste (issue 33,
deliverable 6): F13 (a GPU the chosen CUDA dropped) and F17 (a driver too old for it) on the recorded
Linux machine with CUDA 13.0 and 12.4, a TITAN V (sm_70) and driver 570."""

from __future__ import annotations

import json

from envmgr.discover.model import CudaToolkit
from envmgr.doctor.checks_components import component_command
from tests.conftest import MACHINES, run_cli

TWO = str(MACHINES / "linux-two-toolkits.toml")


def test_f13_and_f17_name_the_toolkit_that_fits():
    r = run_cli("--machine", TWO, "doctor", "--only", "F13,F17", "--json")
    found = {f["id"]: f for f in json.loads(r.stdout)["checks"]}
    assert found["F13"]["status"] == "fail" and found["F17"]["status"] == "fail"
    assert found["F13"]["fix_command"] == "envmgr shell --cuda 12.4"
    assert found["F17"]["fix_command"] == "envmgr shell --cuda 12.4"


def test_with_the_toolkit_that_fits_they_pass():
    r = run_cli("--machine", TWO, "doctor", "--only", "F13,F17", "--cuda", "12.4", "--json")
    assert {f["id"]: f["status"] for f in json.loads(r.stdout)["checks"]} == {"F13": "ok", "F17": "ok"}


def _kit(path: str, components=()) -> CudaToolkit:
    return CudaToolkit("13.0.88", "13.0", path, None, (path,), "nvcc --version", (), (), (), components)


def test_f24s_command_for_each_kind_of_toolkit_that_has_one():
    """Pure: the toolkit kinds F24's fix text names (checks_components.fix_for), as one command each."""
    pip = (("nvidia-cuda-nvcc", "13.0.88"),)
    linux = _kit("/home/u/p/.venv/lib/python3.12/site-packages/nvidia/cu13", pip)
    assert (
        component_command(linux, ["cublas", "cublasLt"], False)
        == "/home/u/p/.venv/bin/python -m pip install nvidia-cublas==13.0.*"
    )
    assert (
        component_command(_kit("C:\\p\\.venv\\Lib\\site-packages\\nvidia\\cu13", pip), ["cublas"], True)
        == "C:\\p\\.venv\\Scripts\\python.exe -m pip install nvidia-cublas==13.0.*"
    )
    assert (
        component_command(_kit("/opt/conda/envs/b"), ["cublas"], False) == "conda install -c nvidia libcublas-dev=13.0"
    )
    assert (
        component_command(_kit("/usr/local/cuda-13.0"), ["cudart", "cublas"], False)
        == "sudo apt install cuda-cudart-dev-13-0 libcublas-dev-13-0"
    )
    # NVIDIA's Windows installer has no command line to paste; a wheel-assembled toolkit has install --fix
    windows = _kit("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v13.0")
    assert component_command(windows, ["cublas"], True) == ""
