"""F24: a CUDA toolkit without a component the recipe's build links or includes (issue 13 item 2).

llama.cpp's CUDA backend (ggml/src/ggml-cuda/CMakeLists.txt) links CUDA::cudart (or cudart_static),
CUDA::cublas and CUDA::cublasLt; FindCUDAToolkit looks for them under the toolkit that holds the nvcc
CMake uses, so a toolkit with nvcc but no cuBLAS configures its compiler fine and then fails at the
generate step with `Target "ggml-cuda" links to: CUDA::cublas but the target was not found` (the real
log of this machine: tests/corpus/pip-llama-cpp-python-0.3.36-cuda13.0-no-cublas-*.txt).
The files are looked for where FindCUDAToolkit looks: the toolkit's include and lib folders.
"""

from __future__ import annotations

from envmgr.discover.model import CudaToolkit
from envmgr.doctor.checks import FAIL, OK, SKIPPED, Facts, Finding, check, cuda_label, finding
from envmgr.host.base import WINDOWS, Host, join, safe_listdir

# What each recipe's CUDA build needs from the toolkit: component -> (library stems, header or None).
NEEDS = {
    "llama-cpp-python": ("cudart", "cublas", "cublasLt"),
}
_FILES = {  # component -> (linux library prefix, windows import library, header)
    "cudart": ("libcudart", "cudart.lib", "cuda_runtime.h"),
    "cublas": ("libcublas.", "cublas.lib", "cublas_v2.h"),
    "cublasLt": ("libcublasLt", "cublasLt.lib", "cublasLt.h"),
    "curand": ("libcurand", "curand.lib", "curand.h"),
    "cusparse": ("libcusparse", "cusparse.lib", "cusparse.h"),
    "nvrtc": ("libnvrtc", "nvrtc.lib", "nvrtc.h"),
}
# The name of each component in the ways a toolkit gets installed (NVIDIA's installer subpackage,
# NVIDIA's apt repository, conda's nvidia/conda-forge channels, PyPI).
_PACKAGES = {
    "cudart": ("cudart", "cuda-cudart-dev", "cuda-cudart-dev", "nvidia-cuda-runtime"),
    "cublas": ("cublas", "libcublas-dev", "libcublas-dev", "nvidia-cublas"),
    "cublasLt": ("cublas", "libcublas-dev", "libcublas-dev", "nvidia-cublas"),
    "curand": ("curand", "libcurand-dev", "libcurand-dev", "nvidia-curand"),
    "cusparse": ("cusparse", "libcusparse-dev", "libcusparse-dev", "nvidia-cusparse"),
    "nvrtc": ("nvrtc", "cuda-nvrtc-dev", "cuda-nvrtc-dev", "nvidia-cuda-nvrtc"),
}


def missing_components(host: Host, kit: CudaToolkit, needs: tuple[str, ...]) -> list[tuple[str, str]]:
    """(component, what is missing) for each component of `needs` the toolkit lacks."""
    windows = host.platform == WINDOWS
    libs = [name for d in kit.lib_dirs for name in safe_listdir(host, d)[0]]
    includes = [join(host, kit.path, "include")]
    if not windows:
        includes.append(join(host, kit.path, "targets", "x86_64-linux", "include"))
    out = []
    for comp in needs:
        prefix, implib, header = _FILES[comp]
        has_lib = (
            (implib.lower() in {n.lower() for n in libs})
            if windows
            else any(n.startswith(prefix) and (".so" in n or n.endswith(".a")) for n in libs)
        )
        has_header = any(host.exists(join(host, d, header)) for d in includes)
        lacking = [
            what
            for what, ok in ((implib if windows else f"{prefix.rstrip('.')}*.so", has_lib), (header, has_header))
            if not ok
        ]
        if lacking:
            out.append((comp, " and ".join(lacking)))
    return out


def install_kind(kit: CudaToolkit) -> str:
    """nvidia (NVIDIA's installer, runfile or apt), conda, pip (site-packages/nvidia) or wheels (a
    toolkit folder assembled from nvidia-* wheels, their dist-info kept in <root>/dist-info)."""
    text = " ".join((kit.path, *kit.sources)).lower().replace("\\", "/")
    if kit.components:
        return "pip" if "/nvidia/" in text or "site-packages" in text else "wheels"
    if "conda" in text or "/envs/" in text:
        return "conda"
    return "nvidia"


def component_wheels(kit: CudaToolkit, comps: list[str]) -> tuple[str, ...]:
    """PyPI's requirement for each missing component, at the toolkit's CUDA version (nvidia-cublas==13.0.*,
    nvidia-cublas-cu12==12.4.*): what `install --fix` lays into the toolkit (commands/install_components.py)."""
    major = kit.major_minor[0]
    suffix = "" if major >= 13 else f"-cu{major}"
    return tuple(sorted({f"{_PACKAGES[c][3]}{suffix}=={kit.short}.*" for c in comps}))


def fix_for(kit: CudaToolkit, comps: list[str], windows: bool) -> str:
    """The fix for this toolkit's kind of install, naming each missing component's package."""
    major, minor = kit.major_minor
    names = sorted({_PACKAGES[c] for c in comps})
    kind = install_kind(kit)
    if kind in ("pip", "wheels"):
        wheels = " ".join(component_wheels(kit, comps))
        if kind == "pip":
            return f"pip install {wheels} (the CUDA of this nvcc)"
        return (
            f"add the wheel(s) {wheels} to {kit.path} the way its other nvidia-* wheels were laid out "
            "(their include/ and lib/ into the toolkit), or select a complete toolkit"
        )
    if kind == "conda":
        return f"conda install -c nvidia {' '.join(sorted({p[2] for p in names}))}={kit.short}"
    if windows:
        subs = ", ".join(sorted({f"{p[0]}_dev_{kit.short}" for p in names}))
        return f"run the CUDA {kit.short} installer again (Custom) and select the library components {subs}"
    apt = " ".join(sorted({f"{p[1]}-{major}-{minor}" for p in names}))
    return f"apt install {apt} (NVIDIA's repository), or rerun the CUDA {kit.short} runfile with its libraries selected"


def component_command(kit: CudaToolkit, comps: list[str], windows: bool) -> str:
    """The one command that adds the components where a command can (pip, conda, NVIDIA's apt repository);
    "" for NVIDIA's Windows installer (its GUI, or `envmgr install --fix` for wheel-assembled toolkits)."""
    names = sorted({_PACKAGES[c] for c in comps})
    kind = install_kind(kit)
    if kind == "pip":
        parts = kit.path.replace("\\", "/").split("/")
        site = parts.index("site-packages") if "site-packages" in parts else -1
        root = "/".join(parts[: site - (1 if windows else 2)]) if site > 2 else ""  # Lib\ or lib/pythonX.Y/
        python = (
            (f"{root}/Scripts/python.exe".replace("/", "\\") if windows else f"{root}/bin/python") if root else "python"
        )
        return f"{python} -m pip install {' '.join(component_wheels(kit, comps))}"
    if kind == "conda":
        return f"conda install -c nvidia {' '.join(sorted({p[2] for p in names}))}={kit.short}"
    if kind == "nvidia" and not windows:
        major, minor = kit.major_minor
        return f"sudo apt install {' '.join(sorted({f'{p[1]}-{major}-{minor}' for p in names}))}"
    return ""


@check("F24")
def f24(facts: Facts) -> Finding:
    recipe = facts.extra.get("recipe", "llama-cpp-python")
    needs = NEEDS.get(recipe)
    kit = facts.cuda
    if not needs:
        return finding("F24", SKIPPED, f"recipe {recipe} names no CUDA libraries")
    if kit is None:
        return finding("F24", SKIPPED, "no CUDA toolkit selected (see F07)")
    missing = missing_components(facts.host, kit, needs)
    ev = [
        f"{recipe} links {', '.join(needs)} (CUDA::{', CUDA::'.join(needs)})",
        f"toolkit: {cuda_label(kit)}",
        f"looked in: {', '.join(kit.lib_dirs) or '(no lib folder)'} and {join(facts.host, kit.path, 'include')}",
    ]
    if not missing:
        return finding("F24", OK, f"{cuda_label(kit)} has {', '.join(needs)}", ev)
    ev += [f"missing {comp}: {what}" for comp, what in missing]
    comps = [c for c, _ in missing]
    others = [k for k in facts.inv.cuda if k is not kit and k.nvcc and not missing_components(facts.host, k, needs)]
    fix = fix_for(kit, comps, facts.windows)
    if others:
        fix += f"; or build with CUDA {others[0].short} ({others[0].path}), which has them"
    return finding(
        "F24",
        FAIL,
        f"{cuda_label(kit)} has no {', '.join(comps)}: the build will stop at "
        f"`CUDA::{comps[0]} ... target was not found`",
        ev,
        fix=fix,
        fix_command=f"envmgr shell --cuda {others[0].short}"
        if others
        else component_command(kit, comps, facts.windows),
    )
