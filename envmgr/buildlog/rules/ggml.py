"""The ggml family (llama.cpp and what embeds it): CUDA not compiled in, only CPU backends loaded, the weights on the
CPU, zero layers offloaded or a run asked for CUDA that gave no layer count (F18); and `weak`, a llama.cpp run given
no layer count where the GPU was there or asked for (F18), which the registry runs only where nothing was named.
"""

from __future__ import annotations

import re

from envmgr.buildlog.rules.base import KEEP, Add, Fact, FactRx, Facts, fx
from envmgr.buildlog.signatures import Signature, sig
from envmgr.catalog import FailureId

IDS: tuple[FailureId, ...] = ("F18",)
WEAK_IDS: tuple[FailureId, ...] = ("F18",)

FACTS: tuple[FactRx, ...] = (
    # ggml's capability report of the build that runs: its system_info line (CUDA = 0: no CUDA compiled in) and
    # the backends it loaded (only CPU ones: no GPU backend there to take the layers)
    fx("cuda_off_info", r"\b(?:CUDA|CUBLAS|cuBLAS) = 0\b", ("CUDA = 0", "CUBLAS = 0", "cuBLAS = 0")),
    fx("backend_loaded", r"load_backend: loaded (\w+) backend", "load_backend: loaded", keep=KEEP),
    # where llama.cpp put the model's weights (its load log names each model buffer: CPU, CPU_Mapped, CUDA0 ...), and
    # a layer count above 0 given to the run: weights all in CPU buffers although layers were asked is a build
    # with no GPU backend to take them (a build with one lists a CUDA0/Metal/Vulkan0 buffer next to the CPU one)
    # (ollama's own engine names them per device: ml/backend/ggml, msg="model weights" buffer=CPU, later device=CPU)
    fx(
        "model_buffer",
        r"\b(?:llm_load_tensors|load_tensors): +(\w+) (?:model )?buffer size\b|"
        r"msg=\"model weights\" (?:buffer|device)=(\w+)",
        ("buffer size", "model weights"),
        keep=KEEP,
    ),
    fx(
        "ggml_run",
        r"(?:^|[\s/\\>])(?:main|llama-cli|llama-server|server|llama-run|koboldcpp[\w.-]*)(?:\.exe)?[ \t]"
        r"[^\n]*?(?:(?:-m|--model)[ \t]+\S+\.(?:gguf|bin)\b|--usecu(?:blas|da)\b)[^\n]*",
        ("-m ", "--model", "--usecu"),
        re.M,
    ),
    # a llama.cpp run that took place, in its own words (its timings, llama.cpp before and after 2024-09), or one
    # made in code through llama-cpp-python's Llama or LangChain's LlamaCpp: n_gpu_layers defaults to 0 in both, so
    # one given no layer count runs every layer on the CPU
    fx(
        "ggml_ran",
        r"\bllama_(?:print_timings|perf_context_print):|\b(?:Llama|LlamaCpp)\(\s*(?:model_path|model)\s*=",
        ("llama_print_timings", "llama_perf_context_print", "Llama(", "LlamaCpp("),
    ),
    # a layer count of 0 given to a ggml run (llama.cpp's -ngl 0, llama-cpp-python's n_gpu_layers=0, koboldcpp's
    # --gpulayers 0, a gpu_layers: 0 setting): every layer stays on the CPU. Not a list of counts (llama-bench's
    # -ngl 0,8,16 runs each count: a 0 there is the CPU baseline of a comparison, not the run's setting)
    fx(
        "zero_layers",
        r"(?:\b(?i:n_gpu_layers|n-gpu-layers|gpu_layers|gpu-layers|gpulayers)['\"]?\s*[=:]?\s*|"
        r"(?<![\w-])-ngl[ \t=]+)0(?![\d.]|,\s*\d)",
        ("gpu_layers", "gpu-layers", "gpulayers", "GPU_LAYERS", "-ngl"),
        keep=KEEP,
    ),
    # llama-bench's own result table (its markdown header: model, size, params, backend, then ngl among the columns
    # it varies): the log is a benchmark's, whose layer counts are the configurations it was told to measure
    # llama.cpp's system_info of a build before ggml's CUDA = n: BLAS = 0, no BLAS backend (cuBLAS among them)
    # compiled in; a CPU build prints it on every run, so it counts only where the GPU was wanted (issue 36)
    fx("blas_off", r"\bBLAS = 0\b", "BLAS = 0"),
    # a GPU or CUDA named anywhere, in any words (not a layer-count option's name)
    fx(
        "gpu_word",
        r"(?i:\b(?:nvidia|cuda|cublas)\b|\bgpu\b(?![-_]?layers))",
        ("nvidia", "NVIDIA", "Nvidia", "CUDA", "cuda", "Cuda", "cuBLAS", "cublas", "CUBLAS", "GPU", "gpu", "Gpu"),
    ),
    fx("bench_table", r"\|\s*model\s+\|\s*size\s+\|\s*params\s+\|\s*backend\s+\|[^\n]*?\bngl\s+\|", "params"),
)


_LAYERS = re.compile(r"-ngl\b|--n-gpu-layers|--gpu-?layers|n_gpu_layers")
# the reporter setting no GPU layers on purpose, to switch the GPU off: "disable it with `n-gpu-layers=0`",
# "turned off CUDA by setting n_gpu_layers=0", "switch the GPU off via -ngl 0"
_GPU_OFF_BY = re.compile(
    r"(?i:\b(?:disabl\w*|turn\w* off|switch\w* off)\b[^\n]{0,40}?\b(?:with|by|using|via)\b"
    r"[^\n]{0,12}?(?:n[_-]gpu[_-]layers|gpu[_-]?layers|-ngl)\b)"
)


def decide(fs: Facts, add: Add) -> None:
    """A ggml build or run that names no GPU work of its own: CUDA not compiled in or only CPU backends loaded
    where the run wanted the GPU, and a run asked for CUDA that gave no layer count (F18)."""
    wanted = fs.first("gpu_wanted")
    asked = fs.first("cuda_asked")
    add("F18", "cuda-not-in-build", fs.first("cuda_off_info") if wanted or asked else None)
    gpu = wanted or asked or fs.first("layers_asked") or fs.first("gpu_seen")
    add("F18", "blas-off", fs.first("blas_off") if gpu else None)
    loaded = fs.values("backend_loaded")
    if wanted and loaded and all(v.upper() == "CPU" for v in loaded):
        add("F18", "cpu-backend-only", fs.facts["backend_loaded"][0])
    buffers = fs.values("model_buffer")
    if (
        buffers
        and all(v.upper().startswith("CPU") for v in buffers)
        and (fs.first("layers_asked") or fs.first("gpu_seen"))
    ):
        add("F18", "weights-on-cpu-layers-asked", fs.facts["model_buffer"][0])
    # (not a 0 the reporter gives as the way to turn the GPU off: "disable it with n-gpu-layers=0" is a deliberate
    # CPU run set against the GPU one, where the failure is something else)
    # (nor a 0 given to llama-bench, whose default is every layer on the GPU (99): its -ngl 0 measures the CPU on
    # purpose, as its table's ngl column shows; nor a 0 in a log that shows no GPU at all: a CPU machine's run, a
    # Mac's; issue 36)
    cpu_meant = fs.first("bench_table") is not None or not _gpu_shown(fs)
    add(
        "F18",
        "zero-gpu-layers",
        next(
            (
                f
                for f in fs.facts.get("zero_layers", ())
                if not _GPU_OFF_BY.search(f.line) and not (cpu_meant or "llama-bench" in f.line)
            ),
            None,
        ),
    )
    run = fs.first("ggml_run")
    # (whisper.cpp's main takes no layer count: a CUDA build of it puts the whole model on the GPU unless told -ng;
    # its run is known by the audio file it is given; issue 36)
    whisper = run is not None and _WHISPER_RUN.search(run.line) is not None
    if run and not wanted and not whisper and not _LAYERS.search(run.line) and (asked or "--usecu" in run.line):
        add("F18", "gpu-asked-no-layers", run)


_WHISPER_RUN = re.compile(r"(?i:whisper)|\.(?:wav|mp3|flac|ogg|m4a|opus)\b")


def _gpu_shown(fs: Facts) -> bool:
    """A GPU there or asked for besides the zero itself (a -ngl 0 is no ask for the GPU): its name or device, a layer
    count above 0, CUDA asked of or compiled into the build, a GPU or CUDA named in any words."""
    return any(fs.first(k) for k in ("gpu_seen", "layers_asked", "cuda_asked", "cuda_compiled", "gpu_word"))


def weak(fs: Facts, add: Add) -> None:
    add("F18", "run-without-layers", _run_without_layers(fs))


def _run_without_layers(fs: Facts) -> Fact | None:
    """A llama.cpp run (its timings, a Llama/LlamaCpp call) in a log with no layer count anywhere and no word of the
    GPU taking work, where CUDA was asked of the build or a GPU shows: n_gpu_layers' default 0 left it on the CPU."""
    ran = fs.first("ggml_ran")
    if ran is None or fs.first("gpu_wanted") or fs.first("ok_gpu_work") or fs.first("no_gpu_said"):
        return None
    return ran if fs.first("cuda_asked") or fs.first("gpu_seen") else None


# ---------------------------------------------------------------- signatures: the tools' own sentences

SIGNATURES: tuple[Signature, ...] = (
    # F18: built or loaded for the CPU.
    sig("F18", "zero-layers-offloaded", r"offloaded 0/(?P<layers>\d+) layers to GPU", needle="offloaded 0/"),
)
