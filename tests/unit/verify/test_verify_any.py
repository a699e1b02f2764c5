"""`envmgr verify PACKAGE` for any distribution: the real child (verify/child_any.py) in a real Python on
packages laid out in a temporary site folder (a dist-info with RECORD, as pip writes it), judged here.

The libraries are the real samples of tests/corpus/devicecode. No GPU on this machine: the verdicts
are the no-GPU ones, and the crash is a real signal.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import CUDA_SO, PLAIN_SO, run_cli, sample_bytes

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="ELF samples and POSIX signals")


def installed(root: Path, name: str, init: str, libs: dict[str, bytes]) -> Path:
    """root/site holding package `name` (module of the same name) and its dist-info."""
    site = root / "site"
    pkg = site / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(init)
    files = [f"{name}/__init__.py"]
    for lib, data in libs.items():
        (pkg / lib).write_bytes(data)
        files.append(f"{name}/{lib}")
    dist = site / f"{name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (dist / "top_level.txt").write_text(name + "\n")
    (dist / "RECORD").write_text("".join(f"{f},,\n" for f in files) + f"{name}-1.0.dist-info/RECORD,,\n")
    return site


def verify(site: Path, name: str):
    out = run_cli("verify", name, "--json", env={"PYTHONPATH": str(site)})
    return out.code, json.loads(out.stdout)


def steps(doc) -> dict:
    return {s["name"]: s for s in doc["steps"]}


def test_cuda_library_without_a_gpu_says_what_it_found_and_why_it_cannot_run(tmp_path):
    site = installed(tmp_path, "cudapkg", "", {"libkern.so": sample_bytes(CUDA_SO)})
    code, doc = verify(site, "cudapkg")
    s = steps(doc)
    assert code == 1 and doc["ok"] is False
    assert s["cuda"]["summary"] == "device code: cubin sm_75 sm_90a; PTX compute_90"
    assert s["gpu"]["failure"] == "F12" and "cannot run on this machine" in s["gpu"]["summary"]


def test_a_library_without_cuda_is_a_cpu_only_build(tmp_path):
    site = installed(tmp_path, "cpupkg", "", {"libplain.so": sample_bytes(PLAIN_SO)})
    code, doc = verify(site, "cpupkg")
    assert code == 1 and steps(doc)["cuda"]["failure"] == "F18"


def test_an_import_that_crashes_is_reported_with_its_signal(tmp_path):
    site = installed(
        tmp_path,
        "crashpkg",
        "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
        {"libkern.so": sample_bytes(CUDA_SO)},
    )
    code, doc = verify(site, "crashpkg")
    failed = [s for s in doc["steps"] if s["status"] == "fail"]
    assert code == 1 and "SIGSEGV" in failed[0]["summary"] and "importing" in failed[0]["summary"]
    assert doc["child"]["exit_code"] == -11


def test_a_library_of_another_platform_does_not_load(tmp_path):
    site = installed(
        tmp_path,
        "winpkg",
        "",
        {"kern.dll": sample_bytes("tiny_cuda-pe-with-nvcc13.0-fatbin.dll"), "libkern.so": sample_bytes(CUDA_SO)[:4096]},
    )
    code, doc = verify(site, "winpkg")
    s = steps(doc)
    # the cut .so is mapped past its end: the loader dies with SIGBUS, and verify names the library
    assert code == 1 and s["load"]["status"] == "fail" and "SIGBUS" in s["load"]["summary"]
    assert any("libkern.so" in e for e in s["load"]["evidence"]) and any(
        "truncated" in e for e in s["load"]["evidence"]
    )


def test_not_installed_and_no_native_code(tmp_path):
    code, doc = verify(tmp_path, "surely-not-installed-pkg")
    assert code == 1 and "is not installed" in doc["steps"][0]["summary"]
    site = installed(tmp_path, "purepkg", "X = 1\n", {})
    code, doc = verify(site, "purepkg")
    assert code == 1 and steps(doc)["native"]["summary"] == "no native libraries: nothing runs on the GPU"


def test_a_windows_dll_on_linux_is_found_but_does_not_load(tmp_path):
    site = installed(tmp_path, "dllpkg", "", {"kern.dll": sample_bytes("tiny_cuda-pe-with-nvcc13.0-fatbin.dll")})
    code, doc = verify(site, "dllpkg")
    s = steps(doc)
    assert code == 1 and s["load"]["status"] == "fail" and s["load"]["summary"] == "1 of 1 native libraries do not load"
    assert any("invalid ELF header" in e for e in s["load"]["evidence"])


def test_system_info_without_backends_cannot_tell_and_is_not_called_cpu_only():
    """stable-diffusion-cpp-python 0.4.7, CUDA build, H100 (bench/results/2026-11-25-issue21-gpu-proof.md):
    sd_get_system_info() lists CPU features only. Before, verify called that wheel (cubin sm_90, native on
    the GPU) F18 'a CPU backend'; whisper.cpp-style info that lists backends without CUDA still is F18."""
    from envmgr.verify.anyjudge import AnyInputs, _smoke
    from envmgr.verify.report import ChildRun

    sd_info = (
        "System Info: \n    SSE3 = 1 |     AVX = 1 |     AVX2 = 1 |     AVX512 = 1 |     AVX512_VBMI = 1 |"
        "     AVX512_VNNI = 1 |     FMA = 1 |     NEON = 0 |     ARM_FMA = 0 |     F16C = 1 |     FP16_VA = 0 |"
        "     WASM_SIMD = 0 |     VSX = 0 | "
    )

    def smoke(info: str):
        rec = {"ok": True, "kind": "system_info", "function": "f", "system_info": info}
        return _smoke(AnyInputs(ChildRun({"smoke": rec}, ("smoke",), "", 0), "p"))

    assert smoke(sd_info).status == "warn" and not smoke(sd_info).failure
    assert smoke("AVX = 1 | CUDA = 0 | COREML = 0 | OPENVINO = 0").failure == "F18"
    assert smoke("CPU : SSE3 = 1 | CUDA : ARCHS = 900 |").status == "ok"
