"""The DLL closure fix under the real Windows loader: Windows CPython (under Wine) with NVIDIA's real DLLs
(tests/setup/fetch-dll-oracle.sh). A llama_cpp\\lib whose llama.dll is ctransformers 0.2.27's MSVC-built CUDA
DLL (it imports cudart64_12.dll and cublas64_12.dll, as a CUDA llama.dll does); CUDA_PATH names a CUDA 12.9
folder that is not on PATH, the published-wheel situation. llama_cpp's loader (tests/winpy/dll_probe.py:
PATH prepend, add_dll_directory, winmode=0) fails; envmgr's closure finds the two DLLs missing, copies them
(and cublasLt64_12.dll) from the toolkit's bin into llama_cpp\\lib; the same loader then loads the DLL and
NVIDIA's cudart answers 12090; undo removes the copies and the load fails again."""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT
from tests.winpy.conftest import windows_path
from tests.winpy.test_dll_oracle import CT, Config, dlls, loader_verdict, put, where  # noqa: F401

pytestmark = [pytest.mark.wine, pytest.mark.winpy]
SCRIPT = ROOT / "tests" / "winpy" / "closure_fix.py"


def run_fix(winpy, *args: str, env: dict | None = None) -> dict:
    done = winpy.run(windows_path(SCRIPT), *args, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_missing_cuda_dlls_are_copied_into_llama_cpp_lib_and_the_real_loader_then_loads(winpy, dlls, tmp_path):  # noqa: F811
    lib = dlls["odd"] / "closure" / "llama_cpp" / "lib"
    for stale in lib.glob("*.dll") if lib.is_dir() else ():
        stale.unlink()
    put(lib / "llama.dll", (dlls["base"] / CT).read_bytes())
    cfg = Config("closure", "llama_cpp", dll="odd:closure/llama_cpp/lib/llama.dll", cuda_path="cuda-12.9")
    before = loader_verdict(winpy, dlls, cfg)
    assert before["loads"] is False and before["missing"] == ["cublas64_12.dll", "cudart64_12.dll"]

    bin_dir = where(dlls, "cuda-12.9/bin")
    out = run_fix(
        winpy,
        windows_path(lib),
        bin_dir,
        windows_path(tmp_path / "manifests"),
        env={"CUDA_PATH": where(dlls, "cuda-12.9")},
    )
    assert out["checked"] == ["llama.dll"] and out["missing"] == ["cublas64_12.dll", "cudart64_12.dll"]
    assert any("is not on PATH" in w for w in out["why"])
    assert sorted(c[0] for c in out["copies"]) == ["cublas64_12.dll", "cublaslt64_12.dll", "cudart64_12.dll"]
    assert len(out["applied"]) == 3 and all(x.startswith("copied ") for x in out["applied"])

    after = loader_verdict(winpy, dlls, cfg)
    assert after == {"loads": True, "missing": [], "unloadable": []}  # cudart 12090 checked inside

    undo = run_fix(winpy, "", "", "", windows_path(tmp_path / "manifests" / out["manifest"].split("\\")[-1]))
    assert len(undo["undo"]) == 3 and all(x.startswith("removed ") for x in undo["undo"])
    assert loader_verdict(winpy, dlls, cfg)["loads"] is False
