"""A cause the log's own later lines contradict is not named (issue 23, precision, round 9): judged by what the
cause IS. A run left on the CPU (F18) and the GPU then doing the run's work; a CUDA library named missing and that
library then opened; no CUDA compiler (F07) and CMake then identifying nvcc; a build stopped and the build then
ending in success with nothing failing after it. The contradiction must come AFTER the cause's line: a log that
shows the working state first and then the failure keeps its id. The lines are the tools' own, as pasted in the
threads named beside them."""

from __future__ import annotations

from envmgr.buildlog.facts import build_succeeded, decide
from tests.logtext import decisive, facts

# TensorFlow on Windows without its CUDA 11 runtime (tensorflow/tensorflow#41909, #56976): the probe's warning, then
# TensorFlow finding the GPU (so the missing DLL is no CPU machine's probe)
_TF_MISSING = (
    "2020-07-30 16:17:56.453813: W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load "
    "dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found\n"
    "2020-07-30 16:17:58.751682: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1561] Found device 0 with "
    "properties: \npciBusID: 0000:01:00.0 name: GeForce GTX 1080 Ti computeCapability: 6.1\n"
)
_TF_OPENED = (
    "2020-07-30 16:20:01.000001: I tensorflow/stream_executor/platform/default/dso_loader.cc:44] "
    "Successfully opened dynamic library {dll}\n"
)


def ids(text: str) -> list[str]:
    return [d.id for d in decide(facts(text))]


def test_a_cuda_dll_named_missing_then_opened_is_not_f15():
    assert "F15" in ids(_TF_MISSING)
    assert "F15" not in ids(_TF_MISSING + _TF_OPENED.format(dll="cudart64_110.dll"))
    # another DLL opened says nothing of the missing one (TensorFlow opens nvcuda.dll either way)
    assert "F15" in ids(_TF_MISSING + _TF_OPENED.format(dll="nvcuda.dll"))


def test_a_library_opened_before_it_was_named_missing_contradicts_nothing():
    assert "F15" in ids(_TF_OPENED.format(dll="cudart64_110.dll") + _TF_MISSING)


# TensorFlow 2.14+ on a machine whose driver it cannot load (tsl/cuda/cudart_stub.cc), with the GPU shown by nvidia-smi
_TF_NO_DRIVER = (
    "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |\n"
    "2023-11-02 10:11:12.000001: I tensorflow/tsl/cuda/cudart_stub.cc:28] Could not find cuda drivers "
    "on your machine, GPU will not be used.\n"
)
_TF_GPU_DEVICE = (
    "2023-11-02 10:15:40.000002: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1886] Created "
    "TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:0 with 9604 MB memory) -> device: 0, "
    "name: NVIDIA GeForce RTX 3060, pci bus id: 0000:01:00.0, compute capability: 8.6\n"
)


def test_a_cpu_fallback_then_the_gpu_device_created_is_not_f18():
    assert "F18" in ids(_TF_NO_DRIVER)
    assert "F18" not in ids(_TF_NO_DRIVER + _TF_GPU_DEVICE)
    assert "F18" in ids(_TF_GPU_DEVICE + _TF_NO_DRIVER)  # the GPU first, then the fallback: still F18


# llama.cpp's load log (ggml-org/llama.cpp#3750's wording): layers on the GPU, the last of several lines kept
_OFFLOAD = (
    "llm_load_tensors: offloading 32 repeating layers to GPU\n"
    "llm_load_tensors: offloaded 33/33 layers to GPU\n"
    "llm_load_tensors:      CUDA0 buffer size =  3820.93 MiB\n"
)


def test_gpu_work_keeps_its_last_line():
    fs = facts("llm_load_tensors: offloaded 1/35 layers to GPU\n" + "\n" * 5 + _OFFLOAD)
    assert max(f.line_no for f in fs.facts["ok_gpu_work"]) == 9
    assert facts("llm_load_tensors: offloaded 0/33 layers to GPU\n").first("ok_gpu_work") is None


# CMake's FindCUDA without nvcc on PATH, and CMake's compiler identification of a later configure
_NO_NVCC = "/bin/sh: 1: nvcc: not found\nmake: *** [Makefile:12: kernel.o] Error 127\n"
_NVCC_ID = "-- The CUDA compiler identification is NVIDIA 12.4.131\n-- Detecting CUDA compiler ABI info - done\n"


def test_nvcc_missing_then_identified_by_cmake_is_not_named():
    assert {"F07", "F22"} & set(ids(_NO_NVCC))
    assert not {"F07", "F22"} & set(ids(_NO_NVCC + _NVCC_ID))
    assert {"F07", "F22"} & set(ids(_NVCC_ID + _NO_NVCC))


# nvcc's tool killed (F25) in a pip build of flash-attn, then pip's own success as the log's last word
_KILLED = (
    "      Building wheel for flash-attn (setup.py) ... \n"
    "      nvcc error   : 'cicc' died due to signal 9 (Kill signal)\n"
    "      ninja: build stopped: subcommand failed.\n"
)
_DONE = (
    "Successfully built flash-attn\nInstalling collected packages: flash-attn\n"
    "Successfully installed flash-attn-2.5.8\n"
)


def test_a_build_stop_then_the_build_ending_in_success_is_not_named(tmp_path):
    assert decisive(_KILLED, tmp_path)[0] == "F25"
    assert "F25" not in ids(_KILLED + _DONE)
    # a failure after the success line: the build did not end there
    assert "F25" in ids(_KILLED + _DONE + "ERROR: flash-attn 2.5.8 has requirement torch>=2.1\n")


def test_build_succeeded_reads_msbuild_and_cmake_ends_after_the_line():
    last = list(enumerate(["error MSB3721: nvcc exited", "Build succeeded.", "    0 Warning(s)", "    0 Error(s)"], 1))
    found = build_succeeded(last, 1)
    assert found is not None and found.line_no == 4
    assert build_succeeded(last, 4) is None
    assert build_succeeded([(5, "[100%] Built target ggml"), (6, "collect2: error: ld returned 1")], 1) is None


def test_a_signature_match_then_the_build_ending_in_success_is_not_named(tmp_path):
    # one rule for the signatures' matches as for the facts' (logscan): nvcc's own line for its killed tool
    assert decisive(_KILLED + _DONE, tmp_path) == (None, None)
    assert decisive(_KILLED + _DONE + "ERROR: flash-attn 2.5.8 has requirement torch>=2.1\n", tmp_path)[0] == "F25"
    # the success first and the failure after it: the build stopped there
    assert decisive(_DONE + _KILLED, tmp_path)[0] == "F25"


# llama.cpp's CMake (2024) on the old flag name: a warning, and the build goes on without CUDA (F09's own words in the
# catalog: an old flag can leave a CPU-only build), so pip's success after it contradicts nothing
_OLD_FLAG = (
    "  CMake Warning at vendor/llama.cpp/CMakeLists.txt:104 (message):\n"
    "    LLAMA_CUBLAS is deprecated and will be removed in the future.\n\n"
    "    Use GGML_CUDA instead\n"
)


def test_an_old_flag_left_a_cpu_build_whatever_the_build_ended_in(tmp_path):
    assert decisive(_OLD_FLAG, tmp_path)[0] == "F09"
    assert decisive(_OLD_FLAG + _DONE.replace("flash-attn", "llama-cpp-python"), tmp_path)[0] == "F09"
