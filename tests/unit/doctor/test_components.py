"""F24: a toolkit without the CUDA libraries a recipe links (issue 13 item 2), on toolkit folders laid
out like the real ones: NVIDIA's Linux layout, one assembled from nvidia-* wheels (this machine's
/usr/local/cuda-13.0 is one, with no cuBLAS), and the Windows layout."""

from __future__ import annotations

import sys
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
    return CudaToolkit(
        "13.0.88",
        "13.0",
        str(root),
        str(root / "bin" / "nvcc"),
        ("/usr/local",),
        "version.json",
        (str(root / "bin"),),
        (str(root / "lib64"),),
        (),
        tuple(components),
    )


# The live host reads these folders with its own platform's layout: on Windows it looks for .lib files.
linux_layout = pytest.mark.skipif(
    sys.platform == "win32",
    reason="a Linux toolkit layout read by the live host, "
    "whose platform is Windows here (the Windows layout is tested below)",
)


@linux_layout
def test_a_complete_toolkit_has_what_llama_cpp_links(tmp_path):
    kit = _kit(
        tmp_path / "cuda-12.4",
        ["libcudart.so.12", "libcublas.so.12", "libcublasLt.so.12"],
        ["cuda_runtime.h", "cublas_v2.h", "cublasLt.h"],
    )
    assert missing_components(LiveHost(), kit, NEEDS["llama-cpp-python"]) == []


@linux_layout
def test_cublas_missing_is_named_with_the_fix_per_install_kind(tmp_path):
    kit = _kit(tmp_path / "cuda-13.0", ["libcudart.so.13", "libcudart_static.a"], ["cuda_runtime.h"])
    missing = missing_components(LiveHost(), kit, NEEDS["llama-cpp-python"])
    assert [c for c, _ in missing] == ["cublas", "cublasLt"]
    assert "cublas_v2.h" in missing[0][1]
    assert install_kind(kit) == "nvidia"
    assert fix_for(kit, ["cublas", "cublasLt"], windows=False).startswith("apt install libcublas-dev-13-0")
    assert "cublas_dev_13.0" in fix_for(kit, ["cublas"], windows=True)


@pytest.mark.parametrize(
    "path,components,kind,text",
    [
        ("/usr/local/cuda-13.0", (("nvidia-cuda-nvcc", "13.0.88"),), "wheels", "nvidia-cublas==13.0.*"),
        (
            "/venv/lib/python3.11/site-packages/nvidia/cu12",
            (("nvidia-cuda-nvcc", "12.4.131"),),
            "pip",
            "pip install nvidia-cublas-cu12==12.4.*",
        ),
        ("/home/u/miniconda3/envs/b", (), "conda", "conda install -c nvidia libcublas-dev="),
    ],
)
def test_install_kinds(path, components, kind, text):
    short = "13.0" if "13" in path else "12.4"
    kit = CudaToolkit(short + ".0", short, path, None, (path,), "", (), (), (), components)
    assert install_kind(kit) == kind
    assert text in fix_for(kit, ["cublas"], windows=False)


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or not Path("/usr/local/cuda-13.0/bin/nvcc").exists(),
    reason="this Linux machine's toolkit only",
)
def test_this_machines_toolkit_has_no_cublas():
    from envmgr.discover.cuda import discover_cuda

    kit = next(k for k in discover_cuda(LiveHost()) if k.path == "/usr/local/cuda-13.0")
    assert [c for c, _ in missing_components(LiveHost(), kit, NEEDS["llama-cpp-python"])] == ["cublas", "cublasLt"]


@pytest.mark.skipif(
    sys.platform != "win32",
    reason="the Windows layout read by the live Windows host: runs in "
    "the Windows-CPython tier (tests/run-win32.sh) and on the Windows runners",
)
def test_windows_layout_names_the_missing_import_libraries(tmp_path):
    # As NVIDIA's installer lays out CUDA 12.x without the cuBLAS component: lib\x64\*.lib, include\*.h.
    root = tmp_path / "CUDA" / "v12.4"
    (root / "lib" / "x64").mkdir(parents=True)
    (root / "include").mkdir()
    for name in ("cudart.lib", "cudart_static.lib"):
        (root / "lib" / "x64" / name).write_bytes(b"")
    (root / "include" / "cuda_runtime.h").write_text("")
    kit = CudaToolkit(
        "12.4.131",
        "12.4",
        str(root),
        str(root / "bin" / "nvcc.exe"),
        ("registry v12.4",),
        "nvcc",
        (str(root / "bin"),),
        (str(root / "lib" / "x64"),),
        (),
        (),
    )
    missing = missing_components(LiveHost(), kit, NEEDS["llama-cpp-python"])
    assert [c for c, _ in missing] == ["cublas", "cublasLt"]
    assert "cublas.lib" in missing[0][1] and "cublas_v2.h" in missing[0][1]
    for name in ("cublas.lib", "cublasLt.lib"):
        (root / "lib" / "x64" / name).write_bytes(b"")
    for name in ("cublas_v2.h", "cublasLt.h"):
        (root / "include" / name).write_text("")
    assert missing_components(LiveHost(), kit, NEEDS["llama-cpp-python"]) == []
