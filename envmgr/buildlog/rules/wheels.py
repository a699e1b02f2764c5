"""The wheels family: a CPU-only or source build where a CUDA wheel was wanted, a wheel refused for its tags, a wheel
index given and not used (F19; F18 for a torch built from source without CUDA); and `weak`, a CUDA package's source
build that failed with nothing saying why (F19), which the registry runs only where nothing else was named.
"""

from __future__ import annotations

import re

from envmgr.buildlog.rules.base import KEEP, Add, Fact, FactRx, Facts, fx
from envmgr.buildlog.rules.outcome import unfinished
from envmgr.buildlog.signatures import Signature, sig, words
from envmgr.catalog import FailureId

IDS: tuple[FailureId, ...] = ("F18", "F19")
WEAK_IDS: tuple[FailureId, ...] = ("F19",)

FACTS: tuple[FactRx, ...] = (
    # a framework's own probe of its build answering that CUDA is not in it: TensorFlow's tf.test.is_built_with_cuda()
    # and its build info ('is_cuda_build': False), PaddlePaddle's is_compiled_with_cuda(), torch's
    # torch.backends.cuda.is_built() and torch.version.cuda (None in a CPU build), the answer on the probe's line
    # (a comment, an arrow) or the next one (a REPL), or under the label it was printed with ("built with CUDA?: False")
    fx(
        "build_without_cuda",
        r"(?:\bis_built_with_cuda|\bis_compiled_with_cuda|\bbackends\.cuda\.is_built)\(\)\)?"
        r"[ \t]*(?:#|->|→|=>)?[ \t]*(?:\n[ \t>`]*)?False\b|"
        r"\btorch\.version\.cuda\)?[ \t]*(?:#|->|→|=>)?[ \t]*(?:\n[ \t>`]*)?None\b|"
        r"\b[Bb]uilt with CUDA\b ?\??:? ?False\b|'is_cuda_build': False\b",
        (
            "is_built_with_cuda",
            "is_compiled_with_cuda",
            "is_built()",
            "version.cuda",
            "uilt with CUDA",
            "is_cuda_build",
        ),
    ),
    # the same report in English: the CPU version (build, wheel) of torch (its own kind: "cpu" is a common needle)
    # (or that the CPU build came instead of the CUDA one)
    fx(
        "cpu_torch_said",
        r"(?i:\bcpu(?:[- ]?only)? (?:version|build|wheel)s? (?:of (?:py)?torch|"
        r"instead of (?:the )?(?:cuda|gpu))|"
        r"\b(?:py)?torch\b[^\n]{0,80}?\bcpu(?:[- ]?only)? (?:version|build|wheel)s?\b)",
        ("cpu", "CPU", "Cpu"),
    ),
    # a CPU torch wheel by its name: a +cpu local version, or a plain torch wheel for Windows (PyPI and its
    # mirrors carry only CPU builds of torch for win_amd64; CUDA ones are torch-X+cuNNN from PyTorch's index)
    # (pip's wheel file, its "Successfully installed torch-X+cpu", its "Requirement already satisfied: torch in ...
    # (X+cpu)", pip list, or the version torch prints of itself)
    fx(
        "cpu_wheel_file",
        r"\btorch(?:vision|audio)?-\d+(?:\.\d+)*(?:%2B|\+)cpu\b|"
        r"\btorch-\d+(?:\.\d+)*-cp\d+-cp\d+m?-win_amd64\.whl|"
        r"\btorch(?:vision|audio)?(?:[ \t]+|==)\d+(?:\.\d+)+\+cpu\b|"
        r"(?i:torch)[^\n]{0,200}?(?:\(|you have )\d+(?:\.\d+)+\+cpu\b|"
        r"^[ \t>]*['\"]?\d+\.\d+(?:\.\d+)?\+cpu['\"]?[ \t]*$|"
        # conda's CPU builds: the pytorch channel's build string (py3.8_cpu_0) and its mutex package
        # (pytorch-mutex 1.0 cpu), conda-forge's build strings (cpu_mkl_py.., cpu_generic_py..) and
        # its former package name (pytorch-cpu)
        r"\bpy\d(?:\.?\d+)?_cpu_\d+\b|\bpytorch-mutex[-\s=]+1\.0[-\s=]+cpu\b|"
        r"\bcpu_(?:mkl|generic)_py\d|\bpytorch[-_]cpu\b",
        ("torch-", "torch ", "torch==", "+cpu", "%2Bcpu", "cpu_", "pytorch-mutex", "pytorch-cpu", "pytorch_cpu"),
        re.M,
    ),
    # the CPU build asked for on an install command line (a +cpu pin, PyTorch's CPU index, conda's cpuonly): a
    # choice, a failure only where the program then asks for CUDA in its own words (a clean train log: uv #1497)
    # (the command ends where a Markdown code span does)
    fx(
        "cpu_asked",
        r"\b(?:pip3?|uv|conda|mamba)\b[^\n`]*?\binstall\b[^\n`]*?(?:\+cpu\b|/whl/cpu\b|\bcpuonly\b)|"
        # pip's own echo of the requirement it was given, where it found none to fit (issue 36)
        r"(?:satisfies the requirement|No matching distribution found for) [^\n]*?\+cpu\b",
        ("+cpu", "/whl/cpu", "cpuonly"),
    ),
    # torch's collect_env: a torch built without CUDA ("CUDA used to build PyTorch: None") on a machine whose
    # NVIDIA GPU it lists; its version tells a source build (+git, a0: F18) from a CPU wheel (F19)
    fx("torch_no_cuda", r"CUDA used to build PyTorch: (?:None|Could not collect)", "CUDA used to build PyTorch"),
    fx("torch_version", r"PyTorch version: (\S+)", "PyTorch version"),
    fx(
        "gpu_listed",
        r"GPU models and configuration:[^\n]*?(?:NVIDIA|GeForce|Tesla|Quadro|RTX)",
        "GPU models and configuration",
    ),
    # a package's own wheel index (its name in the URL: abetlen.github.io/llama-cpp-python/whl/cu124), and pip
    # building a package from its sdist: where both name one package, the index gave no wheel that fit (F19)
    fx("wheel_index", r"https?://[^\s,'\"]*?/(?:whl|wheels?)\b[^\s,'\"]*", ("/whl", "/wheel")),
    # pip finding no version of a package (where that package's own wheel index was given: it has none that fits),
    # and pip failing to reach an index at all (then nothing was looked at: no evidence of a missing wheel)
    fx("no_distribution", r"No matching distribution found for ([A-Za-z0-9][\w.-]*)", "No matching distribution"),
    fx(
        "index_unreachable",
        r"Max retries exceeded|Could not fetch URL|Retrying \(Retry\(",
        ("Max retries exceeded", "Could not fetch URL", "Retrying (Retry("),
    ),
    # the reporter's (or an installer's) words that a prebuilt wheel was passed over for a source build: skipped,
    # ignored, compiled instead of it (flash-attn's own "Precompiled wheel not found. Building from source" is a
    # signature)
    fx(
        "prebuilt_skipped",
        r"(?i:\b(?:skip(?:s|ped|ping)?|ignor(?:es|ed|ing)|bypass(?:es|ed|ing)?|instead of|"
        r"rather than)\s+(?:the\s+|a\s+|any\s+|its\s+)?(?:pre-?built|pre-?compiled)\b"
        r"[^\n]{0,30}?\bwheels?\b)",
        ("rebuilt", "recompiled", "re-built", "re-compiled", "Rebuilt", "Recompiled"),
    ),
    # a CUDA build of a wheel (a +cuNNN local version) that no index holds for this Python and platform
    fx(
        "cuda_wheel_missing",
        r"(?:No matching distribution found for|satisfies the requirement)\s+"
        r"([\w.-]+\s*={2,3}\s*[\w.]+\+cu\d{2,3})\b",
        "+cu",
    ),
    fx(
        "sdist_build",
        r"Building wheels? for ([\w.-]+) \(|Running setup\.py (?:bdist_wheel|install) for ([\w.-]+)",
        ("Building wheel", "Running setup.py"),
    ),
    # pip's own words for a wheel it failed to build from source (legacy and PEP 517 builds, pip 21 to 25)
    fx(
        "wheel_failed",
        r"Failed building wheel for ([\w.-]+)|Failed to build ([\w.-]+)[ \t]*$|"
        r"Failed to build installable wheels for some pyproject\.toml based projects \(([\w.-]+)|"
        r"Building wheel for ([\w.-]+) \([^)\n]*\)(?: \.\.\. |: finished with status ')error",
        ("Failed building wheel", "Failed to build", ") ... error", "status 'error'"),
        re.M,
    ),
    # pip's own words about the files it chose: a wheel whose tags do not fit this interpreter or platform
    # (skipped by the finder, or refused when named), a wheel it took, and a source archive it took
    fx(
        "wheel_tags",
        r"none of the wheel's tags (?:match|\([^)\n]*\) are compatible)[^\n]*?"
        r"[/\s]([A-Za-z0-9][\w.]*?)-\d[^/\s]*?\.whl|"
        r"([A-Za-z0-9][\w.]*?)-\d[^\s/'\"]*?\.whl is not a supported wheel on this platform|"
        # uv's hint and error for a version with no wheel (and no source) for this platform or Python
        # ("You're on macOS (`macosx_15_0_arm64`), but `torch` (v2.8.0+cu128) only has wheels for the
        # following platforms", "... with the following Python ABI tags"; "Distribution `x==v @ ...`
        # can't be installed because it doesn't have a source distribution or wheel for the current
        # platform")
        r"but `([A-Za-z0-9][\w.-]*)` \(v[^)\n]*\) only has wheels (?:for|with) the following|"
        r"Distribution `([A-Za-z0-9][\w.-]*)==[^`\n]*` can't be installed because it doesn't have a "
        r"source distribution or wheel for the current platform",
        ("wheel's tags", "not a supported wheel", "only has wheels", "or wheel for the current platform"),
    ),
    fx(
        "wheel_taken",
        r"(?:Downloading|Using cached|Processing|File was already downloaded)\s+(?:\S*[/\\])?"
        r"([A-Za-z0-9][\w.]*?)-\d[^\s/]*?\.whl\b",
        ("Downloading", "Using cached", "Processing", "already downloaded"),
        keep=4 * KEEP,
    ),
    fx(
        "sdist_fetched",
        r"(?:Downloading|Using cached)\s+(?:\S*/)?([A-Za-z0-9][\w.]*?)-\d[\w.!+-]*?"
        r"\.(?:tar\.gz|zip|tar\.bz2)\b",
        ("Downloading", "Using cached"),
    ),
)


def decide(fs: Facts, add: Add) -> None:
    if not fs.first("no_gpu_said"):  # a CPU build on a machine without a GPU is the right build
        chosen = fs.first("cpu_asked") is not None  # ... and one asked for is wrong only where CUDA is then
        add("F19", "cpu-only-wheel", _cpu_wheel(fs) or (None if chosen else fs.first("cpu_torch_said")))
        add("F19", "build-without-cuda", None if chosen else fs.first("build_without_cuda"))
        add("F19", "cpu-only-wheel-file", None if chosen else fs.first("cpu_wheel_file"))
    # (an index given for a CPU build asked for, torch==X+cpu: no CUDA wheel was wanted from it; issue 36)
    add("F19", "own-wheel-index-unused", None if fs.first("cpu_asked") else _own_index_unused(fs))
    add("F19", "prebuilt-wheel-skipped", fs.first("prebuilt_skipped"))
    _torch_build_rules(fs, add)
    _wheel_rules(fs, add)
    add("F19", "cuda-wheel-not-found", fs.first("cuda_wheel_missing"))


# onnxruntime's warning that the CUDA provider asked for is not in its package (the CPU package onnxruntime) is what a
# machine without a GPU prints on every session: F19 only where the log shows a GPU there or asked for (issue 36; the
# blind cohorts' readers call two such logs harmless warnings)
_GPU_SIGNS = ("gpu_seen", "gpu_wanted", "cuda_asked", "driver_cuda")

# A CPU library that is a Linux shared object on a Windows path (bitsandbytes' libbitsandbytes_cpu.so under C:\...):
# a release without a Windows build loading the only library it has, outside the catalog (issue 36; the blind cohorts'
# readers call four such logs outside)
_SO_ON_WINDOWS = re.compile(r"(?<![\w/])[A-Za-z]:\\[^\n]*?\.so\b")


def _cpu_wheel(fs: Facts) -> Fact | None:
    f = fs.first("cpu_wheel")
    if f is None or _SO_ON_WINDOWS.search(f.line):
        return None
    if "ExecutionProvider" in f.line and not any(fs.first(k) for k in _GPU_SIGNS):
        return None
    return f


def weak(fs: Facts, add: Add) -> None:
    """A CUDA package's source build failed and nothing says why: no prebuilt wheel fitted."""
    add(
        "F19",
        "cuda-package-build-failed",
        next((f for f in fs.facts.get("wheel_failed", ()) if _norm(f.value) in _CUDA_WHEELS), None),
    )


# packages that pip should only ever install as wheels: building one from its sdist means no wheel fitted this
# Python (a 32-bit or too new interpreter) or platform
_WHEEL_ONLY = {"torch", "pytorch", "tensorflow", "tensorflow-gpu", "jaxlib"}


def _torch_build_rules(fs: Facts, add: Add) -> None:
    """A torch without CUDA on a machine with an NVIDIA GPU (collect_env), and a wheel-only package built from
    source."""
    built = fs.first("torch_no_cuda")
    if built and fs.first("gpu_listed"):
        version = fs.first("torch_version")
        source = version is not None and re.search(r"\+git|a0\b|\.dev", version.value) is not None
        add("F18" if source else "F19", "torch-without-cuda-with-gpu", built, torch=version.value if version else None)
    sdist = next((f for f in fs.facts.get("sdist_build", ()) if _norm(f.value) in _WHEEL_ONLY), None)
    add("F19", "wheel-only-package-built", sdist, package=sdist.value if sdist else None)


# packages whose CUDA builds are published as wheels: pip taking one's source archive (or none of its wheels
# fitting) means no wheel was there for this interpreter, platform or torch, and pip compiles or gives up
# (mmcv-full: PyPI has only its source, its CUDA builds are wheels on OpenMMLab's own index, one per torch and CUDA;
# auto-gptq: its CUDA builds are wheels on PyPI and on its own index, one per CUDA)
_CUDA_WHEELS = _WHEEL_ONLY | {
    "torchvision",
    "torchaudio",
    "xformers",
    "bitsandbytes",
    "onnxruntime-gpu",
    "vllm",
    "mmcv-full",
    "auto-gptq",
}


# a CUDA build in a wheel's file name: a +cuNNN local version, or cuda/gpu in the project's name
_CUDA_WHEEL_NAME = re.compile(r"[\w.]*(?:\+cu\d{2,3}|(?i:cuda|gpu))[\w.+-]*\.whl")


# pip's refusal of a wheel named to it, uv's hint and error for a version with no wheel for this platform
_REFUSED = re.compile(r"not a supported wheel|only has wheels|or wheel for the current platform")


def _wheel_rules(fs: Facts, add: Add) -> None:
    """pip's own words about the file it chose: a wheel refused for its tags, a CUDA package's wheels all
    skipped for their tags and none taken, a CUDA package's source archive taken."""
    taken = {_norm(v) for v in fs.values("wheel_taken")}
    for f in fs.facts.get("wheel_tags", ()):
        cuda = _norm(f.value) in _CUDA_WHEELS or _CUDA_WHEEL_NAME.search(f.line) is not None
        refused = _REFUSED.search(f.line) is not None
        if cuda and (refused or _norm(f.value) not in taken):
            add("F19", "wheel-tags-mismatch", f, package=f.value)
    if not (fs.first("slow_build") or unfinished(fs.last)):  # said slow or still building: F20's question
        sdist = next((f for f in fs.facts.get("sdist_fetched", ()) if _norm(f.value) in _CUDA_WHEELS), None)
        add("F19", "cuda-package-sdist", sdist, package=sdist.value if sdist else None)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _own_index_unused(fs: Facts) -> Fact | None:
    """pip built a package from source although a wheel index of that package (its name in the URL) was given,
    or found no version of it there (pip reached the index: no network failure in the log)."""
    urls = [_norm(f.value) for f in fs.facts.get("wheel_index", ())]
    missing: list[Fact] = [] if fs.first("index_unreachable") else fs.facts.get("no_distribution", [])
    for f in (*fs.facts.get("sdist_build", []), *fs.facts.get("sdist_fetched", []), *missing):
        if f.value != "collected" and any(_norm(f.value) in url for url in urls):
            return f
    return None


# ---------------------------------------------------------------- signatures: the tools' own sentences

SIGNATURES: tuple[Signature, ...] = (
    # F19: a prebuilt wheel was wanted but pip builds the sdist. flash-attn's setup.py looks for its own wheel first.
    sig(
        "F19",
        "prebuilt-wheel-not-found",
        words("Precompiled wheel not found. Building from source"),
        needle="Precompiled wheel not found",
    ),
    # A CUDA wheel index (a cuXYZ folder) that lacks the requested version: the index lags behind PyPI (#1682).
    sig(
        "F19",
        "cuda-index-lacks-version",
        r"Looking in indexes:[^\n]*?/(?P<flavour>cu\d{3,})/?(?=[\s,]|$)[^\n]*\n(?:[^\n]*\n){0,3}?[^\n]*?"
        r"Could not find a version that satisfies the requirement (?P<requirement>\S+)",
        flags=re.M,
        needle="Looking in indexes",
        key="Could not find a version",
        span=5,
    ),
)
