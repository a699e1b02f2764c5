"""F18 from the runtimes' own words that they went on with the CPU (issue 23), learned from the tools' source.

Each fallback line below is one a tool prints, in the format of the source file named with it (the variable parts
- timestamps, paths, codes - filled in here; said so at each). The logs around them are TRAIN logs of
tests/corpus/logs (their source in their header). No held-out log is read here.
"""

from __future__ import annotations

import pytest

from tests.logtext import decisive, facts, train_text

# train clean logs that show an NVIDIA GPU (ggml's "Device 0: Tesla T4", TensorFlow's "name: Quadro P6000", ggml's
# CUDA0 buffers), one whose reporter says there is none, and one with no GPU in it at all (a CPU library's build)
WITH_GPU = "logs/clean/b-llama-cpp-python-make-cublas-tesla-t4-found-device-EXCERPT.txt"
TF_GPU = "logs/clean/b-tensorflow-2.x-opened-libcuda-found-quadro-p6000.txt"
CUDA0 = "logs/clean/b-koboldcpp-1.78-offloaded-41-of-41-cuda0.txt"
NO_GPU_SAID = "logs/clean/b-neuralrgbd-no-gpu-cpu-torch-script-assumes-cuda.txt"
NO_GPU_SHOWN = "logs/clean/onednn-506-ubuntu18.10-make-j-cc1plus-killed-EXCERPT.txt"

# (the line, where its words come from)
FALLBACKS = [
    # https://github.com/tensorflow/tensorflow (third_party/xla/xla/tsl/cuda/cudart_stub.cc, TF 2.14+)
    (
        "2024-08-13 17:30:13.544738: I external/local_xla/xla/tsl/cuda/cudart_stub.cc:32] Could not find cuda drivers "
        "on your machine, GPU will not be used.",
        "tf-cudart-stub",
    ),
    # https://github.com/tensorflow/tensorflow (stream_executor/cuda/cuda_driver.cc, TF 1.x-2.x)
    (
        "2022-04-28 03:54:33.746027: W tensorflow/stream_executor/cuda/cuda_driver.cc:269] failed call to cuInit: "
        "UNKNOWN ERROR (303)",
        "tf-cuinit",
    ),
    # https://github.com/jax-ml/jax/blob/main/jax/_src/xla_bridge.py (the older wording of its CPU fallback)
    (
        "WARNING:absl:No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
        "jax-old",
    ),
    # https://github.com/pytorch/pytorch/blob/main/torch/amp/autocast_mode.py
    (
        "/venv/lib/python3.9/site-packages/torch/autocast_mode.py:162: UserWarning: User provided device_type of "
        "'cuda', but CUDA is not available. Disabling",
        "torch-autocast",
    ),
    # https://github.com/pytorch/pytorch (c10/cuda/CUDAFunctions.cpp, raised by torch.cuda's lazy init)
    ("RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.", "torch-driver-init"),
    # https://github.com/pytorch/pytorch/blob/main/torch/amp/grad_scaler.py
    (
        "/venv/lib/python3.10/site-packages/torch/cuda/amp/grad_scaler.py:125: UserWarning: torch.cuda.amp.GradScaler "
        "is enabled, but CUDA is not available.  Disabling.",
        "torch-gradscaler",
    ),
    # https://github.com/pytorch/pytorch/blob/main/torch/serialization.py
    (
        "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If "
        "you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map "
        "your storages to the CPU.",
        "torch-load",
    ),
    # https://github.com/ggml-org/whisper.cpp/blob/master/src/whisper.cpp (its context parameters)
    ("whisper_init_with_params_no_state: use gpu    = 0", "whisper.cpp-use-gpu"),
    # https://github.com/UKPLab/sentence-transformers (sentence_transformers/SentenceTransformer.py)
    ("INFO:sentence_transformers.SentenceTransformer:Use pytorch device_name: cpu", "sentence-transformers"),
    # https://github.com/huggingface/transformers/blob/main/src/transformers/pipelines/base.py
    ("Device set to use cpu", "transformers-pipeline"),
    # https://github.com/Lightning-AI/pytorch-lightning (the trainer's accelerator summary)
    ("GPU available: False, used: False", "lightning"),
    # https://github.com/DLR-RM/stable-baselines3 (common/base_class.py, verbose=1)
    ("Using cpu device", "stable-baselines3"),
    # https://github.com/ultralytics/ultralytics (utils/torch_utils.py select_device)
    (
        "ValueError: Invalid CUDA 'device=0' requested. Use 'device=cpu' or pass valid CUDA device(s) if available, "
        "i.e. 'device=0' or 'device=0,1,2,3' for Multi-GPU.",
        "ultralytics",
    ),
    # https://github.com/deepinsight/insightface (python-package/insightface/model_zoo)
    ("Applied providers: ['CPUExecutionProvider'], with options: {'CPUExecutionProvider': {}}", "insightface"),
    # https://github.com/ollama/ollama (server/routes.go, 0.6+)
    (
        'time=2026-01-04T04:31:12.245-06:00 level=INFO source=routes.go:1648 msg="entering low vram mode" '
        '"total vram"="0 B" threshold="20.0 GiB"',
        "ollama-no-vram",
    ),
    # https://github.com/openai/whisper/blob/main/whisper/transcribe.py
    (
        "/venv/lib/python3.10/site-packages/whisper/transcribe.py:114: UserWarning: FP16 is not supported on CPU; "
        "using FP32 instead",
        "whisper",
    ),
    # https://github.com/vllm-project/vllm/blob/main/vllm/platforms/__init__.py
    ("INFO 07-15 21:27:05 [__init__.py:244] Automatically detected platform cpu.", "vllm-cpu"),
    ("RuntimeError: Failed to infer device type", "vllm-none"),
    # https://github.com/microsoft/onnxruntime (onnxruntime/python/onnxruntime_pybind_state.cc)
    (
        "2022-06-22 14:55:38.7527020 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:552 "
        "onnxruntime::python::CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider. Please "
        "reference https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements to ensure "
        "all dependencies are met.",
        "onnxruntime",
    ),
    # https://github.com/AUTOMATIC1111/stable-diffusion-webui/blob/master/modules/launch_utils.py
    (
        "RuntimeError: Torch is not able to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS variable to "
        "disable this check",
        "webui",
    ),
    # https://github.com/ollama/ollama (llm/memory.go, 0.2-0.5: the estimate that puts no layer on a GPU)
    (
        'time=2024-08-28T18:43:24.392Z level=INFO source=memory.go:309 msg="offload to cpu" layers.requested=-1 '
        'layers.model=33 layers.offload=0 layers.split="" memory.available="[7.3 GiB]"',
        "ollama-estimate",
    ),
]


@pytest.mark.parametrize("line", [f[0] for f in FALLBACKS], ids=[f[1] for f in FALLBACKS])
def test_a_fallback_line_is_f18_where_the_log_shows_a_gpu(line, tmp_path):
    for name in (WITH_GPU, TF_GPU, CUDA0):
        clean = train_text(name)
        assert decisive(clean, tmp_path) == (None, None)
        assert decisive(clean + "\n" + line + "\n", tmp_path) == ("F18", "anchor:cpu-fallback-gpu-expected")


@pytest.mark.parametrize("line", [f[0] for f in FALLBACKS], ids=[f[1] for f in FALLBACKS])
def test_a_fallback_line_is_no_id_on_a_machine_without_a_gpu(line, tmp_path):
    # every CPU-only machine prints these words: without a GPU in the log, or with the reporter saying there is
    # none, they name no cause
    assert facts(line).first("cpu_fallback") is not None
    assert facts(line).first("gpu_seen") is None
    assert decisive(train_text(NO_GPU_SHOWN) + "\n" + line + "\n", tmp_path) == (None, None)
    assert decisive(train_text(NO_GPU_SAID) + "\n" + line + "\n", tmp_path) == (None, None)
    said = train_text(WITH_GPU) + "\nI don't have a GPU on this laptop.\n" + line + "\n"
    assert decisive(said, tmp_path) == (None, None)


def test_a_more_specific_cause_wins_over_the_fallback(tmp_path):
    # onnxruntime's LoadLibrary 126 on its CUDA provider DLL, then "Failed to create CUDAExecutionProvider" (a train
    # F15 log): the DLL that does not load is the cause
    name = "logs/F15/onnxruntime-interleaved-console-loadlibrary-126-cuda11.4.txt"
    text = train_text(name)
    assert facts(text).first("cpu_fallback") is not None
    assert decisive(text, tmp_path)[0] == "F15"
    # the driver too old (torch's own words) with a GPU shown and a fallback line after it: F17, not F18
    older = (
        train_text(TF_GPU) + "\nUserWarning: CUDA initialization: The NVIDIA driver on your system is too old "
        "(found version 11040).\n" + FALLBACKS[3][0] + "\n"
    )
    assert decisive(older, tmp_path)[0] == "F17"


def test_torch_and_the_cuda_error_names_for_no_device(tmp_path):
    # torch (c10/cuda) and the driver API's name for cudaErrorNoDevice: as the runtime's "no CUDA-capable device is
    # detected", F18 wherever the reporter does not say the machine has none
    for line in (
        "RuntimeError: No CUDA GPUs are available",
        "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: Call to cuInit results in "
        "CUDA_ERROR_NO_DEVICE (100)",
    ):
        assert decisive(train_text(NO_GPU_SHOWN) + "\n" + line + "\n", tmp_path) == ("F18", "anchor:no-cuda-device")
        assert decisive(train_text(NO_GPU_SAID) + "\n" + line + "\n", tmp_path) == (None, None)


def test_cuda_start_up_failures_in_jax_and_ollama_words(tmp_path):
    base = train_text(NO_GPU_SHOWN)
    # https://github.com/jax-ml/jax/blob/main/jax/_src/xla_bridge.py warns so only where it sees an NVIDIA GPU
    jax = (
        "WARNING:jax._src.xla_bridge:CUDA backend failed to initialize: FAILED_PRECONDITION: No visible GPU devices. "
        "(Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)"
    )
    assert decisive(base + "\n" + jax + "\n", tmp_path) == ("F18", "anchor:cuda-init-failed")
    # the reason a library's (cuDNN not loaded, or older than JAX was built against) is that component's version,
    # no CUDA start that failed: outside the catalog (issue 36)
    for reason in (
        "Unable to load cuDNN. Is it installed?",
        "Found cuDNN version 8600, but JAX was built against version 8906, which is newer.",
    ):
        other = jax.replace("FAILED_PRECONDITION: No visible GPU devices.", reason)
        assert decisive(base + "\n" + other + "\n", tmp_path) == (None, None)
    # https://github.com/ollama/ollama (discover/gpu_info_nvcuda.c: cuInit's code; 999 is CUDA_ERROR_UNKNOWN)
    ollama = (
        'time=2025-08-30T09:03:23.843-05:00 level=WARN source=gpu.go:605 msg="unknown error initializing cuda '
        'driver library /usr/lib/x86_64-linux-gnu/libcuda.so.575.64.03: cuda driver library init failure: 999"'
    )
    assert decisive(base + "\n" + ollama + "\n", tmp_path) == ("F18", "anchor:cuda-init-failed")
    # code 35 is cudaErrorInsufficientDriver: the driver rule's, not a start-up failure of this kind
    assert facts(ollama.replace("failure: 999", "failure: 35")).first("cuda_init") is None


def test_torch_warning_that_there_may_be_no_gpu_needs_one_shown(tmp_path):
    # c10/cuda/CUDAFunctions.cpp's warning, printed by a CUDA build of torch on every machine without a GPU
    warn = (
        "UserWarning: CUDA initialization: CUDA driver initialization failed, you might not have a CUDA gpu. "
        "(Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)"
    )
    assert decisive(train_text(NO_GPU_SHOWN) + "\n" + warn + "\n", tmp_path) == (None, None)
    assert decisive(train_text(TF_GPU) + "\n" + warn + "\n", tmp_path) == ("F18", "anchor:cpu-fallback-gpu-expected")


def test_llama_cpp_newer_words_for_a_build_without_gpu_offload(tmp_path):
    # https://github.com/ggml-org/llama.cpp/blob/master/common/arg.cpp (for -sm / -mg / -ts on a CPU build)
    line = "warning: llama.cpp was compiled without support for GPU offload. Setting the split mode has no effect."
    assert decisive(train_text(NO_GPU_SHOWN) + "\n" + line + "\n", tmp_path) == ("F18", "anchor:cpu-only")


def test_pip_reusing_a_wheel_of_llama_cpp_python_from_its_cache_while_cuda_is_asked(tmp_path):
    # a train F18 log: CMAKE_ARGS="-DLLAMA_CUBLAS=on" pip install llama-cpp-python --no-cache-dir, cut after the
    # build (no id: nothing in it says the build left CUDA out)
    name = "logs/F18/llama-cpp-python-502-pip-reinstall-0.1.73-then-blas-0-EXCERPT.txt"
    text = train_text(name)
    assert decisive(text, tmp_path) == (None, None)
    # the same install without --no-cache-dir, as pip words a wheel from its wheel cache
    # (https://github.com/pypa/pip/blob/main/src/pip/_internal/operations/prepare.py: "Using cached <file>", no size;
    # the wheel's name made here for that version)
    sdist = "  Downloading llama_cpp_python-0.1.73.tar.gz (1.6 MB)"
    assert sdist in text
    cached = text.replace(sdist, "  Using cached llama_cpp_python-0.1.73-cp310-cp310-linux_x86_64.whl")
    assert decisive(cached, tmp_path) == ("F18", "anchor:cached-wheel-reused")
    # a download from pip's HTTP cache carries its size: a file from an index, not pip's own build
    downloaded = text.replace(sdist, "  Using cached llama_cpp_python-0.1.73-cp310-cp310-linux_x86_64.whl (1.6 MB)")
    assert decisive(downloaded, tmp_path) == (None, None)
    # no CUDA asked: the cached wheel is what was wanted
    plain = cached.replace('CMAKE_ARGS="-DLLAMA_CUBLAS=on" FORCE_CMAKE=1 ', "")
    assert plain != cached
    assert decisive(plain, tmp_path) == (None, None)
