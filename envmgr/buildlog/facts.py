"""Facts read from a log, and the catalog id they decide (issue 23 item 1).

The signatures of signatures.py each know one tool's sentence. A log in another tool's words, another
language or another wrapper still carries things that do not change with the wording: error codes
(MSB3721, C1189, STL1002, LNK1181), Windows error numbers and their system messages in every language
(126 / 0x8007007E "module not found", 127 "procedure not found", 193 "not a valid Win32 application"),
file names (cudart64_12.dll, libcuda.so.1, host_config.h, -lcublas), the versions a decision rests on
(the CUDA a driver supports, the CUDA a binary needs; an nvcc and the architecture asked of it) and the
runtimes' own status phrases (`offloaded 0/`, `BLAS = 0`). `FactScanner` collects them while the log
streams (a needle gates each regex, a few values per kind are kept); `decide` names catalog ids from
what was found together. logscan uses the decision where no signature matched.
"""
from __future__ import annotations

import bisect
import re
from collections import deque
from dataclasses import dataclass, field
from itertools import accumulate

from envmgr.buildlog.clock import FAILURE, Clock
from envmgr.buildlog.engine import Probe
from envmgr.buildlog.signatures import ARCH_GIVEN, GPU_WANTED
from envmgr.buildlog.unnamed import OUTSIDE_NEEDLES, OUTSIDE_PATTERN
from envmgr.knowledge import arch_span, cuda_at_least

KEEP = 8          # values kept per fact kind (the first ones)
LAST = 60         # the log's last lines, kept for the state it ends in (a build still running)


@dataclass(frozen=True)
class FactRx:
    kind: str
    regex: re.Pattern[str]
    needles: tuple[str, ...]      # one of these literals is in every match
    keep: int = KEEP              # distinct values kept (1 where only the first is read)


# Kinds whose rules read more than the first value (a list of codes, versions, archs or names).
_MANY = {"msb", "winerr", "cuda_dll", "cuda_so", "lib_missing", "lib_missing_msvc", "component_missing", "nvcc_fatal",
         "nvcc_missing", "cmake_error", "toolkit_dir", "nvcc_cuda", "arch", "host_compiler", "lnk", "header_missing",
         "wheel_index", "sdist_build", "wheel_tags", "wheel_taken", "sdist_fetched", "wheel_failed", "timed_compile"}


# Kinds whose LAST line is what a rule reads (what the log shows working, after a cause's line: `contradicted`)
_LATEST = {"ok_gpu_work", "ok_lib_loaded", "ok_nvcc_found"}


# Kinds whose rule reads the line around the value (a DLL or shared object named, and whether that line says it is
# missing): the same name on another line is kept too, up to LINES_PER_NAME lines, as the first one may only list it
_BY_LINE = {"cuda_dll", "cuda_so"}
LINES_PER_NAME = 3


HEAD = 4 << 20    # characters read from the start of a log ...
TAIL = 4 << 20    # ... and from its end
LINE = 1 << 20    # characters of one line read (its first and last half): facts cost a few MiB whatever the line


# hours, half an hour or more, or the reporter's "a long time", "stuck", "never finishes": in digits ("1.5 hours",
# "6h", "45 min"), in words ("for hours", "half an hour", "overnight", "a whole day", "two days"), and in the languages
# reporters write (zh/ja 小时/時間 after a number or 几/数, ru час/часов, de Stunden, die ganze Nacht); "days ago" is
# when something last worked, no duration
_LONG = (r"(?:\b\d+(?:\.\d+)?\s*\+?\s*(?:hours?|hrs?|h)\b|\b(?:[3-9]\d|\d{3})\s*\+?\s*(?:minutes?|mins?)\b|"
         r"\b(?:an|one|half an|for|many|several|few) hours?\b|\b(?:overnight|all night|for days|"
         r"(?:a |one )?(?:whole|entire|full) day|(?:\d+|two|three|several|few) days)\b(?! ago)|"
         r"long time|stuck|never finish\w*|forever|"
         r"\b(?:tak(?:e|es|ing|en)|took)\s+(?:way\s+)?(?:too|so|very|extremely|really)\s+long\b|"
         r"[几幾数數多两兩\d]\s*个?\s*(?:小时|小時|時間)|一(?:个)?晚上|一整天|好几天|"
         r"\d+\s*(?:час\w*|Stunden?)\b|несколько час\w*|stundenlang|die ganze Nacht)")
# a build, job or CI run said to time out (the build's own timeout: a read, connection or socket timeout is the
# network's, and a setting's name, timeout: / timeout= / timeout-minutes, reports none)
_SENTENCE = r"(?:(?!\.\s+(?-i:[A-Z]))[^\n]){0,80}?"      # up to 80 characters of one line that end no sentence
_TIMES_OUT = (r"\b(?:builds?|compil\w*|CI|jobs?)\b" + _SENTENCE +
              r"(?<!read )(?<!connect )(?<!connection )(?<!socket )(?<!operation )"
              r"\b(?:time ?outs?\b(?![-=:]| [=:]|error)|timing out\b|timed out\b)")


# what takes long: a build, compile, wheel, CMake/Ninja/setup.py run or CI (also in zh/ja/ru/de), or the install of
# a package whose install is a CUDA compile (no wheel for most platforms: its install IS the build)
_SOURCE_BUILT = (r"(?:flash[_-]?attn|flash[_-]attention|xformers|vllm|mamba[_-]ssm|causal[_-]conv1d|tensorrt[_-]llm|"
                 r"pytorch3d|tiny-?cuda-?nn|tinycudann|apex|detectron2|mmcv(?:-full)?|llama[_-]cpp[_-]python)\b")
_BUILD_WORD = (r"(?:(?<![A-Za-z])(?:build(?:s|ing)?|compil\w*|wheels?|cmake|ninja|setup\.py)\b|\bCI\b|"
               r"编译|編譯|构建|構建|ビルド|コンパイル|сборк\w*|компил\w*|(?<![A-Za-z])kompil\w*|"
               r"\binstall\w*\s+(?:[\w:.-]+\s+){0,3}?" + _SOURCE_BUILT + r"|\b" + _SOURCE_BUILT + r"\s+install\w*)")
# a title or short line naming the build and the reporter's next sentence (a blank line between) saying how long; or
# the duration's line and, at most a fence or short line below, the build step it is said of (pip's own line)
_NEXT_LINE = r"(?m:^)[^\n]{0,60}?" + _BUILD_WORD + r"[^\n]{0,60}\n(?:[ \t]*\n)?[^\n]{0,120}?" + _LONG
_LINE_BELOW = _LONG + r"[^\n]{0,80}\n(?:[^\n]{0,10}\n)?[ \t]{0,8}" + _BUILD_WORD


def _fx(kind: str, pattern: str, needles, flags: int = 0, keep: int | None = None) -> FactRx:
    many = LINES_PER_NAME * KEEP if kind in _BY_LINE else KEEP if kind in _MANY else 1
    return FactRx(kind, re.compile(pattern, flags), (needles,) if isinstance(needles, str) else tuple(needles),
                  keep or many)


# Windows' own messages for loader errors, as the system prints them in each language (FormatMessage text).
_MOD_NOT_FOUND = (
    "The specified module could not be found", "Das angegebene Modul wurde nicht gefunden",
    "Le module spécifié est introuvable", "No se puede encontrar el módulo especificado",
    "Impossibile trovare il modulo specificato", "Não foi possível encontrar o módulo especificado",
    "Не найден указанный модуль", "找不到指定的模块", "找不到指定的模組", "指定されたモジュールが見つかりません",
    "지정된 모듈을 찾을 수 없습니다", "Nie można odnaleźć określonego modułu", "Belirtilen modül bulunamadı",
    "Kan opgegeven module niet vinden", "Nelze nalézt zadaný modul")
_PROC_NOT_FOUND = (
    "The specified procedure could not be found", "Die angegebene Prozedur wurde nicht gefunden",
    "La procédure spécifiée est introuvable", "No se encontró el proceso especificado",
    "Impossibile trovare la procedura specificata", "Não foi possível encontrar o procedimento especificado",
    "Не найдена указанная процедура", "找不到指定的程序", "指定されたプロシージャが見つかりません",
    "지정된 프로시저를 찾을 수 없습니다", "Nie można odnaleźć określonej procedury", "Belirtilen yordam bulunamadı")
_BAD_IMAGE = ("is not a valid Win32 application", "ist keine zulässige Win32-Anwendung",
              "no es una aplicación Win32 válida", "n'est pas une application Win32 valide",
              "не является приложением Win32", "不是有效的 Win32 应用程序",
              "有効な Win32 アプリケーションではありません")


# Needles for the phrases above: the parts that locate them (a non-ASCII needle costs nothing in an ASCII
# log; in another it is looked for in the UTF-8 bytes).
_LOADER_NEEDLES = ("specified", "angegebene", "spécifié", "specifica",
                   "Не найден", "找不到指定", "指定された", "지정된", "określon", "Belirtilen", "opgegeven", "zadaný",
                   "não pôde", "Не найдена")


def _alts(phrases) -> str:
    return "|".join(re.escape(p) for p in phrases)


# cmd's and PowerShell's words for a program not on PATH, after its quoted name, in each locale (cmd quotes it
# 'x' in some languages and "x" in others): en "is not recognized as" (both shells), de cmd 'Der Befehl "x" ist
# entweder falsch geschrieben' (SCons' own tests expect it) and PowerShell 'Die Benennung "x" wurde nicht als Name
# eines Cmdlet', fr, es, it, pt, zh (simplified and traditional), ja, ru as users quote them in public code
_NOT_RECOGNIZED = _alts((
    "is not recognized as", "ist entweder falsch geschrieben", "wurde nicht als Name", "wird nicht als",
    "n'est pas reconnu", "no se reconoce como", "non è riconosciuto", "não é reconhecido", "不是内部或外部命令",
    "不是內部或外部命令", "は、内部コマンドまたは外部コマンド", "не является внутренней или внешней"))


# F24's components: the toolkit's libraries a build links (and cuDNN, which CUDA builds link next to them) by the
# names their import libraries and shared objects carry (cuBLAS/cuBLASLt, cuRAND, cuSPARSE, cuSOLVER, cuFFT, cuFile,
# NVRTC, nvJitLink, NVTX, NPP, the static runtime and device runtime, culibos)
_COMPONENT = (r"(?:cublasLt|cublas|curand|cusparse|cusolver|cufftw?|cufile|nvrtc|nvJitLink|nvToolsExt\w*|npp\w+|"
              r"cudart_static|cudadevrt|culibos|cudnn\w*)")


_CUDA_LIB = (r"(?:cudart|cublasLt|cublas|cudnn\w*|nvrtc|cufft|curand|cusparse|cusolver|nvJitLink|nvcuda|"
             r"nvToolsExt|cupti)")
# (with TensorRT's runtime and parsers, nvinfer*/nvonnxparser*/nvparsers, and cuDNN 8's own dependency zlibwapi: DLLs of
# the CUDA stack that its runtimes load, TensorRT naming them in "Unable to open library: nvinfer_plugin_10.dll")
_CUDA_DLL = (r"(?:" + _CUDA_LIB + r"(?:64)?(?:_\w+)?|ggml[\w-]*|llama|onnxruntime_providers_cuda|torch_cuda\w*|"
             r"c10_cuda|caffe2_nvrtc|nvinfer\w*|nvonnxparser\w*|nvparsers\w*|zlibwapi)\.dll")

FACTS: tuple[FactRx, ...] = (
    # codes
    _fx("msb", r"\b(MSB\d{4})\b", "MSB"),
    _fx("c1189", r"\bC1189\b", "C1189"),
    _fx("stl", r"\bSTL(1002)\b", "STL1002"),
    _fx("lnk", r"\bLNK(\d{4})\b[^\n]*?(?P<file>[\w.-]+\.lib)?", "LNK"),
    # Windows' loader error numbers in any runtime's words: CPython's [WinError N], LoadLibrary's "error N" (ORT,
    # .NET), CTranslate2's "Error code 126", Paddle's dynamic loader "(error code is 126)" (phi/backends/dynload)
    _fx("winerr", r"WinError (\d+)|LoadLibrary\w*(?:\(\))?[^\n]{0,60}?\berror(?: code)?[ :]*(\d+)|"
                  r"(?<!\] )(?i:error (?:code )?(?:is )?)(126|127|193)\b|0x(8007007[EeFf]|800700[Cc]1)",
        ("WinError", "LoadLibrary", "rror 1", "rror code", "0x8007")),
    _fx("mod_missing", _alts(_MOD_NOT_FOUND), _LOADER_NEEDLES),
    _fx("proc_missing", _alts(_PROC_NOT_FOUND), _LOADER_NEEDLES),
    _fx("bad_image", _alts(_BAD_IMAGE), ("Win32",)),
    _fx("dll_load", r"DLL load failed|Could not find module|Unable to load DLL|DllNotFoundException|"
                    r"Failed to load (?:shared )?library|failed to load|Could not load (?:library|dynamic library|\")|"
                    r"LoadLibrary|Could not locate",
        ("DLL", "ould not", "Unable to load", "ailed to load", "LoadLibrary")),
    # file names
    _fx("cuda_dll", r"\b(" + _CUDA_DLL + r")\b", ".dll", re.I),
    # the driver's and the toolkit's runtime libraries as shared objects (the ones _CUDA_LIB names as DLLs)
    _fx("cuda_so", r"\b(lib(?:cuda|cudart|cublasLt|cublas|cudnn\w*|nvrtc|nvidia-ml|ggml-cuda|cufft|curand|cusparse|"
                   r"cusolver|nvJitLink|nvToolsExt|cupti)"
                   r"\.so(?:\.\d+)*)\b[^\n]*?(cannot open shared object|No such file|not found|cannot find)?",
        ".so"),
    # MSVC's linker on a toolkit library, any language: LNK1181 (an input file on its command line) and LNK1104 (a
    # file it was told to open: a #pragma comment(lib) or /DEFAULTLIB, as CUDA headers and crates name them)
    _fx("lib_missing_msvc", r"\bLNK11(?:81|04)\b[^\n]*?\b(" + _COMPONENT + r")\.lib\b", ("LNK1181", "LNK1104")),
    # the linker's own line (`/usr/bin/ld: <cannot find, any language> -lcublas`), not a command line
    _fx("lib_missing", r"(?:^|[\s/])(?:ld|ld\.\w+|collect2)\s*:[^\n]*?-l(" + _COMPONENT + r"|cudart|cuda)\b",
        ("-lcu", "-lnv", "-lnpp")),
    _fx("host_config", r"host_config\.h", "host_config.h"),
    # host_config.h's #error on a Windows toolkit path: only its MSVC version check fires under cl
    _fx("host_config_win", r"[A-Za-z]:[\\/][^\n]*?[\\/]host_config\.h\(\d+\)\s*:\s*fatal", "host_config.h"),
    # a CUDA component CMake could not give the project: a target of the project's own linking to a CUDA:: imported
    # target CMake has not (CMake's "links to target" / "links to:"; not an installed package's exported link
    # interface, "The link interface of target X contains", which the package's config made), a FindCUDA library
    # variable NOTFOUND, or the target's name handed to the linker as a library (-lCUDA::cublas: any ld locale)
    _fx("component_missing", r"\blinks\s+to(?:\s+target)?:?\s+\"?CUDA::(\w+)\"?\s+but\s+the\s+target\s+was\s+not\s+"
                             r"found|-lCUDA::(\w+)|CUDA_(cublas\w*|curand|cusparse|cusolver|cufft|nvrtc|npp\w*)"
                             r"_LIBRARY[^\n]*?(?:NOTFOUND|\(ADVANCED\))|"
                             # a component's own find variables left NOTFOUND (FindCUDNN-style modules, ports):
                             # cuDNN, cuBLAS ... by their upper-case names (a failed build must follow: cuDNN is
                             # often optional)
                             r"\b(CUDNN|CUBLAS(?:LT)?|CURAND|CUSPARSE|CUSOLVER|CUFFT|NVRTC)_(?:LIBRARY|INCLUDE)\w*"
                             r"(?:-NOTFOUND|\s+\(ADVANCED\))",
        ("CUDA::", "_LIBRARY", "_INCLUDE")),
    _fx("yvals", r"yvals_core\.h", "yvals_core.h"),
    # nvcc and the toolkit
    _fx("nvcc_fatal", r"nvcc fatal\s*:\s*([^\n]{0,160})", "nvcc fatal"),
    _fx("nvcc_missing",
        r"which: no nvcc in|nvcc(?:\.exe)?'? (?:was |is )?not found|nvcc: (?:[Cc]ommand )?not found|"
        # cmd's and PowerShell's "not recognized", and bash's "command not found", as each locale words them
        r"['\"]nvcc(?:\.exe)?['\"]\s*(?:" + _NOT_RECOGNIZED + r")|"
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
    _fx("toolkit_missing", r"Could NOT find CUDA(?:Toolkit)?\b|CMAKE_CUDA_COMPILER-NOTFOUND|"
                           r"(?i:specify CUDA_TOOLKIT_ROOT_DIR)|Couldn't find CUDA library root|"
                           # FindCUDA's own words where the toolkit was not required (Modules/FindCUDA.cmake)
                           r"CUDA_TOOLKIT_ROOT_DIR not found or specified|"
                           r"CUDA_TOOLKIT_ROOT_DIR[^\n]*NOTFOUND|(?i:cuda toolkit (?:was )?not found)",
        ("Could NOT find CUDA", "CUDA_TOOLKIT_ROOT_DIR", "CMAKE_CUDA_COMPILER-NOTFOUND", "oolkit not found",
         "oolkit was not found", "CUDA library root")),
    _fx("cmake_error", r"CMake Error at [^\n]*?(\w+)\.cmake:\d+", "CMake Error at"),
    _fx("toolkit_dir", r"(?i:cuda)[\\/]+v(\d+\.\d+)(?![\d.])", ("CUDA\\", "CUDA/", "cuda\\", "cuda/")),
    _fx("nvcc_cuda", r"(?i:cuda)[\\/]+v?(\d+\.\d+)[\\/]+bin[\\/]+nvcc|release (\d+\.\d+), V\d", ("nvcc", "release ")),
    _fx("targets_cuda", r"BuildCustomizations[\\/]+CUDA (\d+\.\d+)\.(?:targets|props)", "BuildCustomizations"),
    _fx("arch", r"(?:arch(?:itecture)?[= ]'?|code=|gpu-architecture[ =]'?)(?:compute|sm)_(\d+)[a-z]?",
        ("arch", "code=")),
    _fx("empty_arch", r"compute_'|arch=compute_,|(?:compute|sm)_(?=[\s'\",]|$)", ("compute_", "sm_")),
    # no GPU visible while building: torch's arch list came out empty, FindCUDA fell back to its common list
    # (true even where the build then fails for another reason, as in one clean train log)
    _fx("arch_list_empty", r"_get_cuda_arch_flags[^\n]*|arch_list\[-1\]|(?i:automatic GPU detection failed)",
        ("_get_cuda_arch_flags", "arch_list[-1]", "etection failed")),
    # ggml's own report of the list it compiles for (ggml/src/ggml-cuda/CMakeLists.txt): still "native" with CMake's
    # native list empty or not numbers (its probe found no GPU: "No CUDA devices found."), so nvcc guesses
    _fx("native_empty", r"CMAKE_CUDA_ARCHITECTURES=native CMAKE_CUDA_ARCHITECTURES_NATIVE=(?!\d)",
        "ARCHITECTURES_NATIVE="),
    # an architecture list the build was given (a CMake variable, torch's list): a failed detection's fallback
    # is then not what the build compiles for
    _fx("arch_given", ARCH_GIVEN,
        ("from CMake variable", "from cmake variable", "_ARCHITECTURES=", "TORCH_CUDA_ARCH_LIST=")),
    _fx("host_compiler", r"(?i:unsupported (GNU|clang|Microsoft Visual Studio) version)|"
                         r"The version \('[\d.]+'\) of the host compiler \('(\w+)'\) is not supported|"
                         r"Visual Studio \d+(?: Update [^\n]*)? is not supported|host compiler targets unsupported OS|"
                         r"'-allow-unsupported-compiler' can be used to override this version check|"
                         r"cannot find a supported version of Microsoft Visual Studio",
        ("upported",)),
    # ... or no VS environment script to be found by a tool looking for a Visual Studio (vcvars*.bat ships with the
    # VC tools: distutils, vcpkg, build scripts; nvcc's own "configuration file 'vcvars64.bat' could not be found"
    # is a VS it was given that lacks the x64 setup: cl_missing, F06), a CI action finding no VS at all, or the
    # shell not knowing VS's own build programs (not a developer prompt). Needles shared with other facts: a new
    # needle is a pass over every log (the 200 MiB bench), so VS's "Cannot determine the location of the VS
    # installation" is read through the msbuild/nmake line that follows it, not by a needle of its own.
    _fx("no_vs", r"(?i:could not find (?:any|specified) instance\s+of\s+visual studio)|Make command was:\s*\"?nmake\b|"
                 r"(?i:unable to find|could not (?:detect|find)|cannot find)\s+vcvars\w*\.bat|"
                 r"Microsoft Visual Studio not found|"
                 # setuptools' own distutils (2024+) where vcvarsall gives it no environment
                 r"Unable to find a compatible Visual Studio installation|"
                 r"['\"](?:nmake|msbuild)(?:\.exe)?['\"]\s*(?:" + _NOT_RECOGNIZED + r")",
        ("instance", "nmake", "vcvars", "VCVARS", "isual Studio", "not recognized")),
    # other build tools finding no Visual C++ tools, in their own words: rustc's MSVC targets without link.exe,
    # node-gyp's Visual Studio search, classic scikit-build's generator search, MSBuild's C++ targets missing
    # (MSB4019 on Microsoft.Cpp.*.props: VCTargetsPath empty, no C++ workload), CMake failing to ask MSBuild for it,
    # Meson (and meson-python) probing its Windows compiler list, which starts with cl, and finding none
    # (mesonbuild/compilers/detect.py's "Unknown compiler(s)")
    _fx("no_vc_tools", r"linker `link\.exe` not found|`link\.exe` was not found|"
                       r"gyp ERR! find VS|could not find any Visual Studio installation|"
                       r"could not get a working generator for your system|to get the value of VCTargetsPath|"
                       r"MSB4019[^\n]*?Microsoft\.Cpp\.[\w.]*?(?:props|targets)|"
                       r"Unknown compiler\(s\): [^\n]*?'cl'",
        ("link.exe", "find VS", "Visual Studio installation", "working generator", "VCTargetsPath", "MSB4019",
         "'cl'")),
    # setuptools/distutils finding no MSVC (any Python package with C code on Windows), in its own words: 14.0 (or
    # greater) for Python 3.5+, and setuptools' msvc.py's older forms, 9.0 (Python 2.7, VC for Python) and 10.0
    _fx("msvc_required", r"Microsoft Visual C\+\+ \d{1,2}\.\d(?: or greater)? is required", "Visual C++"),
    # CMake enabling C or C++ without a compiler; on Windows with CMake's `cl` named but not on PATH (no vcvars)
    _fx("no_compiler", r"No CMAKE_(?:C|CXX)_COMPILER could be found|"
                       r"CMAKE_(?:C|CXX)_COMPILER not set, after EnableLanguage|"
                       r"(?<![\w-])cl(?:\.exe)?(?:\s|\[\w+\])*is not a full path",
        ("_COMPILER could be found", "not set, after EnableLanguage", "not a full path")),
    # the build was about Visual Studio (a generator named, its tools, its prompt): a missing compiler is then MSVC's
    _fx("vs_context", r"(?i:visual studio|vcvars\w*\.bat|developer command prompt)|\bMSVC\b",
        ("isual Studio", "isual studio", "ISUAL STUDIO", "vcvars", "VCVARS", "eveloper Command", "eveloper command",
         "MSVC")),
    # the Windows SDK (UCRT headers) missing: MSVC's C1083 or a compiler's "No such file" on its headers
    _fx("sdk_missing", r"\b(corecrt(?:_\w+)?\.h|winsdkver\.h|sdkddkver\.h|windows\.h)\b[^\n]*?"
                       r"(?:No such file|file not found|cannot open|Cannot open)|"
                       r"\bC1083\b[^\n]*?\b(corecrt(?:_\w+)?\.h|winsdkver\.h|sdkddkver\.h|windows\.h)\b|"
                       # CMake's Visual Studio generators finding no Windows 10 SDK to target (its own words,
                       # Source/cmGlobalVisualStudio14Generator.cxx; older CMake ran "SDK" and "installed" together)
                       r"Could not find an appropriate version of the Windows 10 SDK",
        ("corecrt", "winsdkver", "sdkddkver", "windows.h", "C1083", "appropriate version of the Windows")),
    # a Linux build (WSL) handed the Windows toolkit through the /mnt/<drive> mount
    _fx("wsl_windows_cuda", r"/mnt/[a-z]/[^\n]*?NVIDIA GPU Computing Toolkit/CUDA", "/mnt/"),
    # a toolkit prefix variable that was empty when a command line was made: -I$(CUDA)/include is -I/include,
    # $(CudaToolkitDir)include is /Iinclude
    _fx("empty_prefix", r"(?:^|\s)(-I/include|-L/lib(?:64)?|/Iinclude /Ibin)(?=\s|$)|(?:^|\s)(/bin/nvcc)(?=\s|:|$)",
        ("-I/include", "-L/lib", "/Iinclude", "/bin/nvcc")),
    # a shell ran a CUDA source file as a script (dash "x.cu: 6: x.cu: extern: not found", bash "x.cu: line 6: ...
    # command not found"): the compiler in front of it (a Makefile's NVCC :=, a script's $NVCC) expanded to nothing
    _fx("cu_as_script", r"(?:^|\s)(\S+\.cuh?): (?:line )?\d+: [^\n]*?not found", "not found", re.M),
    # run time
    # torch in a container or on a host without the NVIDIA driver (F23), a CPU-only torch wheel (F19: the
    # CUDA wheel was wanted), nvcc refusing the host compiler's target (MinGW g++: F06)
    _fx("no_driver", r"Found no NVIDIA driver on your system", "Found no NVIDIA driver"),
    # an installed package built without CUDA in its own words (torch, CTranslate2's "package"), bitsandbytes'
    # CPU library, or a report (zh/ja) that the torch installed is the CPU version ("CPU版")
    _fx("cpu_wheel", r"Torch not compiled with CUDA enabled|\bpackage (?:was )?not compiled with CUDA support|"
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
        ("not compiled with CUDA", "libbitsandbytes_cpu", "compiled without GPU support", "cpu版", "CPU版", "cpu 版",
         "CPU 版", "CUDA-enabled jaxlib", "CPU version PaddlePaddle", "addlepaddle cpu", "addlepaddle-cpu",
         "CUDAExecutionProvider")),
    # a framework's own probe of its build answering that CUDA is not in it: TensorFlow's tf.test.is_built_with_cuda()
    # and its build info ('is_cuda_build': False), PaddlePaddle's is_compiled_with_cuda(), torch's
    # torch.backends.cuda.is_built() and torch.version.cuda (None in a CPU build), the answer on the probe's line
    # (a comment, an arrow) or the next one (a REPL), or under the label it was printed with ("built with CUDA?: False")
    _fx("build_without_cuda", r"(?:\bis_built_with_cuda|\bis_compiled_with_cuda|\bbackends\.cuda\.is_built)\(\)\)?"
                              r"[ \t]*(?:#|->|→|=>)?[ \t]*(?:\n[ \t>`]*)?False\b|"
                              r"\btorch\.version\.cuda\)?[ \t]*(?:#|->|→|=>)?[ \t]*(?:\n[ \t>`]*)?None\b|"
                              r"\b[Bb]uilt with CUDA\b ?\??:? ?False\b|'is_cuda_build': False\b",
        ("is_built_with_cuda", "is_compiled_with_cuda", "is_built()", "version.cuda", "uilt with CUDA",
         "is_cuda_build")),
    # the same report in English: the CPU version (build, wheel) of torch (its own kind: "cpu" is a common needle)
    # (or that the CPU build came instead of the CUDA one)
    _fx("cpu_torch_said", r"(?i:\bcpu(?:[- ]?only)? (?:version|build|wheel)s? (?:of (?:py)?torch|"
                          r"instead of (?:the )?(?:cuda|gpu))|"
                          r"\b(?:py)?torch\b[^\n]{0,80}?\bcpu(?:[- ]?only)? (?:version|build|wheel)s?\b)",
        ("cpu", "CPU", "Cpu")),
    # the reporter's words that the run is on the CPU or leaves the GPU unused ("gpu is not being used", "only
    # running on CPU", "complete load is on cpu", "no longer uses CUDA"): F18's symptom where layers or CUDA were asked
    _fx("cpu_run_said", r"(?i:\b(?:gpu|cuda) (?:is |was |are )?(?:not|never) (?:being )?(?:used|utili[sz]ed)\b|"
                        # (not a condition the reporter sets: "when not using gpu offloading, it works fine")
                        r"(?<!when )(?<!if )(?<!while )(?:\b(?:not|no longer|never)|n't) (?:be )?"
                        r"(?:using|uses?|utili[sz]ing|utili[sz]es?) (?:the |my |any )?(?:gpu|cuda)\b(?! ?offload)|"
                        r"\b(?:running|runs|ran|load is|loads|loaded|inference is|is) "
                        r"(?:only |always |still |entirely |completely |just )?(?:running )?on (?:the |my )?cpu\b)",
        ("cpu", "CPU", "Cpu", "not being used", "not used", "not utili", "not using", "no longer use", "n't use",
         "not use", "never use")),
    # the reporter's machine has no GPU (in their words): a CPU build is then the right one, not a wrong wheel (a
    # clean train log: "Since I don't have a GPU ... a 'cpu only' installation of torch")
    _fx("no_gpu_said", r"(?i:(?:don['’]?t|do not|doesn['’]?t|does not|didn['’]?t) (?:have|own) (?:a |an |any )?"
                       r"(?:nvidia |cuda[- ]capable |dedicated |discrete )?(?:gpu|graphics card|video card)s?\b|"
                       r"\b(?:machine|computer|laptop|server|pc|system|host|vm) (?:has|with) no (?:nvidia )?gpus?\b)|"
                       r"没有(?:独立)?(?:显卡|GPU|gpu)",
        ("have", "HAVE", "Have", "own", " no ", "没有")),
    # a CPU torch wheel by its name: a +cpu local version, or a plain torch wheel for Windows (PyPI and its
    # mirrors carry only CPU builds of torch for win_amd64; CUDA ones are torch-X+cuNNN from PyTorch's index)
    # (pip's wheel file, its "Successfully installed torch-X+cpu", its "Requirement already satisfied: torch in ...
    # (X+cpu)", pip list, or the version torch prints of itself)
    _fx("cpu_wheel_file", r"\btorch(?:vision|audio)?-\d+(?:\.\d+)*(?:%2B|\+)cpu\b|"
                          r"\btorch-\d+(?:\.\d+)*-cp\d+-cp\d+m?-win_amd64\.whl|"
                          r"\btorch(?:vision|audio)?(?:[ \t]+|==)\d+(?:\.\d+)+\+cpu\b|"
                          r"(?i:torch)[^\n]{0,200}?(?:\(|you have )\d+(?:\.\d+)+\+cpu\b|"
                          r"^[ \t>]*['\"]?\d+\.\d+(?:\.\d+)?\+cpu['\"]?[ \t]*$|"
                          # conda's CPU builds: the pytorch channel's build string (py3.8_cpu_0) and its mutex package
                          # (pytorch-mutex 1.0 cpu), conda-forge's build strings (cpu_mkl_py.., cpu_generic_py..) and
                          # its former package name (pytorch-cpu)
                          r"\bpy\d(?:\.?\d+)?_cpu_\d+\b|\bpytorch-mutex[-\s=]+1\.0[-\s=]+cpu\b|"
                          r"\bcpu_(?:mkl|generic)_py\d|\bpytorch[-_]cpu\b",
        ("torch-", "torch ", "torch==", "+cpu", "%2Bcpu", "cpu_", "pytorch-mutex", "pytorch-cpu", "pytorch_cpu"), re.M),
    # the CPU build asked for on an install command line (a +cpu pin, PyTorch's CPU index, conda's cpuonly): a
    # choice, a failure only where the program then asks for CUDA in its own words (a clean train log: uv #1497)
    # (the command ends where a Markdown code span does)
    _fx("cpu_asked", r"\b(?:pip3?|uv|conda|mamba)\b[^\n`]*?\binstall\b[^\n`]*?(?:\+cpu\b|/whl/cpu\b|\bcpuonly\b)",
        ("+cpu", "/whl/cpu", "cpuonly")),
    # torch's collect_env: a torch built without CUDA ("CUDA used to build PyTorch: None") on a machine whose
    # NVIDIA GPU it lists; its version tells a source build (+git, a0: F18) from a CPU wheel (F19)
    _fx("torch_no_cuda", r"CUDA used to build PyTorch: (?:None|Could not collect)", "CUDA used to build PyTorch"),
    _fx("torch_version", r"PyTorch version: (\S+)", "PyTorch version"),
    _fx("gpu_listed", r"GPU models and configuration:[^\n]*?(?:NVIDIA|GeForce|Tesla|Quadro|RTX)",
        "GPU models and configuration"),
    _fx("host_os", r"(?i:host compiler targets unsupported OS)", ("unsupported OS", "Unsupported OS")),
    _fx("header_missing", r"\b((?:cu|nv|npp)\w*\.h)[\"'>]?[:\s]+(?:fatal error:\s*)?"
                          r"(?:No such file or directory|file not found)|"
                          r"Cannot open include file:\s*'((?:cu|nv|npp)\w*\.h)'|"
                          # EDG's front end (nvcc's cudafe++, NVRTC): CuPy's install guide quotes it for cuda_fp16.h
                          # (docs.cupy.dev/en/latest/install.html)
                          r"cannot open source file \"((?:cu|nv|npp)\w*\.h)\"|"
                          # MSVC's C1083 in any language: the code, then the header in that locale's quotes
                          r"\bC1083\b[^\n]*?[\"'“„«「]((?:cu|nv|npp)\w*\.h)[\"'”“»」]|"
                          r"\b(libdevice)\b[^\n]*(?i:not found|No such file|missing)|error in open: [^\n]*(libdevice)",
        ("No such file", "not found", "Cannot open include", "libdevice", "C1083", "cannot open source file")),
    # a DLL that exists but whose dependencies do not load (CPython, torch, .NET word it so), or a loader
    # that names the DLL it could not load without a reason (Lua)
    _fx("dll_dep", r"or one of its dependencies|(?i:cannot|can't|could not) load '[^'\n]*\.dll'",
        ("one of its dependencies", "load '")),
    _fx("no_kernel", r"(?i:no kernel image is available)|CUDA_ERROR_NO_BINARY_FOR_GPU|cudaErrorNoKernelImageForDevice|"
                     r"with CUDA capability (sm_\d+) is not compatible with the current PyTorch",
        ("kernel image", "NO_BINARY_FOR_GPU", "NoKernelImage", "is not compatible")),
    _fx("driver_old", r"driver (?:on your system )?is too old(?: \(found version (\d+)\))?|"
                      r"CUDA driver version is insufficient|cudaErrorInsufficientDriver|CUDA_ERROR_INSUFFICIENT_DRIVER",
        ("too old", "nsufficient", "INSUFFICIENT")),
    _fx("driver_cuda", r"CUDA Version: (\d+\.\d+)", "CUDA Version"),
    # the runtimes' own words for a model left on the CPU: nothing offloaded, no VRAM used, no GPU taken
    _fx("cpu_only", r"(?i:not compiled with GPU offload support)|offloaded 0/\d+ layers|\bBLAS ?= ?0\b|"
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
        ("GPU offload", "offloaded 0/", "BLAS = 0", "device CPU", "usable GPU", "will be disabled", "offloading 0 ",
         "VRAM used", "compatible GPUs", "layers option will be ignored", "library=cpu", "runners=[cpu]",
         "compatible=[]", "Dynamic LLM libraries [", "Non-BLAS", "GPU BLAS support",
         "compiled without GPU support", "no GPU found", "Skipping registering GPU", "Falling back to ['CPU", "BLAS=0",
         "CPU does not have", "no CUDA backend", "GPU backend was not selected", "GPU loading failed",
         "has no GPU support", "Did not use GPU")),
    # ggml's capability report of the build that runs: its system_info line (CUDA = 0: no CUDA compiled in) and
    # the backends it loaded (only CPU ones: no GPU backend there to take the layers)
    _fx("cuda_off_info", r"\b(?:CUDA|CUBLAS|cuBLAS) = 0\b", ("CUDA = 0", "CUBLAS = 0", "cuBLAS = 0")),
    _fx("backend_loaded", r"load_backend: loaded (\w+) backend", "load_backend: loaded", keep=KEEP),
    # where llama.cpp put the model's weights (its load log names each model buffer: CPU, CPU_Mapped, CUDA0 ...), and
    # a layer count above 0 given to the run: weights all in CPU buffers although layers were asked is a build
    # with no GPU backend to take them (a build with one lists a CUDA0/Metal/Vulkan0 buffer next to the CPU one)
    # (ollama's own engine names them per device: ml/backend/ggml, msg="model weights" buffer=CPU, later device=CPU)
    _fx("model_buffer", r"\b(?:llm_load_tensors|load_tensors): +(\w+) (?:model )?buffer size\b|"
                        r"msg=\"model weights\" (?:buffer|device)=(\w+)", ("buffer size", "model weights"),
        keep=KEEP),
    _fx("layers_asked", r"(?:(?<![\w-])-ngl|--n-gpu-layers|--gpu-?layers|\bn_gpu_layers|\bgpu_layers)['\"]?"
                        r"[ \t]*[=:]?[ \t]*(?:-1|[1-9]\d*)\b", ("-ngl", "gpu-layers", "gpu_layers", "gpulayers")),
    # CUDA asked of a ggml build or runner (a CMake/make flag, koboldcpp's --usecublas), and a ggml runner's
    # command line (llama.cpp's main/llama-cli/server with a model file, koboldcpp): one without a layer count
    # leaves every layer on the CPU (n_gpu_layers defaults to 0)
    _fx("cuda_asked", r"-D(?:LLAMA|GGML|WHISPER|SD)_(?:CUBLAS|CUDA)=(?i:on|1|true)\b|--usecu(?:blas|da)\b|"
                      r"\b(?:LLAMA|GGML|WHISPER|SD)_(?:CUBLAS|CUDA)=1\b", ("_CUBLAS=", "_CUDA=", "--usecu")),
    _fx("ggml_run", r"(?:^|[\s/\\>])(?:main|llama-cli|llama-server|server|llama-run|koboldcpp[\w.-]*)(?:\.exe)?[ \t]"
                    r"[^\n]*?(?:(?:-m|--model)[ \t]+\S+\.(?:gguf|bin)\b|--usecu(?:blas|da)\b)[^\n]*",
        ("-m ", "--model", "--usecu"), re.M),
    # a llama.cpp run that took place, in its own words (its timings, llama.cpp before and after 2024-09), or one
    # made in code through llama-cpp-python's Llama or LangChain's LlamaCpp: n_gpu_layers defaults to 0 in both, so
    # one given no layer count runs every layer on the CPU
    _fx("ggml_ran", r"\bllama_(?:print_timings|perf_context_print):|\b(?:Llama|LlamaCpp)\(\s*(?:model_path|model)\s*=",
        ("llama_print_timings", "llama_perf_context_print", "Llama(", "LlamaCpp(")),
    # a layer count of 0 given to a ggml run (llama.cpp's -ngl 0, llama-cpp-python's n_gpu_layers=0, koboldcpp's
    # --gpulayers 0, a gpu_layers: 0 setting): every layer stays on the CPU. Not a list of counts (llama-bench's
    # -ngl 0,8,16 runs each count: a 0 there is the CPU baseline of a comparison, not the run's setting)
    _fx("zero_layers", r"(?:\b(?i:n_gpu_layers|n-gpu-layers|gpu_layers|gpu-layers|gpulayers)['\"]?\s*[=:]?\s*|"
                       r"(?<![\w-])-ngl[ \t=]+)0(?![\d.]|,\s*\d)",
        ("gpu_layers", "gpu-layers", "gpulayers", "GPU_LAYERS", "-ngl"), keep=KEEP),
    # a run that asked for the GPU: layers to offload, a CUDA allocation, the container given the GPUs
    _fx("gpu_wanted", GPU_WANTED,
        ("offload", "Offload", "gpu_layers", "gpu-layers", "to GPU", "cuda_host_malloc", "-ngl", "--gpus")),
    # CUDA's start-up failing where a driver is there: ggml's and torch's own lines, the runtime's codes, JAX's
    # CUDA plugin (jax/_src/xla_bridge.py warns only where it sees an NVIDIA GPU), ollama's probe of the driver
    # library (ollama discover/gpu_info_nvcuda.c, gpu_info_cudart.c: "<lib> init failure: <code>"; 35 is
    # cudaErrorInsufficientDriver, the driver rule's)
    _fx("cuda_init", r"failed to initialize CUDA|CUDA initialization: |cudaErrorInitializationError|"
                     r"CUDA error:? 3\b[^\n]*initialization error|"
                     r"CUDA_ERROR_NOT_INITIALIZED|system not yet initialized|CUDA backend failed to initialize|"
                     r"(?:cuda driver library|cudart) init failure: (?!35\b)\d+",
        ("nitializ", "NITIALIZ", "init failure")),
    # the runtimes' own words that they found no GPU they could use and went on with the CPU (or stopped). Each is
    # printed on every machine without a GPU too, so it counts only where the log shows one was expected
    # (gpu_seen, cuda_asked) and the reporter does not say there is none (no_gpu_said). Where from:
    _fx("cpu_fallback",
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
        ("cuda drivers", "cuInit", "native Windows", "No GPU/TPU", "backend 'cuda'", "but CUDA is not available",
         "driver initialization failed", "FP16 is not supported", "platform cpu", "infer device type",
         "CUDAExecutionProvider", "able to use GPU", "layers.offload=0", "deserialize object", "use gpu",
         "device: cpu", "device_name: cpu", "use cpu", "GPU available: False", "cpu device", "Invalid CUDA",
         "Applied providers", "total vram", "CPU does not have", "back to CPU", "back to cpu", "back to the CPU")),
    # pip reinstalling a wheel it built before from its own wheel cache: pip/_internal/operations/prepare.py logs
    # "Using cached <wheel file>" with no size (a download from its HTTP cache carries "(<size>)"). PyPI has only
    # the sdist of llama-cpp-python, so that wheel was built on this machine, and pip's cache key holds no
    # CMAKE_ARGS: a CUDA flag given now does not rebuild it (the catalog's "pip reused a cached CPU wheel")
    _fx("wheel_from_cache", r"Using cached (llama_cpp_python-\d[^\s/()]*\.whl)\b(?![ \t]*\()", "Using cached"),
    # no CUDA device visible to a program that called CUDA, in other words than the runtime's "no CUDA-capable device
    # is detected" (signatures.py): torch's c10/cuda/CUDAFunctions.cpp, the driver API's and runtime's error names
    # (numba, CuPy, TF print them); as that one, F18 unless the reporter says the machine has no GPU
    # (also PaddlePaddle's GPU build finding no device: platform/init.cc's warning and base/framework.py's fallback
    # to CPUPlace; ollama's probe of libcuda getting CUDA_ERROR_NO_DEVICE, discover/gpu.go 0.1.3x-0.5)
    _fx("no_device", r"No CUDA GPUs are available|CUDA_ERROR_NO_DEVICE|cudaErrorNoDevice|"
                     r"Compiled with WITH_GPU, but no GPU found in runtime|"
                     r"using GPU version Paddle, but your CUDA device is not set properly|"
                     r"no nvidia devices detected by library",
        ("No CUDA GPUs", "NO_DEVICE", "NoDevice", "WITH_GPU", "GPU version Paddle", "nvidia devices detected")),
    # the log shows an NVIDIA GPU, or CUDA asked of the run: nvidia-smi's table, a GPU's name, a CUDA device or a
    # layer count given, ollama's and ggml's CUDA devices, a CUDA build of a package
    _fx("gpu_seen", r"NVIDIA-SMI \d|Driver Version: \d|\b(?:GeForce|Quadro|TITAN [A-Z])\b|\bTesla [A-Z]?\d|"
                    r"\b(?:RTX|GTX) ?A?\d{3,4}\b|\bNVIDIA [AHLT]\d+[A-Z]?\b|\b[AH]100\b|"
                    r"\bcuda:\d\b|\bdevice\s*[=:]\s*['\"]?cuda\b|--device[= ]+(?:cuda|gpu)\b|"
                    r"CUDA_VISIBLE_DEVICES=['\"]?\d|\blibrary=cuda|\bCUDA\d\b|"
                    r"(?:-ngl|--n-gpu-layers|n_gpu_layers)[ =:]*(?:-1|[1-9])|"
                    r"\b(?:tensorflow-gpu|onnxruntime-gpu)\b|\b(?:jax\[cuda|tensorflow\[and-cuda)|\+cu\d{2,3}\b|"
                    # a container given the GPUs (docker, compose, Kubernetes)
                    r"--gpus[= ]|--runtime[= ]nvidia\b|\bruntime: nvidia\b|\bnvidia\.com/gpu\b|"
                    # ollama's GPU probe (gpu/gpu.go, 0.1.2x) finding the NVIDIA GPU
                    r"\bNvidia GPU detected\b",
        ("NVIDIA-SMI", "Driver Version", "GeForce", "Quadro", "TITAN", "Tesla", "RTX", "GTX", "NVIDIA ", "A100", "H100",
         "cuda:", "device", "CUDA_VISIBLE_DEVICES", "library=cuda", "CUDA0", "CUDA1", "CUDA2", "CUDA3", "-ngl",
         "--n-gpu-layers", "n_gpu_layers", "-gpu", "jax[cuda", "and-cuda", "+cu", "--gpus", "nvidia", "Nvidia GPU")),
    # CMAKE_ARGS in another shell's syntax: cmd keeps the quotes of set X="..." in the value and does not know
    # $env:X; PowerShell's `set X=...` sets no environment variable; a POSIX shell expands PowerShell's `$env` to
    # nothing and runs `:CMAKE_ARGS=...` as a command (bash/sh "<word>: command not found", zsh "command not found:
    # <word>")
    _fx("shell_syntax", r"(?<!PS )(?<![\w:\\])[A-Z]:\\[^>\n]*>\s*(?:set\s+\"?CMAKE_ARGS=\"|\$env:CMAKE_ARGS)|"
                        r"PS [A-Z]:\\[^>\n]*>\s*set\s+CMAKE_ARGS=|'\$env:CMAKE_ARGS[^'\n]*' is not recognized|"
                        r"(?<![\w$]):CMAKE_ARGS=[^\n]*?: (?:command )?not found|command not found: :CMAKE_ARGS=",
        ("CMAKE_ARGS",)),
    _fx("cmake_args", r"CMAKE_ARGS|cmake\.args|-D[A-Z][A-Z0-9_]+=", ("CMAKE_ARGS", "cmake.args", "-D")),
    # toolchain and environment
    _fx("cl_missing", r"Cannot find compiler 'cl\.exe'|['\"]cl(?:\.exe)?['\"]\s*(?:" + _NOT_RECOGNIZED + r")|"
                      r"cl\.exe: (?:command )?not found|"
                      r"Error checking compiler version for\s+cl\b|\['cl'\]|"
                      r"(?i:vcvars(?:all|64)\.bat)[^\n]{0,40}?(?i:could not be found|not found)",
        ("cl.exe", "'cl'", "\"cl\"", "compiler version for", "vcvars", "VCVARS")),
    _fx("ccbin_conflict",
        r"cl\.exe[^\n]{0,80}?(?:different|differs)[^\n]{0,80}?-ccbin|-ccbin[^\n]{0,80}?(?:different|differs)",
        "-ccbin"),
    _fx("torch_cuda_pair", r"(?i:(?:installed|detected|nvcc) cuda version)[^\n]{0,20}?(\d+\.\d+)[^\n]{0,120}?"
                           r"(?i:torch|pytorch)[^\n]{0,60}?(\d+\.\d+)|CUDAMismatchException|CUDA_MISMATCH",
        ("CUDA version", "CUDA Version", "cuda version", "CUDAMismatch", "CUDA_MISMATCH")),
    # (CMake's own: a -D, -G, -T or -A split from its value, Kitware/CMake Source/cmake.cxx)
    _fx("cmake_parse", r"Parse error in command line argument|(?i:unrecognized arguments?):|no such option: -C|"
                       r"Unknown argument -?D?\w*CUDA\w*|-D must be followed with VAR=VALUE|"
                       r"No (?:generator|toolset|platform) specified for -[GTA]\b",
        ("Parse error", "nrecognized argument", "no such option", "Unknown argument", "must be followed",
         "specified for -")),
    # quotes kept inside a CMake value (cmd's `set X="..."`, a quoted CMAKE_ARGS item): CMake's check of an
    # architecture list (Kitware/CMake Modules/Internal/CMakeCUDAArchitecturesValidate.cmake); an unbalanced quote
    # in CMAKE_ARGS, which scikit-build-core splits with shlex (CPython Lib/shlex.py's errors)
    _fx("quoted_value", r"CMAKE_\w+_ARCHITECTURES contains literal quotes", "contains literal quotes"),
    _fx("shlex_error", r"ValueError: No (?:closing quotation|escaped character)", "ValueError: No "),
    # a CMake -D setting run as a command or taken for a variable name (an unquoted or space-split CMAKE_ARGS value:
    # `$env:CMAKE_ARGS = -DX=on`, `CMAKE_ARGS= -DX=on pip ...`, `export CMAKE_ARGS= -DX=on`), in the shells' words
    _fx("flag_as_command", r"'(-D[A-Z]\w*(?:=[^'\n]*)?)'\s+(?:" + _NOT_RECOGNIZED + r")|"
                           r"(?:^|\s)(-D[A-Z]\w*=\S*): (?:command )?not found|"
                           r"`(-D[A-Z]\w*=[^'\n]*)': not a valid identifier",
        ("'-D", "-D", "`-D")),
    # a whole list of CMake settings passed as ONE argument (conda's compiler activation sets CMAKE_ARGS to
    # -DCMAKE_AR=... -DCMAKE_RANLIB=...; a script that quotes it makes the first setting's value hold the rest):
    # a program that is not cmake, quoted together with -DCMAKE_ settings (Morpheus #906, fixed by dropping quotes);
    # CMAKE_INTDIR is a define CMake's multi-config generators give the compiler, not a setting
    _fx("args_in_one_value", r"[\"'](?:[A-Za-z]:)?[\\/][^\"'\s]*?[\w.+-]+(?<![\\/]cmake)(?<![\\/]cmake\.exe)"
                             r" -DCMAKE_(?!INTDIR=)[A-Z_]+=", "-DCMAKE_"),
    # a Windows path whose backslashes a POSIX split (shlex, as scikit-build-core splits CMAKE_ARGS; bash) ate: the
    # drive runs into the folder name (C:Program FilesNVIDIA...); or CMake taking for its source folder a setting
    # (-D NAME=value split from its -D: pvpgn-server #125) or the tail of a path split at its space
    # (...\GPU Computing Toolkit\CUDA\v8.0 unquoted: caffe #5876)
    _fx("args_mangled", r"(?<![\w\\/])[A-Za-z]:(?:Program Files(?: \(x86\))?|ProgramData|Users)[A-Za-z]|"
                        r"The source directory \"[^\"\n]*?(?:[\\/](?:-D)?[A-Z][A-Z0-9_]*=|"
                        r"[\\/]Toolkit[\\/]CUDA[\\/]v\d|[\\/]Files(?: \(x86\))?[\\/])",
        (":Program", ":Users", "source directory")),
    # llama.cpp made LLAMA_CUBLAS a FATAL_ERROR when it moved to GGML_CUDA (mid 2024); llama-cpp-python 0.2.80 and
    # later vendor that CMake (0.2.79 still builds with it: llama-cpp-python #1616, "Build fail for version from
    # 0.2.80 to 0.2.83"): the old flag given to one of them fails the configure (a version pair decides)
    _fx("cublas_flag", r"(?:\b|(?<=-D))LLAMA_CUBLAS=(?:on|ON|1|true|TRUE)\b", "LLAMA_CUBLAS="),
    _fx("llama_cpp_python", r"(?i:llama[_-]cpp[_-]python)(?:-|==)(\d+\.\d+\.\d+)\b",
        ("llama_cpp_python", "llama-cpp-python", "Llama-cpp-python", "LLAMA_CPP_PYTHON")),
    _fx("build_failed", r"did not run successfully|Failed to build|(?i:error: subprocess-exited-with-error)|"
                        r"Configuring incomplete|CMake Error", ("did not run", "Failed to build", "rror: subprocess",
                                                                "Configuring incomplete", "CMake Error")),
    _fx("semicolon_cmd", r"\b\d{2,3}(?:-real|-virtual)?: (?:command )?not found|'\d{2,3}' is not recognized|"
                         r"unrecognized arguments: \d{2,3}(?:-real|-virtual)?\b", ("not found", "not recognized",
                                                                                  "unrecognized arguments")),
    # a command whose program was an empty variable, so its first flag ran as the program (waf's, setuptools' or a
    # Makefile's NVCC left empty): Python's ENOENT or the shell naming a flag (a -D setting is flag_as_command's)
    _fx("flag_as_program", r"\[Errno 2\][^\n]*?: '(-(?!D[A-Z])[A-Za-z][\w-]*)'|"
                           r"(?:^|\s)(-(?!D[A-Z])[A-Za-z][\w-]*): (?:command )?not found",
        ("[Errno 2]", "not found")),
    # a DLL folder that is gone (os.add_dll_directory of CUDA_PATH\bin, VULKAN_SDK\Bin, a conda env's bin)
    _fx("bin_missing", r"\[WinError [23]\][^\n]*?'[^'\n]*?[\\/](?i:bin)[\\/]*'", "WinError"),
    _fx("path_long", r"(?i:path(?:, file name, or both)? (?:is |are )?too long)|less than 260 characters|"
                     r"MAX_PATH|输入行太长|The input line is too long|命令行太长",
        ("too long", "260 characters", "MAX_PATH", "太长", "too Long")),
    _fx("add_dll_directory", r"add_dll_directory", "add_dll_directory"),
    # a build known to compile for a long time (flash-attention's and xformers' kernels, llama.cpp's fattn template
    # instances, vLLM, mamba): its sdist fetched by pip, its wheel being built, or its kernels being compiled
    _fx("heavy_build", r"(?i:\b(?:flash[_-]attn|xformers|vllm|mamba[_-]ssm|causal[_-]conv1d|tensorrt[_-]llm)"
                       r"-\d[\w.+-]*\.(?:tar\.gz|zip)\b|Building wheel for (?:flash[_-]attn|xformers|vllm|mamba[_-]ssm|"
                       r"causal[_-]conv1d|tensorrt[_-]llm)\b)|template-instances[\\/]+fattn|"
                       r"ptxas info\s*:[^\n]*flash_(?:fwd|bwd)|\bflash_(?:fwd|bwd)\w*\.cu\b",
        ("tar.gz", ".zip", "Building wheel for", "template-instances", "flash_fwd", "flash_bwd")),
    # a build said to be slow or stuck, in the reporter's words: hours, half an hour or more, "a long time", stuck
    # (the duration said of the build: in the same sentence, which a full stop and a capital letter end; or a title
    # naming the build and the next sentence, or pip's build line just below the duration); "compil" gates the
    # durations with no literal of their own ("6h") where the sentence names the compile
    _fx("slow_build", r"(?i:" + _BUILD_WORD + _SENTENCE + _LONG + "|" + _LONG + _SENTENCE + _BUILD_WORD + "|"
                      + _NEXT_LINE + "|" + _LINE_BELOW + "|" + _TIMES_OUT + ")",
        ("hour", "hrs", "minute", "mins", "long time", "too long", "so long", "very long", "stuck", "STUCK", "finish",
         "forever", "timeout", "Timeout", "time out", "TIMEOUT", "timing out", "timed out", "night", "days", " day",
         "小时", "小時", "時間", "час", "Stunde", "compil")),
    # a package's own wheel index (its name in the URL: abetlen.github.io/llama-cpp-python/whl/cu124), and pip
    # building a package from its sdist: where both name one package, the index gave no wheel that fit (F19)
    _fx("wheel_index", r"https?://[^\s,'\"]*?/(?:whl|wheels?)\b[^\s,'\"]*", ("/whl", "/wheel")),
    # pip finding no version of a package (where that package's own wheel index was given: it has none that fits),
    # and pip failing to reach an index at all (then nothing was looked at: no evidence of a missing wheel)
    _fx("no_distribution", r"No matching distribution found for ([A-Za-z0-9][\w.-]*)", "No matching distribution"),
    _fx("index_unreachable", r"Max retries exceeded|Could not fetch URL|Retrying \(Retry\(",
        ("Max retries exceeded", "Could not fetch URL", "Retrying (Retry(")),
    # a failure of its own kind, outside the catalog, that a tool stops on (`decide`: none of the facts' inferences
    # then names a cause); its kinds, words and advice are unnamed.OUTSIDE's
    _fx("outside_stop", OUTSIDE_PATTERN, OUTSIDE_NEEDLES, re.M),
    # the reporter's (or an installer's) words that a prebuilt wheel was passed over for a source build: skipped,
    # ignored, compiled instead of it (flash-attn's own "Precompiled wheel not found. Building from source" is a
    # signature)
    _fx("prebuilt_skipped", r"(?i:\b(?:skip(?:s|ped|ping)?|ignor(?:es|ed|ing)|bypass(?:es|ed|ing)?|instead of|"
                            r"rather than)\s+(?:the\s+|a\s+|any\s+|its\s+)?(?:pre-?built|pre-?compiled)\b"
                            r"[^\n]{0,30}?\bwheels?\b)",
        ("rebuilt", "recompiled", "re-built", "re-compiled", "Rebuilt", "Recompiled")),
    # a CUDA build of a wheel (a +cuNNN local version) that no index holds for this Python and platform
    _fx("cuda_wheel_missing", r"(?:No matching distribution found for|satisfies the requirement)\s+"
                              r"([\w.-]+\s*={2,3}\s*[\w.]+\+cu\d{2,3})\b", "+cu"),
    # a Makefile build asked for CUDA (GGML_CUDA=1 make), its build-info lines (I CFLAGS: ...) and any trace of
    # CUDA in what it compiles: asked, printed, and none is a CPU build (the flag did not reach the Makefile)
    _fx("cuda_asked_make", r"\b(?:GGML|LLAMA|WHISPER)_(?:CUDA|CUBLAS)=(?:1|ON|on)\b(?![^\n]*-D)",
        ("_CUDA=", "_CUBLAS=")),
    _fx("make_info", r"^I (?:CFLAGS|CXXFLAGS|LDFLAGS):", "I CFLAGS:", re.M),
    _fx("cuda_compiled", r"GGML_USE_CU(?:DA|BLAS)|\bnvcc\b|-lcudart\b|\bcuda_runtime\b", ("GGML_USE_CU", "nvcc",
                                                                                       "-lcudart", "cuda_runtime")),
    _fx("sdist_build", r"Building wheels? for ([\w.-]+) \(|Running setup\.py (?:bdist_wheel|install) for ([\w.-]+)",
        ("Building wheel", "Running setup.py")),
    # pip's own words for a wheel it failed to build from source (legacy and PEP 517 builds, pip 21 to 25)
    _fx("wheel_failed", r"Failed building wheel for ([\w.-]+)|Failed to build ([\w.-]+)[ \t]*$|"
                        r"Failed to build installable wheels for some pyproject\.toml based projects \(([\w.-]+)|"
                        r"Building wheel for ([\w.-]+) \([^)\n]*\)(?: \.\.\. |: finished with status ')error",
        ("Failed building wheel", "Failed to build", ") ... error", "status 'error'"), re.M),
    # pip's own words about the files it chose: a wheel whose tags do not fit this interpreter or platform
    # (skipped by the finder, or refused when named), a wheel it took, and a source archive it took
    _fx("wheel_tags", r"none of the wheel's tags (?:match|\([^)\n]*\) are compatible)[^\n]*?"
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
        ("wheel's tags", "not a supported wheel", "only has wheels", "or wheel for the current platform")),
    _fx("wheel_taken", r"(?:Downloading|Using cached|Processing|File was already downloaded)\s+(?:\S*[/\\])?"
                       r"([A-Za-z0-9][\w.]*?)-\d[^\s/]*?\.whl\b",
        ("Downloading", "Using cached", "Processing", "already downloaded"), keep=4 * KEEP),
    _fx("sdist_fetched", r"(?:Downloading|Using cached)\s+(?:\S*/)?([A-Za-z0-9][\w.]*?)-\d[\w.!+-]*?"
                         r"\.(?:tar\.gz|zip|tar\.bz2)\b", ("Downloading", "Using cached")),
    # a container started without the GPUs (no --gpus, no NVIDIA runtime), and then CUDA called in it
    _fx("docker_no_gpus", r"\bdocker run\b(?![^\n]*(?:--gpus|--runtime[= ]nvidia|nvidia))[^\n]*", "docker run"),
    _fx("cuda_call", r"\b_check_driver\b|\b_lazy_init\b|_cuda_init\(|\.cuda\(\)", ("_check_driver", "_lazy_init",
                                                                                  "_cuda_init(", ".cuda()")),
    # F25: a compiler killed (SIGKILL: the kernel's OOM killer, a container's memory limit) or out of memory, in the
    # words of whoever saw it: nvcc naming its tool, gcc's driver (cut anywhere after "Killed"), collect2, the
    # shell's report of a child killed by signal 9 (a line of its own, in glibc's words of each locale), the exit
    # status a build tool shows for it (137 = 128 + 9; nvcc exits 9 when its tool was killed: make's "Error 9",
    # ninja's "[code=9]"), the kernel's OOM-killer line, and compilers' own out-of-memory codes and messages
    _fx("tool_killed", r"'([\w+.-]+)' died due to signal 9\b|(?:fatal error|internal compiler error): Killed\b"
                       r"(?: signal terminated program ([\w+.-]+)| \(program ([\w+.-]+)\))?|"
                       r"\b([\w+.-]+) terminated with signal 9\b",
        ("signal 9", "error: Killed")),
    _fx("job_killed", r"(?m:^[ \t]*(?:Killed|Getötet|已杀死|強制終了|Убито|Processus arrêté|Terminado \(killed\))"
                      r"[ \t]*$)|"
                      r"(?m:line \d+: +\d+ Killed\b)|\*\*\* \[[^\n]*\] (?:Error (?:137|9)|Killed)\b|"
                      r"\[code=(?:9|137)\]|(?i:exit (?:status|code)[:= ]+137\b)|"
                      r"(?i:returned (?:a )?non-zero (?:exit status|code):? 137\b)|\bsignal: killed\b",
        ("Killed", "Getötet", "已杀死", "強制終了", "Убито", "Processus arrêté", "Terminado (killed)", "Error 137",
         "Error 9", "code=", "137", "signal: killed")),
    _fx("compiler_oom", r"\b(?:C1060|C1002|C1076|C3859)\b|virtual memory exhausted|out of memory allocating|"
                        r"(?:cc1plus|cc1|cicc|ptxas|nvcc|cudafe\+\+|ld)(?:\.exe)?: (?:fatal error: )?out of memory|"
                        r"Out of memory: Kill(?:ed)? process \d+ \((?:cc1plus|cc1|cicc|ptxas|cudafe\+\+|nvcc|ld)\)|"
                        r"LLVM ERROR: out of memory",
        ("C1060", "C1002", "C1076", "C3859", "memory exhausted", "out of memory", "Out of memory")),
    # a CUDA compile in the log: nvcc or one of its tools run, a .cu source compiled (-c x.cu) or its object, CMake's
    # CUDA object (a .cu path alone is no compile: a kernel's assertion at run time names its .cu file)
    _fx("cuda_compile", r"\bnvcc\b|\.cu(?:\.\d+)?\.o(?:bj)?\b|-c [^\s'\"]+\.cu\b|\b(?:cicc|ptxas|cudafe\+\+)\b|"
                        r"Building CUDA object|-x cu\b",
        ("nvcc", ".cu", "cicc", "ptxas", "cudafe", "CUDA object", "-x cu")),
    # a compile the reporter timed with the shell's `time` (bash: "real 0m22.238s" on the lines below the command;
    # zsh: "... 1.40s user 1.29s system 12% cpu 22.238 total" on the command's own line): nvcc's wall-clock time
    _fx("timed_compile", r"\btime[ \t]+(?:\S*[/\\])?nvcc\b[^\n]*\n(?:[^\n]*\n){0,2}?[ \t]*real[ \t]+(\d+m[\d.]+)s\b|"
                         r"(?m:^[^\n]*?\bnvcc\b[^\n]*?[\d.]+s user [\d.]+s system \d+% cpu ([\d:.]+) total[ \t]*$)",
        "nvcc"),
    # a whole build's time, as the build tool itself reports it at its end: MSBuild's summary ("Time Elapsed
    # 01:23:45.67"), Bazel's ("INFO: Elapsed time: 5025.3s"), uv's ("Prepared 1 package in 95m 12s"), Cargo's
    # ("Finished `release` profile [optimized] target(s) in 75m 02s"), colcon's ("Finished <<< pkg [1h 2min 3s]",
    # "Summary: 3 packages finished [2h 5min 1s]")
    _fx("build_elapsed", r"\bTime Elapsed (\d+:\d\d:\d\d)|\bElapsed time: (\d+(?:\.\d+)?s)\b|"
                         r"\bPrepared \d+ packages? in (\d+m \d+s)\b|\btarget\(s\) in (\d+m \d+s|[\d.]+s)\b|"
                         r"(?:\bFinished <<< \S+|\bpackages? finished) \[((?:\d+h ?)?(?:\d+min ?)?(?:[\d.]+s)?)\]",
        ("Time Elapsed", "Elapsed time:", "Prepared ", "target(s) in", "Finished <<<", " finished [")),
    # CI services and batch schedulers stopping a job at their limit, in their own words: GitHub Actions, Travis,
    # Azure Pipelines ("ran longer than the maximum time of"), gitlab-runner ("Job failed: execution took longer
    # than 1h0m0s") and GitLab's failure reason ("There has been a timeout failure or the job got stuck"), Jenkins'
    # build-timeout plugin ("Build timed out (after N minutes)") and Pipeline timeout step ("Cancelling nested steps
    # due to timeout", "Timeout has been exceeded"), AppVeyor ("Build execution time has reached the maximum
    # allowed time for your plan"), Bitbucket ("Exceeded build time limit"), CircleCI ("... longer max job
    # runtimes"), Read the Docs ("Build exited due to time out"), Slurm ("DUE TO TIME LIMIT"), LSF ("run time
    # limit"), PBS/Torque ("job killed: walltime 3610 exceeded limit 3600"), coreutils' timeout --verbose
    # ("timeout: sending signal TERM to command"), Travis' and CircleCI's no-output limits
    _fx("time_limit", r"(?i:exceeded the maximum (?:execution )?time|timed out after|time limit|has timed out|"
                      r"The operation was canceled\.|ran longer than the maximum time|"
                      r"Job failed: execution took longer than|Build timed out \(after|"
                      r"No output has been received in the last|Too long with no output|"
                      r"timeout failure or the job got stuck|Cancelling nested steps due to timeout|"
                      r"Timeout has been exceeded|reached the maximum allowed time|longer max job runtimes?|"
                      r"exited due to time ?out|walltime \d+ exceeded limit|\btimeout: sending signal)",
        ("ime limit", "TIME LIMIT", "maximum", "timed out", "was canceled", "took longer than",
         "No output has been received", "Too long with no output", "job got stuck", "due to time",
         "has been exceeded", "max job runtime", "walltime", "sending signal")),
    # what the log shows working (issue 23, precision): a cause is not named where the log's own later lines
    # contradict it (`contradicted`). Each is the runtime's or tool's own words for the thing the cause says is
    # missing, so the last line of each is kept (_LATEST), not the first.
    # the GPU doing the run's work: llama.cpp/ggml layers or buffers on a GPU device (CUDA, ROCm, Vulkan, Metal, SYCL;
    # old and new load logs, its system_info with BLAS compiled in), ollama's estimate with layers on the GPU and its
    # own engine's weights on one, TensorFlow's GPU device created, transformers' pipelines, sentence-transformers and
    # Lightning on CUDA, onnxruntime's CUDA provider applied (also what keeps a reporter's "it runs on the CPU" and a
    # run given no layer count from naming F18)
    _fx("ok_gpu_work", r"\boffloaded [1-9]\d*/\d+ layers to GPU|\boffloading [1-9]\d* (?:repeating )?layers to GPU|"
                       r"\bassigned to device (?:CUDA|ROCm|Vulkan|Metal|SYCL)\d|"
                       r"\b(?:llm_load_tensors|load_tensors): +(?:CUDA|ROCm|Vulkan|Metal|SYCL)\d* "
                       r"(?:model )?buffer size|"
                       r"msg=\"model weights\" (?:buffer|device)=(?:CUDA|ROCm|Vulkan|Metal|SYCL)|"
                       r"\bBLAS = 1\b|\blayers\.offload=[1-9]|Created TensorFlow device \([^\n]*?device:GPU:\d|"
                       r"\bDevice set to use cuda|\bUse pytorch device(?:_name)?: cuda|"
                       r"\bGPU available: True \(cuda\), used: True|Applied providers: \['CUDAExecutionProvider'",
        ("offload", "assigned to device", "buffer size", "model weights", "BLAS = 1", "Created TensorFlow device",
         "use cuda", "device: cuda", "device_name: cuda", "used: True", "Applied providers")),
    # a library the loader then opened: TensorFlow's dso_loader ("Successfully opened dynamic library X", TF 1.x
    # "successfully opened CUDA library X locally"), ggml's backend loader ("loaded CUDA backend from <path>")
    _fx("ok_lib_loaded", r"(?i:successfully opened (?:dynamic|CUDA) library) ([\w.+-]+)|"
                         r"load_backend: loaded \w+ backend from (?:[^\n]*[\\/])?([\w.+-]+)",
        ("uccessfully opened", "load_backend: loaded")),
    # CMake finding and identifying the CUDA compiler (enable_language/project: CMakeDetermineCUDACompiler; the
    # toolkit: FindCUDAToolkit, FindCUDA; the compiler check of older CMake)
    _fx("ok_nvcc_found", r"The CUDA compiler identification is NVIDIA|-- Found CUDAToolkit: |-- Found CUDA: |"
                         r"Check for working CUDA compiler: [^\n]*?(?:-- | - )works",
        ("compiler identification is NVIDIA", "Found CUDA", "working CUDA compiler")),
    # where the log comes from
    # (also CMake's Visual Studio generators choosing an SDK, and the OS name Windows gives itself in %OS%)
    _fx("windows", r"[A-Z]:\\\\?[\w$ ()~.-]+|\.exe\b|\.dll\b|MSBuild|Microsoft|Selecting Windows SDK version|"
                   r"\bWindows_NT\b", (":\\", ".exe", ".dll", "MSBuild", "Microsoft", "Windows")),
    _fx("linux", r"/usr/|/home/|/opt/|\.so\b|/bin/sh|/bin/bash|\bapt(?:-get)? |ubuntu|Ubuntu",
        ("/usr/", "/home/", "/opt/", ".so", "/bin/", "apt", "buntu")),
    # a POSIX system ran the build: its temporary folder (pip's build folders), the shell's exit status for a command
    # it did not find (127: make's "Error 127")
    _fx("posix", r"(?<![\w.])/tmp/|\*\*\* \[[^\n]*\] Error 127\b", ("/tmp/", "Error 127")),
)


@dataclass
class Fact:
    kind: str
    value: str
    line_no: int
    line: str


@dataclass
class FactScanner:
    """Feed (line numbers, texts) batches; `facts` holds the first KEEP distinct values of each kind."""

    facts: dict = field(default_factory=dict)       # kind -> [Fact]
    counts: dict = field(default_factory=dict)      # kind -> matches seen
    read: int = 0                                   # characters fed so far
    tail: deque = field(default_factory=deque)      # batches past the head, the last TAIL characters of them
    held: int = 0                                   # characters in `tail`
    last: deque = field(default_factory=lambda: deque(maxlen=LAST))   # (line_no, text): the log's last lines
    clock: Clock | None = None                      # the log's own stamps (logclock; logscan sets it)

    def feed(self, nums: list[int], texts: list[str]) -> None:
        """The first HEAD characters are read as they come, the last TAIL at `finish` (a failure's facts are at
        the start of a log, where it says what it builds with, or at its end, where it stops): a 200 MB log
        costs its facts on 8 MiB of text, not on all of it. So does a log of one line of 100 MB (audit N20): a line
        longer than LINE is read as its first and last LINE / 2 characters."""
        if max(map(len, texts), default=0) > LINE:
            texts = [t if len(t) <= LINE else t[: LINE // 2] + " ... " + t[-(LINE // 2):] for t in texts]
        if self.read < HEAD:
            self.read += sum(map(len, texts)) + len(texts)
            self._facts(nums, texts)
            return
        size = sum(map(len, texts)) + len(texts)
        self.tail.append((nums, texts, size))
        self.held += size
        while len(self.tail) > 1 and self.held - self.tail[0][2] >= TAIL:
            self.held -= self.tail.popleft()[2]

    def finish(self) -> FactScanner:
        while self.tail:
            nums, texts, _ = self.tail.popleft()
            self._facts(nums, texts)
        self.held = 0
        return self

    def _facts(self, nums: list[int], texts: list[str]) -> None:
        self.last.extend(zip(nums[-LAST:], texts[-LAST:], strict=True))
        self._find(nums, texts)

    def _find(self, nums: list[int], texts: list[str]) -> None:
        """Each fact's regex runs only on the lines around the first OCCURRENCES places its needles occur in
        this batch (a few lines, as a message may wrap), so a batch costs a substring search per needle
        and a few short regex runs, however often a failure repeats."""
        if not texts:
            return
        body = "\n".join(texts)
        wanted = [fx for fx in FACTS if fx.kind in _LATEST or len(self.facts.get(fx.kind, ())) < fx.keep]
        # which needles are there is asked of a cheaper copy first (logengine.Probe)
        present = _present({n for fx in wanted for n in fx.needles}, Probe(body))
        starts: list[int] | None = None
        for fx in wanted:
            needles = [n for n in fx.needles if n in present]
            if not needles:
                continue
            seen: set[int] = set()
            for lo, hi in _regions(body, needles):
                for m in fx.regex.finditer(body, lo, hi):
                    if m.start() in seen:
                        continue
                    seen.add(m.start())
                    if starts is None:
                        starts = _starts(texts)
                    self._keep(fx.kind, m, nums, texts, starts)
                if fx.kind not in _LATEST and len(self.facts.get(fx.kind, ())) >= fx.keep:
                    break

    def _keep(self, kind: str, m: re.Match[str], nums, texts, starts) -> None:
        value = next((g for g in m.groups() if g), m.group(0))
        self.counts[kind] = self.counts.get(kind, 0) + 1
        have = self.facts.setdefault(kind, [])
        if kind in _LATEST:
            i = bisect.bisect_right(starts, m.start()) - 1
            _keep_latest(have, Fact(kind, value, nums[i], texts[i]))
            return
        same = [f for f in have if f.value == value]
        if same and (kind not in _BY_LINE or len(same) >= LINES_PER_NAME):
            return
        i = bisect.bisect_right(starts, m.start()) - 1
        if any(f.line == texts[i] for f in same):
            return
        have.append(Fact(kind, value, nums[i], texts[i]))

    def first(self, kind: str) -> Fact | None:
        found = self.facts.get(kind)
        return found[0] if found else None

    def values(self, kind: str) -> list[str]:
        return [f.value for f in self.facts.get(kind, ())]


def _keep_latest(have: list[Fact], fact: Fact) -> None:
    """The last line of each value; past KEEP values the last line seen takes the last place."""
    same = next((i for i, f in enumerate(have) if f.value == fact.value), None)
    if same is not None:
        have[same] = fact
    elif len(have) < KEEP:
        have.append(fact)
    else:
        have[-1] = fact


_NEEDLE_BYTES = {n: n.encode("utf-8") for fx in FACTS for n in fx.needles}
# the needles shortest first, each with the shorter needles inside it: where one of those is absent, so is it
_NEEDLE_ORDER = sorted(_NEEDLE_BYTES, key=len)
_INSIDE = {n: tuple(m for m in _NEEDLE_ORDER if len(m) < len(n) and m in n) for n in _NEEDLE_ORDER}


def _present(every: set[str], probe: Probe) -> set[str]:
    """The needles of `every` in the batch (`probe.holds`: one substring search each on a cheaper copy, and one on the
    batch for a needle found in a copy cut down), none for a needle holding a shorter needle already found absent (a
    batch costs a pass per needle searched, so the skipped ones are what a log without failure text saves)."""
    absent: set[str] = set()
    present: set[str] = set()
    # where the probe's copy is the batch itself, it is searched here: a method call per needle cost more than a
    # small batch's searches
    text = probe.text
    holds = probe.holds if probe.cut else text.__contains__ if isinstance(text, str) else None
    for n in _NEEDLE_ORDER:
        if n not in every:
            continue
        if any(m in absent for m in _INSIDE[n]):
            absent.add(n)
        elif holds(n) if holds is not None else _NEEDLE_BYTES[n] in text:
            present.add(n)
        else:
            absent.add(n)
    return present


OCCURRENCES = 16     # needle places looked at per fact and batch
LONG = 4096          # characters each side of a needle a fact's regex reads: bounded work in a line of any length
_AROUND = 2          # lines before and after a needle's line that a match may span


def _regions(body: str, needles: list[str]):
    """(lo, hi) spans of `body` around the first OCCURRENCES places of the needles, merged, in order."""
    places: list[int] = []
    for n in needles:
        pos = body.find(n)
        while pos >= 0 and len(places) < 4 * OCCURRENCES:
            places.append(pos)
            nl = body.find("\n", pos, pos + LONG)    # the next line, or LONG characters on in a longer one
            pos = body.find(n, pos + LONG if nl < 0 else nl + 1) if nl >= 0 or pos + LONG < len(body) else -1
    spans: list[list[int]] = []
    for pos in sorted(places)[:OCCURRENCES]:
        # _AROUND lines each side, at most LONG characters (a long line: each search stops there, audit N20)
        lo, floor = pos, max(0, pos - LONG)
        for _ in range(_AROUND + 1):
            lo = max(body.rfind("\n", floor, lo - 1) + 1, floor) if lo > floor else floor
        hi, top = pos, min(len(body), pos + LONG)
        for _ in range(_AROUND + 1):
            nl = body.find("\n", hi + 1, top)
            hi = top if nl < 0 else nl
        if spans and lo <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], hi)
        else:
            spans.append([lo, hi])
    return spans


def _starts(texts: list[str]) -> list[int]:
    return [0, *accumulate(len(t) + 1 for t in texts)]


@dataclass(frozen=True)
class Decision:
    id: str
    rule: str
    fact: Fact
    details: dict


# module not found, procedure not found, not a valid Win32 image, a DLL's initialisation routine failed
_LOADER = {"126", "127", "193", "1114", "8007007E", "8007007e", "8007007F", "8007007f", "800700C1", "800700c1"}


def decide(fs: FactScanner) -> list[Decision]:
    """Catalog ids from the facts found together, first line first; a weak rule (an old flag name alone)
    only where nothing else was decided. Nothing where the log stops on a failure of its own kind outside the catalog
    (`outside_stop`): the facts are then what the log mentions on the way (a probe, a requirement, an environment),
    not what stopped it."""
    if fs.first("outside_stop") is not None:
        return []
    out: dict[str, Decision] = {}

    def add(fid: str, rule: str, fact: Fact | None, **details) -> None:
        if fact is not None and fid not in out and contradicted(fs, fid, rule, fact, details) is None:
            out[fid] = Decision(fid, rule, fact, {k: v for k, v in details.items() if v})

    _compiler_rules(fs, add)
    _toolkit_rules(fs, add)
    _runtime_rules(fs, add)
    _environment_rules(fs, add)
    _memory_rules(fs, add)
    _fallback_rule(fs, out, add)
    if not out:      # weak: a llama.cpp run given no layer count where the GPU was there or asked for
        add("F18", "run-without-layers", _run_without_layers(fs))
    if not out:      # weak: only where the log names no cause at all
        add("F20", "build-still-running", unfinished(fs.last))
        add("F20", "heavy-build-unfinished", heavy_unfinished(fs.first("heavy_build"), fs.last))
        add("F20", "build-said-slow", fs.first("slow_build"))
        add("F20", "compile-timed-long", timed_long(fs.facts.get("timed_compile", ())))
        _clock_rules(fs, add)
    if not out:      # weak: a CUDA package's source build failed and nothing says why: no prebuilt wheel fitted
        add("F19", "cuda-package-build-failed",
            next((f for f in fs.facts.get("wheel_failed", ()) if _norm(f.value) in _CUDA_WHEELS), None))
    return sorted(out.values(), key=lambda d: d.fact.line_no)


# ---------------------------------------------------------------- what the log's later lines contradict

# causes that stop a build (a compile, a link, a configure, pip's build of the wheel), by id and by rule: the build
# then ending in success, with no failure after it, says the step did not stop there (F10's quoting, F12's arch
# list from no GPU, F18-F20 leave a build that succeeds: not here; nor F09's old flag names, which the catalog says
# can leave a CPU-only build, except the removed flag of a version whose configure fails)
_BUILD_STOPS = {"F01", "F02", "F03", "F04", "F05", "F06", "F07", "F08", "F11", "F13", "F21", "F22", "F24", "F25"}
_BUILD_STOP_RULES = {"empty-arch", "cuda-package-build-failed", "removed-flag-for-version"}
# F22's rules (the facts' and the signatures') where nvcc is not found at all, not a wrong one found
_NVCC_MISSING = {"nvcc-missing", "nvcc-not-on-path"}
# a build's own last word of success: pip's, setuptools' wheel, CMake's make/ninja targets, MSBuild's summary (en,
# de, zh, ja)
_BUILD_OK = re.compile(r"\bSuccessfully (?:installed|built) |\bCreated wheel for |\[100%\] Built target |"
                       r"^\s*(?:Build succeeded\.|0 Error\(s\)|0 Fehler|0 个错误|0 エラー)|"
                       r"Der Buildvorgang wurde erfolgreich ausgeführt|已成功生成|ビルドに成功しました")
_FAILED_AFTER = re.compile(r"(?i:\berror|\bfail|fatal|traceback|exception|\bkilled\b|\babort)")


def contradicted(fs: FactScanner, fid: str, rule: str, fact: Fact, details: dict) -> Fact | None:
    """A line after the cause's own that shows the thing the cause says is missing working, judged by what the
    cause IS: a run on the CPU (F18) and the GPU then doing the run's work; a library named missing and that
    library then opened; no CUDA compiler and CMake then identifying nvcc; a build stopped and the build then
    ending in success with no failure after it (the log's last lines)."""
    def after(kind: str, value: str | None = None) -> Fact | None:
        return next((f for f in fs.facts.get(kind, ()) if f.line_no > fact.line_no and
                     (value is None or f.value.lower() == value.lower())), None)

    lib = details.get("dll") or details.get("lib")
    if fid == "F18":
        return after("ok_gpu_work") or (stopped_after(fs.last, fact.line_no) if rule in _F18_ASKED else None)
    if fid in ("F15", "F23") and isinstance(lib, str):
        return after("ok_lib_loaded", lib)
    if fid == "F07" or rule in _NVCC_MISSING:
        return after("ok_nvcc_found")
    return build_stop_contradicted(fs.last, fid, rule, fact.line_no)


def build_stop_contradicted(last, fid: str, rule: str, line_no: int) -> Fact | None:
    """A cause that stops a build (by id, or by rule where the id also names causes that do not) whose line the
    build's own success follows, with no failure after it (`build_succeeded`): the build did not stop there. Read
    for a signature's match as for a fact's (logscan), so one rule covers every build-stopping id."""
    if fid in _BUILD_STOPS or rule in _BUILD_STOP_RULES:
        return build_succeeded(last, line_no)
    return None


# F18's rules that rest on what the run was given or the reporter's words, not on the runtime's own report: a run
# left on the CPU is a run that went on, so a log that then ends with the program's own stop (a Python exception, a
# frozen app's unhandled one, a crash, a ggml assertion) reports that stop, not a CPU run
_F18_ASKED = {"gpu-asked-no-layers", "run-without-layers", "zero-gpu-layers", "cpu-run-said-gpu-asked"}
_STOPPED = re.compile(r"Traceback \(most recent call last\)|^[ \t>]*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\b: |"
                      r"Failed to execute script|unhandled exception|Segmentation fault|core dumped|GGML_ASSERT|"
                      r"terminate called after")


def stopped_after(last, line_no: int) -> Fact | None:
    """The first of the log's last lines, after `line_no`, where the program stopped on an error of its own."""
    return next((Fact("stopped", text.strip(), no, text) for no, text in last
                 if no > line_no and _STOPPED.search(text)), None)


def build_succeeded(last, line_no: int) -> Fact | None:
    """The last success line of a build among the log's last lines, after `line_no`, with no failure after it."""
    return _last_unanswered(last, "build_ok", _BUILD_OK, _FAILED_AFTER, after=line_no)


def _last_unanswered(last, kind: str, mark: re.Pattern[str], answer: re.Pattern[str], after: int = 0) -> Fact | None:
    """The last of the log's last lines (after line `after`) that `mark` finds, where no line after it is one
    `answer` finds: the state the log ends in (a build still running, a build that succeeded)."""
    found = None
    for no, text in last:
        if no <= after:
            continue
        if mark.search(text):
            found = Fact(kind, text.strip(), no, text)
        elif found is not None and answer.search(text):
            found = None
    return found


def _run_without_layers(fs: FactScanner) -> Fact | None:
    """A llama.cpp run (its timings, a Llama/LlamaCpp call) in a log with no layer count anywhere and no word of the
    GPU taking work, where CUDA was asked of the build or a GPU shows: n_gpu_layers' default 0 left it on the CPU."""
    ran = fs.first("ggml_ran")
    if ran is None or fs.first("gpu_wanted") or fs.first("ok_gpu_work") or fs.first("no_gpu_said"):
        return None
    return ran if fs.first("cuda_asked") or fs.first("gpu_seen") else None


# causes that explain a run left on the CPU: no kernel for the GPU, a DLL or library that does not load, the driver
# too old, a CPU build of the package, no driver or no GPU passed into the container
_EXPLAIN_CPU = {"F14", "F15", "F17", "F19", "F23"}


def _fallback_rule(fs: FactScanner, decided: dict, add) -> None:
    """A runtime's own word that it went on with the CPU is F18 where the log shows a GPU was expected and
    nothing more specific explains it (a CPU-only machine prints the same words: not F18 there)."""
    if fs.first("no_gpu_said") or decided.keys() & _EXPLAIN_CPU:
        return
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


def _compiler_rules(fs: FactScanner, add) -> None:
    add("F05", "stl1002", fs.first("stl"))
    for f in fs.facts.get("host_compiler", ()):
        text = f.line
        if "can be used to override" in text:   # the #error's tail alone: which compiler, from the log's platform
            text = "MSVC" if fs.first("windows") and not fs.first("linux") else "GNU"
        if re.search(r"Microsoft|Visual Studio|\('cl'\)|MSVC", text):
            add("F04", "host-compiler-msvc", f)
        elif re.search(r"GNU|gcc|g\+\+|clang", text, re.I):
            add("F21", "host-compiler-gcc-clang", f)
    c1189 = fs.first("c1189")
    if c1189 and (fs.first("host_config") or "Visual Studio" in c1189.line):
        add("F04", "c1189-host-config", c1189)
    add("F03", "no-visual-studio", fs.first("no_vs"))
    add("F03", "no-vc-tools", fs.first("no_vc_tools"))
    # MSBuild's codes (every locale): the platform toolset or the Windows SDK the project asks for is not installed
    # (MSB8037: the SDK version "for Desktop C++ <platform> Apps", VS 2019+'s Microsoft.Cpp.WindowsSDK.targets:
    # ni/VireoSDK pull 705's log), or MSBuild without Visual C++ at all (MSB3428: its VCBuild task "could not load the
    # Visual C++ component", what node-gyp met before VS 2015's tools)
    add("F03", "msbuild-toolset-or-sdk-missing",
        next((f for f in fs.facts.get("msb", ()) if f.value in ("MSB8020", "MSB8036", "MSB8037", "MSB3428")), None))
    add("F03", "setuptools-no-msvc", fs.first("msvc_required"))
    windows = fs.first("windows") is not None and fs.first("linux") is None
    nocc = fs.first("no_compiler")
    add("F03", "no-compiler-windows", nocc if nocc and (fs.first("vs_context") or windows) else None)
    add("F03", "windows-sdk-missing", fs.first("sdk_missing"))
    add("F04", "host-config-windows", fs.first("host_config_win"))
    add("F06", "host-compiler-target-os", fs.first("host_os"))
    add("F06", "cl-not-found", fs.first("cl_missing"))
    add("F06", "ccbin-conflict", fs.first("ccbin_conflict"))


def _toolkit_rules(fs: FactScanner, add) -> None:
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
    cmake = {"CMakeDetermineCUDACompiler", "CMakeCUDAFindToolkit", "FindCUDAToolkit", "FindCUDA"} & \
        set(fs.values("cmake_error"))
    wsl = fs.first("wsl_windows_cuda")
    add("F22", "wsl-windows-toolkit", wsl)
    for f in fs.facts.get("empty_prefix", ()):
        # $(CudaToolkitDir) empty in MSBuild's CUDA targets (F02), a Makefile's CUDA prefix variable empty (F22)
        add("F02" if f.value.startswith("/I") else "F22", "empty-toolkit-prefix", f)
    add("F22", "cuda-source-run-by-shell", fs.first("cu_as_script"))
    if wsl or fs.first("empty_prefix") or fs.first("cu_as_script"):
        return       # what follows (no toolkit, no cuBLAS header) comes from that
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


def _runtime_rules(fs: FactScanner, add) -> None:
    add("F14", "no-kernel-image", fs.first("no_kernel"))
    add("F23", "no-nvidia-driver", fs.first("no_driver"))
    if not (fs.first("cpu_wheel") or fs.first("driver_old")) and fs.first("cuda_call"):
        add("F23", "container-without-gpus", fs.first("docker_no_gpus"))
    if not fs.first("no_gpu_said"):     # a CPU build on a machine without a GPU is the right build
        chosen = fs.first("cpu_asked") is not None      # ... and one asked for is wrong only where CUDA is then
        add("F19", "cpu-only-wheel", fs.first("cpu_wheel") or (None if chosen else fs.first("cpu_torch_said")))
        add("F19", "build-without-cuda", None if chosen else fs.first("build_without_cuda"))
        add("F19", "cpu-only-wheel-file", None if chosen else fs.first("cpu_wheel_file"))
    add("F19", "own-wheel-index-unused", _own_index_unused(fs))
    add("F19", "prebuilt-wheel-skipped", fs.first("prebuilt_skipped"))
    _torch_build_rules(fs, add)
    _wheel_rules(fs, add)
    add("F17", "driver-too-old", fs.first("driver_old"))
    add("F18", "cpu-only", fs.first("cpu_only"))
    asked = fs.first("cuda_asked_make")
    add("F18", "cuda-flag-not-in-build", asked if asked and fs.first("make_info") and not fs.first("cuda_compiled")
        else None)
    cached = fs.first("wheel_from_cache")
    if cached and fs.first("cuda_asked"):
        add("F18", "cached-wheel-reused", cached, wheel=cached.value)
    add("F19", "cuda-wheel-not-found", fs.first("cuda_wheel_missing"))
    init = fs.first("cuda_init")
    # ggml's start-up probe finding no device is F18 only where the run wanted the GPU (a CPU run probes too)
    if init and "cuda_init" in init.line and "CUDA-capable" in init.line and not fs.first("gpu_wanted"):
        init = None
    # torch's warning that the driver did not start, "you might not have a CUDA gpu": every CPU machine with a
    # CUDA build of torch prints it (the fallback rule counts it where a GPU was expected)
    if init and "might not have a CUDA gpu" in init.line:
        init = None
    add("F18", "cuda-init-failed", init)
    _ggml_rules(fs, add)
    winerr = fs.values("winerr")
    if fs.first("add_dll_directory") and set(winerr) & {"2", "3"}:
        add("F16", "add-dll-directory-missing-folder", fs.facts["winerr"][0])
    add("F16", "dll-folder-missing", fs.first("bin_missing"))
    _loader_rules(fs, add)
    for f in fs.facts.get("cuda_so", ()):
        if re.search(r"(?i:cannot open shared object|No such file|not found|cannot find|couldn't open|could not open|"
                     r"could not load|couldn't load|cannot load|"
                     r"unable to (?:find|load|open)|failed to load)", f.line):
            add("F23", "shared-object-missing", f, lib=f.value)


# TensorFlow's probe of the CUDA libraries at every start (stream_executor's dso_loader: "Could not load dynamic
# library 'cudart64_110.dll'; dlerror: ..."), a warning it goes on from: on a machine with no GPU to use, every run
# prints it (TF then runs on the CPU, as it should)
_TF_PROBE = re.compile(r"Could not load dynamic library '[^'\n]+'; dlerror:")


def _loader_rules(fs: FactScanner, add) -> None:
    """F15: a DLL the loader could not load, by Windows' error codes and messages, or a CUDA DLL named as missing;
    TensorFlow's probe warning only where the log shows a GPU there or wanted (or the reporter saying it is not
    used): without one, the warning is a CPU machine's normal start."""
    gpu = any(fs.first(k) for k in ("gpu_seen", "gpu_wanted", "cpu_run_said", "driver_cuda"))

    def probe_only(f: Fact) -> bool:
        return not gpu and _TF_PROBE.search(f.line) is not None

    loader = next((f for f in fs.facts.get("winerr", ()) if f.value in _LOADER), None)
    for kind in ("mod_missing", "proc_missing", "bad_image", "dll_dep"):
        loader = loader or fs.first(kind)
    weak = fs.first("dll_load")
    if loader is None and weak and fs.first("cuda_dll") and not probe_only(weak):
        loader = weak
    if loader is not None:
        dll = fs.first("cuda_dll")
        add("F15", "windows-loader", loader, dll=dll.value if dll else None)
    for f in fs.facts.get("cuda_dll", ()):    # a CUDA DLL named as missing, in any tool's words
        if _MISSING.search(f.line) and not probe_only(f):
            add("F15", "cuda-dll-missing", f, dll=f.value)


_LAYERS = re.compile(r"-ngl\b|--n-gpu-layers|--gpu-?layers|n_gpu_layers")
# the reporter setting no GPU layers on purpose, to switch the GPU off: "disable it with `n-gpu-layers=0`",
# "turned off CUDA by setting n_gpu_layers=0", "switch the GPU off via -ngl 0"
_GPU_OFF_BY = re.compile(r"(?i:\b(?:disabl\w*|turn\w* off|switch\w* off)\b[^\n]{0,40}?\b(?:with|by|using|via)\b"
                         r"[^\n]{0,12}?(?:n[_-]gpu[_-]layers|gpu[_-]?layers|-ngl)\b)")


def _ggml_rules(fs: FactScanner, add) -> None:
    """A ggml build or run that names no GPU work of its own: CUDA not compiled in or only CPU backends loaded
    where the run wanted the GPU, and a run asked for CUDA that gave no layer count (F18)."""
    wanted = fs.first("gpu_wanted")
    asked = fs.first("cuda_asked")
    add("F18", "cuda-not-in-build", fs.first("cuda_off_info") if wanted or asked else None)
    loaded = fs.values("backend_loaded")
    if wanted and loaded and all(v.upper() == "CPU" for v in loaded):
        add("F18", "cpu-backend-only", fs.facts["backend_loaded"][0])
    buffers = fs.values("model_buffer")
    if buffers and all(v.upper().startswith("CPU") for v in buffers) and (fs.first("layers_asked") or
                                                                          fs.first("gpu_seen")):
        add("F18", "weights-on-cpu-layers-asked", fs.facts["model_buffer"][0])
    # (not a 0 the reporter gives as the way to turn the GPU off: "disable it with n-gpu-layers=0" is a deliberate
    # CPU run set against the GPU one, where the failure is something else)
    add("F18", "zero-gpu-layers", next((f for f in fs.facts.get("zero_layers", ()) if not _GPU_OFF_BY.search(f.line)),
                                       None))
    run = fs.first("ggml_run")
    if run and not wanted and not _LAYERS.search(run.line) and (asked or "--usecu" in run.line):
        add("F18", "gpu-asked-no-layers", run)


_MISSING = re.compile(r"(?i:not found|cannot be (?:found|loaded)|could not be (?:found|loaded)|"
                      r"(?:couldn't|could not|cannot|can't|unable to|failed to) (?:find|load|open|locate)|"
                      r"is missing|was not found|no such file|"
                      # Windows' loader dialog and tools in other languages (the DLL's name is on the line)
                      r"nicht gefunden|introuvable|no se encontr|non è stato trovato|não foi encontrad|"
                      r"找不到|見つかりません|찾을 수 없|не найден)")

# pip at work on a wheel: its spinner, "started" or "still running" (a build's own progress lines are no
# evidence: a clean train log is a build's progress, pasted while it went well)
_PROGRESS = re.compile(r"Building wheels? for (?:collected packages:|\S+ \([^)\n]*\)(?:: (?:started|still running)|"
                       r" \.\.\.[ \t|/\\-]*$))|Running setup\.py bdist_wheel for \S+ \.\.\.[ \t|/\\-]*$")
# what a build step ends with, or a failure says
_OUTCOME = re.compile(r"(?i:error|fail|fatal|traceback|exception|success|killed|terminated|abort|denied|warning)|"
                      r"\.\.\. done|: finished|Built target|Created wheel|Stored in directory|Linking")


def unfinished(last) -> Fact | None:
    """The last progress line of a build when nothing after it says how the step ended: the log was copied
    while the build still ran (a spinner, a compile line), so it took long enough for someone to stop and ask."""
    return _last_unanswered(last, "unfinished", _PROGRESS, _OUTCOME)


def ends_open(last) -> Fact | None:
    """The log's last line with text where none of its last lines says how a step ended (an error, a failure, a
    success, a stop): an excerpt cut before its tool printed the outcome (read only where nothing was named)."""
    texts = [(no, text) for no, text in last if text.strip()]
    if not texts or any(_OUTCOME.search(text) for _, text in texts):
        return None
    no, text = texts[-1]
    return Fact("ends_open", text.strip(), no, text)


TIMED_LONG = 10.0    # seconds of one timed nvcc call: nvcc itself takes 1-4 s on a small file


def timed_long(timed) -> Fact | None:
    """The first nvcc run the reporter timed (`time nvcc ...`) whose wall-clock time is TIMED_LONG seconds or more:
    someone measured how long one compile takes, and it is long."""
    return next((f for f in timed if _seconds(f.value) >= TIMED_LONG), None)


STEP_LONG = 20 * 60      # one compile step: nvcc on one .cu takes seconds to a few minutes; tens of minutes is the
                         # cause (all archs and kernel instances in one object, a compiler that is pathologically slow)
BUILD_LONG = 2 * 3600    # a whole build: a CUDA extension builds in minutes, the largest (PyTorch) in about an hour on
                         # a CI machine; hours are what reporters ask about ("more than 4 hrs", "takes 3 hours")


def _clock_rules(fs: FactScanner, add) -> None:
    """F20 from time the log itself measured: one compile step's line and the next stamped line tens of minutes
    apart (not where that next line reports a failure: a compiler killed or out of memory after a long step is
    another cause), a stamped build spanning hours, or the build tool's own total; the span and the total only
    where the log does not end in a failure (that failure is the question, whatever it is)."""
    clock = fs.clock
    gap = clock.longest if clock is not None else None
    if gap is not None and gap.seconds >= STEP_LONG and not gap.failed:
        add("F20", "compile-step-long", Fact("clock", _minutes(gap.seconds), gap.line_no, gap.line))
    if _ends_failed(fs.last) or (clock is not None and clock.ends_failed):
        return
    if clock is not None and clock.ordered and clock.compiles and clock.span >= BUILD_LONG and clock.began:
        add("F20", "build-span-long", Fact("clock", _minutes(clock.span), clock.began[0], clock.began[1]))
    total = next((f for f in fs.facts.get("build_elapsed", ()) if _duration(f.value) >= BUILD_LONG), None)
    add("F20", "build-elapsed-long", total, took=_minutes(_duration(total.value)) if total else None)


def _ends_failed(last) -> bool:
    return any(FAILURE.search(text) for _, text in list(last)[-10:])


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min"


def _duration(value: str) -> float:
    """MSBuild's "01:23:45", Bazel's "5025.3s", uv's and Cargo's "95m 12s", colcon's "1h 2min 3s" as seconds."""
    if ":" in value:
        h, m, sec = value.split(":")
        return int(h) * 3600 + int(m) * 60 + float(sec)
    total = 0.0
    for number, unit in re.findall(r"([\d.]+)\s*(h|min|m|s)", value):
        try:
            total += float(number) * {"h": 3600, "min": 60, "m": 60, "s": 1}[unit]
        except ValueError:
            return 0.0
    return total


def _seconds(value: str) -> float:
    """bash's "1m2.5" or zsh's "62.5" / "1:02.5" as seconds."""
    minutes, _, rest = value.replace(":", "m").rpartition("m")
    try:
        return (int(minutes) if minutes else 0) * 60 + float(rest)
    except ValueError:
        return 0.0


# packages that pip should only ever install as wheels: building one from its sdist means no wheel fitted this
# Python (a 32-bit or too new interpreter) or platform
_WHEEL_ONLY = {"torch", "pytorch", "tensorflow", "tensorflow-gpu", "jaxlib"}


def _torch_build_rules(fs: FactScanner, add) -> None:
    """A torch without CUDA on a machine with an NVIDIA GPU (collect_env), and a wheel-only package built from
    source."""
    built = fs.first("torch_no_cuda")
    if built and fs.first("gpu_listed"):
        version = fs.first("torch_version")
        source = version is not None and re.search(r"\+git|a0\b|\.dev", version.value) is not None
        add("F18" if source else "F19", "torch-without-cuda-with-gpu", built,
            torch=version.value if version else None)
    sdist = next((f for f in fs.facts.get("sdist_build", ()) if _norm(f.value) in _WHEEL_ONLY), None)
    add("F19", "wheel-only-package-built", sdist, package=sdist.value if sdist else None)


# packages whose CUDA builds are published as wheels: pip taking one's source archive (or none of its wheels
# fitting) means no wheel was there for this interpreter, platform or torch, and pip compiles or gives up
# (mmcv-full: PyPI has only its source, its CUDA builds are wheels on OpenMMLab's own index, one per torch and CUDA;
# auto-gptq: its CUDA builds are wheels on PyPI and on its own index, one per CUDA)
_CUDA_WHEELS = _WHEEL_ONLY | {"torchvision", "torchaudio", "xformers", "bitsandbytes", "onnxruntime-gpu", "vllm",
                              "mmcv-full", "auto-gptq"}


# a CUDA build in a wheel's file name: a +cuNNN local version, or cuda/gpu in the project's name
_CUDA_WHEEL_NAME = re.compile(r"[\w.]*(?:\+cu\d{2,3}|(?i:cuda|gpu))[\w.+-]*\.whl")


# pip's refusal of a wheel named to it, uv's hint and error for a version with no wheel for this platform
_REFUSED = re.compile(r"not a supported wheel|only has wheels|or wheel for the current platform")


def _wheel_rules(fs: FactScanner, add) -> None:
    """pip's own words about the file it chose: a wheel refused for its tags, a CUDA package's wheels all
    skipped for their tags and none taken, a CUDA package's source archive taken."""
    taken = {_norm(v) for v in fs.values("wheel_taken")}
    for f in fs.facts.get("wheel_tags", ()):
        cuda = _norm(f.value) in _CUDA_WHEELS or _CUDA_WHEEL_NAME.search(f.line) is not None
        refused = _REFUSED.search(f.line) is not None
        if cuda and (refused or _norm(f.value) not in taken):
            add("F19", "wheel-tags-mismatch", f, package=f.value)
    if fs.first("slow_build") or unfinished(fs.last):     # said slow or still building: F20's question
        return
    sdist = next((f for f in fs.facts.get("sdist_fetched", ()) if _norm(f.value) in _CUDA_WHEELS), None)
    add("F19", "cuda-package-sdist", sdist, package=sdist.value if sdist else None)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _own_index_unused(fs: FactScanner) -> Fact | None:
    """pip built a package from source although a wheel index of that package (its name in the URL) was given,
    or found no version of it there (pip reached the index: no network failure in the log)."""
    urls = [_norm(f.value) for f in fs.facts.get("wheel_index", ())]
    missing = () if fs.first("index_unreachable") else fs.facts.get("no_distribution", ())
    for f in (*fs.facts.get("sdist_build", ()), *fs.facts.get("sdist_fetched", ()), *missing):
        if f.value != "collected" and any(_norm(f.value) in url for url in urls):
            return f
    return None


def heavy_unfinished(heavy: Fact | None, last) -> Fact | None:
    """A build known to take long (`heavy_build`) in the log's last lines with nothing after it that says how it
    ended: the log was copied while that build still ran (pip stuck on flash-attn, ptxas on its kernels)."""
    if heavy is None or not last or heavy.line_no < last[0][0]:
        return None
    # after it in the text: by place, not line number (a repr or JSON string of a log is many lines of one number)
    at = next((i for i, (no, text) in enumerate(last) if no == heavy.line_no and text == heavy.line), None)
    after = list(last)[at + 1:] if at is not None else [(no, text) for no, text in last if no > heavy.line_no]
    return None if any(_BUILD_END.search(text) for _, text in after) else heavy


# how a build ended (pip's own "... done" of metadata or of a download is no end of the build)
_BUILD_END = re.compile(r"(?i:error|fail|fatal|traceback|exception|successfully|killed|terminated|abort|denied)|"
                        r"Building wheel for \S+ \([^)\n]*\)(?: \.\.\. \w|: finished)|Created wheel|"
                        r"Stored in directory|Built target|\[100%\]")


def _environment_rules(fs: FactScanner, add) -> None:
    parse = fs.first("cmake_parse")
    if parse and (re.search(r"-D|CMAKE", parse.line) or fs.first("cmake_args")):
        add("F10", "cmake-arguments", parse)
    add("F10", "cmake-args-shell-syntax", fs.first("shell_syntax"))
    add("F10", "quotes-in-cmake-value", fs.first("quoted_value"))
    add("F10", "cmake-args-unbalanced-quote", fs.first("shlex_error") if fs.first("cmake_args") else None)
    add("F10", "semicolon-split-list", fs.first("semicolon_cmd"))
    add("F10", "cmake-flag-run-as-command", fs.first("flag_as_command"))
    add("F10", "arguments-mangled", fs.first("args_mangled"))
    add("F10", "cmake-args-in-one-value", fs.first("args_in_one_value"))
    flag, pkg = fs.first("cublas_flag"), fs.first("llama_cpp_python")
    if flag and pkg and fs.first("build_failed") and tuple(map(int, pkg.value.split("."))) >= (0, 2, 80):
        add("F09", "removed-flag-for-version", flag, llama_cpp_python=pkg.value)
    add("F11", "path-too-long", fs.first("path_long"))
    # (not a limit the line says a test run hit: tests that hang are not a long build)
    limit = fs.first("time_limit")
    add("F20", "time-limit", limit if limit and not _TESTS_STOPPED.search(limit.line) else None)


# a time limit hit by a test run (the tests named on the limit's own line: "140 of 142 tests complete", a pytest or
# ctest step, "test_x timed out after 300 s"): F20 is a build that takes too long, a test that hangs is not one
_TESTS_STOPPED = re.compile(r"(?i:\b\d+\W{0,3}tests?\b|\b(?:py|c)test\b|\btest_\w+|"
                            r"\btests? (?:hang|hung|stuck|never|complete))")


_NVCC_TOOLS = {"cicc", "cudafe", "cudafe++", "ptxas", "nvlink", "fatbinary", "nvcc"}


def _memory_rules(fs: FactScanner, add) -> None:
    """F25: a compiler killed or out of memory in a build that compiles CUDA (nvcc's own tools need no more; the
    same words in a build without CUDA are outside the catalog)."""
    killed = fs.first("tool_killed")
    if killed and killed.value in _NVCC_TOOLS:
        add("F25", "nvcc-tool-killed", killed, tool=killed.value)
    if fs.first("cuda_compile") is None:
        return
    tool = killed.value if killed and re.fullmatch(r"[\w+.-]+", killed.value) else None
    add("F25", "compiler-killed", killed, tool=tool)
    add("F25", "compiler-out-of-memory", fs.first("compiler_oom"))
    add("F25", "job-killed", fs.first("job_killed"))
