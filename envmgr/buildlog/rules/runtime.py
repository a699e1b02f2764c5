"""The runtime family: no kernel image for this GPU (F14), no driver or no GPU passed into the container (F23), a
driver too old (F17), a run or build left on the CPU by its own report (F18); and `fallback`, a runtime's own word
that it went on with the CPU (F18), which the registry runs only where no more specific cause was named.
"""

from __future__ import annotations

import re

from envmgr.buildlog.rules.base import Add, Fact, FactRx, Facts, fx
from envmgr.buildlog.rules.common import GPU_WANTED
from envmgr.buildlog.signatures import Signature, line_before, sig, words
from envmgr.catalog import FailureId

IDS: tuple[FailureId, ...] = ("F14", "F17", "F18", "F23")
FALLBACK_IDS: tuple[FailureId, ...] = ("F18",)

FACTS: tuple[FactRx, ...] = (
    # torch in a container or on a host without the NVIDIA driver (F23), a CPU-only torch wheel (F19: the
    # CUDA wheel was wanted), nvcc refusing the host compiler's target (MinGW g++: F06)
    fx("no_driver", r"Found no NVIDIA driver on your system", "Found no NVIDIA driver"),
    fx(
        "no_kernel",
        r"(?i:no kernel image is available)|CUDA_ERROR_NO_BINARY_FOR_GPU|cudaErrorNoKernelImageForDevice|"
        r"with CUDA capability (sm_\d+) is not compatible with the current PyTorch|"
        # the runtime's older word for the same (cudaErrorInvalidDeviceFunction, 8: "(8 vs. 0) invalid device
        # function"): a kernel launched with no image for this GPU's architecture
        # (not HIP's: AMD's runtime words its error the same way)
        r"(?<!HIP error: )(?i:\binvalid device function\b)|cudaErrorInvalidDeviceFunction",
        (
            "kernel image",
            "NO_BINARY_FOR_GPU",
            "NoKernelImage",
            "is not compatible",
            "nvalid device function",
            "INVALID DEVICE FUNCTION",
            "InvalidDeviceFunction",
        ),
    ),
    fx(
        "driver_old",
        r"driver (?:on your system )?is too old(?: \(found version (\d+)\))?|"
        r"CUDA driver version is insufficient|cudaErrorInsufficientDriver|CUDA_ERROR_INSUFFICIENT_DRIVER|"
        # the same by its number, where a CUDA_CHECK macro prints the code alone (ggml's and ctransformers' older
        # "CUDA error 35 at file:line"): 35 is cudaErrorInsufficientDriver in the runtime's enum, and
        # CUDA_ERROR_INSUFFICIENT_DRIVER in the driver's
        r"\bCUDA error:? 35\b(?![.\d])",
        ("too old", "nsufficient", "INSUFFICIENT", "CUDA error"),
    ),
    # the runtimes' own words for a model left on the CPU: nothing offloaded, no VRAM used, no GPU taken
    fx(
        "cpu_only",
        r"(?i:not compiled with GPU offload support)|offloaded 0/\d+ layers|\bBLAS ?= ?0\b|"
        # llama.cpp common/arg.cpp (2024+) for -sm/-mg/-ts given to a build without a GPU backend
        r"compiled without support for GPU offload|"
        r"assigned to device CPU|no usable GPU found|CUDA will be disabled|"
        r"offloading 0 (?:repeating )?layers to GPU|VRAM used:? 0(?:\.0+)? M(?:i)?B\b|"
        r"no compatible GPUs were discovered|gpu[_-]layers option will be ignored|"
        r"\binference compute\b[^\n]*\blibrary=cpu\b|"
        # ollama with only its CPU runner, or no GPU library it can load; onnxruntime's retry on the CPU
        # after its CUDA provider failed to start
        r"\brunners=\[cpu\]|compatible gpu libraries\\?\"? compatible=\[\]|"
        r"Falling back to \['CPUExecutionProvider'\]|"
        # ollama's list of the runners it carries, none of them a GPU one; koboldcpp's --usecublas
        # without its CUDA library; llama.cpp's advice after "not compiled with GPU offload support"
        r"Dynamic LLM libraries \[(?:cpu\w*[ ,]*)+\]|Non-BLAS library will be used|"
        r"information on enabling GPU BLAS support|llama\.cpp was compiled without GPU support|"
        # whisper.cpp's GPU backend probe finding none (a CPU build, or no device it can use)
        r"_init_gpu: no GPU found|"
        # TensorFlow's own word that it goes on without the GPU (after the libraries it could not load)
        r"Skipping registering GPU devices|"
        # ollama (0.1.22+) turning its GPU runners off on a CPU without AVX, older and newer words; LocalAI
        # finding the GPU but only a CPU build of its llama-cpp backend
        r"CPU does not have (?:AVX or AVX2|minimum vector extensions)[^\n]{0,12}?"
        r"(?:disabling GPU support|GPU inference disabled)|GPU device found but no CUDA backend|"
        # koboldcpp (koboldcpp.py) with --gpulayers and no GPU backend chosen (--usecpu, none found)
        r"GPU layers is set, but a GPU backend was not selected|"
        # GPT4All's reasons for a model it loaded on the CPU where a GPU device was chosen
        # (gpt4all-chat chatllm.cpp, embllm.cpp)
        r"GPU loading failed \(out of VRAM\?\)|model or quant has no GPU support|Did not use GPU:",
        (
            "GPU offload",
            "offloaded 0/",
            "BLAS = 0",
            "device CPU",
            "usable GPU",
            "will be disabled",
            "offloading 0 ",
            "VRAM used",
            "compatible GPUs",
            "layers option will be ignored",
            "library=cpu",
            "runners=[cpu]",
            "compatible=[]",
            "Dynamic LLM libraries [",
            "Non-BLAS",
            "GPU BLAS support",
            "compiled without GPU support",
            "no GPU found",
            "Skipping registering GPU",
            "Falling back to ['CPU",
            "BLAS=0",
            "CPU does not have",
            "no CUDA backend",
            "GPU backend was not selected",
            "GPU loading failed",
            "has no GPU support",
            "Did not use GPU",
        ),
    ),
    # CUDA's start-up failing where a driver is there: ggml's and torch's own lines, the runtime's codes, JAX's
    # CUDA plugin (jax/_src/xla_bridge.py warns only where it sees an NVIDIA GPU), ollama's probe of the driver
    # library (ollama discover/gpu_info_nvcuda.c, gpu_info_cudart.c: "<lib> init failure: <code>"; 35 is
    # cudaErrorInsufficientDriver, the driver rule's)
    fx(
        "cuda_init",
        r"failed to initialize CUDA|CUDA initialization: |cudaErrorInitializationError|"
        r"CUDA error:? 3\b[^\n]*initialization error|"
        r"CUDA_ERROR_NOT_INITIALIZED|system not yet initialized|CUDA backend failed to initialize|"
        r"(?:cuda driver library|cudart) init failure: (?!35\b)\d+",
        ("nitializ", "NITIALIZ", "init failure"),
    ),
    # the runtimes' own words that they found no GPU they could use and went on with the CPU (or stopped). Each is
    # printed on every machine without a GPU too, so it counts only where the log shows one was expected
    # (gpu_seen, cuda_asked) and the reporter does not say there is none (no_gpu_said). Where from:
    fx(
        "cpu_fallback",
        # TensorFlow: tsl/cuda/cudart_stub.cc (2.14+, no libcuda), stream_executor/cuda/cuda_driver.cc (cuInit),
        # and its notice on native Windows from 2.11 (no GPU build there)
        r"Could not find cuda drivers on your machine|failed call to cuInit|"
        r"GPU support is not available on native Windows|"
        # JAX: jax/_src/xla_bridge.py, old and new wording of the same fallback
        r"No GPU/TPU found, falling back to CPU|Unable to initialize backend 'cuda'|"
        # torch: torch/amp/autocast_mode.py and grad_scaler.py (CUDA asked, not there), torch/serialization.py
        # (a CUDA tensor loaded without CUDA), c10/cuda (the driver did not start)
        r"(?:device_type of 'cuda'|GradScaler is enabled), but CUDA is not available|"
        r"deserialize object on a CUDA device but torch\.cuda\.is_available\(\) is False|"
        r"CUDA driver initialization failed|"
        # openai-whisper (whisper/transcribe.py); whisper.cpp (src/whisper.cpp: its context's use_gpu)
        r"FP16 is not supported on CPU|\buse gpu +(?:= 0|: false)\b|"
        # the device chosen for the CPU: sentence-transformers (SentenceTransformer.py, older and newer key),
        # transformers' pipelines (pipelines/base.py), Lightning's trainer summary, Stable-Baselines3's base class
        r"\bUse pytorch device(?:_name)?: cpu\b|\bDevice set to use cpu\b|\bGPU available: False\b|"
        r"\bUsing cpu device\b|"
        # YOLOv5 / Ultralytics select_device (utils/torch_utils.py): a CUDA device asked, none there
        r"Invalid CUDA '(?:--)?device[= ][^'\n]*' requested|"
        # InsightFace (model_zoo): the ONNX session it made has only the CPU provider
        r"Applied providers: \['CPUExecutionProvider'\]|"
        # vLLM: vllm/platforms/__init__.py picks the CPU platform, or none (then its device probe fails)
        r"Automatically detected platform cpu|Failed to infer device type|"
        # onnxruntime: onnxruntime_pybind_state.cc when the CUDA provider asked for does not load
        r"Failed to create CUDAExecutionProvider|"
        # stable-diffusion-webui's launch check of torch.cuda.is_available()
        r"Torch is not able to use GPU|"
        # ollama: llm/memory.go's estimate puts no layer on a GPU ("offload to cpu ... layers.offload=0"), and
        # server/routes.go finds no VRAM at all (0.6+)
        r"\blayers\.offload=0\b|\"total vram\"=\"0 B\"|"
        # ollama 0.1.2x-0.1.3x (gpu/cpu_common.go): no AVX, so its GPU runners (built with AVX) are not used
        r"CPU does not have vector extensions|"
        # a runtime's own "falling back to CPU" (llamafile with -ngl and no GPU it can use; the same words in
        # many wrappers), not onnxruntime's provider list (the cpu_only rule's)
        r"(?i:falling back to (?:the )?CPU)(?! *\w*ExecutionProvider)",
        (
            "cuda drivers",
            "cuInit",
            "native Windows",
            "No GPU/TPU",
            "backend 'cuda'",
            "but CUDA is not available",
            "driver initialization failed",
            "FP16 is not supported",
            "platform cpu",
            "infer device type",
            "CUDAExecutionProvider",
            "able to use GPU",
            "layers.offload=0",
            "deserialize object",
            "use gpu",
            "device: cpu",
            "device_name: cpu",
            "use cpu",
            "GPU available: False",
            "cpu device",
            "Invalid CUDA",
            "Applied providers",
            "total vram",
            "CPU does not have",
            "back to CPU",
            "back to cpu",
            "back to the CPU",
        ),
    ),
    # pip reinstalling a wheel it built before from its own wheel cache: pip/_internal/operations/prepare.py logs
    # "Using cached <wheel file>" with no size (a download from its HTTP cache carries "(<size>)"). PyPI has only
    # the sdist of llama-cpp-python, so that wheel was built on this machine, and pip's cache key holds no
    # CMAKE_ARGS: a CUDA flag given now does not rebuild it (the catalog's "pip reused a cached CPU wheel")
    fx("wheel_from_cache", r"Using cached (llama_cpp_python-\d[^\s/()]*\.whl)\b(?![ \t]*\()", "Using cached"),
    # no CUDA device visible to a program that called CUDA, in other words than the runtime's "no CUDA-capable device
    # is detected" (signatures.py): torch's c10/cuda/CUDAFunctions.cpp, the driver API's and runtime's error names
    # (numba, CuPy, TF print them); as that one, F18 unless the reporter says the machine has no GPU
    # (also PaddlePaddle's GPU build finding no device: platform/init.cc's warning and base/framework.py's fallback
    # to CPUPlace; ollama's probe of libcuda getting CUDA_ERROR_NO_DEVICE, discover/gpu.go 0.1.3x-0.5)
    fx(
        "no_device",
        r"No CUDA GPUs are available|CUDA_ERROR_NO_DEVICE|cudaErrorNoDevice|"
        r"Compiled with WITH_GPU, but no GPU found in runtime|"
        r"using GPU version Paddle, but your CUDA device is not set properly|"
        r"no nvidia devices detected by library",
        ("No CUDA GPUs", "NO_DEVICE", "NoDevice", "WITH_GPU", "GPU version Paddle", "nvidia devices detected"),
    ),
    # a Makefile build asked for CUDA (GGML_CUDA=1 make), its build-info lines (I CFLAGS: ...) and any trace of
    # CUDA in what it compiles: asked, printed, and none is a CPU build (the flag did not reach the Makefile)
    fx(
        "cuda_asked_make", r"\b(?:GGML|LLAMA|WHISPER)_(?:CUDA|CUBLAS)=(?:1|ON|on)\b(?![^\n]*-D)", ("_CUDA=", "_CUBLAS=")
    ),
    fx("make_info", r"^I (?:CFLAGS|CXXFLAGS|LDFLAGS):", "I CFLAGS:", re.M),
    # a container started without the GPUs (no --gpus, no NVIDIA runtime), and then CUDA called in it
    fx("docker_no_gpus", r"\bdocker run\b(?![^\n]*(?:--gpus|--runtime[= ]nvidia|nvidia))[^\n]*", "docker run"),
    fx(
        "cuda_call",
        r"\b_check_driver\b|\b_lazy_init\b|_cuda_init\(|\.cuda\(\)",
        ("_check_driver", "_lazy_init", "_cuda_init(", ".cuda()"),
    ),
)


def decide(fs: Facts, add: Add) -> None:
    add("F14", "no-kernel-image", fs.first("no_kernel"))
    add("F23", "no-nvidia-driver", fs.first("no_driver"))
    if not (fs.first("cpu_wheel") or fs.first("driver_old")) and fs.first("cuda_call"):
        add("F23", "container-without-gpus", fs.first("docker_no_gpus"))
    add("F17", "driver-too-old", fs.first("driver_old"))
    add("F18", "cpu-only", _cpu_only(fs))
    asked = fs.first("cuda_asked_make")
    add(
        "F18",
        "cuda-flag-not-in-build",
        asked if asked and fs.first("make_info") and not fs.first("cuda_compiled") else None,
    )
    cached = fs.first("wheel_from_cache")
    if cached and fs.first("cuda_asked"):
        add("F18", "cached-wheel-reused", cached, wheel=cached.value)
    init = fs.first("cuda_init")
    # ggml's start-up probe finding no device is F18 only where the run wanted the GPU (a CPU run probes too)
    if init and "cuda_init" in init.line and "CUDA-capable" in init.line and not fs.first("gpu_wanted"):
        init = None
    # torch's warning that the driver did not start, "you might not have a CUDA gpu": every CPU machine with a
    # CUDA build of torch prints it (the fallback rule counts it where a GPU was expected)
    if init and "might not have a CUDA gpu" in init.line:
        init = None
    # JAX's reason after "CUDA backend failed to initialize:" that names a library found at another version than
    # JAX was built against, or one it could not load (cuDNN, the CUDA runtime's pip packages): a component's
    # version, not a CUDA start that failed (issue 36: jax/_src/xla_bridge.py, jax_plugins/cuda)
    if init and _JAX_COMPONENT.search(init.line):
        init = None
    add("F18", "cuda-init-failed", init)


_JAX_COMPONENT = re.compile(
    r"CUDA backend failed to initialize: (?:Found \w+ version \d+, but JAX was built against|Unable to load \w+\.|"
    r"Unable to use CUDA because of the following issues with CUDA components)"
)


# the cpu_only words a runtime prints on every machine without a GPU it can use, at start-up, whatever was asked:
# its capability line (BLAS = 0), its probe finding no device, its list of runners or libraries with no GPU one
_PROBE_ONLY = re.compile(r"\bBLAS ?= ?0\b|_init_gpu: no GPU found|\blibrary=cpu\b")


# a GPU there or asked for: its name or device, a layer count, CUDA asked of the build, the reporter's word that the
# run stayed on the CPU, the driver's CUDA version
_EXPECTED = ("gpu_seen", "gpu_wanted", "cuda_asked", "cuda_asked_make", "layers_asked", "cpu_run_said", "driver_cuda")


def _cpu_only(fs: Facts) -> Fact | None:
    """A runtime's words for a model left on the CPU; a start-up probe's (`_PROBE_ONLY`) only where the log shows a
    GPU there or asked for (a CPU machine prints them too: issue 36, an Intel Arc, a Xeon server, each a CPU run)."""
    found = fs.first("cpu_only")
    if found is None or not _PROBE_ONLY.search(found.line):
        return found
    expected = any(fs.first(k) for k in _EXPECTED)
    return found if expected else None


# causes that explain a run left on the CPU: no kernel for the GPU, a DLL or library that does not load, the driver
# too old, a CPU build of the package, no driver or no GPU passed into the container (the registry's `yields_to`)
EXPLAIN_CPU: frozenset[FailureId] = frozenset({"F14", "F15", "F17", "F19", "F23"})


def no_gpu_said(fs: Facts) -> bool:
    """The reporter or the runtime saying there is no GPU: a CPU-only machine prints the fallback's words too."""
    return fs.first("no_gpu_said") is not None


def fallback(fs: Facts, add: Add) -> None:
    """A runtime's own word that it went on with the CPU is F18 where the log shows a GPU was expected and
    nothing more specific explains it (the registry: after every family, not where EXPLAIN_CPU's ids were named or
    `no_gpu_said`)."""
    add("F18", "no-cuda-device", fs.first("no_device"))
    if fs.first("gpu_seen") or fs.first("cuda_asked"):
        add("F18", "cpu-fallback-gpu-expected", fs.first("cpu_fallback"))
    # the reporter's words count only with a sign in the log that a GPU is there or was asked for, and none that it
    # took work (not where the build's own flags show ggml's CUDA compiled in: the reporter's words then do not tell
    # the cause; a bare "nvcc" is no such sign, reporters paste `nvcc --version` to show their toolkit)
    compiled = fs.first("cuda_compiled")
    asked = any(fs.first(k) for k in ("layers_asked", "gpu_wanted", "cuda_asked", "gpu_seen"))
    if asked and not fs.first("ok_gpu_work") and (compiled is None or compiled.value == "nvcc"):
        add("F18", "cpu-run-said-gpu-asked", fs.first("cpu_run_said"))


# ---------------------------------------------------------------- signatures: the tools' own sentences

_DRIVER_REASON = re.compile(r"(?i)driver|insufficient")


_GPU_WANTED = re.compile(GPU_WANTED)


def _gpu_wanted(m: re.Match[str]) -> bool:
    """The lines that came with a ggml CUDA probe ask for GPU work (the window the match was found in)."""
    return _GPU_WANTED.search(m.string) is not None


SIGNATURES: tuple[Signature, ...] = (
    # F14 / F17: run time.
    sig(
        "F14",
        "no-kernel-image",
        words("no kernel image is available for execution on the device"),
        needle="kernel image",
    ),
    sig(
        "F17",
        "driver-insufficient",
        words("CUDA driver version is insufficient for CUDA runtime version"),
        needle="is insufficient",
    ),
    sig(
        "F17",
        "driver-combination",
        words("unsupported display driver / cuda driver combination"),
        needle="unsupported",
        key="display",
    ),
    sig(
        "F17",
        "ptx-toolchain",
        words("the provided PTX was compiled with an unsupported toolchain"),
        needle="unsupported",
        key="PTX",
    ),
    # ggml's CUDA init names the runtime's reason: a driver one is F17; any other (no device, an initialization
    # error) leaves ggml on the CPU, F18 (train logs: a cortex.cpp run, an ollama run on purpose without GPUs).
    sig(
        "F17",
        "ggml-init-failed",
        r"ggml_cuda_init: failed to initialize CUDA: (?P<reason>[^\n]*)",
        needle="ggml_cuda_init",
        check=lambda m: _DRIVER_REASON.search(m.group("reason")) is not None,
    ),
    # ggml probes CUDA at every start and goes on with the CPU: the probe failing is F18 where the run wanted the GPU
    # (layers to offload, a CUDA allocation that then failed), not in a run meant for the CPU (a clean train log)
    sig(
        "F18",
        "ggml-init-failed-cpu",
        r"ggml_cuda_init: failed to initialize CUDA: (?P<reason>[^\n]*)",
        needle="ggml_cuda_init",
        check=lambda m: _DRIVER_REASON.search(m.group("reason")) is None and _gpu_wanted(m),
    ),
    # A torch extension's CUDA op called with CUDA tensors from a build made without CUDA (detectron2's and
    # torchvision's AT_ERROR "Not compiled with GPU support (<op> at <file>:<line>)"): a CPU-only build
    sig(
        "F18",
        "op-not-compiled-with-gpu",
        r"Not compiled with GPU support \((?P<op>\w+) at ",
        needle="Not compiled with GPU support",
    ),
    # cudaErrorNoDevice: the runtime sees no GPU (none there, none passed into the container, hidden): the program
    # runs on the CPU or stops; the driver is not too old (that is cudaErrorInsufficientDriver, F17).
    sig(
        "F18",
        "no-device",
        words("no CUDA-capable device is detected"),
        needle="CUDA-capable",
        check=lambda m: "ggml_cuda_init" not in line_before(m) or _gpu_wanted(m),
    ),
)
