"""F18 (the run went on with the CPU) in the runtimes' own words, from their source, and the reporter's words
weighed against what the log shows (issue 23, round 9).

The lines are composed from the messages as the runtimes print them: koboldcpp.py's warning when GPU layers are
set and no GPU backend was chosen, PaddlePaddle's GPU build finding no device (platform/init.cc's warning and
base/framework.py's fallback to CPUPlace), ollama's probe of libcuda getting CUDA_ERROR_NO_DEVICE (discover/gpu.go).
A reporter's "it runs on the CPU" is F18 only with a sign that a GPU is there or was asked for, and none that the
GPU took work (layers offloaded, a CUDA model buffer).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.logtext import decisive, facts, train_text

KOBOLD = (
    "Welcome to KoboldCpp - Version 1.75.2\n"
    "WARNING: GPU layers is set, but a GPU backend was not selected! GPU will not be used!\n"
)
PADDLE_INIT = "W1203 09:46:38.052230  8109 init.cc:182] Compiled with WITH_GPU, but no GPU found in runtime.\n"
PADDLE_PLACE = (
    "/opt/venv/lib/python3.10/site-packages/paddle/base/framework.py:688: UserWarning: You are using GPU "
    "version Paddle, but your CUDA device is not set properly. CPU device will be used by default.\n"
    "  warnings.warn(\n"
)
OLLAMA = (
    'time=2024-11-02T10:00:01.000Z level=INFO source=gpu.go:600 msg="no nvidia devices detected by library '
    '/usr/lib/x86_64-linux-gnu/libcuda.so.550.127.08"\n'
)


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        (KOBOLD, "anchor:cpu-only"),
        (PADDLE_INIT, "anchor:no-cuda-device"),
        (PADDLE_PLACE, "anchor:no-cuda-device"),
        (OLLAMA, "anchor:no-cuda-device"),
    ],
)
def test_runtime_words_name_f18(text, rule, tmp_path: Path):
    assert decisive(text, tmp_path) == ("F18", rule)


def test_no_device_is_not_f18_where_the_reporter_has_no_gpu(tmp_path: Path):
    text = "I don't have a GPU on this laptop, so CPU is fine.\n" + PADDLE_PLACE
    assert decisive(text, tmp_path)[0] is None


ASKED = "python run.py --model llama-2-7b.Q4_K_M.gguf\n"
SAID = "The model is only running on CPU, the GPU sits idle.\n"


def test_prose_alone_is_not_f18(tmp_path: Path):
    assert decisive(ASKED + SAID, tmp_path)[0] is None


def test_prose_with_a_gpu_in_the_log_is_f18(tmp_path: Path):
    text = "| 0  NVIDIA GeForce RTX 3060   Off | 00000000:01:00.0  On |\n" + ASKED + SAID
    assert decisive(text, tmp_path) == ("F18", "anchor:cpu-run-said-gpu-asked")


def test_prose_with_layers_asked_is_f18(tmp_path: Path):
    assert decisive("llm = Llama(model_path=p, n_gpu_layers=35)\n" + SAID, tmp_path)[0] == "F18"


@pytest.mark.parametrize(
    "used",
    [
        "llm_load_tensors: offloaded 35/35 layers to GPU\n",
        "llm_load_tensors:      CUDA0 buffer size =  3820.94 MiB\n",
        "load_tensors: layer  12 assigned to device CUDA0\n",
        'time=2025-01-01T00:00:00Z level=INFO source=memory.go:326 msg="offload to cuda" layers.requested=-1 '
        "layers.model=33 layers.offload=33\n",
    ],
)
def test_prose_against_the_gpu_in_use_is_not_f18(used, tmp_path: Path):
    text = "llm = Llama(model_path=p, n_gpu_layers=35)\n" + used + SAID
    assert facts(text).first("ok_gpu_work") is not None
    assert decisive(text, tmp_path)[0] != "F18"


@pytest.mark.parametrize(
    "line",
    [
        "llm_load_tensors: offloaded 0/33 layers to GPU\n",
        "llm_load_tensors:        CPU buffer size =  3820.94 MiB\n",
        "load_tensors: layer  12 assigned to device CPU\n",
    ],
)
def test_cpu_words_are_not_gpu_use(line):
    assert facts(line).first("ok_gpu_work") is None


TRAIN_NO_LAYERS = [
    "logs/F18/llama-cpp-python-1123-cublas-install-no-n_gpu_layers-gpu-slower-prose.txt",
    "logs/F18/llama-cpp-python-576-rtx3060-no-n_gpu_layers-slow-inference-prose.txt",
]


@pytest.mark.parametrize("name", TRAIN_NO_LAYERS)
def test_train_runs_without_a_layer_count(name, tmp_path: Path):
    assert decisive(train_text(name), tmp_path) == ("F18", "anchor:run-without-layers")


TIMINGS = "llama_print_timings:        eval time =      81.91 ms /     2 runs   (   40.95 ms per token)\n"
CALL = 'llm = Llama(model_path="./model.gguf", n_ctx=2048)\n'


@pytest.mark.parametrize(
    "text",
    [
        'CMAKE_ARGS="-DGGML_CUDA=on" pip install llama-cpp-python\n' + TIMINGS,  # CUDA asked of the build
        "| 0  NVIDIA GeForce RTX 3060   Off |\n" + CALL,  # a GPU in the log
        "llm = LlamaCpp(\n    model_path=p,\n    n_ctx=1024)\nGPU: NVIDIA A100\n",  # LangChain's call, over lines
    ],
)
def test_a_run_given_no_layers_is_f18(text, tmp_path: Path):
    assert decisive(text, tmp_path) == ("F18", "anchor:run-without-layers")


@pytest.mark.parametrize(
    "text",
    [
        CALL + TIMINGS,  # no GPU shown nor asked
        "| 0  NVIDIA GeForce RTX 3060   Off |\n" + CALL.replace("n_ctx", "n_gpu_layers=-1, n_ctx"),
        'CMAKE_ARGS="-DGGML_CUDA=on" pip install llama-cpp-python\nllm_load_tensors: offloaded 33/33 layers to GPU\n'
        + TIMINGS,
        "I don't have a GPU, only an NVIDIA A100 in the cluster I cannot use.\n" + CALL,
    ],
)
def test_a_run_with_layers_or_without_a_gpu_is_not(text, tmp_path: Path):
    assert decisive(text, tmp_path)[0] != "F18"


@pytest.mark.parametrize(
    "line",
    [
        # GPT4All's reasons for a model it put on the CPU although a GPU device was chosen (chatllm.cpp, embllm.cpp)
        "[Warning] (Tue Jan 16 10:01:02 2024): GPU loading failed (out of VRAM?)\n",
        "Device: CPU  model or quant has no GPU support\n",
        "embllm WARNING: Did not use GPU: no suitable device\n",
    ],
)
def test_gpt4all_fallback_reasons_are_f18(line, tmp_path: Path):
    assert decisive(line, tmp_path) == ("F18", "anchor:cpu-only")


OLLAMA_SEEN = (
    'time=2025-04-01T16:46:10.000Z level=INFO source=types.go:130 msg="inference compute" id=GPU-1 '
    'library=cuda variant=v12 compute=8.6 driver=12.4 name="NVIDIA GeForce RTX 3090" total="24.0 GiB"\n'
)


@pytest.mark.parametrize(
    "weights",
    [
        'time=2025-04-01T16:46:16.339Z level=INFO source=ggml.go:291 msg="model weights" buffer=CPU size="8.3 GiB"\n',
        'time=2026-02-21T12:07:55.028Z level=INFO source=device.go:245 msg="model weights" device=CPU size="10.1 GiB"\n',
    ],
)
def test_ollama_weights_all_on_the_cpu_beside_a_gpu(weights, tmp_path: Path):
    assert decisive(OLLAMA_SEEN + weights, tmp_path) == ("F18", "anchor:weights-on-cpu-layers-asked")
    assert decisive(weights, tmp_path)[0] is None  # a machine without a GPU prints the same


def test_ollama_weights_on_a_gpu_are_gpu_use():
    line = 'time=2025-10-22T02:17:58Z level=INFO msg="model weights" device=CUDA0 size="18.5 GiB"\n'
    assert facts(OLLAMA_SEEN + line).first("ok_gpu_work") is not None
