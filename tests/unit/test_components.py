"""F24: a toolkit without the CUDA libraries a recipe links (issue 13 item 2), on toolkit folders laid
out like the real ones: NVIDIA's Linux layout, one assembled from nvidia-* wheels (this machine's
/usr/local/cuda-13.0 is one, with no cuBLAS), and the Windows layout."""
from __future__ import annotations

from pathlib import Path

import pytest

from envmgr.discover.model import CudaToolkit
from envmgr.doctor.checks_components import NEEDS, fix_for, install_kind, missing_components
from envmgr.host.live import LiveHost


def _kit(root: Path, libs: list[str], headers: list[str], components=()) -> CudaToolkit:
    (root / "lib64").mkdir(parents=True)
    (root / "include").mkdir()
    for name in libs:
        (root / "lib64" / name).write_bytes(b"")
    for name in headers:
        (root / "include" / name).write_text("")
    return CudaToolkit("13.0.88", "13.0", str(root), str(root / "bin" / "nvcc"), ("/usr/local",), "version.json",
                       (str(root / "bin"),), (str(root / "lib64"),), (), tuple(components))


def test_a_complete_toolkit_has_what_llama_cpp_links(tmp_path):
    kit = _kit(tmp_path / "cuda-12.4", ["libcudart.so.12", "libcublas.so.12", "libcublasLt.so.12"],
               ["cuda_runtime.h", "cublas_v2.h", "cublasLt.h"])
    assert missing_components(LiveHost(), kit, NEEDS["llama-cpp-python"]) == []


def test_cublas_missing_is_named_with_the_fix_per_install_kind(tmp_path):
    kit = _kit(tmp_path / "cuda-13.0", ["libcudart.so.13", "libcudart_static.a"], ["cuda_runtime.h"])
    missing = missing_components(LiveHost(), kit, NEEDS["llama-cpp-python"])
    assert [c for c, _ in missing] == ["cublas", "cublasLt"]
    assert "cublas_v2.h" in missing[0][1]
    assert install_kind(kit) == "nvidia"
    assert fix_for(kit, ["cublas", "cublasLt"], windows=False).startswith("apt install libcublas-dev-13-0")
    assert "cublas_dev_13.0" in fix_for(kit, ["cublas"], windows=True)


@pytest.mark.parametrize("path,components,kind,text", [
    ("/usr/local/cuda-13.0", (("nvidia-cuda-nvcc", "13.0.88"),), "wheels", "nvidia-cublas==13.0.*"),
    ("/venv/lib/python3.11/site-packages/nvidia/cu12", (("nvidia-cuda-nvcc", "12.4.131"),), "pip",
     "pip install nvidia-cublas-cu12==12.4.*"),
    ("/home/u/miniconda3/envs/b", (), "conda", "conda install -c nvidia libcublas-dev="),
])
def test_install_kinds(path, components, kind, text):
    short = "13.0" if "13" in path else "12.4"
    kit = CudaToolkit(short + ".0", short, path, None, (path,), "", (), (), (), components)
    assert install_kind(kit) == kind
    assert text in fix_for(kit, ["cublas"], windows=False)


@pytest.mark.skipif(not Path("/usr/local/cuda-13.0/bin/nvcc").exists(), reason="this machine's toolkit only")
def test_this_machines_toolkit_has_no_cublas():
    from envmgr.discover.cuda import discover_cuda

    kit = next(k for k in discover_cuda(LiveHost()) if k.path == "/usr/local/cuda-13.0")
    assert [c for c, _ in missing_components(LiveHost(), kit, NEEDS["llama-cpp-python"])] == ["cublas", "cublasLt"]
