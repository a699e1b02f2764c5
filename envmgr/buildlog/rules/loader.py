"""The loader family: a DLL folder that is gone (F16), a DLL the Windows loader could not load, by its error codes
and messages in any language, or a CUDA DLL named missing (F15), a CUDA shared object missing on Linux (F23).
"""

from __future__ import annotations

import re

from envmgr.buildlog.rules.base import Add, Fact, FactRx, Facts, alts, fx
from envmgr.buildlog.signatures import Signature, sig
from envmgr.catalog import FailureId

IDS: tuple[FailureId, ...] = ("F15", "F16", "F23")

# Windows' own messages for loader errors, as the system prints them in each language (FormatMessage text).
_MOD_NOT_FOUND = (
    "The specified module could not be found",
    "Das angegebene Modul wurde nicht gefunden",
    "Le module spécifié est introuvable",
    "No se puede encontrar el módulo especificado",
    "Impossibile trovare il modulo specificato",
    "Não foi possível encontrar o módulo especificado",
    "Не найден указанный модуль",
    "找不到指定的模块",
    "找不到指定的模組",
    "指定されたモジュールが見つかりません",
    "지정된 모듈을 찾을 수 없습니다",
    "Nie można odnaleźć określonego modułu",
    "Belirtilen modül bulunamadı",
    "Kan opgegeven module niet vinden",
    "Nelze nalézt zadaný modul",
)
_PROC_NOT_FOUND = (
    "The specified procedure could not be found",
    "Die angegebene Prozedur wurde nicht gefunden",
    "La procédure spécifiée est introuvable",
    "No se encontró el proceso especificado",
    "Impossibile trovare la procedura specificata",
    "Não foi possível encontrar o procedimento especificado",
    "Не найдена указанная процедура",
    "找不到指定的程序",
    "指定されたプロシージャが見つかりません",
    "지정된 프로시저를 찾을 수 없습니다",
    "Nie można odnaleźć określonej procedury",
    "Belirtilen yordam bulunamadı",
)
_BAD_IMAGE = (
    "is not a valid Win32 application",
    "ist keine zulässige Win32-Anwendung",
    "no es una aplicación Win32 válida",
    "n'est pas une application Win32 valide",
    "не является приложением Win32",
    "不是有效的 Win32 应用程序",
    "有効な Win32 アプリケーションではありません",
)


# Needles for the phrases above: the parts that locate them (a non-ASCII needle costs nothing in an ASCII
# log; in another it is looked for in the UTF-8 bytes).
_LOADER_NEEDLES = (
    "specified",
    "angegebene",
    "spécifié",
    "specifica",
    "Не найден",
    "找不到指定",
    "指定された",
    "지정된",
    "określon",
    "Belirtilen",
    "opgegeven",
    "zadaný",
    "não pôde",
    "Не найдена",
)


_CUDA_LIB = (
    r"(?:cudart|cublasLt|cublas|cudnn\w*|nvrtc|cufft|curand|cusparse|cusolver|nvJitLink|nvcuda|"
    r"nvToolsExt|cupti)"
)
# (with TensorRT's runtime and parsers, nvinfer*/nvonnxparser*/nvparsers, and cuDNN 8's own dependency zlibwapi: DLLs of
# the CUDA stack that its runtimes load, TensorRT naming them in "Unable to open library: nvinfer_plugin_10.dll")
_CUDA_DLL = (
    r"(?:" + _CUDA_LIB + r"(?:64)?(?:_\w+)?|ggml[\w-]*|llama|onnxruntime_providers_cuda|torch_cuda\w*|"
    r"c10_cuda|caffe2_nvrtc|nvinfer\w*|nvonnxparser\w*|nvparsers\w*|zlibwapi)\.dll"
)

FACTS: tuple[FactRx, ...] = (
    # Windows' loader error numbers in any runtime's words: CPython's [WinError N], LoadLibrary's "error N" (ORT,
    # .NET), CTranslate2's "Error code 126", Paddle's dynamic loader "(error code is 126)" (phi/backends/dynload)
    fx(
        "winerr",
        r"WinError (\d+)|LoadLibrary\w*(?:\(\))?[^\n]{0,60}?\berror(?: code)?[ :]*(\d+)|"
        r"(?<!\] )(?i:error (?:code )?(?:is )?)(126|127|193)\b|0x(8007007[EeFf]|800700[Cc]1)",
        ("WinError", "LoadLibrary", "rror 1", "rror code", "0x8007"),
    ),
    fx("mod_missing", alts(_MOD_NOT_FOUND), _LOADER_NEEDLES),
    fx("proc_missing", alts(_PROC_NOT_FOUND), _LOADER_NEEDLES),
    fx("bad_image", alts(_BAD_IMAGE), ("Win32",)),
    fx(
        "dll_load",
        r"DLL load failed|Could not find module|Unable to load DLL|DllNotFoundException|"
        r"Failed to load (?:shared )?library|failed to load|Could not load (?:library|dynamic library|\")|"
        r"LoadLibrary\w*(?:\(\))?[^\n]{0,80}?(?i:fail|error)|Could not locate",
        ("DLL", "ould not", "Unable to load", "ailed to load", "LoadLibrary"),
    ),
    fx("cuda_dll", r"\b(" + _CUDA_DLL + r")\b", ".dll", re.I),
    # the driver's and the toolkit's runtime libraries as shared objects (the ones _CUDA_LIB names as DLLs)
    fx(
        "cuda_so",
        r"\b(lib(?:cuda|cudart|cublasLt|cublas|cudnn\w*|nvrtc|nvidia-ml|ggml-cuda|cufft|curand|cusparse|"
        r"cusolver|nvJitLink|nvToolsExt|cupti)"
        r"\.so(?:\.\d+)*)\b[^\n]*?(cannot open shared object|No such file|not found|cannot find)?",
        ".so",
    ),
    # a DLL that exists but whose dependencies do not load (CPython, torch, .NET word it so), or a loader
    # that names the DLL it could not load without a reason (Lua)
    fx(
        "dll_dep",
        r"or one of its dependencies|(?i:cannot|can't|could not) load '[^'\n]*\.dll'",
        ("one of its dependencies", "load '"),
    ),
    fx("driver_cuda", r"CUDA Version: (\d+\.\d+)", "CUDA Version"),
    # a Linux shared object on a Windows path: loading it is Windows' "not a valid Win32 application" (193)
    fx("so_on_windows", r"(?<![\w/])[A-Za-z]:\\[^\n]*?\.so\b", ".so"),
    # a DLL folder that is gone (os.add_dll_directory of CUDA_PATH\bin, VULKAN_SDK\Bin, a conda env's bin)
    fx("bin_missing", r"\[WinError [23]\][^\n]*?'[^'\n]*?[\\/](?i:bin)[\\/]*'", "WinError"),
    fx("add_dll_directory", r"add_dll_directory", "add_dll_directory"),
)


def decide(fs: Facts, add: Add) -> None:
    winerr = fs.values("winerr")
    if fs.first("add_dll_directory") and set(winerr) & {"2", "3"}:
        add("F16", "add-dll-directory-missing-folder", fs.facts["winerr"][0])
    add("F16", "dll-folder-missing", fs.first("bin_missing"))
    _loader_rules(fs, add)
    for f in fs.facts.get("cuda_so", ()):
        if (
            _SO_MISSING.search(f.line)
            and not _SEARCH_GOES_ON.search(f.line)
            and not separate_only(f.line)
            and not _SEPARATE.fullmatch(f.value)  # the missing one is cuDNN's (a provider library needing it)
        ):
            add("F23", "shared-object-missing", f, lib=f.value)


_SO_MISSING = re.compile(
    r"(?i:cannot open shared object|No such file|not found|cannot find|couldn't open|could not open|"
    r"could not load|couldn't load|cannot load|"
    r"unable to (?:find|load|open)|failed to load)"
)


def separate_failed(fs: Facts) -> bool:
    """A library of cuDNN's or TensorRT's did not load: outside the catalog, and what left a run on the CPU (so the
    runtime's fallback words are no F18 of their own)."""
    if any(_SEPARATE.fullmatch(f.value) and _SO_MISSING.search(f.line) for f in fs.facts.get("cuda_so", ())):
        return True
    return any(separate_only(f.line) for kind in (*_LOADER_KINDS, "dll_load") for f in fs.facts.get(kind, ()))


# cuDNN and TensorRT (with cuDNN 8's own dependency zlibwapi): NVIDIA's libraries outside the CUDA toolkit, installed on
# their own; the catalog's F15/F23 are the toolkit's runtime libraries, the driver's and the package's own, so a line
# whose only library is one of these names no catalog id (issue 36)
_SEPARATE = re.compile(r"(?i:(?:lib)?(?:cudnn|nvinfer|nvonnxparser|nvparsers|zlibwapi)[\w.+-]*)")
_LIBRARY = re.compile(r"[\w.+-]+?(?i:\.dll|\.so(?:\.\d+)*)(?!\w)")


def separate_only(line: str) -> bool:
    """The line names a library and every library it names is cuDNN's or TensorRT's."""
    libs = _LIBRARY.findall(line)
    return bool(libs) and all(_SEPARATE.fullmatch(lib) for lib in libs)


# not a missing library: the search's own word that it goes on (bitsandbytes' cuda_setup: "not found in any
# environmental path. Searching in backup paths...", and its older "... Searching /usr/local/cuda/lib64..."), or the
# other word size's copy skipped on the way to the right one (a 32-bit libcuda under i386-linux-gnu or lib32: "wrong ELF
# class: ELFCLASS32", ollama's discovery; issue 36)
# A library that loaded and whose start then failed ("nvcuda init failure: 999", cuInit's code) is no missing one.
_SEARCH_GOES_ON = re.compile(
    r"(?i:Searching (?:in )?(?:backup|further|other) paths)|(?i:not found in any environmental path\. Searching) /|"
    r"/i386-linux-gnu/|/lib32/|wrong ELF class: ELFCLASS32|"
    r"\binit failure: \d+"
)


# module not found, procedure not found, not a valid Win32 image, a DLL's initialisation routine failed
_LOADER = {"126", "127", "193", "1114", "8007007E", "8007007e", "8007007F", "8007007f", "800700C1", "800700c1"}
_BAD_IMAGE_CODES = {"193", "800700C1", "800700c1"}
_LOADER_KINDS = ("mod_missing", "proc_missing", "bad_image", "dll_dep")


# TensorFlow's probe of the CUDA libraries at every start (stream_executor's dso_loader: "Could not load dynamic
# library 'cudart64_110.dll'; dlerror: ..."), a warning it goes on from: on a machine with no GPU to use, every run
# prints it (TF then runs on the CPU, as it should)
_TF_PROBE = re.compile(r"Could not load dynamic library '[^'\n]+'; dlerror:")


def _loader_rules(fs: Facts, add: Add) -> None:
    """F15: a DLL the loader could not load, by Windows' error codes and messages, or a CUDA DLL named as missing;
    TensorFlow's probe warning only where the log shows a GPU there or wanted (or the reporter saying it is not
    used): without one, the warning is a CPU machine's normal start."""
    gpu = any(fs.first(k) for k in ("gpu_seen", "gpu_wanted", "cpu_run_said", "driver_cuda"))

    def probe_only(f: Fact) -> bool:
        return not gpu and _TF_PROBE.search(f.line) is not None

    # (a Linux .so loaded on Windows is a package without a Windows build, not a DLL that does not load: its 193)
    codes = _LOADER - _BAD_IMAGE_CODES if fs.first("so_on_windows") else _LOADER
    loader = next((f for f in fs.facts.get("winerr", ()) if f.value in codes and not separate_only(f.line)), None)
    kinds = ("mod_missing", "proc_missing", "dll_dep") if fs.first("so_on_windows") else _LOADER_KINDS
    for kind in kinds:
        loader = loader or next((f for f in fs.facts.get(kind, ()) if not separate_only(f.line)), None)
    weak = fs.first("dll_load")
    dlls = [f for f in fs.facts.get("cuda_dll", ()) if not _SEPARATE.fullmatch(f.value)]
    if loader is None and weak and dlls and not probe_only(weak) and not separate_only(weak.line):
        loader = weak
    if loader is not None:
        add("F15", "windows-loader", loader, dll=dlls[0].value if dlls else None)
    for f in dlls:  # a CUDA DLL named as missing, in any tool's words
        if _MISSING.search(f.line) and not probe_only(f):
            add("F15", "cuda-dll-missing", f, dll=f.value)


_MISSING = re.compile(
    r"(?i:not found|cannot be (?:found|loaded)|could not be (?:found|loaded)|"
    r"(?:couldn't|could not|cannot|can't|unable to|failed to) (?:find|load|open|locate)|"
    r"is missing|was not found|no such file|"
    # Windows' loader dialog and tools in other languages (the DLL's name is on the line)
    r"nicht gefunden|introuvable|no se encontr|non è stato trovato|não foi encontrad|"
    r"找不到|見つかりません|찾을 수 없|не найден)"
)


# ---------------------------------------------------------------- signatures: the tools' own sentences


def _stale_path(m: re.Match[str]) -> bool:
    path = m.group("path").lower()
    return "cuda" in path or "hip" in path or "nvidia" in path


def _line_of(m: re.Match[str]) -> str:
    start = m.string.rfind("\n", 0, m.start()) + 1
    end = m.string.find("\n", m.end())
    return m.string[start : end if end >= 0 else len(m.string)]


def _f15_cause(m: re.Match[str]) -> bool:
    """A DLL of the toolkit's, the driver's or the package's: not one of cuDNN's or TensorRT's alone (separate_only)."""
    line = _line_of(m)
    return not separate_only(line)


SIGNATURES: tuple[Signature, ...] = (
    # F15: Windows DLL loading (CPython's message is English; WinError 126 is the localised one).
    sig(
        "F15",
        "dll-not-loadable",
        r"Could not find module '(?P<path>[^'\n]*?(?P<dll>[\w.+-]+\.dll))' \(or one of its dependencies\)",
        flags=re.I,
        needle="ould not",
        key="module",
        check=_f15_cause,
    ),
    sig(
        "F15",
        "failed-to-load-dll",
        r"Failed to load shared library '(?P<path>[^'\n]*?(?P<dll>[\w.+-]+\.dll))'",
        flags=re.I,
        needle="ailed to load shared library",
        check=_f15_cause,
    ),
    sig(
        "F15",
        "no-shared-library",
        r"Shared library with base name '(?P<base>\w+)' not found",
        needle="not found",
        key="base name",
    ),
    sig("F15", "winerror-126", r"\[WinError 126\]", needle="WinError", check=_f15_cause),
    # CPython's import of an extension module (pycuda._driver, torch._C, ...) whose DLLs the loader refused; what
    # follows the colon is Windows' own text, in the system's language (module or procedure not found, bad image).
    sig(
        "F15",
        "dll-load-failed",
        r"DLL load failed(?: while importing (?P<module>[\w.]+))?:",
        needle="DLL load failed",
        check=_f15_cause,
    ),
    # CuPy's import check lists each DLL it depends on; a CUDA runtime one the loader cannot find (cuTENSOR and
    # cuDNN are optional, so only the toolkit's own libraries count).
    sig(
        "F15",
        "cupy-dll-not-found",
        r"(?P<dll>(?:cudart|cublas|cublasLt|nvrtc|cufft|curand|cusparse|cusolver|nvJitLink)64_\w*\.dll) -> not found",
        flags=re.I,
        needle="-> not found",
    ),
    # libgpuarray (pygpu) and others that LoadLibrary a DLL by name and pass Windows' text on.
    sig(
        "F15",
        "could-not-load-dll",
        r"Could not load \"(?P<dll>[\w.+-]+\.dll)\"",
        flags=re.I,
        needle="ould not",
        key="Could not load",
        check=_f15_cause,
    ),
    # Native code calling LoadLibrary itself (onnxruntime's CUDA provider): the Windows error code, any language.
    sig(
        "F15",
        "loadlibrary-failed",
        r"LoadLibrary failed with error (?P<code>\d+)[^\n]*?"
        r"when trying to load \"(?P<path>[^\"\n]*?(?P<dll>[\w.+-]+\.dll))\"",
        flags=re.I,
        needle="LoadLibrary failed",
        check=_f15_cause,
    ),
    # NVRTC (the runtime compiler: CuPy, torch's JIT, numba) loads its builtins DLL when it compiles; nvrtc's own
    # words where that DLL is not on the search path (issue 36 part 5; cupy#4396, DotCompute#182)
    sig(
        "F15",
        "nvrtc-builtins-dll",
        r"failed to open (?P<dll>nvrtc-builtins64_\d+\.dll)",
        flags=re.I,
        needle="nvrtc-builtins64",
    ),
    # F16: os.add_dll_directory on a CUDA_PATH that is gone (WinError 3 or 2, any locale).
    sig("F16", "stale-cuda-path", r"\[WinError [23]\][^\n]*?'(?P<path>[^'\n]+)'", check=_stale_path, needle="WinError"),
    sig(
        "F16",
        "add-dll-directory",
        r"os\.add_dll_directory\(os\.path\.join\(os\.environ\[[\"'](?P<var>CUDA_PATH|HIP_PATH)[\"']\]",
        needle="add_dll_directory",
    ),
    # F23: libcuda.so.1 and friends (Docker, no driver).
    sig(
        "F23",
        "libcuda-needed",
        r"(?P<lib>libcuda\.so\.1), needed by (?P<by>\S+), not found",
        needle="not found",
        key="needed by",
    ),
    sig(
        "F23",
        "driver-symbols-undefined",
        r"undefined reference to [`'](?P<symbol>cu(?:Mem|Device)\w*)'",
        needle="undefined reference to",
    ),
    sig(
        "F23",
        "so-not-found",
        r"(?P<lib>lib(?:cuda|cudart|cublas|cublasLt)\.so(?:\.\d+)*): cannot open shared object file",
        needle="cannot ",
        key="shared object",
    ),
    # the same NVRTC words on Linux: libnvrtc-builtins.so of the version the program was built with is not there
    # (yolact_edge#186)
    sig(
        "F23",
        "nvrtc-builtins-so",
        r"failed to open (?P<lib>libnvrtc-builtins\.so(?:\.\d+)*)",
        needle="libnvrtc-builtins",
    ),
    # conda's and pixi's solvers: the __cuda virtual package, which they set only where an NVIDIA driver is visible,
    # is missing (a container or CI runner without the GPU; conda-forge/tensorflow-feedstock#216, pixi's
    # "Virtual package '__cuda' does not match any of the available virtual packages on your machine")
    sig(
        "F23",
        "no-cuda-virtual-package",
        r"nothing provides (?P<virtual>__cuda)\b[^\n]{0,40}? needed by (?P<package>\S+)|"
        r"Virtual package '__cuda' does not match any of the available virtual packages",
        needle="__cuda",
    ),
)
