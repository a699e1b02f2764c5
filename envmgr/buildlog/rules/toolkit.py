"""The toolkit family: the CUDA MSBuild integration missing (F01) or driving another CUDA's nvcc (F02), the nvcc and
the build's toolkit disagreeing (F08), an architecture list from no GPU (F12) or outside this nvcc (F13), a toolkit
prefix that is wrong (F22, F02); and, where the prefix is not wrong, the search for the toolkit (`search`): no nvcc
(F07 or F22), a component's header or library missing (F24; F23 for the driver's libcuda), torch's CUDA against the
toolkit's (F08).
"""
from __future__ import annotations

import re

from envmgr.buildlog.rules.base import NOT_RECOGNIZED, Add, FactRx, Facts, fx
from envmgr.buildlog.signatures import ARCH_GIVEN
from envmgr.catalog import FailureId
from envmgr.knowledge import arch_span, cuda_at_least

IDS: tuple[FailureId, ...] = ("F01", "F02", "F08", "F12", "F13", "F22")
SEARCH_IDS: tuple[FailureId, ...] = ("F07", "F08", "F22", "F23", "F24")

# F24's components: the toolkit's libraries a build links (and cuDNN, which CUDA builds link next to them) by the
# names their import libraries and shared objects carry (cuBLAS/cuBLASLt, cuRAND, cuSPARSE, cuSOLVER, cuFFT, cuFile,
# NVRTC, nvJitLink, NVTX, NPP, the static runtime and device runtime, culibos)
_COMPONENT = (r"(?:cublasLt|cublas|curand|cusparse|cusolver|cufftw?|cufile|nvrtc|nvJitLink|nvToolsExt\w*|npp\w+|"
              r"cudart_static|cudadevrt|culibos|cudnn\w*)")

FACTS: tuple[FactRx, ...] = (
    # MSVC's linker on a toolkit library, any language: LNK1181 (an input file on its command line) and LNK1104 (a
    # file it was told to open: a #pragma comment(lib) or /DEFAULTLIB, as CUDA headers and crates name them)
    fx("lib_missing_msvc", r"\bLNK11(?:81|04)\b[^\n]*?\b(" + _COMPONENT + r")\.lib\b", ("LNK1181", "LNK1104")),
    # the linker's own line (`/usr/bin/ld: <cannot find, any language> -lcublas`), not a command line
    fx("lib_missing", r"(?:^|[\s/])(?:ld|ld\.\w+|collect2)\s*:[^\n]*?-l(" + _COMPONENT + r"|cudart|cuda)\b",
        ("-lcu", "-lnv", "-lnpp")),
    # a CUDA component CMake could not give the project: a target of the project's own linking to a CUDA:: imported
    # target CMake has not (CMake's "links to target" / "links to:"; not an installed package's exported link
    # interface, "The link interface of target X contains", which the package's config made), a FindCUDA library
    # variable NOTFOUND, or the target's name handed to the linker as a library (-lCUDA::cublas: any ld locale)
    fx("component_missing", r"\blinks\s+to(?:\s+target)?:?\s+\"?CUDA::(\w+)\"?\s+but\s+the\s+target\s+was\s+not\s+"
                             r"found|-lCUDA::(\w+)|CUDA_(cublas\w*|curand|cusparse|cusolver|cufft|nvrtc|npp\w*)"
                             r"_LIBRARY[^\n]*?(?:NOTFOUND|\(ADVANCED\))|"
                             # a component's own find variables left NOTFOUND (FindCUDNN-style modules, ports):
                             # cuDNN, cuBLAS ... by their upper-case names (a failed build must follow: cuDNN is
                             # often optional)
                             r"\b(CUDNN|CUBLAS(?:LT)?|CURAND|CUSPARSE|CUSOLVER|CUFFT|NVRTC)_(?:LIBRARY|INCLUDE)\w*"
                             r"(?:-NOTFOUND|\s+\(ADVANCED\))",
        ("CUDA::", "_LIBRARY", "_INCLUDE")),
    fx("nvcc_fatal", r"nvcc fatal\s*:\s*([^\n]{0,160})", "nvcc fatal"),
    fx("nvcc_missing",
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
        r"(?P<enoent>[\w/.-]*nvcc): No such file or directory|"
        # setup.py scripts' own check (locate_cuda, copied across many projects: "The nvcc binary could not be
        # located in your $PATH", raised), torch.utils.cpp_extension's CUDA_NOT_FOUND_MESSAGE (torch 2.x: CUDA_HOME
        # is None), DeepSpeed's op_builder (installed_cuda_version: the same None)
        r"(?:Error|Exception): The nvcc(?:\.exe)? binary could not be located|"
        r"CUDA was not found on the system, please set the CUDA_HOME|"
        r"CUDA_HOME does not exist, unable to compile CUDA op",
        ("nvcc", "NVCC", "cicc", "CUDA was not found on the system", "CUDA_HOME does not exist")),
    # (CMake's own search for the toolkit next to its nvcc: "Couldn't find CUDA library root.",
    # Kitware/CMake Modules/Internal/CMakeCUDAFindToolkit.cmake)
    fx("toolkit_missing", r"Could NOT find CUDA(?:Toolkit)?\b|CMAKE_CUDA_COMPILER-NOTFOUND|"
                           r"(?i:specify CUDA_TOOLKIT_ROOT_DIR)|Couldn't find CUDA library root|"
                           # FindCUDA's own words where the toolkit was not required (Modules/FindCUDA.cmake)
                           r"CUDA_TOOLKIT_ROOT_DIR not found or specified|"
                           r"CUDA_TOOLKIT_ROOT_DIR[^\n]*NOTFOUND|(?i:cuda toolkit (?:was )?not found)",
        ("Could NOT find CUDA", "CUDA_TOOLKIT_ROOT_DIR", "CMAKE_CUDA_COMPILER-NOTFOUND", "oolkit not found",
         "oolkit was not found", "CUDA library root")),
    fx("cmake_error", r"CMake Error at [^\n]*?(\w+)\.cmake:\d+", "CMake Error at"),
    fx("toolkit_dir", r"(?i:cuda)[\\/]+v(\d+\.\d+)(?![\d.])", ("CUDA\\", "CUDA/", "cuda\\", "cuda/")),
    fx("nvcc_cuda", r"(?i:cuda)[\\/]+v?(\d+\.\d+)[\\/]+bin[\\/]+nvcc|release (\d+\.\d+), V\d", ("nvcc", "release ")),
    fx("targets_cuda", r"BuildCustomizations[\\/]+CUDA (\d+\.\d+)\.(?:targets|props)", "BuildCustomizations"),
    fx("arch", r"(?:arch(?:itecture)?[= ]'?|code=|gpu-architecture[ =]'?)(?:compute|sm)_(\d+)[a-z]?",
        ("arch", "code=")),
    fx("empty_arch", r"compute_'|arch=compute_,|(?:compute|sm)_(?=[\s'\",]|$)", ("compute_", "sm_")),
    # no GPU visible while building: torch's arch list came out empty, FindCUDA fell back to its common list
    # (true even where the build then fails for another reason, as in one clean train log)
    fx("arch_list_empty", r"_get_cuda_arch_flags[^\n]*|arch_list\[-1\]|(?i:automatic GPU detection failed)",
        ("_get_cuda_arch_flags", "arch_list[-1]", "etection failed")),
    # ggml's own report of the list it compiles for (ggml/src/ggml-cuda/CMakeLists.txt): still "native" with CMake's
    # native list empty or not numbers (its probe found no GPU: "No CUDA devices found."), so nvcc guesses
    fx("native_empty", r"CMAKE_CUDA_ARCHITECTURES=native CMAKE_CUDA_ARCHITECTURES_NATIVE=(?!\d)",
        "ARCHITECTURES_NATIVE="),
    # an architecture list the build was given (a CMake variable, torch's list): a failed detection's fallback
    # is then not what the build compiles for
    fx("arch_given", ARCH_GIVEN,
        ("from CMake variable", "from cmake variable", "_ARCHITECTURES=", "TORCH_CUDA_ARCH_LIST=")),
    # a Linux build (WSL) handed the Windows toolkit through the /mnt/<drive> mount
    fx("wsl_windows_cuda", r"/mnt/[a-z]/[^\n]*?NVIDIA GPU Computing Toolkit/CUDA", "/mnt/"),
    # a toolkit prefix variable that was empty when a command line was made: -I$(CUDA)/include is -I/include,
    # $(CudaToolkitDir)include is /Iinclude
    fx("empty_prefix", r"(?:^|\s)(-I/include|-L/lib(?:64)?|/Iinclude /Ibin)(?=\s|$)|(?:^|\s)(/bin/nvcc)(?=\s|:|$)",
        ("-I/include", "-L/lib", "/Iinclude", "/bin/nvcc")),
    # a shell ran a CUDA source file as a script (dash "x.cu: 6: x.cu: extern: not found", bash "x.cu: line 6: ...
    # command not found"): the compiler in front of it (a Makefile's NVCC :=, a script's $NVCC) expanded to nothing
    fx("cu_as_script", r"(?:^|\s)(\S+\.cuh?): (?:line )?\d+: [^\n]*?not found", "not found", re.M),
    fx("header_missing", r"\b((?:cu|nv|npp)\w*\.h)[\"'>]?[:\s]+(?:fatal error:\s*)?"
                          r"(?:No such file or directory|file not found)|"
                          r"Cannot open include file:\s*'((?:cu|nv|npp)\w*\.h)'|"
                          # EDG's front end (nvcc's cudafe++, NVRTC): CuPy's install guide quotes it for cuda_fp16.h
                          # (docs.cupy.dev/en/latest/install.html)
                          r"cannot open source file \"((?:cu|nv|npp)\w*\.h)\"|"
                          # MSVC's C1083 in any language: the code, then the header in that locale's quotes
                          r"\bC1083\b[^\n]*?[\"'“„«「]((?:cu|nv|npp)\w*\.h)[\"'”“»」]|"
                          r"\b(libdevice)\b[^\n]*(?i:not found|No such file|missing)|error in open: [^\n]*(libdevice)",
        ("No such file", "not found", "Cannot open include", "libdevice", "C1083", "cannot open source file")),
    fx("torch_cuda_pair", r"(?i:(?:installed|detected|nvcc) cuda version)[^\n]{0,20}?(\d+\.\d+)[^\n]{0,120}?"
                           r"(?i:torch|pytorch)[^\n]{0,60}?(\d+\.\d+)|CUDAMismatchException|CUDA_MISMATCH",
        ("CUDA version", "CUDA Version", "cuda version", "CUDAMismatch", "CUDA_MISMATCH")),
    # a command whose program was an empty variable, so its first flag ran as the program (waf's, setuptools' or a
    # Makefile's NVCC left empty): Python's ENOENT or the shell naming a flag (a -D setting is flag_as_command's)
    fx("flag_as_program", r"\[Errno 2\][^\n]*?: '(-(?!D[A-Z])[A-Za-z][\w-]*)'|"
                           r"(?:^|\s)(-(?!D[A-Z])[A-Za-z][\w-]*): (?:command )?not found",
        ("[Errno 2]", "not found")),
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


def prefix_wrong(fs: Facts) -> bool:
    """WSL's Windows toolkit, an empty toolkit prefix or a .cu file run by the shell: what `search` would name (no
    toolkit, no cuBLAS header) comes from that (the registry runs `search` only where this is False)."""
    return bool(fs.first("wsl_windows_cuda") or fs.first("empty_prefix") or fs.first("cu_as_script"))


def search(fs: Facts, add: Add) -> None:
    """The search for the toolkit and its components: no nvcc (F07, or F22 on Linux outside CMake), a component's
    header or library missing (F24; F23 for libcuda), torch's CUDA against the toolkit's (F08)."""
    cmake = {"CMakeDetermineCUDACompiler", "CMakeCUDAFindToolkit", "FindCUDAToolkit", "FindCUDA"} & \
        set(fs.values("cmake_error"))
    # CMake's own search for a CUDA compiler, or a log that does not show Linux (F07: either platform), as against a
    # shell, make or a script on Linux (F22, a Linux cause: its toolkit's bin is not on PATH)
    linux = (fs.first("linux") or fs.first("posix")) is not None and fs.first("windows") is None
    for f in fs.facts.get("nvcc_missing", ()):
        add("F22" if linux and not cmake else "F07", "nvcc-missing", f)
    add("F07", "toolkit-missing", fs.first("toolkit_missing"))
    add("F07", "cuda-compiler-empty", fs.first("flag_as_program") if fs.first("cuda_compile") else None)
    for f in fs.facts.get("header_missing", ()):
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


def _two_versions(line: str) -> bool:
    found = re.findall(r"\b(\d{1,2}\.\d)\b", line)
    return len(set(found)) >= 2
