"""The Windows DLL closure after a prebuilt llama-cpp-python install (wheels/closure.py): real mingw-w64 PE
files (tests/unit/binaries/test_dll_pe.py's: ggml-cuda.dll imports cudart64_12.dll, cublas64_12.dll, nvcuda.dll)
laid out in a recorded Windows machine, resolved under llama_cpp's loader (winmode=0, its lib folder
first on PATH); the fix's copies and undo run on real files here."""

from __future__ import annotations

import json

import pytest

from envmgr.host.recorded import load_machine
from envmgr.wheels import closure
from tests.unit.binaries.test_dll_pe import CUDA, LIB, SITE, dlls, layout, machine  # noqa: F401

pytestmark = pytest.mark.posix


def test_cuda_path_set_but_bin_not_on_path_is_missing_and_the_same_major_toolkit_fixes_it(tmp_path, dlls):  # noqa: F811
    host = load_machine(layout(tmp_path, dlls, cuda_path=f"{CUDA}\\v12.4", path=[]))
    found = closure.check(host, "C:\\Python312\\python.exe", LIB)
    assert {n.lower() for n in found.missing} == {"cudart64_12.dll", "cublas64_12.dll"}
    assert "ggml-cuda.dll" in found.checked and not found.driver_missing
    assert any("is not on PATH" in w for w in found.why)
    plan = closure.plan_fix(host, found, {"12.4": (f"{CUDA}\\v12.4\\bin",), "11.8": (f"{CUDA}\\v11.8\\bin",)}, (SITE,))
    assert {(c.name.lower(), c.source) for c in plan.copies} == {
        ("cudart64_12.dll", f"{CUDA}\\v12.4\\bin\\cudart64_12.dll"),
        ("cublas64_12.dll", f"{CUDA}\\v12.4\\bin\\cublas64_12.dll"),
    }
    assert all(c.dest.startswith(LIB + "\\") for c in plan.copies) and plan.unresolved == ()


def test_resolved_through_path_needs_no_fix(tmp_path, dlls):  # noqa: F811
    host = load_machine(layout(tmp_path, dlls, cuda_path=f"{CUDA}\\v12.4", path=[f"{CUDA}\\v12.4\\bin"]))
    found = closure.check(host, "C:\\Python312\\python.exe", LIB)
    assert found.missing == () and "ggml-cuda.dll" in found.checked


def test_only_another_major_found_offers_nvidia_runtime_wheels_or_takes_them_from_site_packages(tmp_path, dlls):  # noqa: F811
    files = {
        f"{LIB}\\llama.dll": "llama.dll",
        f"{LIB}\\ggml-cuda.dll": "ggml-cuda.dll",
        f"{CUDA}\\v11.8\\bin\\cudart64_110.dll": "cudart64_12.dll",
        f"{CUDA}\\v11.8\\lib\\x64\\cudart.lib": "00",
        "C:\\Windows\\System32\\nvcuda.dll": "nvcuda.dll",
    }
    host = load_machine(machine(tmp_path, dlls, cuda_path=f"{CUDA}\\v11.8", path=[], files=files))
    found = closure.check(host, "C:\\Python312\\python.exe", LIB)
    plan = closure.plan_fix(host, found, {"11.8": (f"{CUDA}\\v11.8\\bin",)}, (SITE,))
    assert plan.copies == () and {n.lower() for n in plan.unresolved} == {"cudart64_12.dll", "cublas64_12.dll"}
    assert "pip install nvidia-cublas-cu12, nvidia-cuda-runtime-cu12 into the target Python" in plan.offer
    files.update(
        {
            f"{SITE}\\nvidia\\cuda_runtime\\bin\\cudart64_12.dll": "cudart64_12.dll",
            f"{SITE}\\nvidia\\cublas\\bin\\cublas64_12.dll": "cublas64_12.dll",
        }
    )
    host = load_machine(machine(tmp_path, dlls, cuda_path=f"{CUDA}\\v11.8", path=[], files=files))
    plan = closure.plan_fix(host, closure.check(host, "C:\\Python312\\python.exe", LIB), {}, (SITE,))
    assert {c.source for c in plan.copies} == {
        f"{SITE}\\nvidia\\cuda_runtime\\bin\\cudart64_12.dll",
        f"{SITE}\\nvidia\\cublas\\bin\\cublas64_12.dll",
    }


def test_apply_then_undo_removes_exactly_what_was_added(tmp_path, dlls):  # noqa: F811
    src, lib = tmp_path / "bin", tmp_path / "llama_cpp" / "lib"  # undo removes only from llama_cpp/lib (N18)
    src.mkdir()
    lib.mkdir(parents=True)
    (src / "cudart64_12.dll").write_bytes(dlls["cudart64_12.dll"])
    (src / "cublas64_12.dll").write_bytes(dlls["cublas64_12.dll"])
    (lib / "cublas64_12.dll").write_bytes(b"the user's own")
    plan = closure.FixPlan(
        tuple(closure.Copy(n, str(src / n), str(lib / n)) for n in ("cudart64_12.dll", "cublas64_12.dll")), (), ""
    )
    lines, manifest = closure.apply(plan, tmp_path / "manifests")
    assert lines == [
        f"copied {src / 'cudart64_12.dll'} -> {lib / 'cudart64_12.dll'}",
        f"{lib / 'cublas64_12.dll'} exists already: left as it is",
    ]
    assert (lib / "cudart64_12.dll").read_bytes() == dlls["cudart64_12.dll"]
    assert [x["path"] for x in json.loads(manifest.read_text())["added"]] == [str(lib / "cudart64_12.dll")]
    assert closure.undo(manifest) == [f"removed {lib / 'cudart64_12.dll'}"]
    assert sorted(p.name for p in lib.iterdir()) == ["cublas64_12.dll"]
    assert (lib / "cublas64_12.dll").read_bytes() == b"the user's own"
    assert closure.undo(manifest) == [f"{lib / 'cudart64_12.dll'}: already gone"]
