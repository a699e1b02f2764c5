"""doctor --log's `try:` line for the package the log is about, not only for llama-cpp-python.

The catalog's commands for F14, F18 and F19 are llama-cpp-python's (its CUDA wheel index, a rebuild
without pip's cache). A log of torch, JAX, ONNX Runtime, PaddlePaddle, TensorFlow, ollama or llama.cpp's
own programs with the same failure needs that package's way to the CUDA build, or no command at all
rather than another package's. The runtime is read from the log itself: the lines of the match first,
then the log's last lines (a traceback ends there), then its first lines (what pip collected and built);
within one of those the runtime named most often wins, a tie names none.

How each runtime gets its CUDA build (the one home of these commands):
  torch        PyTorch's own index per CUDA (https://download.pytorch.org/whl/cuXYZ); PyPI's Windows wheel
               is CPU-only
  jax          the `cuda12` / `cuda13` extra (JAX's installation page; native Windows has no CUDA jaxlib)
  onnxruntime  onnxruntime-gpu alone: both packages install the same `onnxruntime` folder, so the CPU one
               is removed first
  paddlepaddle paddlepaddle-gpu from Paddle's index per CUDA (packages/stable/cuXYZ)
The others have no one command: the fix text stands alone.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from envmgr.buildlog.engine import glimpse
from envmgr.catalog import FailureId

TAILORED: tuple[FailureId, ...] = ("F14", "F18", "F19")
HEAD = 2000  # logical lines read at the start of a log for what pip collected and built

# (runtime, what names it in a line). llama-cpp-python prints llama.cpp's own lines too, and ollama runs
# llama.cpp: where either is named beside `llama.cpp`, it is theirs (_ABSORBS). whisper.cpp and
# stable-diffusion.cpp share ggml with llama.cpp, so ggml's own words name none of them.
_NAMES = (
    ("llama-cpp-python", r"\bllama[_-]cpp[_-]python|\bllama_cpp\b|\bLlamaCpp\b"),
    ("ollama", r"\bollama\b"),
    (
        "llama.cpp",
        r"\bllama\.cpp\b|\bllama_model_load|\bllm_load_tensors\b|\bllama-(?:cli|server)\b|"
        r"\bllama_new_context_with_model\b",
    ),
    ("whisper.cpp", r"\bwhisper\.cpp\b|\bwhisper_init"),
    ("stable-diffusion.cpp", r"\bstable-diffusion\.cpp\b"),
    ("torch", r"\btorch\b|\bpytorch\b"),
    ("jax", r"\bjaxlib\b|\bjax\b|\bxla_bridge\b"),
    ("onnxruntime", r"\bonnxruntime\b|\bCUDAExecutionProvider\b"),
    ("tensorflow", r"\btensorflow\b"),
    ("paddlepaddle", r"\bpaddle(?:paddle)?\b"),
    # not a runtime: Python's own marks, which make llama.cpp's lines llama-cpp-python's (its Python binding)
    (_PYTHON := "python", r"\bTraceback \(most recent call last\)|\bsite-packages\b|\.py\b|\bpip3? install\b"),
)
_RX = re.compile("|".join(f"(?P<r{i}>{rx})" for i, (_, rx) in enumerate(_NAMES)), re.I)
_NEEDLES = (
    "llama",
    "llm_load",
    "ollama",
    "whisper",
    "diffusion",
    "torch",
    "jax",
    "xla_",
    "onnx",
    "executionprovider",
    "tensorflow",
    "paddle",
    "traceback",
    "site-packages",
    ".py",
    "pip",
)  # lower case
_ABSORBS = {"llama-cpp-python": "llama.cpp", "ollama": "llama.cpp"}

_TORCH = "pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu<XYZ>"
_COMMANDS: dict[tuple[str, FailureId], str] = {
    ("torch", "F19"): _TORCH,
    ("torch", "F14"): _TORCH,  # the fix text: a CUDA whose wheels cover the GPU's architecture
    ("jax", "F19"): 'pip install -U "jax[cuda<major>]"',
    ("onnxruntime", "F19"): "pip uninstall -y onnxruntime onnxruntime-gpu && pip install onnxruntime-gpu",
    ("paddlepaddle", "F19"): "pip uninstall -y paddlepaddle && python -m pip install paddlepaddle-gpu "
    "-i https://www.paddlepaddle.org.cn/packages/stable/cu<XYZ>/",
}


# F19's signatures for a CPU-only prebuilt of a runtime (torch +cpu, onnxruntime beside -gpu, a CPU paddle)
_CPU_PREBUILT = {"cpu-only-wheel", "cpu-only-wheel-file", "torch-without-cuda-with-gpu", "build-without-cuda"}


@dataclass(frozen=True)
class Advice:
    runtime: str  # the package or program the log is about ("" where it names none)
    command: str | None  # the `try:` line for it; None where no one command fits


class Mentions:
    """Which runtimes a log names: in its first HEAD logical lines (fed as they stream) and its last lines."""

    def __init__(self) -> None:
        self.head: Counter[str] = Counter()
        self.fed = 0

    def feed(self, texts: list[str]) -> None:
        if self.fed >= HEAD:
            return
        texts = texts[: HEAD - self.fed]
        self.fed += len(texts)
        self.head.update(named(texts))


def named(texts: Iterable[str]) -> Counter[str]:
    """How often each runtime (and Python's own marks) is named in these lines."""
    out: Counter[str] = Counter()
    for text in map(glimpse, texts):
        low = text.lower()
        if not any(n in low for n in _NEEDLES):
            continue
        for m in _RX.finditer(text):
            out[_NAMES[int(m.lastgroup[1:])][0]] += 1  # type: ignore[index]
    return out


def _winner(counts: Counter[str]) -> str | None:
    counts = +counts
    counts.pop(_PYTHON, None)
    for big, small in _ABSORBS.items():
        if counts.get(big) and counts.get(small):
            counts[big] += counts.pop(small)
    top = counts.most_common(2)
    if not top or (len(top) == 2 and top[0][1] == top[1][1]):
        return None
    return top[0][0]


def runtime_of(match_lines: Iterable[str], last_lines: Iterable[str], head: Counter[str]) -> str | None:
    """The runtime the log is about: named by the match's own lines, else by the last lines, else the first.
    llama.cpp's lines in a log that shows Python running are its Python binding's, llama-cpp-python."""
    tiers = (named(match_lines), named(last_lines), Counter(head))
    found = None
    for counts in tiers:
        if any(n for k, n in counts.items() if k != _PYTHON):  # the first place that names a runtime decides
            found = _winner(counts)
            break
    if found == "llama.cpp" and any(c[_PYTHON] for c in tiers):
        return "llama-cpp-python"
    return found


def advise(fid: FailureId, runtime: str | None, signature: str) -> Advice | None:
    """The `try:` line for this id, runtime and signature; None keeps the catalog's, which is llama-cpp-python's.
    F19's runtime commands fit a CPU-only prebuilt of that runtime; F19 for a package that had no CUDA wheel
    for this install (flash-attn, xformers, a wheel for another Python) has no one command."""
    if fid not in TAILORED or runtime == "llama-cpp-python":
        return None
    if runtime is None or (fid == "F19" and signature.removeprefix("anchor:") not in _CPU_PREBUILT):
        return Advice(runtime or "", None)
    return Advice(runtime, _COMMANDS.get((runtime, fid)))
