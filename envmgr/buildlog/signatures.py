"""Log signatures: compiled regexes that tie a line of a build or load log to a catalog id.

Sources: facts/failures.md §2 and §9, checked against the real logs in tests/corpus (SOURCES.md).
The patterns run over text that logscan has already normalised (ANSI codes stripped, CRLF and lone
CR turned into LF, hard-wrapped MSBuild lines re-joined). They are unanchored, so prefixes such as
MSBuild's `1>`, VS Code's `[build] `, pip's indentation or a timestamp do not matter, and words are
joined with `\\s+` so that CMake's and clang's word-wrapped messages still match. Only text that
every locale prints in English is matched literally (CMake, nvcc, CPython, the #error text of
host_config.h); for localised tools (MSBuild, Windows) the error code is matched instead.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

Extract = Callable[[re.Match[str]], dict]


@dataclass(frozen=True)
class Signature:
    id: str                      # catalog id, F01…F23
    name: str                    # short label for --json and tests
    regex: re.Pattern[str]
    extract: Extract | None = None
    check: Callable[[re.Match[str]], bool] | None = None   # reject a match the regex alone can't
    needle: tuple[str, ...] = ()  # literals, one of which the text must contain (logengine skips the rest)
    span: int = 3                 # lines below the needle the message may still run on
    key: str = ""                 # a second literal, for signatures that share a common needle


_PATH_CUDA = r"CUDA[\\/]+v(?P<cuda>\d+\.\d+)[\\/]"   # a toolkit folder: ...\CUDA\v12.4\...


def words(phrase: str) -> str:
    """A literal phrase whose spaces may be any whitespace run, line breaks included."""
    return r"\s+".join(re.escape(w) for w in phrase.split())


def _toolkit_differs(m: re.Match[str]) -> bool:
    return m.group("nvcc") != m.group("toolkit")


def _named(m: re.Match[str]) -> dict:
    d = {k: v.strip() for k, v in m.groupdict().items() if v}
    if "\\\\" in d.get("path", ""):   # repr() of a Windows path doubles its backslashes
        d["path"] = d["path"].replace("\\\\", "\\")
    return d


def _sig(id_: str, name: str, pattern: str, extract: Extract | None = _named, flags: int = 0,
         check=None, needle: str | tuple[str, ...] = (), span: int = 3, key: str = "") -> Signature:
    """Every signature names its needle(s): a literal the regex cannot match without (tested on the
    corpus), so a window of a long log without it costs one substring search, not a regex pass."""
    needles = (needle,) if isinstance(needle, str) else tuple(needle)
    if not needles:
        raise ValueError(f"signature {name} has no needle")
    return Signature(id_, name, re.compile(pattern, flags), extract, check, needles, span, key)


def _cuda_pair_differs(m: re.Match[str]) -> bool:
    nvcc = _nvcc_run(m)
    return nvcc is not None and m.group("props") != nvcc


# The nvcc a CUDA task ran: MSBuild echoes the command line above its MSB3721 line, and that line repeats it
# (cut off in some copies, unsloth #4386). The echo is looked for in the lines above the match only (16: an
# echo the console wrapped at 120 columns and left unjoined spans about 10).
_NVCC_RUN = re.compile(r"(?i:cuda)[\\/]+v(\d+\.\d+)[\\/]+bin[\\/]+nvcc")
_ECHO_LINES = 16


def _lines_above(text: str, pos: int, lines: int) -> int:
    """Where the text `lines` lines above position `pos` starts (0 at the top of the text)."""
    start = pos
    for _ in range(lines):
        start = text.rfind("\n", 0, start - 1) if start > 0 else -1
        if start < 0:
            return 0
    return start


def _nvcc_run(m: re.Match[str]) -> str | None:
    if m.group("nvcc"):
        return m.group("nvcc")
    start = _lines_above(m.string, m.start(), _ECHO_LINES)
    found = _NVCC_RUN.findall(m.string, start, m.start())
    return found[-1] if found else None


def _targets_nvcc(m: re.Match[str]) -> dict:
    d = _named(m)
    d["nvcc"] = _nvcc_run(m)
    return d


def _line_before(m: re.Match[str]) -> str:
    return m.string[m.string.rfind("\n", 0, m.start()) + 1: m.start()]


def _host_config(m: re.Match[str]) -> dict:
    """`...\\CUDA\\v11.8\\include\\crt/host_config.h(153): fatal error C1189: #error:  -- unsupported ...`
    A console that wrapped the line at 120 columns (fewer than three such lines: not re-joined) leaves the
    header on the line above; a lower-case install path (`...\\cuda\\v9.1\\include`) is the same folder."""
    d, before = _named(m), _line_before(m)
    if "host_config" not in before:
        above = m.string.rfind("\n", 0, max(0, m.start() - len(before) - 1))
        before = m.string[above + 1: m.start()]
    cuda, header = re.search(_PATH_CUDA, before, re.I), re.search(r"host_config\.h\((\d+)\)", before)
    if cuda:
        d["cuda"] = cuda.group("cuda")
    if header:
        d["header_line"] = header.group(1)
    lo, hi = d.pop("lo", None) or d.pop("lo2", None), d.pop("hi", None) or d.pop("hi2", None)
    if lo and hi:
        d["supported"] = f"{lo}-{hi}"
    return d


def _stl(m: re.Match[str]) -> dict:
    """`...\\MSVC\\14.42.34433\\include\\yvals_core.h(892): error: ... STL1002: ...`"""
    d = _named(m)
    msvc = re.search(r"MSVC[\\/]+(14\.\d+)\.\d+[\\/]+include", _line_before(m))
    if msvc:
        d["msvc"] = msvc.group(1)
    return d


def _unused_vars(m: re.Match[str]) -> dict:
    return {"unused": [n.strip() for n in m.group("names").splitlines() if n.strip()]}


def _flag_unused(m: re.Match[str]) -> bool:
    """An unused variable that names a GPU build flag (LLAMA_CUDA, GGML_CUBLAS, ...): CMake lists every unused -D,
    and a harmless one (CUDNN_HOME, a toolchain hint) is no F09 (clean train logs)."""
    return re.search(r"\b(?:LLAMA|GGML|WHISPER)_|CUBLAS|CUDA", m.group("names")) is not None


# CMake's generators whose names have more than one word, by their first word (Kitware/CMake's generator
# list, printed under this error): a name that is only such a word was cut at its first space
_GENERATOR_FIRST_WORDS = frozenset(("Unix", "MinGW", "MSYS", "NMake", "Borland", "Watcom", "Green", "Visual",
                                    "CodeBlocks", "CodeLite", "Eclipse", "Kate", "Sublime"))
_NAMED_GENERATOR = r"Could not create named generator (?P<generator>[^\n]+)"


def _generator_cut(m: re.Match[str]) -> bool:
    """The name CMake was given for -G is a piece of a generator's name, not an unknown generator: cut at its
    first space (`-G Unix Makefiles` unquoted, CMAKE_ARGS split by a shell or shlex), led by a space, carrying
    the shell's quotes (`"Ninja"` passed as one argument) or running into the next -D setting."""
    raw = m.group("generator").rstrip()
    name = raw.strip().strip("`")
    return (raw != raw.lstrip() or name[:1] in "\"'" or name[-1:] in "\"'" or name in _GENERATOR_FIRST_WORDS
            or re.search(r"-D[A-Z]", name) is not None)


_DRIVER_REASON = re.compile(r"(?i)driver|insufficient")
# an architecture list the build was given (CMake's message, a *_CUDA_ARCHITECTURES value, torch's list)
ARCH_GIVEN = (r"(?i:architectures? from CMake variable)|\b\w*CUDA_ARCHITECTURES=\"?\d|"
              r"TORCH_CUDA_ARCH_LIST=[\"']?\d")
_ARCH_GIVEN = re.compile(ARCH_GIVEN)


GPU_WANTED = r"(?i:offload|gpu[_-]layers|to GPU\b)|cuda_host_malloc|-ngl\b|--gpus\b"
_GPU_WANTED = re.compile(GPU_WANTED)


def _gpu_wanted(m: re.Match[str]) -> bool:
    """The lines that came with a ggml CUDA probe ask for GPU work (the window the match was found in)."""
    return _GPU_WANTED.search(m.string) is not None


def _stale_path(m: re.Match[str]) -> bool:
    path = m.group("path").lower()
    return "cuda" in path or "hip" in path or "nvidia" in path



# F24's components: the libraries ggml-cuda and other CUDA projects link, and their headers.
_COMPONENT_LIBS = r"cublasLt|cublas|curand|cusparse|cusolver|cufft|nvrtc|nvJitLink|cudart_static|cudadevrt|nvToolsExt"
_COMPONENT_HEADERS = r"cublas_v2\.h|cublas_api\.h|cublasLt\.h|curand\.h|curand_kernel\.h|cusparse\.h|nvrtc\.h|" \
                     r"cuda/std/\w+|thrust/[\w/]+\.h|cub/[\w/]+\.cuh"
_HEADER_OF = {"cublas_v2.h": "cublas", "cublas_api.h": "cublas", "cublasLt.h": "cublasLt", "curand.h": "curand",
              "curand_kernel.h": "curand", "cusparse.h": "cusparse", "nvrtc.h": "nvrtc"}


def _component(m: re.Match[str]) -> dict:
    d = _named(m)
    header = d.pop("header2", None) or d.get("header")
    if header:
        d["header"] = header
        d["component"] = _HEADER_OF.get(header, "cccl")

    return d


# Where the text around a match was written: Windows paths (a drive, backslashes) and no POSIX folder
_WINDOWS_PATH = re.compile(r"(?<![\w/])[A-Za-z]:\\\\?[\w$ ()~.-]|\.exe\b")
_POSIX_PATH = re.compile(r"(?<![\w.])/(?:usr|home|opt|tmp)/")


def _windows_log(m: re.Match[str]) -> bool:
    return _WINDOWS_PATH.search(m.string) is not None and _POSIX_PATH.search(m.string) is None


SIGNATURES: tuple[Signature, ...] = (
    # F01: the VS generator found no CUDA BuildCustomizations (CMake) / a vcxproj's import is missing.
    _sig("F01", "no-cuda-toolset", words("No CUDA toolset found."), needle="CUDA toolset"),
    # CMAKE_GENERATOR_TOOLSET cuda=<toolkit folder> that holds no MSBuild integration (its
    # extras/visual_studio_integration/MSBuildExtensions): Kitware/CMake Source/cmGlobalVisualStudio10Generator.cxx
    _sig("F01", "custom-cuda-toolset-no-integration",
         r"given\s+toolset\s+cuda=(?P<path>[^\n]*?)\s+" + words("cannot detect Visual Studio integration files"),
         needle="integration files", span=4),
    # Localised MSBuild quotes the path its own way (zh “…”, de „…“, fr « … », ja 「…」); a project whose
    # CUDA version property is empty imports "CUDA .props" (brian2genn #127).
    # With CMAKE_GENERATOR_TOOLSET cuda=<folder> CMake's test project imports the props from that toolkit's
    # extras\visual_studio_integration\MSBuildExtensions (Kitware/CMake Modules/CMakeDetermineCompilerId.cmake).
    _sig("F01", "cuda-props-not-found",
         r"(?:MSB4019|MSB4226|imported\s+project)[^\"“”„«»「」\n]*[\"“„«「]\s?(?P<path>[^\"“”„«»「」\n]*?"
         r"(?:[\\/](?P<vc>v1[4-9]0))?[\\/]+(?:BuildCustomizations|MSBuildExtensions)[\\/]+CUDA (?P<cuda>\d+\.\d+)?"
         r"\.(?:props|targets))\s?[\"”“»」]", needle=("BuildCustomizations", "MSBuildExtensions")),
    # F02: one CUDA's MSBuild targets drive another CUDA's nvcc (unsloth #4518).
    # MSBuild's console wraps at ~80 columns with an indent (unsloth #4518), and a toolkit folder may be
    # spelled C:\\Cuda\\v12.8: continuation lines (a newline and whitespace) are allowed, case ignored.
    # The nvcc is read from the MSB3721 line's command or, where that is cut off, from the command echoed above.
    _sig("F02", "targets-nvcc-mismatch",
         r"BuildCustomizations[\\/]+CUDA\s+(?P<props>\d+\.\d+)\.targets\(\d+,\d+\):(?:[^\n]|\n(?=[ \t]))*?MSB3721"
         r"(?:(?:[^\n]|\n(?=[ \t]))*?(?i:cuda)[\\/]+v(?P<nvcc>\d+\.\d+)[\\/]+bin[\\/]+nvcc)?", check=_cuda_pair_differs,
         extract=_targets_nvcc, needle="MSB3721"),
    # The targets the generator picked cannot find their own toolkit (CudaToolkitDir empty: no CUDA_PATH_Vx_y for
    # that version). CUDA 13 prints "The CUDA Toolkit directory ''", older targets name the version.
    _sig("F02", "targets-toolkit-missing",
         r"(?:BuildCustomizations[\\/]+CUDA\s+(?P<props>\d+\.\d+)\.targets\(\d+,\d+\):[^\n]*?)?"
         r"The\s+CUDA\s+Toolkit\s+(?:v(?P<toolkit>\d+\.\d+)\s+)?directory\s+'(?P<dir>[^'\n]*)'\s+does\s+not\s+exist",
         needle="does not exist", key="CUDA Toolkit"),
    # F03: no VS with the C++ tools, or a generator CMake cannot use.
    _sig("F03", "nmake-fallback", r"-- Building for: NMake Makefiles", needle="NMake"),
    _sig("F03", "nmake-missing", r"'nmake'\s+'-\?'", needle="'nmake'"),
    _sig("F03", "no-vs-instance", r"Generator\s+(?P<generator>Visual Studio \d+ \d{4}(?: (?:Win64|ARM|IA64))?)"
         r"\s+could not find any instance\s+of\s+Visual\s+Studio", needle="ould not", key="any instance"),
    # CMAKE_GENERATOR_INSTANCE (or the cache) names a folder that holds no usable Visual Studio.
    _sig("F03", "no-specified-instance", r"Generator\s+(?P<generator>Visual Studio \d+ \d{4}[^\n]*?)\s+could not find"
         r"\s+specified\s+instance\s+of\s+Visual\s+Studio", needle="ould not", key="specified instance"),
    # A generator name that carries its platform (Win64, ARM) together with -A / CMAKE_GENERATOR_PLATFORM.
    _sig("F03", "generator-platform-twice",
         r"Generator\s+(?P<generator>Visual Studio \d+ \d{4}[^\n]*?)\s+does not support platform specification,"
         r"\s+but\s+platform\s+(?P<platform>\S+)\s+was specified", needle="does not support platform"),
    _sig("F03", "no-build-program", words("unable to find a build program corresponding to")
         + r"\s+\"(?P<generator>[^\"]+)\"", needle="build program"),
    _sig("F03", "unknown-generator", _NAMED_GENERATOR, needle="ould not", key="named generator",
         check=lambda m: not _generator_cut(m)),
    # CMAKE_GENERATOR_TOOLSET version=14.xx names an MSVC toolset this Visual Studio does not have installed
    # (Kitware/CMake Source/cmGlobalVisualStudio10Generator.cxx, AuxToolset::PropsMissing)
    _sig("F03", "toolset-version-not-installed",
         words("given toolset and version specification") + r"\s+(?P<toolset>\S+)\s+"
         + words("does not seem to be installed at"), needle="does not seem to be installed", span=4),
    # F04: nvcc's host_config.h rejects the MSVC version (the #error text is English in every locale).
    _sig("F04", "host-config-msvc", words("unsupported Microsoft Visual Studio version!")
         + r"(?:\s+Only\s+the\s+versions\s+(?:between\s+(?P<lo>\d{4})\s+and\s+(?P<hi>\d{4})"
         r"|(?P<lo2>\d{4})(?:,\s+\d{4})*,?\s+and\s+(?P<hi2>\d{4})))?",   # CUDA <= 10: "2012, 2013, 2015 and 2017"
         extract=_host_config, needle="unsupported", key="Microsoft"),
    # F05: the MSVC STL's own CUDA minimum (clang prints "10.1 Update 2"; nvcc wraps it in a static assert).
    _sig("F05", "stl1002", r"STL1002:\s+" + words("Unexpected compiler version, expected CUDA")
         + r"\s+(?P<cuda_min>\d+\.\d+)(?:\s+Update\s+\d+)?\s+or\s+newer", extract=_stl, needle="STL1002"),
    # F06: nvcc and cl.exe.
    _sig("F06", "cl-not-in-path", r"nvcc fatal\s*:\s*Cannot find compiler 'cl\.exe' in PATH",
         needle="Cannot ", key="cl.exe"),
    _sig("F06", "ccbin-conflict", words("Compiler 'cl.exe' in PATH different than the one specified with -ccbin"),
         needle="-ccbin"),
    _sig("F06", "vcvars-setup-failed", words("Could not set up the environment for Microsoft Visual Studio")
         + r"(?:\s+using\s+'(?P<path>[^'\n]+)')?", needle="ould not", key="environment"),
    _sig("F06", "cudafe-crash", r"'cudafe\+\+' died with status 0xC0000005", needle="cudafe++"),
    # F07: no nvcc / toolkit (CMake's own texts, and ggml's).
    _sig("F07", "no-cuda-compiler", words("No CMAKE_CUDA_COMPILER could be found."), needle="CMAKE_CUDA_COMPILER"),
    # CMake 4.3 reworded it "the compiler specified in the environment variable" (Kitware/CMake 108d86f28d,
    # Modules/CMakeDetermineCUDACompiler.cmake)
    _sig("F07", "cudacxx-missing", r"Could\s+not\s+find\s+(?:the\s+)?compiler\s+(?:set|specified)\s+in\s+(?:the\s+)?"
         r"environment\s+variable\s+CUDACXX:\s*(?P<path>[^\s][^\n]*?)\.?[ \t]*$", flags=re.M, needle="ould not",
         key="CUDACXX"),
    # CMAKE_CUDA_COMPILER (or CUDACXX) names a program that is neither a path nor on PATH, or a path with no file:
    # Kitware/CMake Source/cmGlobalGenerator.cxx (EnableLanguage)
    _sig("F07", "cuda-compiler-not-a-path",
         r"The\s+CMAKE_CUDA_COMPILER:\s+(?P<path>\S[^\n]*?)\s+is\s+not\s+a\s+full\s+path", needle="CMAKE_CUDA_COMPILER",
         span=6),
    _sig("F07", "cuda-toolkit-not-found", r"\bCUDA Toolkit not found\b", needle="not found", key="Toolkit"),
    _sig("F07", "cuda-compiler-not-set", words("CMAKE_CUDA_COMPILER not set, after EnableLanguage"),
         needle="CMAKE_CUDA_COMPILER"),
    _sig("F07", "old-ggml-no-nvcc", words("Could not find nvcc, please set CUDAToolkit_ROOT."),
         needle="ould not", key="nvcc"),
    _sig("F07", "old-ggml-cuda-not-found", r"CMake Warning at [^\n]*\(message\):\s+CUDA not found\b",
         needle="not found", key="CMake Warning"),
    # F08: one toolkit's nvcc builds against a torch (or headers, libraries) of another CUDA. torch's cpp_extension
    # compares the nvcc of CUDA_HOME with torch.version.cuda; apex's setup.py does the same in its own words.
    _sig("F08", "torch-cuda-mismatch",
         words("The detected CUDA version") + r"\s+\((?P<cuda>\d+\.\d+)\)\s+"
         + words("mismatches the version that was used to compile PyTorch") + r"\s+\((?P<torch_cuda>\d+\.\d+)\)",
         needle="mismatches the version"),
    _sig("F08", "apex-cuda-mismatch",
         words("Cuda extensions are being compiled with a version of Cuda that does not match the version used to "
               "compile Pytorch binaries.") + r"(?:\s+" + words("Pytorch binaries were compiled with Cuda")
         + r"\s+(?P<torch_cuda>\d+\.\d+))?", needle="does not match the version"),
    # CMake's own two answers disagree: enable_language(CUDA) identified one nvcc, find_package(CUDAToolkit) found
    # another toolkit's headers and libraries (in either order, a few dozen configure lines apart).
    _sig("F08", "cmake-nvcc-then-toolkit",
         r"compiler identification is NVIDIA (?P<nvcc>\d+\.\d+)[^\n]*\n(?:[^\n]*\n){0,40}?[^\n]*?"
         r"Found CUDAToolkit:[^\n]*?\(found version \"(?P<toolkit>\d+\.\d+)", check=_toolkit_differs,
         needle="compiler identification is NVIDIA", span=40),
    _sig("F08", "cmake-toolkit-then-nvcc",
         r"Found CUDAToolkit:[^\n]*?\(found version \"(?P<toolkit>\d+\.\d+)[^\n]*\n(?:[^\n]*\n){0,40}?[^\n]*?"
         r"compiler identification is NVIDIA (?P<nvcc>\d+\.\d+)", check=_toolkit_differs,
         needle="Found CUDAToolkit", span=40),
    # F09: old flag names (the CMake message wraps "Use GGML_CUDA instead" onto its own line).
    # ggml's CMake and Makefile say deprecated (a warning, or FATAL_ERROR for LLAMA_CUBLAS) or removed
    _sig("F09", "deprecated-flag",
         r"\b(?P<flag>(?:LLAMA|GGML|WHISPER)_\w+)\s+(?:is|has\s+been)\s+(?:deprecated|removed)\b",
         needle=("deprecated", "removed")),
    _sig("F09", "unused-variables",
         words("Manually-specified variables were not used by the project:")
         + r"[ \t]*\n(?:[ \t]*\n)*(?P<names>(?:[ \t]+[A-Za-z_]\w*[ \t]*\n)+)", extract=_unused_vars,
         needle="Manually-specified", span=40, check=_flag_unused),
    # F10: CMAKE_ARGS quoting.
    # Not when the extra path is a source file: CMake was run as the compiler (CC/CXX set to cmake), a
    # failure of its own (train log onnxruntime #17517).
    _sig("F10", "extra-path", r"Ignoring extra path from command line:\s*(?P<arg>[^\n]*)", needle="extra path",
         check=lambda m: not re.search(r"\.(?:c|cc|cpp|cxx|cu|o|obj)\"?\s*$", m.group("arg"))),
    _sig("F10", "skbuild-ignored", r"Unsupported CMAKE_ARGS ignored:\s*(?P<arg>[^\n]*)", needle="CMAKE_ARGS"),
    # the generator name reached CMake cut at a space or with the shell's quotes in it (F03 keeps a whole name)
    _sig("F10", "generator-name-cut", _NAMED_GENERATOR, needle="ould not", key="named generator", check=_generator_cut),
    _sig("F10", "cmd-syntax", words("'CMAKE_ARGS' is not recognized as an internal or external command"),
         needle="CMAKE_ARGS"),
    # an architecture list CMake cannot read (8.6, sm_86, 86,89, "86 89": a format from another tool or a split
    # value): the same validation as "contains literal quotes" (Modules/Internal/CMakeCUDAArchitecturesValidate.cmake)
    _sig("F10", "cmake-arch-list-format",
         r"CMAKE_CUDA_ARCHITECTURES:\s+\S[^\n]*\s+is\s+not\s+one\s+of\s+the\s+following",
         needle="not one of the following"),
    # F11: long paths and long command lines (MSBuild codes survive localisation).
    _sig("F11", "object-path-max", r"CMAKE_OBJECT_PATH_MAX", needle="CMAKE_OBJECT_PATH_MAX"),
    _sig("F11", "msb3491", r"\bMSB3491\b", needle="MSB3491"),
    _sig("F11", "filename-too-long", words("The filename or extension is too long"), needle="too long"),
    _sig("F11", "ninja-260", words("Filename longer than 260 characters"), needle="260 characters"),
    _sig("F11", "input-line-too-long", words("The input line is too long"), needle="too long"),
    # F12: arch=native without a GPU. Listed before F13: its text also says "Unsupported gpu architecture".
    _sig("F12", "native-no-gpu", r"Cannot find valid GPU for '-arch=native'", needle="Cannot ", key="valid GPU"),
    # FindCUDA's CUDA_SELECT_NVCC_ARCH_FLAGS (and Caffe's copy) asked the driver for the GPUs at configure time, found
    # none and fell back to a fixed list: the build's archs are a guess unless the build was given a list itself
    _sig("F12", "arch-detection-failed", r"(?i:automatic GPU detection failed)[^\n]*", needle=("detection failed",),
         check=lambda m: _ARCH_GIVEN.search(m.string) is None),
    # CMake's native probe (Modules/CMakeCUDACompilerABI.cu) prints either message when it finds no GPU, and the
    # message becomes the architecture list nvcc is given
    _sig("F12", "native-garbage", r"compute_No CUDA (?i:devices found|architecture detected)", needle="compute_No"),
    # CMake >= 3.24 resolves "native" itself (real log: this machine, tests/corpus/SOURCES.md); 3.28 and later say
    # "no NVIDIA GPU was detected" (Kitware/CMake b32ea7cff0, Source/cmGeneratorTarget.cxx; HIP's "no AMD GPU" is not
    # CUDA's). The needle has no space a console could wrap at.
    _sig("F12", "cmake-native-no-gpu", r"CUDA_ARCHITECTURES\s+is\s+set\s+to\s+\"native\",\s+but\s+no\s+(?:NVIDIA\s+)?"
         r"GPU\s+was\s+detected", needle='"native",'),
    # an architecture list given empty (-DCMAKE_CUDA_ARCHITECTURES= from a script that asked a GPU it did not see):
    # Kitware/CMake Modules/Internal/CMakeCUDAArchitecturesValidate.cmake (3.28+; CMakeDetermineCUDACompiler before)
    _sig("F12", "cmake-arch-list-empty", r"CMAKE_CUDA_ARCHITECTURES\s+must\s+be\s+non-empty\s+if\s+set",
         needle="non-empty"),
    # F13: arch unknown to this nvcc.
    # CMake before 3.24 passes CUDA_ARCHITECTURES "native" on as compute_native (colmap #2232).
    _sig("F13", "unsupported-arch", r"Unsupported gpu architecture '(?P<arch>(?:compute|sm|lto)_(?:\d+[a-z]?|native))'",
         needle="Unsupported gpu architecture"),
    _sig("F13", "arch-value-undefined",
         r"Value '(?P<arch>(?:compute|sm|lto)_\d+[a-z]?|native)' "
         r"is not defined for option 'gpu-(?:architecture|code|name)'",
         needle="is not defined for option"),
    # NVRTC (torch's JIT fusers, CuPy) compiles for the GPU it runs on: a GPU newer than the NVRTC of the
    # installed wheel or toolkit. It names no architecture.
    _sig("F13", "nvrtc-arch-invalid", r"nvrtc:\s+error:\s+invalid\s+value\s+for\s+--gpu-architecture",
         needle="invalid value for"),
    # LLVM's NVPTX backend (triton's bundled compiler) warns and goes on; its ptxas then fails.
    _sig("F13", "llvm-unknown-processor",
         r"'(?P<arch>sm_\d+[a-z]?)' is not a recognized processor for this target", needle="recognized processor"),
    # F14 / F17: run time.
    _sig("F14", "no-kernel-image", words("no kernel image is available for execution on the device"),
         needle="kernel image"),
    _sig("F17", "driver-insufficient", words("CUDA driver version is insufficient for CUDA runtime version"),
         needle="is insufficient"),
    _sig("F17", "driver-combination", words("unsupported display driver / cuda driver combination"),
         needle="unsupported", key="display"),
    _sig("F17", "ptx-toolchain", words("the provided PTX was compiled with an unsupported toolchain"),
         needle="unsupported", key="PTX"),
    # ggml's CUDA init names the runtime's reason: a driver one is F17; any other (no device, an initialization
    # error) leaves ggml on the CPU, F18 (train logs: a cortex.cpp run, an ollama run on purpose without GPUs).
    _sig("F17", "ggml-init-failed", r"ggml_cuda_init: failed to initialize CUDA: (?P<reason>[^\n]*)",
         needle="ggml_cuda_init", check=lambda m: _DRIVER_REASON.search(m.group("reason")) is not None),
    # ggml probes CUDA at every start and goes on with the CPU: the probe failing is F18 where the run wanted the GPU
    # (layers to offload, a CUDA allocation that then failed), not in a run meant for the CPU (a clean train log)
    _sig("F18", "ggml-init-failed-cpu", r"ggml_cuda_init: failed to initialize CUDA: (?P<reason>[^\n]*)",
         needle="ggml_cuda_init", check=lambda m: _DRIVER_REASON.search(m.group("reason")) is None and _gpu_wanted(m)),
    # cudaErrorNoDevice: the runtime sees no GPU (none there, none passed into the container, hidden): the program
    # runs on the CPU or stops; the driver is not too old (that is cudaErrorInsufficientDriver, F17).
    _sig("F18", "no-device", words("no CUDA-capable device is detected"), needle="CUDA-capable",
         check=lambda m: "ggml_cuda_init" not in _line_before(m) or _gpu_wanted(m)),
    # F15: Windows DLL loading (CPython's message is English; WinError 126 is the localised one).
    _sig("F15", "dll-not-loadable",
         r"Could not find module '(?P<path>[^'\n]*?(?P<dll>[\w.+-]+\.dll))' \(or one of its dependencies\)",
         flags=re.I, needle="ould not", key="module"),
    _sig("F15", "failed-to-load-dll", r"Failed to load shared library '(?P<path>[^'\n]*?(?P<dll>[\w.+-]+\.dll))'",
         flags=re.I, needle="ailed to load shared library"),
    _sig("F15", "no-shared-library", r"Shared library with base name '(?P<base>\w+)' not found",
         needle="not found", key="base name"),
    _sig("F15", "winerror-126", r"\[WinError 126\]", needle="WinError"),
    # CPython's import of an extension module (pycuda._driver, torch._C, ...) whose DLLs the loader refused; what
    # follows the colon is Windows' own text, in the system's language (module or procedure not found, bad image).
    _sig("F15", "dll-load-failed", r"DLL load failed(?: while importing (?P<module>[\w.]+))?:",
         needle="DLL load failed"),
    # CuPy's import check lists each DLL it depends on; a CUDA runtime one the loader cannot find (cuTENSOR and
    # cuDNN are optional, so only the toolkit's own libraries count).
    _sig("F15", "cupy-dll-not-found",
         r"(?P<dll>(?:cudart|cublas|cublasLt|nvrtc|cufft|curand|cusparse|cusolver|nvJitLink)64_\w*\.dll) -> not found",
         flags=re.I, needle="-> not found"),
    # libgpuarray (pygpu) and others that LoadLibrary a DLL by name and pass Windows' text on.
    _sig("F15", "could-not-load-dll", r"Could not load \"(?P<dll>[\w.+-]+\.dll)\"", flags=re.I,
         needle="ould not", key="Could not load"),
    # Native code calling LoadLibrary itself (onnxruntime's CUDA provider): the Windows error code, any language.
    _sig("F15", "loadlibrary-failed",
         r"LoadLibrary failed with error (?P<code>\d+)[^\n]*?"
         r"when trying to load \"(?P<path>[^\"\n]*?(?P<dll>[\w.+-]+\.dll))\"",
         flags=re.I, needle="LoadLibrary failed"),
    # NVRTC (the runtime compiler: CuPy, torch's JIT, numba) loads its builtins DLL when it compiles; nvrtc's own
    # words where that DLL is not on the search path (issue 36 part 5; cupy#4396, DotCompute#182)
    _sig("F15", "nvrtc-builtins-dll", r"failed to open (?P<dll>nvrtc-builtins64_\d+\.dll)", flags=re.I,
         needle="nvrtc-builtins64"),
    # F16: os.add_dll_directory on a CUDA_PATH that is gone (WinError 3 or 2, any locale).
    _sig("F16", "stale-cuda-path", r"\[WinError [23]\][^\n]*?'(?P<path>[^'\n]+)'", check=_stale_path,
         needle="WinError"),
    _sig("F16", "add-dll-directory",
         r"os\.add_dll_directory\(os\.path\.join\(os\.environ\[[\"'](?P<var>CUDA_PATH|HIP_PATH)[\"']\]",
         needle="add_dll_directory"),
    # F18: built or loaded for the CPU.
    _sig("F18", "zero-layers-offloaded", r"offloaded 0/(?P<layers>\d+) layers to GPU", needle="offloaded 0/"),
    _sig("F18", "blas-off", r"\bBLAS = 0\b", needle="BLAS = 0"),
    # F19: a prebuilt wheel was wanted but pip builds the sdist. flash-attn's setup.py looks for its own wheel first.
    _sig("F19", "prebuilt-wheel-not-found", words("Precompiled wheel not found. Building from source"),
         needle="Precompiled wheel not found"),
    # A CUDA wheel index (a cuXYZ folder) that lacks the requested version: the index lags behind PyPI (#1682).
    _sig("F19", "cuda-index-lacks-version",
         r"Looking in indexes:[^\n]*?/(?P<flavour>cu\d{3,})/?(?=[\s,]|$)[^\n]*\n(?:[^\n]*\n){0,3}?[^\n]*?"
         r"Could not find a version that satisfies the requirement (?P<requirement>\S+)", flags=re.M,
         needle="Looking in indexes", key="Could not find a version", span=5),
    # F20: a build that takes too long. pip without a terminal prints "started", then "still running..." once a
    # minute: ten of them after "started" is ten minutes or more in one wheel (one match per wheel, at "started");
    # CI and batch schedulers kill a job at their time limit.
    _sig("F20", "pip-still-running",
         r"Building wheel for (?P<package>[^\s(]+) \([^)\n]*\): started[^\n]*\n"
         r"(?:[^\n]*?Building wheel for [^\n]*?: still running\.\.\.[^\n]*\n){10}", needle="still running", span=12),
    _sig("F20", "travis-time-limit",
         words("The job exceeded the maximum time limit for jobs, and has been terminated."),
         needle="maximum time limit"),
    # Azure Pipelines' agent ("of 360." in minutes, or "of 06:00:00.") and GitHub Actions' runner ("of 360 minutes.").
    _sig("F20", "ci-job-time-limit", r"has exceeded the maximum execution time of (?P<limit>\d+(?::\d+)*)",
         needle="maximum execution time"),
    _sig("F20", "slurm-time-limit", r"CANCELLED AT \S+ DUE TO TIME LIMIT", needle="DUE TO TIME LIMIT"),
    # F21: host compiler too new on Linux.
    _sig("F21", "gcc-too-new", words("unsupported GNU version! gcc versions later than")
         + r"\s+(?P<gcc_max>\d+)\s+are\s+not\s+supported", needle="unsupported", key="GNU"),
    # torch.utils.cpp_extension checks the host compiler against its own table for the CUDA torch sees, before
    # nvcc runs (the compiler is named as found: g++, x86_64-linux-gnu-g++, a conda c++, clang++).
    _sig("F21", "torch-compiler-too-new",
         r"The current installed version of (?P<compiler>\S+) \((?P<gcc>\d+(?:\.\d+)*)\) is greater than the"
         r"\s+maximum required version by CUDA (?P<cuda>\d+\.\d+)", needle="maximum required version"),
    _sig("F21", "clang-too-new", words("unsupported clang version! clang version must be less than")
         + r"\s+(?P<clang_max_excl>\d+)", needle="unsupported", key="clang"),
    # F22: Linux, the toolkit's bin folder is not on PATH (make's shell, bash), CUDA_HOME unset for torch's
    # cpp_extension, or the distribution's old nvcc in /usr/bin ran instead of /usr/local/cuda's.
    _sig("F22", "nvcc-not-on-path", r"\bnvcc: (?:[Cc]ommand )?not found", needle="nvcc: ", key="not found"),
    # (torch's cpp_extension found no toolkit: on Windows, where it also looks in CUDA_PATH and the default install
    # folder, no toolkit is installed there: F07 below)
    _sig("F22", "cuda-home-not-set", words("CUDA_HOME environment variable is not set."), needle="CUDA_HOME",
         check=lambda m: not _windows_log(m)),
    _sig("F07", "cuda-home-not-set-windows", words("CUDA_HOME environment variable is not set."), needle="CUDA_HOME",
         check=_windows_log),
    # NVIDIA's toolkits install nvcc under /usr/local/cuda-X.Y, never in /usr/bin: a /usr/bin/nvcc that failed is the
    # distribution's (Ubuntu's nvidia-cuda-toolkit), in distutils' words, a launcher's (llamafile: "returned nonzero
    # exit status") or CMake's compiler identification (train logs llamafile #56, tiny-cuda-nn #383)
    _sig("F22", "distro-nvcc-failed", r"command '(?P<nvcc>/usr/bin/nvcc)' failed|"
         r"(?<![\w/.-])(?P<nvcc_run>/usr/bin/nvcc):? returned non-?zero exit|"
         r"CMakeCUDACompilerId\.cu\"?\s+failed\.\s+Compiler:\s*(?P<nvcc_id>/usr/bin/nvcc)\b", needle="/usr/bin/nvcc"),
    # A Makefile's toolkit prefix variable was empty: -I$(CUDA_PATH)/include became -I/include, so the toolkit's
    # headers (cublas_v2.h) are looked for in /include (train log gpu-burn #103).
    _sig("F22", "empty-cuda-prefix", r"(?:^|\s)-I/include(?=\s)[^\n]*\.(?:cu|cpp|cc|c)\b", flags=re.M,
         needle="-I/include"),
    # F23: libcuda.so.1 and friends (Docker, no driver).
    _sig("F23", "libcuda-needed", r"(?P<lib>libcuda\.so\.1), needed by (?P<by>\S+), not found",
         needle="not found", key="needed by"),
    _sig("F23", "driver-symbols-undefined", r"undefined reference to [`'](?P<symbol>cu(?:Mem|Device)\w*)'",
         needle="undefined reference to"),
    _sig("F23", "so-not-found",
         r"(?P<lib>lib(?:cuda|cudart|cublas|cublasLt)\.so(?:\.\d+)*): cannot open shared object file",
         needle="cannot ", key="shared object"),
    # the same NVRTC words on Linux: libnvrtc-builtins.so of the version the program was built with is not there
    # (yolact_edge#186)
    _sig("F23", "nvrtc-builtins-so", r"failed to open (?P<lib>libnvrtc-builtins\.so(?:\.\d+)*)",
         needle="libnvrtc-builtins"),
    # conda's and pixi's solvers: the __cuda virtual package, which they set only where an NVIDIA driver is visible,
    # is missing (a container or CI runner without the GPU; conda-forge/tensorflow-feedstock#216, pixi's
    # "Virtual package '__cuda' does not match any of the available virtual packages on your machine")
    _sig("F23", "no-cuda-virtual-package",
         r"nothing provides (?P<virtual>__cuda)\b[^\n]{0,40}? needed by (?P<package>\S+)|"
         r"Virtual package '__cuda' does not match any of the available virtual packages", needle="__cuda"),
    # F24: the toolkit lacks a library or header the build links or includes (cuBLAS on this machine).
    _sig("F24", "cmake-target-not-found",
         r"links\s+to:\s+(?P<target>CUDA::(?P<component>\w+))\s+but\s+the\s+target\s+was\s+not\s+found",
         extract=_component, needle="CUDA::"),
    # FindCUDA (before CMake 3.17) puts the NOTFOUND variable itself on the link line.
    _sig("F24", "ld-cannot-find-lib",
         r"cannot find -l(?:CUDA_)?(?P<component>" + _COMPONENT_LIBS + r")(?:\b|_LIBRARY-NOTFOUND)",
         extract=_component, needle="cannot ", key="-l"),
    # (cudart.lib too: the CUDA runtime's import library, not in the lib folder the linker was given; cudpp#72)
    _sig("F24", "lnk1181", r"LNK1181:[^\n]*?'(?P<path>[^'\n]*?(?P<component>cudart|" + _COMPONENT_LIBS + r")\.lib)'",
         extract=_component, needle="LNK1181"),
    _sig("F24", "header-missing",
         r"(?P<header>" + _COMPONENT_HEADERS + r")(?:'|\"|:)?[:\s]+(?:No such file or directory|"
         r"file not found)|Cannot open include file:\s*'(?P<header2>" + _COMPONENT_HEADERS + r")'",
         extract=_component, needle=("No such file", "not found", "Cannot ")),
    _sig("F24", "findcudatoolkit-header-missing",
         r"Unable to find (?P<header>" + _COMPONENT_HEADERS + r") in either", extract=_component,
         needle="Unable to find"),
)

# F25: the kernel's OOM killer (or a container's memory limit) killed a compiler of a parallel build: nvcc names
# the tool and the signal, gcc's driver the program; MSVC (C1060/C1002, codes every locale prints) runs out of heap.
# gcc's and MSVC's words count only in a CUDA build (a .cu file, nvcc or the word cuda, any case, in the lines
# above): the same words in a C++ project's log are no failure of this catalog (logs/clean keeps such logs).
_CUDA_BUILD = re.compile(r"\.cu\b|\bnvcc\b|(?i:\bcuda\b)")
_CUDA_LINES = 30


def _in_cuda_build(m: re.Match[str]) -> bool:
    return _CUDA_BUILD.search(m.string, _lines_above(m.string, m.start(), _CUDA_LINES), m.end()) is not None


SIGNATURES += (
    _sig("F25", "nvcc-tool-killed", r"nvcc error\s*:\s*'(?P<tool>[\w+.-]+)' died due to signal 9\b",
         needle="died due to signal 9"),
    # Windows has no signal 9: a tool that ran out of memory dies with an NTSTATUS code, STATUS_NO_MEMORY (0xC0000017)
    # or STATUS_COMMITMENT_LIMIT (0xC000012D, the page file full), in nvcc's "died with status 0x..." words
    _sig("F25", "nvcc-tool-no-memory",
         r"nvcc error\s*:\s*'(?P<tool>[^'\n]+)' died with status 0x(?P<code>C0000017|C000012D)\b", flags=re.I,
         needle="died with status"),
    _sig("F25", "gcc-killed", r"fatal error: Killed signal terminated program (?P<tool>[\w+.-]+)",
         needle="Killed signal terminated", check=_in_cuda_build),
    # gcc 6 and older word the same kill as an internal compiler error
    _sig("F25", "gcc-ice-killed", r"internal compiler error: Killed \(program (?P<tool>[\w+.-]+)\)",
         needle="internal compiler error: Killed", check=_in_cuda_build),
    _sig("F25", "msvc-out-of-heap", r"\b(?P<code>C1060|C1002)\b[^\n]*?out of heap space", needle="out of heap space",
         check=_in_cuda_build),
)

# Words that point at an id although no signature matched: the near misses of a log we do not know.
NEAR_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("F01", ("CUDA toolset", "BuildCustomizations")),
    ("F03", ("NMake", "build program")),
    ("F04", ("host_config.h",)),
    ("F05", ("STL1002",)),
    ("F06", ("cl.exe", "-ccbin")),
    ("F07", ("CMAKE_CUDA_COMPILER",)),
    ("F08", ("mismatches the version", "does not match the version")),
    ("F09", ("deprecated", "Manually-specified")),
    ("F10", ("CMAKE_ARGS",)),
    ("F11", ("too long", "CMAKE_OBJECT_PATH_MAX")),
    ("F12", ("native",)),
    ("F13", ("Unsupported gpu", "gpu architecture")),
    ("F14", ("kernel image",)),
    ("F15", ("WinError",)),
    ("F17", ("is insufficient",)),
    ("F18", ("offloaded 0/", "CUDA-capable")),
    ("F19", ("Building from source",)),
    ("F20", ("still running", "time limit")),
    ("F21", ("unsupported",)),
    ("F22", ("CUDA_HOME", "/usr/bin/nvcc")),
    ("F23", ("libcuda",)),
    ("F24", ("cublas", "CUDA::")),
    ("F25", ("Killed", "signal 9", "heap space")),
)

# (winner, loser, why): when both ids match, the first names the cause of the second.
PRECEDENCE: tuple[tuple[str, str, str], ...] = (
    ("F12", "F13", "'native' with no GPU visible leaves nvcc an architecture it may not know"),
    ("F12", "F14", "with no GPU visible at build time the build guessed its architectures, and missed this GPU's"),
    ("F02", "F13", "the targets of one CUDA passed their architecture list to another CUDA's nvcc"),
    ("F24", "F07", "the toolkit was found; it lacks the component the build needs"),
    ("F24", "F12", "a missing component stops the build whatever the architecture"),
    ("F09", "F07", "an old flag name often leaves CUDA half-configured"),
    ("F03", "F07", "with no usable Visual Studio CMake enables no language"),
    ("F04", "F06", "host_config.h refused the compiler nvcc found"),
    ("F22", "F13", "the distribution's old nvcc in /usr/bin ran, not the toolkit that knows this architecture"),
    ("F08", "F13", "the nvcc that ran is another CUDA than the one the build was set up for"),
    ("F22", "F24", "the toolkit's folder was not set: its headers and libraries were looked for elsewhere"),
)
