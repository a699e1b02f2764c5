"""The facts several families read, and the scan too: where the log comes from (Windows, Linux), whether a GPU is
there, wanted or said to be absent, whether CUDA is compiled, whether the build failed or was said slow, what works
after a cause (`contradicted`'s ok_* kinds), and a stop outside the catalog. No decision of its own.
"""

from __future__ import annotations

import re

from envmgr.buildlog.rules.base import FactRx, fx
from envmgr.buildlog.unnamed import OUTSIDE_NEEDLES, OUTSIDE_PATTERN

# hours, half an hour or more, or the reporter's "a long time", "stuck", "never finishes": in digits ("1.5 hours",
# "6h", "45 min"), in words ("for hours", "half an hour", "overnight", "a whole day", "two days"), and in the languages
# reporters write (zh/ja 小时/時間 after a number or 几/数, ru час/часов, de Stunden, die ganze Nacht); "days ago" is
# when something last worked, no duration
_LONG = (
    r"(?:\b\d+(?:\.\d+)?\s*\+?\s*(?:hours?|hrs?|h)\b|\b(?:[3-9]\d|\d{3})\s*\+?\s*(?:minutes?|mins?)\b|"
    r"\b(?:an|one|half an|for|many|several|few) hours?\b|\b(?:overnight|all night|for days|"
    r"(?:a |one )?(?:whole|entire|full) day|(?:\d+|two|three|several|few) days)\b(?! ago)|"
    r"long time|stuck|never finish\w*|forever|"
    r"\b(?:tak(?:e|es|ing|en)|took)\s+(?:way\s+)?(?:too|so|very|extremely|really)\s+long\b|"
    r"[几幾数數多两兩\d]\s*个?\s*(?:小时|小時|時間)|一(?:个)?晚上|一整天|好几天|"
    r"\d+\s*(?:час\w*|Stunden?)\b|несколько час\w*|stundenlang|die ganze Nacht)"
)
# a build, job or CI run said to time out (the build's own timeout: a read, connection or socket timeout is the
# network's, and a setting's name, timeout: / timeout= / timeout-minutes, reports none)
_SENTENCE = r"(?:(?!\.\s+(?-i:[A-Z]))[^\n]){0,80}?"  # up to 80 characters of one line that end no sentence
_TIMES_OUT = (
    r"\b(?:builds?|compil\w*|CI|jobs?)\b"
    + _SENTENCE
    + r"(?<!read )(?<!connect )(?<!connection )(?<!socket )(?<!operation )"
    r"\b(?:time ?outs?\b(?![-=:]| [=:]|error)|timing out\b|timed out\b)"
)


# what takes long: a build, compile, wheel, CMake/Ninja/setup.py run or CI (also in zh/ja/ru/de), or the install of
# a package whose install is a CUDA compile (no wheel for most platforms: its install IS the build)
_SOURCE_BUILT = (
    r"(?:flash[_-]?attn|flash[_-]attention|xformers|vllm|mamba[_-]ssm|causal[_-]conv1d|tensorrt[_-]llm|"
    r"pytorch3d|tiny-?cuda-?nn|tinycudann|apex|detectron2|mmcv(?:-full)?|llama[_-]cpp[_-]python)\b"
)
_BUILD_WORD = (
    r"(?:(?<![A-Za-z])(?:build(?:s|ing)?|compil\w*|wheels?|cmake|ninja|setup\.py)\b|\bCI\b|"
    r"编译|編譯|构建|構建|ビルド|コンパイル|сборк\w*|компил\w*|(?<![A-Za-z])kompil\w*|"
    r"\binstall\w*\s+(?:[\w:.-]+\s+){0,3}?" + _SOURCE_BUILT + r"|\b" + _SOURCE_BUILT + r"\s+install\w*)"
)
# a title or short line naming the build and the reporter's next sentence (a blank line between) saying how long; or
# the duration's line and, at most a fence or short line below, the build step it is said of (pip's own line)
_NEXT_LINE = r"(?m:^)[^\n]{0,60}?" + _BUILD_WORD + r"[^\n]{0,60}\n(?:[ \t]*\n)?[^\n]{0,120}?" + _LONG
_LINE_BELOW = _LONG + r"[^\n]{0,80}\n(?:[^\n]{0,10}\n)?[ \t]{0,8}" + _BUILD_WORD

# the lines around a ggml CUDA probe asking for GPU work (layers to offload, a CUDA host buffer, docker's --gpus)
GPU_WANTED = r"(?i:offload|gpu[_-]layers|to GPU\b)|cuda_host_malloc|-ngl\b|--gpus\b"

FACTS: tuple[FactRx, ...] = (
    fx("msb", r"\b(MSB\d{4})\b", "MSB"),
    fx("lnk", r"\bLNK(\d{4})\b[^\n]*?(?P<file>[\w.-]+\.lib)?", "LNK"),
    fx("yvals", r"yvals_core\.h", "yvals_core.h"),
    # the reporter's words that the run is on the CPU or leaves the GPU unused ("gpu is not being used", "only
    # running on CPU", "complete load is on cpu", "no longer uses CUDA"): F18's symptom where layers or CUDA were asked
    fx(
        "cpu_run_said",
        r"(?i:\b(?:gpu|cuda) (?:is |was |are )?(?:not|never) (?:being )?(?:used|utili[sz]ed)\b|"
        # (not a condition the reporter sets: "when not using gpu offloading, it works fine")
        r"(?<!when )(?<!if )(?<!while )(?:\b(?:not|no longer|never)|n't) (?:be )?"
        r"(?:using|uses?|utili[sz]ing|utili[sz]es?) (?:the |my |any )?(?:gpu|cuda)\b(?! ?offload)|"
        r"\b(?:running|runs|ran|load is|loads|loaded|inference is|is) "
        r"(?:only |always |still |entirely |completely |just )?(?:running )?on (?:the |my )?cpu\b)",
        (
            "cpu",
            "CPU",
            "Cpu",
            "not being used",
            "not used",
            "not utili",
            "not using",
            "no longer use",
            "n't use",
            "not use",
            "never use",
        ),
    ),
    # the reporter's machine has no GPU (in their words): a CPU build is then the right one, not a wrong wheel (a
    # clean train log: "Since I don't have a GPU ... a 'cpu only' installation of torch")
    fx(
        "no_gpu_said",
        r"(?i:(?:don['’]?t|do not|doesn['’]?t|does not|didn['’]?t) (?:have|own) (?:a |an |any )?"
        r"(?:nvidia |cuda[- ]capable |dedicated |discrete )?(?:gpu|graphics card|video card)s?\b|"
        r"\b(?:machine|computer|laptop|server|pc|system|host|vm) (?:has|with) no (?:nvidia )?gpus?\b)|"
        r"没有(?:独立)?(?:显卡|GPU|gpu)",
        ("have", "HAVE", "Have", "own", " no ", "没有"),
    ),
    fx(
        "layers_asked",
        r"(?:(?<![\w-])-ngl|--n-gpu-layers|--gpu-?layers|\bn_gpu_layers|\bgpu_layers)['\"]?"
        r"[ \t]*[=:]?[ \t]*(?:-1|[1-9]\d*)\b",
        ("-ngl", "gpu-layers", "gpu_layers", "gpulayers"),
    ),
    # CUDA asked of a ggml build or runner (a CMake/make flag, koboldcpp's --usecublas), and a ggml runner's
    # command line (llama.cpp's main/llama-cli/server with a model file, koboldcpp): one without a layer count
    # leaves every layer on the CPU (n_gpu_layers defaults to 0)
    fx(
        "cuda_asked",
        r"-D(?:LLAMA|GGML|WHISPER|SD)_(?:CUBLAS|CUDA)=(?i:on|1|true)\b|--usecu(?:blas|da)\b|"
        r"\b(?:LLAMA|GGML|WHISPER|SD)_(?:CUBLAS|CUDA)=1\b",
        ("_CUBLAS=", "_CUDA=", "--usecu"),
    ),
    # a run that asked for the GPU: layers to offload, a CUDA allocation, the container given the GPUs
    fx(
        "gpu_wanted",
        GPU_WANTED,
        ("offload", "Offload", "gpu_layers", "gpu-layers", "to GPU", "cuda_host_malloc", "-ngl", "--gpus"),
    ),
    # the log shows an NVIDIA GPU, or CUDA asked of the run: nvidia-smi's table, a GPU's name, a CUDA device or a
    # layer count given, ollama's and ggml's CUDA devices, a CUDA build of a package
    fx(
        "gpu_seen",
        r"NVIDIA-SMI \d|Driver Version: \d|\b(?:GeForce|Quadro|TITAN [A-Z])\b|\bTesla [A-Z]?\d|"
        r"\b(?:RTX|GTX) ?A?\d{3,4}\b|\bNVIDIA [AHLT]\d+[A-Z]?\b|\b[AH]100\b|"
        r"\bcuda:\d\b|\bdevice\s*[=:]\s*['\"]?cuda\b|--device[= ]+(?:cuda|gpu)\b|"
        r"CUDA_VISIBLE_DEVICES=['\"]?\d|\blibrary=cuda|\bCUDA\d\b|"
        r"(?:-ngl|--n-gpu-layers|n_gpu_layers)[ =:]*(?:-1|[1-9])|"
        r"\b(?:tensorflow-gpu|onnxruntime-gpu)\b|\b(?:jax\[cuda|tensorflow\[and-cuda)|\+cu\d{2,3}\b|"
        # a container given the GPUs (docker, compose, Kubernetes)
        r"--gpus[= ]|--runtime[= ]nvidia\b|\bruntime: nvidia\b|\bnvidia\.com/gpu\b|"
        # ollama's GPU probe (gpu/gpu.go, 0.1.2x) finding the NVIDIA GPU
        r"\bNvidia GPU detected\b",
        (
            "NVIDIA-SMI",
            "Driver Version",
            "GeForce",
            "Quadro",
            "TITAN",
            "Tesla",
            "RTX",
            "GTX",
            "NVIDIA ",
            "A100",
            "H100",
            "cuda:",
            "device",
            "CUDA_VISIBLE_DEVICES",
            "library=cuda",
            "CUDA0",
            "CUDA1",
            "CUDA2",
            "CUDA3",
            "-ngl",
            "--n-gpu-layers",
            "n_gpu_layers",
            "-gpu",
            "jax[cuda",
            "and-cuda",
            "+cu",
            "--gpus",
            "nvidia",
            "Nvidia GPU",
        ),
    ),
    fx(
        "build_failed",
        r"did not run successfully|Failed to build|(?i:error: subprocess-exited-with-error)|"
        r"Configuring incomplete|CMake Error",
        ("did not run", "Failed to build", "rror: subprocess", "Configuring incomplete", "CMake Error"),
    ),
    # a build said to be slow or stuck, in the reporter's words: hours, half an hour or more, "a long time", stuck
    # (the duration said of the build: in the same sentence, which a full stop and a capital letter end; or a title
    # naming the build and the next sentence, or pip's build line just below the duration); "compil" gates the
    # durations with no literal of their own ("6h") where the sentence names the compile
    fx(
        "slow_build",
        r"(?i:"
        + _BUILD_WORD
        + _SENTENCE
        + _LONG
        + "|"
        + _LONG
        + _SENTENCE
        + _BUILD_WORD
        + "|"
        + _NEXT_LINE
        + "|"
        + _LINE_BELOW
        + "|"
        + _TIMES_OUT
        + ")",
        (
            "hour",
            "hrs",
            "minute",
            "mins",
            "long time",
            "too long",
            "so long",
            "very long",
            "stuck",
            "STUCK",
            "finish",
            "forever",
            "timeout",
            "Timeout",
            "time out",
            "TIMEOUT",
            "timing out",
            "timed out",
            "night",
            "days",
            " day",
            "小时",
            "小時",
            "時間",
            "час",
            "Stunde",
            "compil",
        ),
    ),
    # a failure of its own kind, outside the catalog, that a tool stops on (`decide`: none of the facts' inferences
    # then names a cause); its kinds, words and advice are unnamed.OUTSIDE's
    fx("outside_stop", OUTSIDE_PATTERN, OUTSIDE_NEEDLES, re.M),
    fx(
        "cuda_compiled",
        r"GGML_USE_CU(?:DA|BLAS)|\bnvcc\b|-lcudart\b|\bcuda_runtime\b",
        ("GGML_USE_CU", "nvcc", "-lcudart", "cuda_runtime"),
    ),
    # a CUDA compile in the log: nvcc or one of its tools run, a .cu source compiled (-c x.cu) or its object, CMake's
    # CUDA object (a .cu path alone is no compile: a kernel's assertion at run time names its .cu file)
    fx(
        "cuda_compile",
        r"\bnvcc\b|\.cu(?:\.\d+)?\.o(?:bj)?\b|-c [^\s'\"]+\.cu\b|\b(?:cicc|ptxas|cudafe\+\+)\b|"
        r"Building CUDA object|-x cu\b",
        ("nvcc", ".cu", "cicc", "ptxas", "cudafe", "CUDA object", "-x cu"),
    ),
    # what the log shows working (issue 23, precision): a cause is not named where the log's own later lines
    # contradict it (`contradicted`). Each is the runtime's or tool's own words for the thing the cause says is
    # missing, so the last line of each is kept (_LATEST), not the first.
    # the GPU doing the run's work: llama.cpp/ggml layers or buffers on a GPU device (CUDA, ROCm, Vulkan, Metal, SYCL;
    # old and new load logs, its system_info with BLAS compiled in), ollama's estimate with layers on the GPU and its
    # own engine's weights on one, TensorFlow's GPU device created, transformers' pipelines, sentence-transformers and
    # Lightning on CUDA, onnxruntime's CUDA provider applied (also what keeps a reporter's "it runs on the CPU" and a
    # run given no layer count from naming F18)
    fx(
        "ok_gpu_work",
        r"\boffloaded [1-9]\d*/\d+ layers to GPU|\boffloading [1-9]\d* (?:repeating )?layers to GPU|"
        r"\bassigned to device (?:CUDA|ROCm|Vulkan|Metal|SYCL)\d|"
        r"\b(?:llm_load_tensors|load_tensors): +(?:CUDA|ROCm|Vulkan|Metal|SYCL)\d* "
        r"(?:model )?buffer size|"
        r"msg=\"model weights\" (?:buffer|device)=(?:CUDA|ROCm|Vulkan|Metal|SYCL)|"
        r"\bBLAS = 1\b|\blayers\.offload=[1-9]|Created TensorFlow device \([^\n]*?device:GPU:\d|"
        r"\bDevice set to use cuda|\bUse pytorch device(?:_name)?: cuda|"
        r"\bGPU available: True \(cuda\), used: True|Applied providers: \['CUDAExecutionProvider'",
        (
            "offload",
            "assigned to device",
            "buffer size",
            "model weights",
            "BLAS = 1",
            "Created TensorFlow device",
            "use cuda",
            "device: cuda",
            "device_name: cuda",
            "used: True",
            "Applied providers",
        ),
    ),
    # a library the loader then opened: TensorFlow's dso_loader ("Successfully opened dynamic library X", TF 1.x
    # "successfully opened CUDA library X locally"), ggml's backend loader ("loaded CUDA backend from <path>")
    fx(
        "ok_lib_loaded",
        r"(?i:successfully opened (?:dynamic|CUDA) library) ([\w.+-]+)|"
        r"load_backend: loaded \w+ backend from (?:[^\n]*[\\/])?([\w.+-]+)",
        ("uccessfully opened", "load_backend: loaded"),
    ),
    # CMake finding and identifying the CUDA compiler (enable_language/project: CMakeDetermineCUDACompiler; the
    # toolkit: FindCUDAToolkit, FindCUDA; the compiler check of older CMake)
    fx(
        "ok_nvcc_found",
        r"The CUDA compiler identification is NVIDIA|-- Found CUDAToolkit: |-- Found CUDA: |"
        r"Check for working CUDA compiler: [^\n]*?(?:-- | - )works",
        ("compiler identification is NVIDIA", "Found CUDA", "working CUDA compiler"),
    ),
    # (also CMake's Visual Studio generators choosing an SDK, and the OS name Windows gives itself in %OS%)
    fx(
        "windows",
        r"[A-Z]:\\\\?[\w$ ()~.-]+|\.exe\b|\.dll\b|MSBuild|Microsoft|Selecting Windows SDK version|"
        r"\bWindows_NT\b",
        (":\\", ".exe", ".dll", "MSBuild", "Microsoft", "Windows"),
    ),
    fx(
        "linux",
        r"/usr/|/home/|/opt/|\.so\b|/bin/sh|/bin/bash|\bapt(?:-get)? |ubuntu|Ubuntu",
        ("/usr/", "/home/", "/opt/", ".so", "/bin/", "apt", "buntu"),
    ),
    # a POSIX system ran the build: its temporary folder (pip's build folders), the shell's exit status for a command
    # it did not find (127: make's "Error 127")
    fx("posix", r"(?<![\w.])/tmp/|\*\*\* \[[^\n]*\] Error 127\b", ("/tmp/", "Error 127")),
    # an installed package built without CUDA in its own words (torch, CTranslate2's "package"), bitsandbytes'
    # CPU library, or a report (zh/ja) that the torch installed is the CPU version ("CPU版")
    fx(
        "cpu_wheel",
        r"Torch not compiled with CUDA enabled|\bpackage (?:was )?not compiled with CUDA support|"
        r"libbitsandbytes_cpu\.(?:so|dll)|bitsandbytes was compiled without GPU support|"
        r"(?i:torch)[^\n]{0,40}?(?i:cpu) ?版|"
        # JAX (jax/_src/xla_bridge.py) where it sees an NVIDIA GPU and has only its CPU jaxlib
        r"a CUDA-enabled jaxlib is not installed|"
        # PaddlePaddle's core ("you have installed CPU version PaddlePaddle") and its model suites'
        # device checks ("using paddlepaddle cpu version", "using paddlepaddle-cpu") on use_gpu
        r"installed CPU version PaddlePaddle|(?i:using paddlepaddle[- ]cpu)|"
        # onnxruntime (onnxruntime_inference_collection.py) asked for a provider its package was not
        # built with: the CPU package onnxruntime, alone or shadowing onnxruntime-gpu (a CUDA package
        # lists its provider even where the CUDA libraries are missing, and fails to create it instead)
        r"'?CUDAExecutionProvider'? (?:is )?not (?:in )?available",
        (
            "not compiled with CUDA",
            "libbitsandbytes_cpu",
            "compiled without GPU support",
            "cpu版",
            "CPU版",
            "cpu 版",
            "CPU 版",
            "CUDA-enabled jaxlib",
            "CPU version PaddlePaddle",
            "addlepaddle cpu",
            "addlepaddle-cpu",
            "CUDAExecutionProvider",
        ),
    ),
)
