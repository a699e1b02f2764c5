"""What machine and what kind of run a log shows, read beside the scan: the evidence that lets a CPU-family id stand or
vetoes it (issue 36 part 1).

The catalog's "runs on the CPU / a CPU-only package / a library missing" family (F15, F18, F19, F23) is NVIDIA's: the
same words appear on a Mac (Metal), an AMD (ROCm/HIP), a Vulkan, SYCL or OpenVINO build, an ARM board, and in a run
that went past a warning. `ContextScanner` is fed the lines the scan reads (the first HEAD characters; the log's last
lines come from scan's `last`) and keeps, per rule, the first line showing

- NVIDIA hardware or a CUDA run (`nvidia`): a GPU's name, nvidia-smi, ggml's or ollama's CUDA devices, Jetson/Tegra;
- another vendor or platform (`other`), in the words those tools print: llama.cpp's Metal, ROCm, Vulkan, SYCL
  start-up lines, ollama's `inference compute` line with `library=rocm|metal|oneapi|vulkan`, onnxruntime's
  CoreML/ROCm/OpenVINO/DirectML providers, torch's `mps` device and ROCm builds, macOS's own marks;
- an ARM board (`arm`): weaker, since a Jetson is ARM with an NVIDIA GPU, so it counts only without `nvidia`;
- failure lines of the tools' own output (`failures`: the first few, for the unnamed answer and the prose rule).

`veto` then judges one candidate (id, its lines) against that evidence and says why it cannot stand, or None. Nothing
here changes a match: scan.py drops the vetoed ones and records the reason (`Veto`) in the report.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from envmgr.buildlog.unnamed import printed
from envmgr.catalog import CATALOG, FailureId

HEAD = 1 << 20  # characters read from the start of a log (a machine says what it is where a run starts): about
# 0.06 s of needle searches on this machine, whatever the log's size
FAILURES = 32  # failure lines kept, in order
NEAR = 40  # lines below a quoted command within which the tool's own failure outranks it

# ids whose evidence is "it ran on the CPU", "a CPU-only package" or "a library did not load": NVIDIA's only where the
# machine is
CPU_FAMILY: frozenset[FailureId] = frozenset({"F15", "F18", "F19", "F23"})
# of these, the ones a command quoted in prose can give, and the ones a warning the run went past can (not F18: a run
# that goes on on the CPU after its runtime's warning is what F18 is)
SOFT: frozenset[FailureId] = frozenset({"F15", "F18", "F19", "F23"})
WARNED: frozenset[FailureId] = frozenset({"F15", "F19", "F23"})
# the ids a CPU run the user chose explains (the CPU run, the CPU package, the driver library it never needed)
CHOSEN: frozenset[FailureId] = frozenset({"F18", "F19", "F23"})


@dataclass(frozen=True)
class Sign:
    kind: str  # nvidia | apple | rocm | vulkan | intel | arm | directml | cpu | windows | linux
    rule: str  # which words (stable, in --json)
    line_no: int
    line: str


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


# (kind, rule, needle, regex): the needle is a literal every match holds, searched first in a batch
_SIGNS: tuple[tuple[str, str, str, re.Pattern[str]], ...] = (
    # NVIDIA hardware or a CUDA device found (facts.py `gpu_seen` words; ggml-cuda.cu's `found %d CUDA devices`, ollama
    # gpu/types.go `inference compute ... library=cuda`, nvidia-smi's header, the L4T/Jetson boards)
    ("nvidia", "nvidia-smi", "NVIDIA-SMI", _rx(r"NVIDIA-SMI \d")),
    ("nvidia", "gpu-name", "NVIDIA", _rx(r"\bNVIDIA (?:GeForce|RTX|Quadro|TITAN|Tesla|[AHLT]\d+|Jetson|Graphics)")),
    ("nvidia", "gpu-name", "GeForce", _rx(r"\bGeForce\b")),
    ("nvidia", "gpu-name", "RTX", _rx(r"\bRTX ?A?\d{3,4}\b")),
    ("nvidia", "gpu-name", "GTX", _rx(r"\bGTX ?\d{3,4}\b")),
    ("nvidia", "gpu-name", "Tesla", _rx(r"\bTesla [KPVMT]?\d")),
    ("nvidia", "cuda-devices", "CUDA devices", _rx(r"found [1-9]\d* CUDA devices")),
    ("nvidia", "cuda-device-0", "CUDA0", _rx(r"\bCUDA0\b")),
    ("nvidia", "library-cuda", "library=cuda", _rx(r"\blibrary=cuda")),
    ("nvidia", "jetson", "egra", _rx(r"(?i:\btegra\b)")),
    ("nvidia", "jetson", "etson", _rx(r"(?i:\bjetson\b)")),
    ("nvidia", "jetson", "l4t", _rx(r"(?i:\bl4t\b)")),
    ("nvidia", "jetson", "L4T", _rx(r"\bL4T\b")),
    # Apple: ggml-metal's start-up lines (ggml-metal.m `ggml_metal_init:`, `ggml_metal_device_init`), its buffers, the
    # chip, the build flags, macOS paths and compilers; torch's MPS device (not on any other machine)
    ("apple", "metal", "metal", _rx(r"\bggml_metal_\w+|\bggml_backend_metal\w*|\blibrary=metal\b|offload to metal")),
    ("apple", "metal", "METAL", _rx(r"\bGGML_(?:USE_)?METAL\b|\bLLAMA_METAL\b")),
    (
        "apple",
        "metal",
        "Metal",
        _rx(
            r"-framework Metal\b|\bMetal (?:compute |KV )?buffer|\bMetal Support: |"
            r"using device Metal|\bMetal_Mapped\b"
        ),
    ),
    ("apple", "metal", "MTL", _rx(r"\bMTL\d\b")),
    ("apple", "chip", "Apple M", _rx(r"\bApple M[1-9](?: (?:Pro|Max|Ultra))?\b")),
    ("apple", "chip", " chip", _rx(r"\bM[1-5](?: (?:Pro|Max|Ultra))? chip\b")),
    # Python's platform.platform() on a Mac, and the reporter naming macOS with its version or name
    (
        "apple",
        "macos-said",
        "acOS",
        _rx(
            r"\bmacOS-1\d(?:\.\d+)*-(?:arm64|x86_64)|\b[Mm]acOS (?:X )?1\d(?:\.\d+)*\b|"
            r"\bmacOS (?:Sonoma|Ventura|Sequoia|Monterey|Big Sur|Tahoe)\b"
        ),
    ),
    (
        "apple",
        "macos",
        "Darwin",
        _rx(
            r"\bUNAME_S:\s+Darwin|Darwin Kernel Version|arm64-apple-darwin|"
            r"x86_64-apple-darwin|\bsystem=Darwin\b"
        ),
    ),
    ("apple", "macos", "Apple clang", _rx(r"\bApple clang version|\bAppleClang \d")),
    (
        "apple",
        "macos",
        "macosx_",
        _rx(
            r"^\s*(?:Downloading|Using cached|Processing|Saved|Obtaining)\b[^\n]*"
            r"-macosx_\d+_\d+_(?:arm64|x86_64|universal2)\.whl"
        ),
    ),
    ("apple", "macos", "/opt/homebrew/", _rx(r"/opt/homebrew/")),
    # conda's and pixi's virtual packages and platforms on a Mac (conda/conda#15501: __osx, __archspec=1=m1)
    ("apple", "conda-osx", "osx-", _rx(r"\bPlatform: osx-(?:arm)?64\b|/osx-(?:arm)?64\b")),
    ("apple", "conda-osx", "__osx=", _rx(r"\b__osx=\d")),
    ("apple", "conda-osx", "__archspec=1=m", _rx(r"\b__archspec=1=m[1-9]\b")),
    ("apple", "macos", "/Users/", _rx(r"(?<![A-Za-z]:)(?<![\\\w])/Users/[\w.-]+/")),
    ("apple", "macos", "Python.framework", _rx(r"/Library/Frameworks/Python\.framework/")),
    (
        "apple",
        "mps",
        "mps",
        _rx(
            r"\bdevice[=(: ]+['\"]?mps\b|\bmps:0\b|\btorch\.backends\.mps\b|\bMPS backend\b|"
            r"\bPYTORCH_ENABLE_MPS_FALLBACK\b"
        ),
    ),
    ("apple", "coreml", "CoreML", _rx(r"\bCoreMLExecutionProvider\b")),
    # AMD: ggml-cuda.cu built for HIP prints ROCm in its own messages; ollama's discovery (discover/amd_linux.go,
    # amd_windows.go) and its inference compute line; torch's ROCm builds; the gfx targets
    (
        "rocm",
        "ggml-rocm",
        "ROCm",
        _rx(
            r"\bfailed to initialize ROCm\b|\bno ROCm-capable device\b|"
            r"\bfound \d+ ROCm devices\b|\bROCm devices?:"
        ),
    ),
    ("rocm", "ollama-rocm", "library=rocm", _rx(r"\blibrary=rocm\b")),
    (
        "rocm",
        "ollama-amdgpu",
        "amdgpu",
        _rx(
            r"\bamdgpu (?:is supported|is not supported|detected)\b|"
            r"\bamdgpu version file missing\b"
        ),
    ),
    ("rocm", "ollama-rocm", "rocm_", _rx(r"runners=\"?\[(?![^\]\n]*cuda)[^\]\n]*\brocm_")),
    (
        "rocm",
        "torch-rocm",
        "rocm",
        _rx(
            r"\+rocm\d|\bis_rocm: True\b|detected platform rocm\b|"
            r"\bROCMExecutionProvider\b|\bMIGraphXExecutionProvider\b"
        ),
    ),
    ("rocm", "hip-build", "HIP", _rx(r"\b(?:GGML_HIP(?:BLAS)?|LLAMA_HIPBLAS)=(?:ON|on|1)\b|-DGGML_USE_HIP(?:BLAS)?\b")),
    ("rocm", "radeon", "Radeon", _rx(r"\bAMD Radeon\b|\bRadeon (?:RX|Pro|Graphics)\b")),
    ("rocm", "gfx", "gfx", _rx(r"\bgfx(?:90[0-9a]|94[0-2]|10[0-3]\d|11[0-5]\d|120\d)\b")),
    # Vulkan and Intel: ggml-vulkan.cpp `ggml_vulkan: Found %zu Vulkan devices`, ggml-sycl, OpenVINO, oneAPI, XPU
    (
        "vulkan",
        "ggml-vulkan",
        "ulkan",
        _rx(
            r"\bggml_vulkan: |\bGGML_VULKAN\b|\bVulkan0\b|\blibrary=vulkan\b|"
            r"using device Vulkan"
        ),
    ),
    ("intel", "sycl", "SYCL", _rx(r"\bggml_sycl\w*|\bGGML_SYCL\b|\[SYCL\]|\blibrary=oneapi\b")),
    ("intel", "sycl", "sycl", _rx(r"\bggml_sycl\w*|\blibggml-sycl")),
    ("intel", "openvino", "OpenVINO", _rx(r"\bOpenVINO(?:ExecutionProvider)?\b")),
    ("intel", "openvino", "openvino_", _rx(r"\bopenvino_intel_\w+|\bopenvino_\w*plugin\b")),  # its plugins' names
    ("intel", "xpu", "xpu", _rx(r"\bintel_extension_for_pytorch\b|\bdevice[=(: ]+['\"]?xpu\b|\bxpu:0\b")),
    ("intel", "arc", "Intel(R) Arc", _rx(r"\bIntel\(R\) (?:Arc|Iris|UHD)\b")),
    ("intel", "intel-gpu", "Intel ", _rx(r"\bIntel (?:GPU|Arc|Iris|UHD|HD Graphics)\b")),
    ("directml", "directml", "DmlExecutionProvider", _rx(r"\bDmlExecutionProvider\b")),
    ("directml", "directml", "directml", _rx(r"\btorch_directml\b|\bonnxruntime-directml\b")),
    # the CPU chosen on purpose: a device or flag the user gave (not pip's CPU index, which is F19's own evidence)
    ("cpu", "cpu-chosen", "cpu", _rx(r"--device[= ]['\"]?cpu\b|\bdevice\s*=\s*['\"]cpu['\"]|--use-cpu\b")),
    ("cpu", "cpu-chosen", "use_gpu", _rx(r"\buse_gpu\s*=\s*False\b")),
    ("cpu", "cpu-chosen", "CUDA_VISIBLE_DEVICES", _rx(r"\bCUDA_VISIBLE_DEVICES\s*=\s*(?:\"\"|''|-1\b)")),
    ("cpu", "cpu-chosen", "_CU", _rx(r"-D(?:GGML_CUDA|LLAMA_CUBLAS|LLAMA_CUDA)=(?:OFF|off|0)\b")),
    # whisper.cpp's `-ng, --no-gpu` (examples/cli: disable GPU), given on a command line (issue 36)
    ("cpu", "cpu-chosen", "-ng", _rx(r"(?<![\w-])-ng(?=[ \t\r\n]|$)")),
    ("cpu", "cpu-chosen", "--no-gpu", _rx(r"(?<![\w-])--no-gpu\b")),
    # the operating system the paths are of (for the ids the catalog states for one system only: F15 is Windows',
    # F23 Linux's): a drive path or a WinError; an absolute POSIX path of a system folder (not a URL's: no word, dot
    # or colon before it; a Mac's /Users/ and /opt/homebrew/ are Apple's signs above)
    ("windows", "drive-path", ":\\", _rx(r"(?<![\w/])[A-Za-z]:\\[\w .()$~-]+\\")),
    ("windows", "winerror", "WinError", _rx(r"\[WinError \d+\]")),
    ("windows", "windowspath", "WindowsPath(", _rx(r"\bWindowsPath\(")),  # pathlib's repr on Windows
    ("linux", "posix-path", "/usr/", _rx(r"(?<![\w.:/~-])(?<!WindowsPath\(')/usr/(?:local|lib|bin|include|share)\b")),
    ("linux", "posix-path", "/home/", _rx(r"(?<![\w.:/~-])/home/[\w.-]+/")),
    ("linux", "posix-path", "/root/", _rx(r"(?<![\w.:/~-])/root/")),
    ("linux", "posix-path", "/opt/", _rx(r"(?<![\w.:/~-])/opt/(?!homebrew/)[\w.-]+/")),
    ("linux", "posix-path", "/mnt/", _rx(r"(?<![\w.:/~-])/mnt/[\w.-]+/")),
    # an ARM board (weak: a Jetson is one too): lscpu's architecture, the ARM boards' names, ggml's system line
    ("arm", "arm", "aarch64", _rx(r"\bArchitecture:\s+aarch64\b|\blinux_aarch64\.whl\b|\bPlatform: linux-aarch64\b")),
    (
        "arm",
        "arm",
        "arm64",
        _rx(
            r"\bUNAME_M:\s+arm64\b|\(arm64 +processor\)|\barm64 processor\b|"
            r"\bArchitecture:\s+arm64\b"
        ),
    ),
    ("arm", "arm-board", "aspberry", _rx(r"(?i:\braspberry ?pi\b)")),
    ("arm", "arm-board", "range", _rx(r"(?i:\borange ?pi\b)")),
    ("arm", "arm-board", "RK3588", _rx(r"\bRK3588\b")),
    ("arm", "arm-board", "rmbian", _rx(r"(?i:\barmbian\b)")),
    ("arm", "arm-board", "armv7l", _rx(r"\barmv7l\b")),
    ("arm", "arm-board", "ARM_FMA = 1", _rx(r"\bNEON = 1 \| ARM_FMA = 1\b")),
)
# Apple's signs that are a person's words (a chip, a macOS version named): as another vendor's, they count only where
# the log shows no NVIDIA GPU
_SAID = frozenset({"chip", "macos-said"})
_NEEDLES = tuple(dict.fromkeys(n for _, _, n, _ in _SIGNS))

# a failure line of a tool's own output (not a person's sentence about it): an error prefix or code, a traceback,
# an exception, make/ninja/MSBuild/CMake's failure lines, pip's, a loader's, a crash
_FAILURE = re.compile(
    r"^[ \t]*(?:[\w.+-]+(?::\d+)*: )?(?:fatal )?error(?:\[E\d+\])?:|^[ \t]*ERROR\b|\bERROR: |^[ \t]*FAILED\b|"
    # a compiler's place and error: gcc/clang file:line[:col], MSVC/nvcc file(line[,col]), MSVC's codes
    r":\d+(?::\d+)?: (?:fatal )?error\b|\(\d+(?:,\d+)?\)\s*: (?:fatal )?error\b|\berror [A-Z]{1,4}\d{3,5}\s*:|"
    r"\binternal compiler error\b|\bCMake Error\b|^[ \t]*Traceback \(most recent call last\)|"
    r"^[ \t]*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\b: |\berror: subprocess-exited-with-error\b|"
    r"\bmake(?:\[\d+\])?: \*\*\* |\bninja: build stopped\b|\bFailed to build\b|\bfailed with exit code\b|"
    r"\breturned non-zero exit status\b|\bSegmentation fault\b|\bcore dumped\b|\bGGML_ASSERT\b|"
    r"\bcannot open shared object file\b|\bterminate called after\b|^[ \t]*Error: |\blevel=ERROR\b|"
    # a runtime's own failure: CUDA's error string, a tool prefix then "failed to", apt's E:
    r"\bCUDA error: |^[ \t]*[\w.-]+: (?:failed|unable) to\b|^E: "
)
# failure lines no person writes: a compiler's place and error, gcc's internal error, apt's prefix
_STRONG = re.compile(
    r":\d+(?::\d+)?: (?:fatal )?error\b|\(\d+(?:,\d+)?\)\s*: (?:fatal )?error\b|"
    r"\binternal compiler error\b|^E: "
)
_FAILURE_NEEDLES = (
    "rror",
    "FAILED",
    "Traceback",
    "Exception",
    "make",
    "ninja",
    "ailed",
    "exit status",
    "Segmentation",
    "core dumped",
    "GGML_ASSERT",
    "shared object",
    "terminate called",
    "unable to",
    "E: ",
)

# a line a person wrote or a command they typed (quoted in the issue), not a tool's output
_COMMAND = re.compile(
    r"^[ \t>`*-]*(?:\$ ?|# |PS [A-Z]:\\[^>\n]*> ?|\([\w.-]+\)\s*(?:[\w@.:~/\\-]+\s*)?[$#>]\s*|"
    r"[A-Z]:\\[^>\n]*> ?)?(?:sudo\s+)?(?:(?:export |set )?[A-Z_]+=\S*\s+)*"
    r"(?:pip3?|python3?(?:\.\d+)?(?: -m pip)?|py -m pip|conda|mamba|uv(?: pip)?|poetry|pixi|"
    r"CMAKE_ARGS=\S*|FORCE_CMAKE=\S*)\s+(?:install|add|create|sync)\b"
)
# a reporter's own voice (a tool's message seldom says I, my, we)
_VOICE = re.compile(r"\b(?:I|I'm|I've|I'd|[Mm]y|me|[Ww]e|[Oo]ur)\b")
_WORD = re.compile(r"[(\"'`*]?[A-Za-z][a-z']*[)\"'`*]?[,.;:!?]*")
# the run's own warning (not an error): onnxruntime's [W:onnxruntime, Python's UserWarning, a log level of WARN
_WARNING = re.compile(
    r"\[W:onnxruntime|\bUserWarning\b|\blevel=WARN\b|^[ \t]*(?:WARNING|Warning|warning)\b[: ]|"
    r" W [\w./-]+:\d+\]|\bwarnings\.warn\("
)
# the run going on to do its work after a warning: a result written, a progress bar done, timings, pip's success
_RAN_ON = re.compile(
    r"\bSuccessfully (?:installed|built)\b|\b100%\|[^\n]*\]|\bllama_(?:print_timings|perf_\w+):|"
    r"\btokens per second\b|\b(?:Results|Output|Image|Model) saved\b|\bsaved to\b|"
    r"\bProcessing complete\b|\bDone\.?$|\bfinished\b|\bcompleted successfully\b|\bInference time\b|"
    # Keras's epochs and their progress bars
    r"^Epoch \d+/\d+$|\[=+\] - \d+m?s\b",
    re.I | re.M,
)


@dataclass(frozen=True)
class Failure:
    line_no: int
    line: str


@dataclass
class ContextScanner:
    """Feed (line numbers, texts) batches; `signs` holds the first line of each (kind, rule), `failures` the first
    FAILURES failure lines. Reads the first HEAD characters only: bounded work whatever the log's size."""

    signs: dict[tuple[str, str], Sign] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)  # the first FAILURES failure lines
    read: int = 0

    def feed(self, nums: list[int], texts: list[str]) -> None:
        if self.read >= HEAD or not texts:
            return
        self.read += sum(map(len, texts)) + len(texts)
        body = "\n".join(texts)
        for n in _NEEDLES:
            if n not in body:
                continue
            for kind, rule, needle, rx in _SIGNS:
                if needle != n or (kind, rule) in self.signs:
                    continue
                for no, text in zip(nums, texts, strict=True):
                    if n in text and rx.search(text):
                        self.signs[(kind, rule)] = Sign(kind, rule, no, text.strip()[:400])
                        break
        if len(self.failures) < FAILURES and any(n in body for n in _FAILURE_NEEDLES):
            for no, text in zip(nums, texts, strict=True):
                if len(self.failures) >= FAILURES:
                    break
                if failure_line(text):
                    self.failures.append(Failure(no, text.strip()))

    def first(self, kind: str) -> Sign | None:
        return min((s for (k, _), s in self.signs.items() if k == kind), key=lambda s: s.line_no, default=None)

    def platform(self) -> Platform:
        others = [s for s in self.signs.values() if s.kind not in ("nvidia", "arm", "cpu", "windows", "linux")]
        mac = [s for s in others if s.kind == "apple" and s.rule not in _SAID]
        return Platform(
            self.first("nvidia"),
            min(others, key=lambda s: s.line_no, default=None),
            self.first("arm"),
            tuple(self.failures),
            min(mac, key=lambda s: s.line_no, default=None),
            self.first("cpu"),
            self.first("windows"),
            self.first("linux"),
        )


@dataclass(frozen=True)
class Platform:
    nvidia: Sign | None  # NVIDIA hardware or a CUDA device in the log
    other: Sign | None  # the first line of another vendor or platform
    arm: Sign | None  # an ARM board
    failures: tuple[Failure, ...] = ()
    mac: Sign | None = None  # a Mac's own output (Metal, Darwin, a macOS path, MPS): no NVIDIA GPU, whatever else
    cpu: Sign | None = None  # the CPU chosen on purpose (a device or build flag the user gave)
    windows: Sign | None = None  # a Windows path or WinError
    linux: Sign | None = None  # an absolute POSIX path of a system or home folder (not a Mac's)

    def first_failure(self, last: Iterable[tuple[int, str]] = ()) -> Failure | None:
        """The first failure line of the tools' own output: from the head, else from the log's last lines."""
        if self.failures:
            return self.failures[0]
        return next((Failure(no, t.strip()) for no, t in last if failure_line(t)), None)


@dataclass(frozen=True)
class Veto:
    id: FailureId
    reason: str  # platform | no_nvidia | prose | warning_then_ran (stable, in --json)
    why: str  # in words
    line_no: int
    line: str


def failure_line(text: str) -> bool:
    """A failure line of a tool's own output: its words (`_FAILURE`), and not a person's sentence about it (a sentence
    that bears a program's marks, `RuntimeError: nvrtc: error: failed to open ...`, is the program's)."""
    if len(text) >= 4000 or not _FAILURE.search(text) or _WARNING.search(text):  # a warning is no failure line
        return False
    return printed(text) or bool(_STRONG.search(text)) or not sentence(text)


def sentence(line: str) -> bool:
    """A person's sentence: five words or more, most of them plain words (as unnamed._sentence)."""
    words = line.split()
    return len(words) >= 5 and sum(1 for w in words if _WORD.fullmatch(w)) >= 0.7 * len(words)


_NAMES = {
    "apple": "an Apple machine (macOS, Metal or MPS)",
    "rocm": "an AMD GPU (ROCm/HIP)",
    "vulkan": "a Vulkan build",
    "intel": "an Intel GPU or accelerator (SYCL, OpenVINO, oneAPI, XPU)",
    "directml": "DirectML",
    "arm": "an ARM board without an NVIDIA GPU",
}


def veto(
    fid: FailureId, line_no: int, lines: Sequence[tuple[int, str]], platform: Platform, last: Sequence[tuple[int, str]]
) -> Veto | None:
    """Why candidate `fid` (first at `line_no`, its evidence `lines`) cannot stand in this log, or None: the machine
    is not NVIDIA's, the candidate's line is the reporter's (a command or their words) with the tool's own failure
    just below, or it is a warning the run went past."""
    if fid not in CPU_FAMILY:
        return None
    found = _platform_veto(fid, platform)
    if found is not None or fid not in SOFT:
        return found
    evidence = [t for n, t in lines if n == line_no] or [t for _, t in lines[:1]]
    text = evidence[0] if evidence else ""
    if not text:
        return None
    return _prose_veto(fid, text, line_no, {n for n, _ in lines} | {line_no}, platform, last) or _warning_veto(
        fid, text, line_no, platform, last
    )


def _platform_veto(fid: FailureId, platform: Platform) -> Veto | None:
    """Apple has had no CUDA since macOS 10.13: its sign vetoes whatever else the log shows; another vendor's or an
    ARM board's counts where the log shows no NVIDIA GPU (a laptop's AMD iGPU beside a GeForce, a Jetson)."""
    other = platform.mac or platform.other
    if other is not None and (platform.mac is not None or platform.nvidia is None):
        return Veto(
            fid,
            "platform",
            f"the log shows {_NAMES[other.kind]}, not an NVIDIA GPU: the catalog's {fid} is an NVIDIA failure",
            other.line_no,
            other.line,
        )
    if platform.arm is not None and platform.nvidia is None:
        return Veto(
            fid,
            "platform",
            f"the log shows {_NAMES['arm']}: the catalog's {fid} is an NVIDIA failure",
            platform.arm.line_no,
            platform.arm.line,
        )
    system = _other_system(fid, platform)
    if system is not None:
        return system
    if platform.cpu is not None and fid in CHOSEN:
        return Veto(
            fid,
            "cpu_chosen",
            f"the run was given the CPU on purpose: {fid}'s CPU run or CPU package is what was asked for",
            platform.cpu.line_no,
            platform.cpu.line,
        )
    return None


def _other_system(fid: FailureId, platform: Platform) -> Veto | None:
    """An id the catalog states for one system only (F15 Windows', F23 Linux's), in a log whose paths are all of the
    other system's: a Windows program looking for a Linux library (`libcudart.so` under `C:\\...`) is not F23."""
    systems = CATALOG[fid].platforms if fid in CATALOG else ()
    if systems == ("linux",) and platform.windows is not None and platform.linux is None:
        seen, name = platform.windows, "Windows"
    elif systems == ("windows",) and platform.linux is not None and platform.windows is None:
        seen, name = platform.linux, "Linux"
    else:
        return None
    return Veto(
        fid,
        "platform",
        f"the log's paths are {name}'s: the catalog's {fid} is a {systems[0].capitalize()} failure",
        seen.line_no,
        seen.line,
    )


def _prose_veto(
    fid: FailureId, text: str, line_no: int, own: set[int], platform: Platform, last: Sequence[tuple[int, str]]
) -> Veto | None:
    """A command the reporter quoted, or their own sentence, outranked by a failure line of the tool's own output at
    most NEAR lines below it (not one of the candidate's own lines)."""
    if not (_COMMAND.search(text) or (sentence(text) and _VOICE.search(text) and not printed(text))):
        return None
    below = (*platform.failures, *(Failure(n, t.strip()) for n, t in last))
    after = next(
        (f for f in below if line_no < f.line_no <= line_no + NEAR and f.line_no not in own and failure_line(f.line)),
        None,
    )
    if after is None:
        return None
    return Veto(
        fid,
        "prose",
        f"{fid}'s line is a command or words quoted by the reporter; the tool's own failure "
        f"follows at line {after.line_no}",
        after.line_no,
        after.line,
    )


def _warning_veto(
    fid: FailureId, text: str, line_no: int, platform: Platform, last: Sequence[tuple[int, str]]
) -> Veto | None:
    """A warning (a library probe, a provider fallback) the run went past, on a machine the log shows no NVIDIA GPU
    of: where it shows one, the library that did not load is why the GPU went unused, and the id stands."""
    if fid not in WARNED or platform.nvidia is not None or not _WARNING.search(text):
        return None
    ran = _ran_on(last, line_no)
    if ran is None:
        return None
    return Veto(
        fid,
        "warning_then_ran",
        f"{fid}'s line is a warning the run went past: it went on to line {ran[0]} with no failure after it",
        ran[0],
        ran[1].strip(),
    )


def _ran_on(last: Sequence[tuple[int, str]], line_no: int) -> tuple[int, str] | None:
    """The last line after `line_no` among the log's last lines that shows the run doing its work, with no failure
    line after it."""
    found = None
    for no, text in last:
        if no <= line_no:
            continue
        if _RAN_ON.search(text):
            found = (no, text)
        elif found is not None and failure_line(text):
            found = None
    return found
