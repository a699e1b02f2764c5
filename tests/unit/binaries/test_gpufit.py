"""How a GPU runs device code (binaries/gpufit.py), and `envmgr wheels list` saying it for cached wheels."""

from __future__ import annotations

import json

import pytest

from envmgr.binaries import gpufit
from envmgr.verify.analyze import WARN, Inputs, _device_code
from envmgr.verify.report import parse_run
from envmgr.wheels import store as wheels
from tests.conftest import ROOT, run_cli
from tests.unit.wheels.test_wheels import KEY, fake_wheel

H100, RTX5090, RTX3080, T4 = "9.0", "12.0", "8.6", "7.5"


def test_a_90_virtual_build_runs_through_ptx_jit_on_sm_120():
    """Issue 21, deliverable 4: the official Windows llama-cpp-python wheels are built for 90-virtual."""
    got = gpufit.fit((), ("compute_90",), RTX5090, ptx_isa="9.0", driver="580.88")
    assert got.how == gpufit.PTX_JIT and got.via == "compute_90"
    assert "runs through PTX JIT" in got.detail and "slower first run" in got.detail and "CUDA 13.0" in got.detail


def test_native_cubin_wins_over_ptx_and_minor_versions_are_compatible():
    assert gpufit.fit(("sm_90",), ("compute_90",), H100).how == gpufit.NATIVE
    assert gpufit.fit(("sm_80",), (), RTX3080).via == "sm_80"  # sm_80 cubin runs on 8.6
    assert gpufit.fit(("sm_86",), (), "8.0").how == gpufit.NONE  # not downwards


def test_arch_specific_and_family_targets():
    assert gpufit.fit(("sm_90a",), (), H100).how == gpufit.NATIVE
    assert gpufit.fit(("sm_100a",), (), "10.3").how == gpufit.NONE  # `a`: that one GPU only
    assert gpufit.fit(("sm_100f",), (), "10.3").how == gpufit.NATIVE  # `f`: the family
    assert gpufit.fit((), ("compute_90a",), RTX5090).how == gpufit.NONE


def test_no_code_for_the_gpu_is_f14():
    got = gpufit.fit(("sm_86", "sm_89"), (), T4)
    assert got.how == gpufit.NONE and "F14" in got.detail and "no kernel image" in got.detail


def test_a_driver_too_old_for_the_ptx_cannot_jit_it():
    got = gpufit.fit((), ("compute_90",), RTX5090, ptx_isa="9.0", driver="570.86.10")
    assert got.how == gpufit.NONE and "unsupported toolchain" in got.detail and "570.86.10" in got.detail


@pytest.mark.parametrize(
    "isa,cuda",
    [("9.0", "13.0"), ("9.2", "13.2"), ("8.4", "12.4"), ("8.8", "12.9"), ("7.8", "11.8"), ("6.4", ""), ("x", "")],
)
def test_ptx_isa_to_cuda(isa, cuda):
    assert gpufit.ptx_cuda(isa) == cuda


def test_wheels_list_shows_device_code_and_how_the_recorded_gpu_runs_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVMGR_CACHE_DIR", str(tmp_path / "cache"))
    wheels.store(KEY, fake_wheel(tmp_path / "built"), 1.0, True, "t")  # sm_75 sm_90a + compute_90
    machine = str(ROOT / "tests" / "machines" / "linux-two-toolkits.toml")
    env = {"ENVMGR_CACHE_DIR": str(tmp_path / "cache")}
    out = run_cli("--machine", machine, "wheels", "list", "--json", env=env)
    assert out.code == 0, out.stderr
    [row] = json.loads(out.stdout)["wheels"]
    assert row["device_code"]["cubin"] == ["sm_75", "sm_90a"] and row["device_code"]["ptx"] == ["compute_90"]
    titan, ada = row["runs_here"]  # the record's TITAN V (7.0) and RTX 5880 Ada (8.9)
    assert (titan["compute_capability"], ada["compute_capability"]) == ("7.0", "8.9")
    assert titan["how"] == ada["how"] == "none" and "F14" in ada["detail"]
    text = run_cli("--machine", machine, "wheels", "list", env=env)
    assert "device code: cubin sm_75 sm_90a; PTX compute_90" in text.stdout and "cannot run on sm_89" in text.stdout


def test_llama_verify_says_ptx_jit_for_a_90_virtual_build_on_sm_120():
    """Issue 21, deliverable 4: verify's device_code step for llama-cpp-python (the libraries' own device code,
    which `CUDA : ARCHS = 900` cannot tell apart: real or virtual)."""
    fits = (gpufit.fit((), ("compute_90",), RTX5090, "GPU 0 NVIDIA GeForce RTX 5090 (12.0)", "9.0", "580.88"),)
    step = _device_code(
        Inputs(
            parse_run("", "", 0),
            "python",
            "envmgr install llama-cpp-python",
            fits=fits,
            device_summary="PTX compute_90",
        ),
        [],
    )
    assert step is not None and step.status == WARN and step.name == "device_code"
    assert step.summary.startswith("runs through PTX JIT from compute_90 on GPU 0 NVIDIA GeForce RTX 5090")
