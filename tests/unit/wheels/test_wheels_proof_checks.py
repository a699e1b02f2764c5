"""The GPU proof's log checks (tests/gpu/tiny_llama.py) on real output.

GPU_LINES are copied from the proof's run on an H200 (bench/results/2026-11-22-gpu-h200.log.gz);
CPU_LINES from the same script with a CPU-only build of the same sdist on the development VM.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("tiny_llama", ROOT / "tests" / "gpu" / "tiny_llama.py")
tiny_llama = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiny_llama)

TOKENS = [119, 148, 148, 148, 148, 148, 148, 129]
GPU_LINES = """ggml_cuda_init: found 1 CUDA devices (Total VRAM: 143155 MiB):
  Device 0: NVIDIA H200, compute capability 9.0, VMM: yes, VRAM: 143155 MiB
load_tensors: offloading output layer to GPU
load_tensors: offloading 3 repeating layers to GPU
load_tensors: offloaded 5/5 layers to GPU
load_tensors:   CPU_Mapped model buffer size =     0.31 MiB
load_tensors:        CUDA0 model buffer size =    10.32 MiB
"""
CPU_LINES = "sched_reserve:        CPU compute buffer size =     3.00 MiB\nUsing fallback chat format: llama-2\n"


def result(gpu_offload: bool, tokens=TOKENS) -> str:
    return "RESULT " + json.dumps({"version": "0.3.36", "gpu_offload": gpu_offload, "tokens": tokens}) + "\n"


def test_gpu_run_passes():
    res, problems = tiny_llama.check(GPU_LINES + result(True), 8)
    assert problems == []
    assert res["offloaded"] == ["5/5"] and res["device"].startswith("NVIDIA H200")
    assert res["cuda_model_buffer"] == "CUDA0 model buffer size =    10.32 MiB"


def test_cpu_build_fails_with_reasons():
    _, problems = tiny_llama.check(CPU_LINES + result(False), 8)
    assert any("CPU build" in p for p in problems)
    assert any("offloaded" in p for p in problems) and any("ggml_cuda_init" in p for p in problems)


def test_partial_offload_fails():
    text = GPU_LINES.replace("offloaded 5/5", "offloaded 3/5") + result(True)
    assert any("not every layer" in p for p in tiny_llama.check(text, 8)[1])


def test_crash_and_short_generation_fail():
    assert any("no RESULT" in p for p in tiny_llama.check(GPU_LINES, 8)[1])
    assert any("generated 2 tokens" in p for p in tiny_llama.check(GPU_LINES + result(True, [1, 2]), 8)[1])
