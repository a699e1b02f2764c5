"""doctor/verdict.py, the pure rules (issue 36 part 2), and Host.system, the fact the Mac and ARM rules read.

The matches are buildlog's own (a scan of real train logs); the machine facts are hand-made here, one fact changed
per case, because the question is what each fact alone decides."""

from __future__ import annotations

import sys
from dataclasses import replace

import tomlkit

from envmgr.binaries.gpufit import fit
from envmgr.buildlog.scan import scan_path
from envmgr.discover.gpu import container_mark
from envmgr.doctor.verdict import CONFIRMED, CONTRADICTED, UNJUDGED, Check, MachineFacts, judge, kept, no_nvidia
from envmgr.host.live import LiveHost
from envmgr.host.machinefile import machine_document
from envmgr.host.recorded import load_machine
from envmgr.host.recording import RecordingHost
from tests.conftest import CORPUS, MACHINES

CPU_RUN = scan_path(CORPUS / "llama.cpp-load_tensors-offloaded-0-of-29-layers-cpu-mapped-EXCERPT.txt").matches
NO_KERNEL = scan_path(CORPUS / "llama-cpp-python-0.3.9-windows-no-kernel-image-rms_norm-EXCERPT.txt").matches
TORCH_NO_KERNEL = scan_path(CORPUS / "logs/F14/pytorch-cu124-nightly-rtx5090-no-kernel-image.txt").matches
NO_SMI = MachineFacts("m", "linux", "x86_64", gpu_probe="no nvidia-smi", gpu_known=True)


def one(matches, m):
    [v] = judge(matches, m)  # these logs name one id each
    return v


def test_what_no_nvidia_gpu_rests_on():
    assert "macOS" in no_nvidia(MachineFacts("m", "darwin", "arm64"))  # whatever else is known
    assert no_nvidia(NO_SMI).startswith("this machine has no NVIDIA GPU")
    # nvidia-smi failing hides the GPUs it could not list: nothing is said
    assert no_nvidia(MachineFacts("m", "linux", "x86_64", gpu_probe="nvidia-smi failed", gpu_known=False)) == ""
    # an aarch64 board with a toolkit and no nvidia-smi is a Jetson: CUDA without nvidia-smi
    assert no_nvidia(MachineFacts("m", "linux", "aarch64", gpu_known=True, toolkits=("12.6",))) == ""
    assert no_nvidia(MachineFacts("m", "linux", "aarch64", gpu_known=True)).startswith("an aarch64 machine")
    assert no_nvidia(MachineFacts("m", "linux", "x86_64", gpus=(("GPU 0 T4", "7.5"),), gpu_known=True)) == ""
    # a container without nvidia-smi: the host's GPU may not have been passed in (docker run without --gpus, F23)
    assert no_nvidia(MachineFacts("m", "linux", "x86_64", gpu_known=True, container="/.dockerenv")) == ""


def test_the_cpu_family_is_ruled_out_only_without_an_nvidia_gpu():
    assert one(CPU_RUN, NO_SMI).verdict == CONTRADICTED
    assert (
        one(CPU_RUN, MachineFacts("m", "linux", "x86_64", gpus=(("GPU 0", "8.9"),), gpu_known=True)).verdict == UNJUDGED
    )
    assert one(CPU_RUN, MachineFacts("m")).verdict == UNJUDGED  # nothing known: nothing assumed


def test_a_failing_doctor_check_of_the_same_id_confirms_it_a_warning_does_not():
    gpu = MachineFacts("m", gpus=(("GPU 0", "8.9"),), gpu_known=True)
    fail = MachineFacts("m", gpus=gpu.gpus, gpu_known=True, checks=(Check("F18", "fail", "CPU-only build"),))
    warn = MachineFacts("m", gpus=gpu.gpus, gpu_known=True, checks=(Check("F18", "warn", "CPU-only build"),))
    assert one(CPU_RUN, fail).verdict == CONFIRMED and "CPU-only build" in one(CPU_RUN, fail).machine
    assert one(CPU_RUN, warn).verdict == UNJUDGED


def test_no_kernel_image_by_the_device_code_only_for_llama_cpp_pythons_log():
    cubin, ptx = ("sm_75", "sm_90a"), ("compute_90",)
    gtx = MachineFacts("m", fits=(fit(cubin, ptx, "6.1", "GPU 0 GTX 1080"),), device="cubin sm_75")
    t4 = MachineFacts("m", fits=(fit(cubin, ptx, "7.5", "GPU 0 T4"),), device="cubin sm_75")
    assert one(NO_KERNEL, gtx).verdict == CONFIRMED
    assert one(NO_KERNEL, t4).verdict == CONTRADICTED
    # torch's log: the installed llama_cpp's code says nothing about torch's kernels
    [torch] = [m for m in TORCH_NO_KERNEL if m.id == "F14"]
    assert judge([torch], t4)[0].verdict == UNJUDGED


def test_the_driver_against_the_cuda_minimum():
    old = MachineFacts("m", driver="470.82", cuda="12.4")
    new = MachineFacts("m", driver="570.86.15", cuda="12.4")
    [m] = scan_path(CORPUS / "cuda-driver-insufficient-cudaGetDeviceCount-linux-rpg_open_remode-EXCERPT.txt").matches
    assert judge([m], old)[0].verdict == CONFIRMED
    # the log names no CUDA (its details): a driver new enough for the toolkit here rules nothing out, since the
    # program may have been built with another CUDA; with the log's own CUDA, it does
    assert "cuda" not in m.details and judge([m], new)[0].verdict == UNJUDGED
    with_cuda = replace(m, details={**m.details, "cuda": "12.4"})
    assert judge([with_cuda], new)[0].verdict == CONTRADICTED
    assert "meets CUDA 12's minimum" in judge([with_cuda], new)[0].machine


def test_kept_moves_the_decisive_mark_past_a_ruled_out_candidate():
    matches = scan_path(
        CORPUS / "logs/F18/behaviormetrics-385-tensorflow-cannot-dlopen-gpu-libraries-skipping-gpu-EXCERPT.txt"
    ).matches
    assert {m.id for m in matches} >= {"F18", "F23"}
    verdicts = judge(matches, NO_SMI)
    assert kept(matches, verdicts) == ()
    gpu = MachineFacts("m", gpus=(("GPU 0", "8.9"),), gpu_known=True)
    left = kept(matches, judge(matches, gpu))
    assert len(left) == len(matches) and sum(m.decisive for m in left) == 1


# ---- Host.system: what the machine is beyond the path flavour ---------------------------------------------


def test_the_live_host_says_its_os_and_processor():
    import platform

    assert LiveHost().system == (sys.platform, platform.machine())


def test_a_record_answers_from_meta_os_and_machine(tmp_path):
    assert load_machine(str(MACHINES / "linux-two-toolkits.toml")).system is None  # recorded before they were kept
    assert load_machine(str(MACHINES / "verdicts" / "macos-apple-silicon.toml")).system == ("darwin", "arm64")


def test_record_keeps_the_os_and_processor():
    doc = machine_document(RecordingHost(LiveHost()), version="test")
    meta = tomlkit.parse(tomlkit.dumps(doc))["meta"]
    assert (meta["os"], meta["machine"]) == LiveHost().system


def test_a_record_keeps_the_container_mark_it_was_made_in(tmp_path):
    rec = RecordingHost(LiveHost())
    here = container_mark(rec)  # as `envmgr record` asks, through the recording
    path = tmp_path / "rec.toml"
    path.write_text(tomlkit.dumps(machine_document(rec, version="test")), encoding="utf-8")
    assert container_mark(load_machine(str(path))) == here == container_mark(LiveHost())


def test_a_pair_ids_check_confirms_only_the_pair_it_checked():
    [f04] = [
        m
        for m in scan_path(
            CORPUS / "logs/F04/llama.cpp-17547-vs2026-msvc-19.50-cuda-12.8-toolset-cuda-path-broken.txt"
        ).matches
        if m.id == "F04"
    ]
    m = MachineFacts("m", cuda="12.8", msvc="14.50.35717", checks=(Check("F04", "fail", "too new"),))
    assert judge([f04], m)[0].verdict == CONFIRMED
    assert judge([replace(f04, details={"signature": "x"})], m)[0].verdict == UNJUDGED  # names no CUDA
    assert judge([replace(f04, details={**f04.details, "msvc": "14.44"})], m)[0].verdict == UNJUDGED
    f24 = replace(f04, id="F24", details={"component": "curand"})
    missing = MachineFacts("m", checks=(Check("F24", "fail", "CUDA 13.0 has no cudart, cublas, cublasLt"),))
    assert judge([f24], missing)[0].verdict == UNJUDGED
    assert judge([replace(f24, details={"component": "cublas"})], missing)[0].verdict == CONFIRMED
