"""The failure catalog F01–F25 as data: what went wrong, why, and the fix (facts/failures.md §2).

Short paraphrases only; failures.md holds the evidence and the sources. `fix_command` is an envmgr
command (or the one pip line) that repairs or avoids the failure, where one exists.
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the vocabulary floor stays cheap to import
if TYPE_CHECKING:
    from typing import Literal, TypeGuard

    # Every catalog id, as a type: mypy (strict) rejects an id outside the catalog wherever one is written (issue 35).
    FailureId = Literal[
        "F01",
        "F02",
        "F03",
        "F04",
        "F05",
        "F06",
        "F07",
        "F08",
        "F09",
        "F10",
        "F11",
        "F12",
        "F13",
        "F14",
        "F15",
        "F16",
        "F17",
        "F18",
        "F19",
        "F20",
        "F21",
        "F22",
        "F23",
        "F24",
        "F25",
    ]
else:
    FailureId = str

WIN = ("windows",)
LINUX = ("linux",)
BOTH = ("windows", "linux")


@dataclass(frozen=True)
class Failure:
    id: FailureId
    title: str
    cause: str
    fix: str
    fix_command: str | None
    platforms: tuple[str, ...]


_REINSTALL = "pip install --no-cache-dir --force-reinstall --verbose llama-cpp-python"

_ROWS = (
    Failure(
        "F01",
        "No CUDA toolset found (CUDA MSBuild integration missing)",
        "The Visual Studio generator needs BuildCustomizations\\CUDA X.Y.props in the VS instance it picked; "
        "that instance has none (VS installed after CUDA, integration deselected, or another instance chosen).",
        "Build with Ninja inside a vcvars environment, or copy the toolkit's MSBuildExtensions into that "
        "instance, or pin CMAKE_GENERATOR_TOOLSET=cuda=<path> and CMAKE_GENERATOR_INSTANCE.",
        "envmgr fix-msbuild",
        WIN,
    ),
    Failure(
        "F02",
        "Visual Studio generator uses a different CUDA than CUDA_PATH",
        "The VS generator takes the highest CUDA *.props it finds, while FindCUDAToolkit follows "
        "CUDACXX/CUDA_PATH/PATH; the two toolkits disagree.",
        "Use Ninja, or pass CMAKE_GENERATOR_TOOLSET=cuda=<X.Y or path> so both pick one toolkit.",
        "envmgr shell --cuda <X.Y>",
        WIN,
    ),
    Failure(
        "F03",
        "No usable Visual Studio or wrong generator",
        "CMake found no VS instance with the C++ tools (fell back to NMake/MinGW), or the CMake in use does "
        "not know the installed VS (VS 2026 needs CMake 4.2).",
        "Install Build Tools with the VC x64 tools and a Windows SDK; for VS 2026 use CMake >= 4.2, or Ninja "
        "in a vcvars shell.",
        "envmgr shell",
        WIN,
    ),
    Failure(
        "F04",
        "MSVC too new for this CUDA (host_config.h rejects the compiler)",
        "nvcc's crt/host_config.h refuses an _MSC_VER above its bound: CUDA 11.8-12.3 stop before MSVC 14.40, "
        "12.4-12.9 before 14.50 (VS 2026).",
        "Use an older MSVC toolset side by side (vcvars -vcvars_ver=14.39; in VS 2026 the v143 14.44 component) "
        "or a newer CUDA; -allow-unsupported-compiler is a last resort, and useless where the STL (F05) "
        "rejects the CUDA too (MSVC 14.50 with CUDA < 13.2).",
        "envmgr shell --toolset 14.39 --cuda 12.4",
        WIN,
    ),
    Failure(
        "F05",
        "MSVC STL demands a newer CUDA (STL1002)",
        "The STL's yvals_core.h has its own CUDA minimum (12.4 for VS 17.10+ STLs, newer for later ones), "
        "separate from host_config.h, so -allow-unsupported-compiler alone does not help.",
        "Upgrade CUDA to the version named in the message, or select an older MSVC toolset.",
        "envmgr shell --toolset 14.39",
        WIN,
    ),
    Failure(
        "F06",
        "nvcc cannot use cl.exe",
        "With Ninja/Makefiles nvcc looks for cl.exe on PATH, which only vcvars sets; an x86 cl first on PATH, "
        "a -ccbin conflict, or spaces in TEMP break it too.",
        "Build in a shell with a captured x64 vcvars environment and a short ASCII TEMP.",
        "envmgr shell --arch x64",
        WIN,
    ),
    Failure(
        "F07",
        "CUDA compiler or toolkit not found",
        "No nvcc is reachable through CUDACXX, CUDAToolkit_ROOT, CUDA_PATH or PATH (stale shell, removed "
        "toolkit, pip/conda CUDA without nvcc).",
        "Set CUDACXX, CUDAToolkit_ROOT and CUDA_PATH to one toolkit and put its bin first on PATH.",
        "envmgr shell --cuda <X.Y>",
        BOTH,
    ),
    Failure(
        "F08",
        "Mixed CUDA versions",
        "nvcc, headers, import libraries and runtime DLLs are found independently and come from different toolkits.",
        "Point CUDA_PATH, CUDACXX, CUDAToolkit_ROOT and PATH at one toolkit and drop the other bin folders.",
        "envmgr shell --cuda <X.Y>",
        BOTH,
    ),
    Failure(
        "F09",
        "Old or removed CMake flag names",
        "LLAMA_CUBLAS is fatal now, LLAMA_CUDA only warns, GGML_CUDA_F16 and friends are ignored; an old flag "
        "can leave a CPU-only build.",
        "Use -DGGML_CUDA=on and drop FORCE_CMAKE.",
        None,
        BOTH,
    ),
    Failure(
        "F10",
        "CMAKE_ARGS quoting or format",
        "scikit-build-core splits CMAKE_ARGS with shlex: shell-specific quotes and backslash paths get "
        "mangled, and SKBUILD_CMAKE_ARGS splits on ';'.",
        "Let envmgr set CMAKE_ARGS (forward slashes, one quoting style per shell).",
        "envmgr shell",
        BOTH,
    ),
    Failure(
        "F11",
        "Path or command line too long",
        "Deep pip/scikit-build temp folders plus ggml-cuda's long file names exceed MAX_PATH, or repeated "
        "vcvars calls overflow cmd's line limit.",
        "Use a short TEMP and SKBUILD_BUILD_DIR (C:/b), Ninja, and capture vcvars once.",
        "envmgr shell",
        WIN,
    ),
    Failure(
        "F12",
        "'native' CUDA arch without a visible GPU",
        "GGML_NATIVE asks the driver for the GPUs at build time; with none visible nvcc falls back to a "
        "default arch that may not fit the real GPU.",
        "Pass an explicit -DCMAKE_CUDA_ARCHITECTURES (from nvidia-smi compute_cap) or -DGGML_NATIVE=OFF.",
        None,
        BOTH,
    ),
    Failure(
        "F13",
        "GPU architecture not supported by this nvcc",
        "The requested arch is too new (sm_120 needs CUDA 12.8) or too old (CUDA 13 dropped < 7.5) for the "
        "nvcc in use, or a stale build cache still lists it.",
        "Match CUDA to the GPU (>= 12.8 for RTX 50xx, 12.x for Pascal/Volta) and rebuild from a fresh build dir.",
        "envmgr shell --cuda <X.Y>",
        BOTH,
    ),
    Failure(
        "F14",
        "No kernel image for this GPU",
        "The binary has neither SASS nor suitable PTX for the GPU's compute capability.",
        "Rebuild with the GPU's arch in CMAKE_CUDA_ARCHITECTURES, or pick a wheel whose arch list covers it.",
        _REINSTALL,
        BOTH,
    ),
    Failure(
        "F15",
        "A DLL or one of its dependencies cannot be loaded",
        "The package's DLL (llama.dll, ggml-cuda.dll, torch's c10_cuda.dll, a provider DLL) exists but a "
        "dependency (cudart/cublas of the right major, nvcuda.dll, the VC++ runtime) is not on the "
        "search path; CUDA 13 keeps its DLLs in bin\\x64.",
        "Put the matching CUDA bin (and bin\\x64) first on PATH, install the driver / VC++ redistributable.",
        "envmgr shell --cuda <X.Y>",
        WIN,
    ),
    Failure(
        "F16",
        "Stale CUDA_PATH breaks import llama_cpp",
        "The loader calls os.add_dll_directory(CUDA_PATH\\bin) unconditionally, which raises when the folder "
        "no longer exists, even for CPU builds.",
        "Correct or unset CUDA_PATH (and HIP_PATH).",
        "envmgr shell --cuda <X.Y>",
        WIN,
    ),
    Failure(
        "F17",
        "NVIDIA driver too old for the CUDA runtime",
        "The driver's CUDA version is below the toolkit or wheel the binary was built with; the runtime then "
        "fails or falls back to the CPU (llama.cpp does).",
        "Update the driver, or build/install for a CUDA version the driver supports.",
        None,
        BOTH,
    ),
    Failure(
        "F18",
        "Built or installed for the GPU but runs on the CPU",
        "What runs is a build made here (pip's build of an sdist, or its wheel from pip's cache) without CUDA, "
        "its CUDA switch never reaching the build (llama.cpp: GGML_CUDA), or a CUDA build the run does not "
        "give the GPU (llama.cpp: n_gpu_layers 0), or CUDA failed to initialise at run time.",
        "Rebuild from source with the CUDA switch reaching the build (llama.cpp: -DGGML_CUDA=on in CMAKE_ARGS), "
        "without pip's cache, and give the run the GPU (n_gpu_layers=-1); or fix what stopped CUDA from "
        "initialising.",
        _REINSTALL,
        BOTH,
    ),
    Failure(
        "F19",
        "Installer took a CPU-only prebuilt, or compiled where a CUDA wheel was wanted",
        "pip, uv or conda took a prebuilt package built without CUDA (torch +cpu, a CPU jaxlib, paddlepaddle "
        "or onnxruntime, not their -gpu packages), or compiled an sdist as no CUDA wheel fit (a newer PyPI sdist "
        "beat the CUDA index; no wheel for this Python or platform).",
        "Install the CUDA variant: its index or package name, a version that has the wheel, and "
        "--only-binary=<package> so pip fails fast instead of compiling.",
        "pip install llama-cpp-python==<ver> --only-binary=llama-cpp-python --extra-index-url "
        "https://abetlen.github.io/llama-cpp-python/whl/cu124",
        BOTH,
    ),
    Failure(
        "F20",
        "Build takes very long",
        "Many CUDA archs, all flash-attention quant pairs, few cores, a throw-away build dir or antivirus "
        "scanning multiply the work.",
        "Build one arch, keep a persistent SKBUILD_BUILD_DIR, use Ninja with all cores.",
        None,
        BOTH,
    ),
    Failure(
        "F21",
        "gcc too new for nvcc",
        "nvcc's host_config.h rejects a __GNUC__ above its bound (for example > 13 for CUDA 12.4-12.6).",
        "Install an older g++ and set CUDAHOSTCXX to it before the first configure, or upgrade CUDA.",
        "envmgr shell --cuda <X.Y>",
        LINUX,
    ),
    Failure(
        "F22",
        "Linux: CUDA toolkit not on PATH or wrong nvcc",
        "NVIDIA's packages install to /usr/local/cuda-X.Y without touching PATH, CMake ignores CUDA_HOME, "
        "and a distro /usr/bin/nvcc may be older.",
        "Export PATH, CUDACXX and CUDAToolkit_ROOT for the toolkit you want.",
        "envmgr shell --cuda <X.Y>",
        LINUX,
    ),
    Failure(
        "F23",
        "libcuda.so.1 / CUDA libraries missing (Docker, no GPU)",
        "At build time only the libcuda stub exists, so linking executables against libggml-cuda fails; at run "
        "time the driver library or cuBLAS is not in the container.",
        "Build with -DCMAKE_EXE_LINKER_FLAGS=-Wl,--allow-shlib-undefined and explicit archs; run with --gpus all "
        "and a runtime/devel CUDA image.",
        None,
        LINUX,
    ),
    Failure(
        "F24",
        "CUDA toolkit lacks a component the build needs (cuBLAS, cuRAND, NVRTC, CCCL...)",
        "The toolkit has nvcc but not a library or header the project links or includes: a minimal or "
        "custom install, pip/conda packages of nvcc alone, or a distro split. ggml-cuda links cuBLAS and "
        "cuBLASLt.",
        "Add the component to this toolkit: NVIDIA installer's library component, apt/conda "
        "libcublas-dev (or cuda-libraries-dev), pip nvidia-cublas(-cu12); or select a complete toolkit.",
        None,
        BOTH,
    ),
    Failure(
        "F25",
        "A compiler was killed: out of memory (too many parallel jobs)",
        "Each nvcc job (cicc, cudafe++, ptxas, the host compiler) of a heavy CUDA file takes several GiB; "
        "as many jobs as cores (ninja's default, make -j, MAX_JOBS unset) exhaust the memory.",
        "Build fewer jobs at once (MAX_JOBS for torch extensions, CMAKE_BUILD_PARALLEL_LEVEL for CMake), "
        "about one per 4 GiB of memory, and fewer architectures.",
        "envmgr shell --recipe torch-extension",
        BOTH,
    ),
)

CATALOG: dict[FailureId, Failure] = {f.id: f for f in _ROWS}


def ids() -> tuple[FailureId, ...]:
    return tuple(CATALOG)


def is_failure_id(text: str) -> TypeGuard[FailureId]:
    """Whether `text` is a catalog id: where an id read from outside (a command line, a file) becomes a FailureId."""
    return text in CATALOG
