"""The toolkit family: the CUDA MSBuild integration missing (F01) or driving another CUDA's nvcc (F02), the nvcc and
the build's toolkit disagreeing (F08), an architecture list from no GPU (F12) or outside this nvcc (F13), a toolkit
prefix that is wrong (F22, F02); and, where the prefix is not wrong, the search for the toolkit (`search`): no nvcc
(F07 or F22), a component's header or library missing (F24; F23 for the driver's libcuda), torch's CUDA against the
toolkit's (F08).
"""

from __future__ import annotations

import re

from envmgr.buildlog.rules.base import NOT_RECOGNIZED, Add, Fact, FactRx, Facts, fx
from envmgr.buildlog.signatures import Details, Signature, lines_above, named, sig, words
from envmgr.catalog import FailureId
from envmgr.knowledge import arch_span, cuda_at_least

IDS: tuple[FailureId, ...] = ("F01", "F02", "F08", "F12", "F13", "F22")
SEARCH_IDS: tuple[FailureId, ...] = ("F07", "F08", "F22", "F23", "F24")

# F24's components: the toolkit's libraries a build links (and cuDNN, which CUDA builds link next to them) by the
# names their import libraries and shared objects carry (cuBLAS/cuBLASLt, cuRAND, cuSPARSE, cuSOLVER, cuFFT, cuFile,
# NVRTC, nvJitLink, NVTX, NPP, the static runtime and device runtime, culibos)
_COMPONENT = (
    r"(?:cublasLt|cublas|curand|cusparse|cusolver|cufftw?|cufile|nvrtc|nvJitLink|nvToolsExt\w*|npp\w+|"
    r"cudart_static|cudadevrt|culibos|cudnn\w*)"
)

# an architecture list the build was given (CMake's message, a *_CUDA_ARCHITECTURES value, torch's list)
ARCH_GIVEN = (
    r"(?i:architectures? from CMake variable)|\b\w*CUDA_ARCHITECTURES=\"?\d|"
    r"TORCH_CUDA_ARCH_LIST=[\"']?\d"
)
_ARCH_GIVEN = re.compile(ARCH_GIVEN)

FACTS: tuple[FactRx, ...] = (
    # MSVC's linker on a toolkit library, any language: LNK1181 (an input file on its command line) and LNK1104 (a
    # file it was told to open: a #pragma comment(lib) or /DEFAULTLIB, as CUDA headers and crates name them)
    fx("lib_missing_msvc", r"\bLNK11(?:81|04)\b[^\n]*?\b(" + _COMPONENT + r")\.lib\b", ("LNK1181", "LNK1104")),
    # the linker's own line (`/usr/bin/ld: <cannot find, any language> -lcublas`), not a command line
    fx(
        "lib_missing",
        r"(?:^|[\s/])(?:ld|ld\.\w+|collect2)\s*:[^\n]*?-l(" + _COMPONENT + r"|cudart|cuda)\b",
        ("-lcu", "-lnv", "-lnpp"),
    ),
    # a CUDA component CMake could not give the project: a target of the project's own linking to a CUDA:: imported
    # target CMake has not (CMake's "links to target" / "links to:"; not an installed package's exported link
    # interface, "The link interface of target X contains", which the package's config made), a FindCUDA library
    # variable NOTFOUND, or the target's name handed to the linker as a library (-lCUDA::cublas: any ld locale)
    fx(
        "component_missing",
        r"\blinks\s+to(?:\s+target)?:?\s+\"?CUDA::(\w+)\"?\s+but\s+the\s+target\s+was\s+not\s+"
        r"found|-lCUDA::(\w+)|CUDA_(cublas\w*|curand|cusparse|cusolver|cufft|nvrtc|npp\w*)"
        r"_LIBRARY[^\n]*?(?:NOTFOUND|\(ADVANCED\))|"
        # a component's own find variables left NOTFOUND (FindCUDNN-style modules, ports):
        # cuDNN, cuBLAS ... by their upper-case names (a failed build must follow: cuDNN is
        # often optional)
        r"\b(CUDNN|CUBLAS(?:LT)?|CURAND|CUSPARSE|CUSOLVER|CUFFT|NVRTC)_(?:LIBRARY|INCLUDE)\w*"
        r"(?:-NOTFOUND|\s+\(ADVANCED\))",
        ("CUDA::", "_LIBRARY", "_INCLUDE"),
    ),
    fx("nvcc_fatal", r"nvcc fatal\s*:\s*([^\n]{0,160})", "nvcc fatal"),
    fx(
        "nvcc_missing",
        r"which: no nvcc in|nvcc(?:\.exe)?'? (?:was |is )?not found|nvcc: (?:[Cc]ommand )?not found|"
        # cmd's and PowerShell's "not recognized", and bash's "command not found", as each locale words them
        r"['\"]nvcc(?:\.exe)?['\"]\s*(?:" + NOT_RECOGNIZED + r")|"
        r"nvcc ?[:：] (?:Befehl nicht gefunden|コマンドが見つかりません|未找到命令|команда не найдена|"
        r"commande introuvable|orden no encontrada|comando não encontrado|comando non trovato|명령을 찾을 수 없습니다)|"
        # distutils/setuptools on Python 3.10 and later: the compiler it spawns is not there
        r"command '(?P<spawn>[^'\n]*nvcc)' failed: No such file|"
        r"(?i:(?:could not|can't|failed to|unable to|cannot) find (?:compiler )?[`'\"]?nvcc)|"
        r"unable to execute '(?P<exec>[^'\n]*nvcc)': No such file|\bcicc: not found|"
        r"No such file or directory: '(?P<path>[^'\n]*nvcc)'|CUDA_NVCC_EXECUTABLE[^\n]*NOTFOUND|"
        # CMake's find_program result run as a command (a port's own `execute_process(${NVCC} --version)`)
        r"(?<![\w-])NVCC-NOTFOUND\b|"
        r"(?P<enoent>[\w/.-]*nvcc): No such file or directory|"
        # setup.py scripts' own check (locate_cuda, copied across many projects: "The nvcc binary could not be
        # located in your $PATH", raised), torch.utils.cpp_extension's CUDA_NOT_FOUND_MESSAGE (torch 2.x: CUDA_HOME
        # is None), DeepSpeed's op_builder (installed_cuda_version: the same None)
        r"(?:Error|Exception): The nvcc(?:\.exe)? binary could not be located|"
        r"CUDA was not found on the system, please set the CUDA_HOME|"
        r"CUDA_HOME does not exist, unable to compile CUDA op|"
        # build scripts' own check of torch's CUDA_HOME (SageAttention's and others' setup.py)
        r"Cannot find CUDA_HOME\b|"
        # Theano's CUDA back end (theano/sandbox/cuda/__init__.py): "nvcc compiler not found on $PATH"
        r"\bnvcc compiler not found on \$PATH",
        ("nvcc", "NVCC", "cicc", "CUDA was not found on the system", "CUDA_HOME does not exist", "find CUDA_HOME"),
    ),
    # (CMake's own search for the toolkit next to its nvcc: "Couldn't find CUDA library root.",
    # Kitware/CMake Modules/Internal/CMakeCUDAFindToolkit.cmake)
    fx(
        "toolkit_missing",
        r"Could NOT find CUDA(?:Toolkit)?\b|CMAKE_CUDA_COMPILER-NOTFOUND|"
        r"(?i:specify CUDA_TOOLKIT_ROOT_DIR)|Couldn't find CUDA library root|"
        # FindCUDA's own words where the toolkit was not required (Modules/FindCUDA.cmake)
        r"CUDA_TOOLKIT_ROOT_DIR not found or specified|"
        r"CUDA_TOOLKIT_ROOT_DIR[^\n]*NOTFOUND|(?i:cuda toolkit (?:was )?not found)|"
        # a build script's own check of the toolkit's variable (the installer sets CUDA_PATH on Windows)
        r"\bCUDA_PATH(?: environment variable)? (?:is )?(?:not set|not defined|undefined)\b",
        (
            "Could NOT find CUDA",
            "CUDA_TOOLKIT_ROOT_DIR",
            "CMAKE_CUDA_COMPILER-NOTFOUND",
            "oolkit not found",
            "oolkit was not found",
            "CUDA library root",
            "CUDA_PATH",
        ),
    ),
    fx("cmake_error", r"CMake Error at [^\n]*?(\w+)\.cmake:\d+", "CMake Error at"),
    fx("toolkit_dir", r"(?i:cuda)[\\/]+v(\d+\.\d+)(?![\d.])", ("CUDA\\", "CUDA/", "cuda\\", "cuda/")),
    fx("nvcc_cuda", r"(?i:cuda)[\\/]+v?(\d+\.\d+)[\\/]+bin[\\/]+nvcc|release (\d+\.\d+), V\d", ("nvcc", "release ")),
    fx("targets_cuda", r"BuildCustomizations[\\/]+CUDA (\d+\.\d+)\.(?:targets|props)", "BuildCustomizations"),
    fx(
        "arch", r"(?:arch(?:itecture)?[= ]'?|code=|gpu-architecture[ =]'?)(?:compute|sm)_(\d+)[a-z]?", ("arch", "code=")
    ),
    fx("empty_arch", r"compute_'|arch=compute_,|(?:compute|sm)_(?=[\s'\",]|$)", ("compute_", "sm_")),
    # no GPU visible while building: torch's arch list came out empty, FindCUDA fell back to its common list
    # (true even where the build then fails for another reason, as in one clean train log)
    fx(
        "arch_list_empty",
        r"_get_cuda_arch_flags[^\n]*|arch_list\[-1\]|(?i:automatic GPU detection failed)",
        ("_get_cuda_arch_flags", "arch_list[-1]", "etection failed"),
    ),
    # ggml's own report of the list it compiles for (ggml/src/ggml-cuda/CMakeLists.txt): still "native" with CMake's
    # native list empty or not numbers (its probe found no GPU: "No CUDA devices found."), so nvcc guesses
    fx(
        "native_empty",
        r"CMAKE_CUDA_ARCHITECTURES=native CMAKE_CUDA_ARCHITECTURES_NATIVE=(?!\d)",
        "ARCHITECTURES_NATIVE=",
    ),
    # an architecture list the build was given (a CMake variable, torch's list): a failed detection's fallback
    # is then not what the build compiles for
    fx(
        "arch_given",
        ARCH_GIVEN,
        ("from CMake variable", "from cmake variable", "_ARCHITECTURES=", "TORCH_CUDA_ARCH_LIST="),
    ),
    # a Linux build (WSL) handed the Windows toolkit through the /mnt/<drive> mount
    fx("wsl_windows_cuda", r"/mnt/[a-z]/[^\n]*?NVIDIA GPU Computing Toolkit/CUDA", "/mnt/"),
    # a toolkit prefix variable that was empty when a command line was made: -I$(CUDA)/include is -I/include,
    # $(CudaToolkitDir)include is /Iinclude
    fx(
        "empty_prefix",
        r"(?:^|\s)(-I/include|-L/lib(?:64)?|/Iinclude /Ibin)(?=\s|$)|(?:^|\s)(/bin/nvcc)(?=\s|:|$)",
        ("-I/include", "-L/lib", "/Iinclude", "/bin/nvcc"),
    ),
    # CUDA_HOME holding a PATH-like list (a leading colon, two folders): torch's cpp_extension prints it ("using
    # CUDA_HOME=':/usr/local/cuda'") and joins it into the compiler's path (":/usr/local/cuda/bin/nvcc")
    fx(
        "cuda_home_list",
        r"CUDA_HOME\s*=\s*['\"]?(:[^'\"\s]*|/[^'\"\s:]*:/[^'\"\s]*)|(?:^|\s)(:/[^\s:]*/bin/nvcc)(?=\s)",
        ("CUDA_HOME", ":/"),
    ),
    # a shell ran a CUDA source file as a script (dash "x.cu: 6: x.cu: extern: not found", bash "x.cu: line 6: ...
    # command not found"): the compiler in front of it (a Makefile's NVCC :=, a script's $NVCC) expanded to nothing
    fx("cu_as_script", r"(?:^|\s)(\S+\.cuh?): (?:line )?\d+: [^\n]*?not found", "not found", re.M),
    fx(
        "header_missing",
        r"\b((?:cu|nv|npp)\w*\.h)[\"'>]?[:\s]+(?:fatal error:\s*)?"
        r"(?:No such file or directory|file not found)|"
        r"Cannot open include file:\s*'((?:cu|nv|npp)\w*\.h)'|"
        # EDG's front end (nvcc's cudafe++, NVRTC): CuPy's install guide quotes it for cuda_fp16.h
        # (docs.cupy.dev/en/latest/install.html)
        r"cannot open source file \"((?:cu|nv|npp)\w*\.h)\"|"
        # MSVC's C1083 in any language: the code, then the header in that locale's quotes
        r"\bC1083\b[^\n]*?[\"'“„«「]((?:cu|nv|npp)\w*\.h)[\"'”“»」]|"
        r"\b(libdevice)\b[^\n]*(?i:not found|No such file|missing)|error in open: [^\n]*(libdevice)",
        ("No such file", "not found", "Cannot open include", "libdevice", "C1083", "cannot open source file"),
    ),
    # the toolkit's include folder on a compile line (-I, -isystem, MSVC's /I): a folder named cuda* (cuda, cuda-12.4,
    # NVIDIA GPU Computing Toolkit\CUDA\v12.4) with an include below it
    fx(
        "cuda_include",
        r"(?:^|\s)(?:-I|-isystem|/I)\s*(?:\"[^\"\n]*?|[^\s\"]*?)[\\/](?i:cuda)[-\w.]*[\\/](?:[^\s\"]*?[\\/])?include\b",
        ("-I", "-isystem", "/I"),
        re.M,
    ),
    fx(
        "torch_cuda_pair",
        r"(?i:(?:installed|detected|nvcc) cuda version)[^\n]{0,20}?(\d+\.\d+)[^\n]{0,120}?"
        r"(?i:torch|pytorch)[^\n]{0,60}?(\d+\.\d+)|CUDAMismatchException|CUDA_MISMATCH",
        ("CUDA version", "CUDA Version", "cuda version", "CUDAMismatch", "CUDA_MISMATCH"),
    ),
    # a command whose program was an empty variable, so its first flag ran as the program (waf's, setuptools' or a
    # Makefile's NVCC left empty): Python's ENOENT or the shell naming a flag (a -D setting is flag_as_command's)
    fx(
        "flag_as_program",
        r"\[Errno 2\][^\n]*?: '(-(?!D[A-Z])[A-Za-z][\w-]*)'|"
        r"(?:^|\s)(-(?!D[A-Z])[A-Za-z][\w-]*): (?:command )?not found",
        ("[Errno 2]", "not found"),
    ),
)


def decide(fs: Facts, add: Add) -> None:
    nvcc = fs.values("nvcc_cuda")
    failed = bool(set(fs.values("msb")) & {"MSB3721", "MSB3722"}) or fs.first("nvcc_fatal") is not None
    targets = fs.first("targets_cuda")
    if targets and failed and nvcc and nvcc[0] != targets.value and "MSB4019" not in fs.values("msb"):
        add("F02", "targets-vs-nvcc", targets, props=targets.value, nvcc=nvcc[0])
    toolkits = fs.values("toolkit_dir")
    if targets and failed and toolkits and targets.value not in toolkits and "MSB4019" not in fs.values("msb"):
        add("F02", "targets-vs-toolkit", targets, props=targets.value, toolkit=toolkits[0])
    if "MSB4019" in fs.values("msb") and targets:
        add("F01", "msb4019-cuda-props", fs.facts["msb"][fs.values("msb").index("MSB4019")], cuda=targets.value)
    add("F12", "empty-arch", fs.first("empty_arch") if failed or fs.first("nvcc_fatal") else None)
    add("F12", "no-gpu-arch-list", None if fs.first("arch_given") else fs.first("arch_list_empty"))
    add("F12", "native-list-empty", fs.first("native_empty"))
    if failed and nvcc:
        for f in fs.facts.get("arch", ()):
            span = arch_span(f"{int(f.value) // 10}.{int(f.value) % 10}")
            if span and (not cuda_at_least(nvcc[0], span[0]) or (span[1] and cuda_at_least(nvcc[0], span[1]))):
                add("F13", "arch-outside-nvcc", f, arch=f"sm_{f.value}", nvcc=nvcc[0])
    add("F22", "wsl-windows-toolkit", fs.first("wsl_windows_cuda"))
    for f in fs.facts.get("empty_prefix", ()):
        # $(CudaToolkitDir) empty in MSBuild's CUDA targets (F02), a Makefile's CUDA prefix variable empty (F22)
        add("F02" if f.value.startswith("/I") else "F22", "empty-toolkit-prefix", f)
    add("F22", "cuda-source-run-by-shell", fs.first("cu_as_script"))
    add("F22", "cuda-home-is-a-list", fs.first("cuda_home_list"))


def prefix_wrong(fs: Facts) -> bool:
    """WSL's Windows toolkit, an empty toolkit prefix, CUDA_HOME holding a list or a .cu file run by the shell: what
    `search` would name (no toolkit, no cuBLAS header) comes from that (the registry runs `search` only where this
    is False)."""
    return bool(
        fs.first("wsl_windows_cuda")
        or fs.first("empty_prefix")
        or fs.first("cu_as_script")
        or fs.first("cuda_home_list")
    )


def search(fs: Facts, add: Add) -> None:
    """The search for the toolkit and its components: no nvcc (F07, or F22 on Linux outside CMake), a component's
    header or library missing (F24; F23 for libcuda), torch's CUDA against the toolkit's (F08)."""
    cmake = {"CMakeDetermineCUDACompiler", "CMakeCUDAFindToolkit", "FindCUDAToolkit", "FindCUDA"} & set(
        fs.values("cmake_error")
    )
    # CMake's own search for a CUDA compiler, or a log that does not show Linux (F07: either platform), as against a
    # shell, make or a script on Linux (F22, a Linux cause: its toolkit's bin is not on PATH)
    linux = (fs.first("linux") or fs.first("posix")) is not None and fs.first("windows") is None
    for f in fs.facts.get("nvcc_missing", ()):
        add("F22" if linux and not cmake else "F07", "nvcc-missing", f)
    add("F07", "toolkit-missing", fs.first("toolkit_missing"))
    add("F07", "cuda-compiler-empty", fs.first("flag_as_program") if fs.first("cuda_compile") else None)
    for f in fs.facts.get("header_missing", ()):
        if f.value in _CORE_HEADERS and not _toolkit_used(fs, f):
            add("F22" if linux and not cmake else "F07", "toolkit-headers-not-found", f, header=f.value)
        else:
            add("F24", "component-header-missing", f, header=f.value)
    for f in fs.facts.get("lib_missing_msvc", ()):
        add("F24", "msvc-linker-lib-missing", f, component=f.value)
    for f in fs.facts.get("component_missing", ()):
        # (a component's upper-case variable printed NOTFOUND is a failure only where CMake's NOTFOUND list names it
        # or the build then failed)
        if f.value.isupper() and "(ADVANCED)" not in f.line and not fs.first("build_failed"):
            continue
        add("F24", "component-not-found", f, component=f.value)
    for f in fs.facts.get("lib_missing", ()):
        add("F23" if f.value == "cuda" else "F24", "linker-lib-missing", f, component=f.value)
    pair = fs.first("torch_cuda_pair")
    if pair and (pair.value.startswith(("CUDAMismatch", "CUDA_MISMATCH")) or _two_versions(pair.line)):
        add("F08", "cuda-vs-torch", pair)


# The headers every toolkit has in its include folder: one missing is the toolkit not found, unless the toolkit was
# found and used (F24: a component missing from it)
_CORE_HEADERS = frozenset(("cuda.h", "cuda_runtime.h", "cuda_runtime_api.h"))


def _toolkit_used(fs: Facts, f: Fact) -> bool:
    """nvcc or its tools compiling (EDG's "cannot open source file" is nvcc's front end), a .cu file being compiled,
    or the toolkit's include folder on a compile line: a host compiler (gcc, clang, cl) compiling a .c/.cpp file with
    none of these in view did not find the toolkit (issue 36: pycuda's setup without CUDA_ROOT)."""
    return (
        fs.first("cuda_compile") is not None
        or fs.first("cuda_include") is not None
        or "cannot open source file" in f.line
        or re.search(r"\.cuh?(?:[(:]|\b)", f.line.split("fatal error")[0]) is not None
    )


def _two_versions(line: str) -> bool:
    found = re.findall(r"\b(\d{1,2}\.\d)\b", line)
    return len(set(found)) >= 2


# ---------------------------------------------------------------- signatures: the tools' own sentences


def _toolkit_differs(m: re.Match[str]) -> bool:
    return m.group("nvcc") != m.group("toolkit")


def _cuda_pair_differs(m: re.Match[str]) -> bool:
    nvcc = _nvcc_run(m)
    return nvcc is not None and m.group("props") != nvcc


# The nvcc a CUDA task ran: MSBuild echoes the command line above its MSB3721 line, and that line repeats it
# (cut off in some copies, unsloth #4386). The echo is looked for in the lines above the match only (16: an
# echo the console wrapped at 120 columns and left unjoined spans about 10).
_NVCC_RUN = re.compile(r"(?i:cuda)[\\/]+v(\d+\.\d+)[\\/]+bin[\\/]+nvcc")


_ECHO_LINES = 16


def _nvcc_run(m: re.Match[str]) -> str | None:
    if m.group("nvcc"):
        return m.group("nvcc")
    start = lines_above(m.string, m.start(), _ECHO_LINES)
    found = _NVCC_RUN.findall(m.string, start, m.start())
    return found[-1] if found else None


def _targets_nvcc(m: re.Match[str]) -> Details:
    d = named(m)
    d["nvcc"] = _nvcc_run(m)
    return d


# F24's components: the libraries ggml-cuda and other CUDA projects link, and their headers.
_COMPONENT_LIBS = r"cublasLt|cublas|curand|cusparse|cusolver|cufft|nvrtc|nvJitLink|cudart_static|cudadevrt|nvToolsExt"


# (CUB's headers as the toolkit's include folder holds them, cub/cub.cuh, cub/block/...: a cub/cub/ path is a checkout
# of the CUB repository the project expects beside its sources, no component of the toolkit; issue 36)
_COMPONENT_HEADERS = (
    r"cublas_v2\.h|cublas_api\.h|cublasLt\.h|curand\.h|curand_kernel\.h|cusparse\.h|nvrtc\.h|"
    r"cuda/std/\w+|thrust/[\w/]+\.h|(?<![\w/])cub/(?!cub/)[\w/]+\.cuh"
)


_HEADER_OF = {
    "cublas_v2.h": "cublas",
    "cublas_api.h": "cublas",
    "cublasLt.h": "cublasLt",
    "curand.h": "curand",
    "curand_kernel.h": "curand",
    "cusparse.h": "cusparse",
    "nvrtc.h": "nvrtc",
}


def _component(m: re.Match[str]) -> Details:
    d = named(m)
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
    sig("F01", "no-cuda-toolset", words("No CUDA toolset found."), needle="CUDA toolset"),
    # CMAKE_GENERATOR_TOOLSET cuda=<toolkit folder> that holds no MSBuild integration (its
    # extras/visual_studio_integration/MSBuildExtensions): Kitware/CMake Source/cmGlobalVisualStudio10Generator.cxx
    sig(
        "F01",
        "custom-cuda-toolset-no-integration",
        r"given\s+toolset\s+cuda=(?P<path>[^\n]*?)\s+" + words("cannot detect Visual Studio integration files"),
        needle="integration files",
        span=4,
    ),
    # Localised MSBuild quotes the path its own way (zh “…”, de „…“, fr « … », ja 「…」); a project whose
    # CUDA version property is empty imports "CUDA .props" (brian2genn #127).
    # With CMAKE_GENERATOR_TOOLSET cuda=<folder> CMake's test project imports the props from that toolkit's
    # extras\visual_studio_integration\MSBuildExtensions (Kitware/CMake Modules/CMakeDetermineCompilerId.cmake).
    sig(
        "F01",
        "cuda-props-not-found",
        r"(?:MSB4019|MSB4226|imported\s+project)[^\"“”„«»「」\n]*[\"“„«「]\s?(?P<path>[^\"“”„«»「」\n]*?"
        r"(?:[\\/](?P<vc>v1[4-9]0))?[\\/]+(?:BuildCustomizations|MSBuildExtensions)[\\/]+CUDA (?P<cuda>\d+\.\d+)?"
        r"\.(?:props|targets))\s?[\"”“»」]",
        needle=("BuildCustomizations", "MSBuildExtensions"),
    ),
    # F02: one CUDA's MSBuild targets drive another CUDA's nvcc (unsloth #4518).
    # MSBuild's console wraps at ~80 columns with an indent (unsloth #4518), and a toolkit folder may be
    # spelled C:\\Cuda\\v12.8: continuation lines (a newline and whitespace) are allowed, case ignored.
    # The nvcc is read from the MSB3721 line's command or, where that is cut off, from the command echoed above.
    sig(
        "F02",
        "targets-nvcc-mismatch",
        r"BuildCustomizations[\\/]+CUDA\s+(?P<props>\d+\.\d+)\.targets\(\d+,\d+\):(?:[^\n]|\n(?=[ \t]))*?MSB3721"
        r"(?:(?:[^\n]|\n(?=[ \t]))*?(?i:cuda)[\\/]+v(?P<nvcc>\d+\.\d+)[\\/]+bin[\\/]+nvcc)?",
        check=_cuda_pair_differs,
        extract=_targets_nvcc,
        needle="MSB3721",
    ),
    # The targets the generator picked cannot find their own toolkit (CudaToolkitDir empty: no CUDA_PATH_Vx_y for
    # that version). CUDA 13 prints "The CUDA Toolkit directory ''", older targets name the version.
    sig(
        "F02",
        "targets-toolkit-missing",
        r"(?:BuildCustomizations[\\/]+CUDA\s+(?P<props>\d+\.\d+)\.targets\(\d+,\d+\):[^\n]*?)?"
        r"The\s+CUDA\s+Toolkit\s+(?:v(?P<toolkit>\d+\.\d+)\s+)?directory\s+'(?P<dir>[^'\n]*)'\s+does\s+not\s+exist",
        needle="does not exist",
        key="CUDA Toolkit",
    ),
    # F07: no nvcc / toolkit (CMake's own texts, and ggml's).
    sig("F07", "no-cuda-compiler", words("No CMAKE_CUDA_COMPILER could be found."), needle="CMAKE_CUDA_COMPILER"),
    # CMake 4.3 reworded it "the compiler specified in the environment variable" (Kitware/CMake 108d86f28d,
    # Modules/CMakeDetermineCUDACompiler.cmake)
    sig(
        "F07",
        "cudacxx-missing",
        r"Could\s+not\s+find\s+(?:the\s+)?compiler\s+(?:set|specified)\s+in\s+(?:the\s+)?"
        r"environment\s+variable\s+CUDACXX:\s*(?P<path>[^\s][^\n]*?)\.?[ \t]*$",
        flags=re.M,
        needle="ould not",
        key="CUDACXX",
    ),
    # CMAKE_CUDA_COMPILER (or CUDACXX) names a program that is neither a path nor on PATH, or a path with no file:
    # Kitware/CMake Source/cmGlobalGenerator.cxx (EnableLanguage)
    sig(
        "F07",
        "cuda-compiler-not-a-path",
        r"The\s+CMAKE_CUDA_COMPILER:\s+(?P<path>\S[^\n]*?)\s+is\s+not\s+a\s+full\s+path",
        needle="CMAKE_CUDA_COMPILER",
        span=6,
    ),
    sig("F07", "cuda-toolkit-not-found", r"\bCUDA Toolkit not found\b", needle="not found", key="Toolkit"),
    sig(
        "F07",
        "cuda-compiler-not-set",
        words("CMAKE_CUDA_COMPILER not set, after EnableLanguage"),
        needle="CMAKE_CUDA_COMPILER",
    ),
    sig(
        "F07",
        "old-ggml-no-nvcc",
        words("Could not find nvcc, please set CUDAToolkit_ROOT."),
        needle="ould not",
        key="nvcc",
    ),
    sig(
        "F07",
        "old-ggml-cuda-not-found",
        r"CMake Warning at [^\n]*\(message\):\s+CUDA not found\b",
        needle="not found",
        key="CMake Warning",
    ),
    # F08: one toolkit's nvcc builds against a torch (or headers, libraries) of another CUDA. torch's cpp_extension
    # compares the nvcc of CUDA_HOME with torch.version.cuda; apex's setup.py does the same in its own words.
    sig(
        "F08",
        "torch-cuda-mismatch",
        words("The detected CUDA version")
        + r"\s+\((?P<cuda>\d+\.\d+)\)\s+"
        + words("mismatches the version that was used to compile PyTorch")
        + r"\s+\((?P<torch_cuda>\d+\.\d+)\)",
        needle="mismatches the version",
    ),
    sig(
        "F08",
        "apex-cuda-mismatch",
        words(
            "Cuda extensions are being compiled with a version of Cuda that does not match the version used to "
            "compile Pytorch binaries."
        )
        + r"(?:\s+"
        + words("Pytorch binaries were compiled with Cuda")
        + r"\s+(?P<torch_cuda>\d+\.\d+))?",
        needle="does not match the version",
    ),
    # PyTorch's (Caffe2's) cmake/public/cuda.cmake: the nvcc FindCUDA ran and the headers of cuda.h name two CUDAs
    # ("FindCUDA says CUDA version is X (usually determined by nvcc), but the CUDA headers say the version is Y")
    sig(
        "F08",
        "findcuda-nvcc-vs-headers",
        words("FindCUDA says CUDA version is")
        + r"\s*(?P<nvcc>\d+\.\d+)?\s*"
        + words("(usually determined by nvcc), but the CUDA headers say the version is")
        + r"\s+(?P<headers>\d+\.\d+)",
        needle="FindCUDA says",
        span=3,
    ),
    # OpenCV's OpenCVConfig.cmake, raised only where the CUDA CMake found is not the one OpenCV was built with ("OpenCV
    # static library was compiled with CUDA X support. Please, use the same version or rebuild OpenCV with CUDA Y")
    sig(
        "F08",
        "opencv-built-with-other-cuda",
        words("OpenCV static library was compiled with CUDA") + r"\s+(?P<opencv_cuda>\d+\.\d+)\s+support\.",
        needle="OpenCV static library was compiled with CUDA",
        span=2,
    ),
    # CMake's own two answers disagree: enable_language(CUDA) identified one nvcc, find_package(CUDAToolkit) found
    # another toolkit's headers and libraries (in either order, a few dozen configure lines apart).
    sig(
        "F08",
        "cmake-nvcc-then-toolkit",
        r"compiler identification is NVIDIA (?P<nvcc>\d+\.\d+)[^\n]*\n(?:[^\n]*\n){0,40}?[^\n]*?"
        r"Found CUDAToolkit:[^\n]*?\(found version \"(?P<toolkit>\d+\.\d+)",
        check=_toolkit_differs,
        needle="compiler identification is NVIDIA",
        span=40,
    ),
    sig(
        "F08",
        "cmake-toolkit-then-nvcc",
        r"Found CUDAToolkit:[^\n]*?\(found version \"(?P<toolkit>\d+\.\d+)[^\n]*\n(?:[^\n]*\n){0,40}?[^\n]*?"
        r"compiler identification is NVIDIA (?P<nvcc>\d+\.\d+)",
        check=_toolkit_differs,
        needle="Found CUDAToolkit",
        span=40,
    ),
    # F12: arch=native without a GPU. Listed before F13: its text also says "Unsupported gpu architecture".
    sig("F12", "native-no-gpu", r"Cannot find valid GPU for '-arch=native'", needle="Cannot ", key="valid GPU"),
    # FindCUDA's CUDA_SELECT_NVCC_ARCH_FLAGS (and Caffe's copy) asked the driver for the GPUs at configure time, found
    # none and fell back to a fixed list: the build's archs are a guess unless the build was given a list itself
    sig(
        "F12",
        "arch-detection-failed",
        r"(?i:automatic GPU detection failed)[^\n]*",
        needle=("detection failed",),
        check=lambda m: _ARCH_GIVEN.search(m.string) is None,
    ),
    # CMake's native probe (Modules/CMakeCUDACompilerABI.cu) prints either message when it finds no GPU, and the
    # message becomes the architecture list nvcc is given
    sig("F12", "native-garbage", r"compute_No CUDA (?i:devices found|architecture detected)", needle="compute_No"),
    # CMake >= 3.24 resolves "native" itself (real log: this machine, tests/corpus/SOURCES.md); 3.28 and later say
    # "no NVIDIA GPU was detected" (Kitware/CMake b32ea7cff0, Source/cmGeneratorTarget.cxx; HIP's "no AMD GPU" is not
    # CUDA's). The needle has no space a console could wrap at.
    sig(
        "F12",
        "cmake-native-no-gpu",
        r"CUDA_ARCHITECTURES\s+is\s+set\s+to\s+\"native\",\s+but\s+no\s+(?:NVIDIA\s+)?"
        r"GPU\s+was\s+detected",
        needle='"native",',
    ),
    # an architecture list given empty (-DCMAKE_CUDA_ARCHITECTURES= from a script that asked a GPU it did not see):
    # Kitware/CMake Modules/Internal/CMakeCUDAArchitecturesValidate.cmake (3.28+; CMakeDetermineCUDACompiler before)
    sig(
        "F12",
        "cmake-arch-list-empty",
        r"CMAKE_CUDA_ARCHITECTURES\s+must\s+be\s+non-empty\s+if\s+set",
        needle="non-empty",
    ),
    # F13: arch unknown to this nvcc.
    # CMake before 3.24 passes CUDA_ARCHITECTURES "native" on as compute_native (colmap #2232).
    sig(
        "F13",
        "unsupported-arch",
        # (nvcc's own words, "gpu" or "GPU" as its releases spell it; issue 36)
        r"Unsupported (?:gpu|GPU) architecture '(?P<arch>(?:compute|sm|lto)_(?:\d+[a-z]?|native))'",
        needle=("Unsupported gpu architecture", "Unsupported GPU architecture"),
    ),
    sig(
        "F13",
        "arch-value-undefined",
        # (quotes as pasted: straight, or typographic where a page or a locale turned them)
        r"Value ['‘’](?P<arch>(?i:compute|sm|lto)_\d+[a-z]?|native)['‘’] "
        r"is not defined for option ['‘’]gpu-(?:architecture|code|name)['‘’]",
        needle="is not defined for option",
    ),
    # NVRTC (torch's JIT fusers, CuPy) compiles for the GPU it runs on: a GPU newer than the NVRTC of the
    # installed wheel or toolkit. It names no architecture.
    sig(
        "F13",
        "nvrtc-arch-invalid",
        r"nvrtc:\s+error:\s+invalid\s+value\s+for\s+--gpu-architecture",
        needle="invalid value for",
    ),
    # LLVM's NVPTX backend (triton's bundled compiler) warns and goes on; its ptxas then fails.
    sig(
        "F13",
        "llvm-unknown-processor",
        r"'(?P<arch>sm_\d+[a-z]?)' is not a recognized processor for this target",
        needle="recognized processor",
    ),
    # F22: Linux, the toolkit's bin folder is not on PATH (make's shell, bash), CUDA_HOME unset for torch's
    # cpp_extension, or the distribution's old nvcc in /usr/bin ran instead of /usr/local/cuda's.
    sig("F22", "nvcc-not-on-path", r"\bnvcc: (?:[Cc]ommand )?not found", needle="nvcc: ", key="not found"),
    # (torch's cpp_extension found no toolkit: on Windows, where it also looks in CUDA_PATH and the default install
    # folder, no toolkit is installed there: F07 below)
    sig(
        "F22",
        "cuda-home-not-set",
        words("CUDA_HOME environment variable is not set."),
        needle="CUDA_HOME",
        check=lambda m: not _windows_log(m),
    ),
    sig(
        "F07",
        "cuda-home-not-set-windows",
        words("CUDA_HOME environment variable is not set."),
        needle="CUDA_HOME",
        check=_windows_log,
    ),
    # NVIDIA's toolkits install nvcc under /usr/local/cuda-X.Y, never in /usr/bin: a /usr/bin/nvcc that failed is the
    # distribution's (Ubuntu's nvidia-cuda-toolkit), in distutils' words, a launcher's (llamafile: "returned nonzero
    # exit status") or CMake's compiler identification (train logs llamafile #56, tiny-cuda-nn #383)
    sig(
        "F22",
        "distro-nvcc-failed",
        r"command '(?P<nvcc>/usr/bin/nvcc)' failed|"
        r"(?<![\w/.-])(?P<nvcc_run>/usr/bin/nvcc):? returned non-?zero exit|"
        r"CMakeCUDACompilerId\.cu\"?\s+failed\.\s+Compiler:\s*(?P<nvcc_id>/usr/bin/nvcc)\b",
        needle="/usr/bin/nvcc",
    ),
    # A Makefile's toolkit prefix variable was empty: -I$(CUDA_PATH)/include became -I/include, so the toolkit's
    # headers (cublas_v2.h) are looked for in /include (train log gpu-burn #103).
    sig(
        "F22",
        "empty-cuda-prefix",
        r"(?:^|\s)-I/include(?=\s)[^\n]*\.(?:cu|cpp|cc|c)\b",
        flags=re.M,
        needle="-I/include",
    ),
    # F24: the toolkit lacks a library or header the build links or includes (cuBLAS on this machine).
    sig(
        "F24",
        "cmake-target-not-found",
        r"links\s+to:\s+(?P<target>CUDA::(?P<component>\w+))\s+but\s+the\s+target\s+was\s+not\s+found",
        extract=_component,
        needle="CUDA::",
    ),
    # FindCUDA (before CMake 3.17) puts the NOTFOUND variable itself on the link line.
    sig(
        "F24",
        "ld-cannot-find-lib",
        r"cannot find -l(?:CUDA_)?(?P<component>" + _COMPONENT_LIBS + r")(?:\b|_LIBRARY-NOTFOUND)",
        extract=_component,
        needle="cannot ",
        key="-l",
    ),
    # (cudart.lib too: the CUDA runtime's import library, not in the lib folder the linker was given; cudpp#72)
    sig(
        "F24",
        "lnk1181",
        r"LNK1181:[^\n]*?'(?P<path>[^'\n]*?(?P<component>cudart|" + _COMPONENT_LIBS + r")\.lib)'",
        extract=_component,
        needle="LNK1181",
    ),
    sig(
        "F24",
        "header-missing",
        r"(?P<header>" + _COMPONENT_HEADERS + r")(?:'|\"|:)?[:\s]+(?:No such file or directory|"
        r"file not found)|Cannot open include file:\s*'(?P<header2>" + _COMPONENT_HEADERS + r")'",
        extract=_component,
        needle=("No such file", "not found", "Cannot "),
    ),
    sig(
        "F24",
        "findcudatoolkit-header-missing",
        r"Unable to find (?P<header>" + _COMPONENT_HEADERS + r") in either",
        extract=_component,
        needle="Unable to find",
    ),
)
