"""envmgr/commands/install_components.py: `install --fix` for F24 decides, before anything is written, which
NVIDIA wheels go where; here on a toolkit folder assembled from nvidia-* wheels (the layout of this
machine's /usr/local/cuda-13.0, tests/unit/doctor/test_components.py) without cuBLAS. Fetching (pip) is not run."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from envmgr.commands.install_components import ComponentFix, _copies, decide
from envmgr.discover.model import CudaToolkit
from envmgr.doctor.checks import FAIL, OK, Finding
from envmgr.host.live import LiveHost

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a Linux toolkit layout read by the live host")
F24 = (Finding("F24", FAIL, "CUDA 13.0 lacks cublas, cublasLt"),)


def _wheels_kit(root: Path) -> CudaToolkit:
    (root / "lib64").mkdir(parents=True)
    (root / "include").mkdir()
    (root / "lib64" / "libcudart.so.13").write_bytes(b"")
    (root / "include" / "cuda_runtime.h").write_text("")
    return CudaToolkit(
        "13.0.88",
        "13.0",
        str(root),
        str(root / "bin" / "nvcc"),
        (str(root),),
        "version.json",
        (str(root / "bin"),),
        (str(root / "lib64"),),
        (),
        (("nvidia-cuda-nvcc", "13.0.88"),),
    )


def test_decide_lays_the_missing_wheels_into_a_wheels_toolkit(tmp_path):
    kit = _wheels_kit(tmp_path / "cuda-13.0")
    facts = SimpleNamespace(host=LiveHost(), cuda=kit)
    fix = decide(facts, F24, "llama-cpp-python", here=True)
    assert isinstance(fix, ComponentFix) and fix.kind == "wheels"
    assert fix.components == ("cublas", "cublasLt") and fix.requirements == ("nvidia-cublas==13.0.*",)
    assert fix.offer() == (
        f"add --fix to lay nvidia-cublas==13.0.* into {kit.path} (include/, lib64/, dist-info/) (undoable)"
    )


def test_no_fix_without_a_failing_f24_here_for_a_known_recipe(tmp_path):
    facts = SimpleNamespace(host=LiveHost(), cuda=_wheels_kit(tmp_path / "cuda-13.0"))
    assert decide(facts, (Finding("F24", OK, "complete"),), "llama-cpp-python", here=True) is None
    assert decide(facts, F24, "llama-cpp-python", here=False) is None  # --machine: another machine's toolkit
    assert decide(facts, F24, "bitsandbytes", here=True) is None


def test_the_fetched_files_go_to_include_lib_and_dist_info(tmp_path):
    kit = _wheels_kit(tmp_path / "cuda-13.0")
    fix = decide(SimpleNamespace(host=LiveHost(), cuda=kit), F24, "llama-cpp-python", here=True)
    fetched = tmp_path / "fetched"
    for rel in (
        "nvidia/cu13/include/cublas_v2.h",
        "nvidia/cu13/lib/libcublas.so.13",
        "nvidia_cublas-13.0.0.19.dist-info/METADATA",
        "nvidia/cu13/bin/ignored.txt",
    ):
        (fetched / rel).parent.mkdir(parents=True, exist_ok=True)
        (fetched / rel).write_bytes(b"x")
    got = {(c.name, c.dest) for c in _copies(fix, fetched)}
    root = Path(kit.path)
    assert got == {
        ("cublas_v2.h", str(root / "include" / "cublas_v2.h")),
        ("libcublas.so.13", str(root / "lib64" / "libcublas.so.13")),
        ("libcublas.so", str(root / "lib64" / "libcublas.so")),  # what FindCUDAToolkit looks for
        ("METADATA", str(root / "dist-info" / "nvidia_cublas-13.0.0.19.dist-info" / "METADATA")),
    }
