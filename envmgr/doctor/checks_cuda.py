"""CUDA checks: finding nvcc, toolkits agreeing, GPU vs toolkit, driver vs toolkit (F07, F08, F12, F13, F16, F17)."""

from __future__ import annotations

import re

from envmgr import knowledge
from envmgr.discover.model import CudaToolkit
from envmgr.doctor.checks import FAIL, OK, SKIPPED, WARN, Facts, Finding, check, cmake_args, finding, uses_vs_generator
from envmgr.doctor.checks_vs import cmake_instance, generator_major
from envmgr.host.base import WINDOWS, join
from envmgr.version import Version, mm


def _nvcc(facts: Facts) -> str:
    return "nvcc.exe" if facts.windows else "nvcc"


@check("F07")
def f07(facts: Facts) -> Finding:
    host, env = facts.host, facts.env
    cudacxx = env.get("CUDACXX")
    if cudacxx and not host.exists(cudacxx.strip('"')):
        return finding(
            "F07",
            FAIL,
            f"CUDACXX={cudacxx} does not exist",
            [f"CUDACXX={cudacxx}"],
            fix="point CUDACXX at an installed nvcc, or unset it",
            fix_command="envmgr shell",
        )
    if not facts.inv.cuda:
        return finding(
            "F07",
            FAIL,
            "no CUDA toolkit found",
            ["registry, CUDA_PATH*, default folders, PATH: none"],
            fix="install the CUDA toolkit (or pip's nvidia-cuda-nvcc for a build-only toolkit)",
        )
    usable = [k for k in facts.inv.cuda if k.nvcc]
    if not usable:
        return finding(
            "F07",
            FAIL,
            "CUDA toolkit(s) without nvcc (runtime-only installs)",
            [f"{k.path}: {'; '.join(k.problems) or 'no nvcc'}" for k in facts.inv.cuda],
            fix="install the full toolkit (nvcc included)",
        )
    how = []
    if cudacxx:
        how.append(f"CUDACXX={cudacxx}")
    for name in ("CUDAToolkit_ROOT", "CUDA_PATH"):
        value = env.get(name)
        if value and host.exists(join(host, value, "bin", _nvcc(facts))):
            how.append(f"{name}={value}")
    on_path = host.which("nvcc")
    if on_path:
        how.append(f"nvcc on PATH: {on_path}")
    if not how:
        if not facts.windows and host.exists("/usr/local/cuda/bin/nvcc"):
            how.append("/usr/local/cuda/bin/nvcc (FindCUDAToolkit's last resort)")
        else:
            return finding(
                "F07",
                FAIL,
                "CMake would find no nvcc (No CMAKE_CUDA_COMPILER could be found)",
                ["CUDACXX, CUDAToolkit_ROOT, CUDA_PATH and PATH name no nvcc"],
                fix="set CUDACXX/CUDA_PATH and put <cuda>/bin on PATH",
                fix_command=f"envmgr shell --cuda {usable[0].short}",
            )
    return finding("F07", OK, "CMake finds an nvcc", how)


def pointers(facts: Facts) -> list[tuple[str, str, CudaToolkit | None]]:
    """(what, value, toolkit or None) for every place that names a CUDA toolkit in this shell."""
    host, env = facts.host, facts.env
    out: list[tuple[str, str, CudaToolkit | None]] = []
    for name in ("CUDA_PATH", "CUDAToolkit_ROOT", "CUDA_HOME", "CUDACXX"):
        value = env.get(name)
        if value:
            out.append((name, value, facts.kit_at(host.realpath(value.strip('"')) if not facts.windows else value)))
    nvcc = host.which("nvcc")
    if nvcc:
        kit = facts.kit_at(nvcc) or facts.kit_at(host.realpath(nvcc))
        if kit is None:
            kit = next((k for k in facts.inv.cuda if "nvcc on PATH" in " ".join(k.sources)), None)
        out.append(("first nvcc on PATH", nvcc, kit))
    if facts.windows and uses_vs_generator(env) and facts.vs is not None:
        major, _ = generator_major(facts)
        vs, _ = cmake_instance(facts, major) if major else (None, "")
        bc = vs.build_customizations if vs is not None else None
        if vs is not None and bc is not None and bc.cuda_versions:
            top = max(bc.cuda_versions, key=Version.of)
            kit = next((k for k in facts.inv.cuda if k.short == top), None)
            out.append((f"VS generator's CUDA toolset ({vs.edition})", f"CUDA {top}.props", kit))
    return out


@check("F08")
def f08(facts: Facts) -> Finding:
    rows = pointers(facts)
    ev = [
        f"{what}: {value} -> {('CUDA ' + kit.short) if kit else 'no discovered toolkit'}" for what, value, kit in rows
    ]
    mixed = [k for k in facts.inv.cuda if any("mixed" in p or "versions" in p for p in k.problems) and k.components]
    ev += [f"{k.path}: {p}" for k in mixed for p in k.problems]
    shorts = {kit.short for _, _, kit in rows if kit is not None}
    want = facts.cuda.short if facts.cuda is not None else None
    if len(shorts) > 1:
        return finding(
            "F08",
            FAIL,
            f"this shell mixes CUDA {', '.join(sorted(shorts, key=Version.of))}",
            ev,
            fix="set CUDA_PATH, CUDAToolkit_ROOT, CUDACXX and PATH to one toolkit",
            fix_command=f"envmgr shell --cuda {want}" if want else "envmgr shell",
        )
    if mixed:
        return finding(
            "F08",
            FAIL,
            "pip CUDA components of mixed versions",
            ev,
            fix="install matching nvidia-* wheels (same CUDA X.Y for nvcc, crt, nvvm, runtime, cccl)",
        )
    sel = facts.selectors.cuda if facts.selectors is not None else None
    if sel and want and shorts and want not in shorts:
        return finding(
            "F08",
            WARN,
            f"this shell points at CUDA {shorts.pop()}, not the selected {want}",
            ev,
            fix_command=f"envmgr shell --cuda {want}",
        )
    if not rows:
        return finding("F08", OK, "nothing in this shell names a CUDA toolkit yet (envmgr shell sets them together)")
    return finding("F08", OK, f"everything names CUDA {shorts.pop()}" if shorts else "no conflicting CUDA", ev)


def _archs(facts: Facts) -> list[str]:
    m = re.search(r"CMAKE_CUDA_ARCHITECTURES=\"?([^\s\"]+)", cmake_args(facts.env))
    return [a for a in re.split(r"[;,]", m.group(1)) if a] if m else []


@check("F12")
def f12(facts: Facts) -> Finding:
    archs, env = _archs(facts), facts.env
    args = cmake_args(env)
    ev = [
        f"GPUs: {', '.join(g.name for g in facts.inv.gpus) or 'none visible'}",
        f"CMAKE_CUDA_ARCHITECTURES: {';'.join(archs) or 'not set (native when GGML_NATIVE is on)'}",
    ]
    if env.get("SOURCE_DATE_EPOCH"):
        return finding(
            "F12",
            WARN,
            "SOURCE_DATE_EPOCH is set: ggml turns GGML_NATIVE off and builds its long multi-arch list",
            ev,
            fix="unset SOURCE_DATE_EPOCH or pass -DCMAKE_CUDA_ARCHITECTURES=<cc>",
        )
    if archs or re.search(r"GGML_NATIVE=(OFF|0|FALSE|NO)\b", args, re.I):
        return finding("F12", OK, "the CUDA architectures are explicit", ev)
    if not facts.inv.gpus:
        return finding(
            "F12",
            WARN,
            "no GPU visible and no CMAKE_CUDA_ARCHITECTURES: 'native' would fall back to nvcc's default arch",
            ev + list(facts.inv.gpu_problems),
            fix="add -DCMAKE_CUDA_ARCHITECTURES=<cc> (e.g. 86) or -DGGML_NATIVE=OFF to CMAKE_ARGS",
        )
    over = [g for g in facts.inv.gpus if g.compute_cap_source.startswith("override")]
    if over:  # --gpu/ENVMGR_GPU: -arch=native still sees the real (maybe absent) GPU; recipes pass the override's
        cc = (over[0].compute_cap or "").replace(".", "")
        return finding(
            "F12",
            WARN,
            f"the GPU is an {over[0].compute_cap_source}: 'native' cannot see it",
            ev,
            fix=f"add -DCMAKE_CUDA_ARCHITECTURES={cc} to CMAKE_ARGS (a recipe, --recipe, does)",
        )
    return finding("F12", OK, "a GPU is visible for -arch=native", ev)


def cc_tuple(cc: str | None) -> Version | None:
    v = Version.parse(cc)
    return v.mm if v is not None and len(v) > 1 else None


def arch_cc(arch: str) -> Version | None:
    """`86`, `120a-real` -> (8, 6), (12, 0); `native`/`all` -> None."""
    m = re.match(r"(\d+)(\d)(?!\d)", arch)
    return Version((m.group(1), m.group(2))) if m else None


@check("F13")
def f13(facts: Facts) -> Finding:
    kit = facts.cuda
    if kit is None:
        return finding("F13", SKIPPED, "no CUDA toolkit")
    targets = [(g.name, cc) for g in facts.inv.gpus if (cc := cc_tuple(g.compute_cap))]
    targets += [(f"CMAKE_CUDA_ARCHITECTURES {a}", cc) for a in _archs(facts) if (cc := arch_cc(a))]
    if not targets:
        return finding("F13", SKIPPED, "no GPU and no explicit architectures to check")
    ev, bad = [f"chosen CUDA {kit.short}"], []
    for name, cc in targets:
        need = knowledge.min_cuda_for(cc)
        line = f"{name}: sm_{cc[0]}{cc[1]}" + (f", needs CUDA >= {need}" if need else "")
        why = _unsupported(kit.short, cc)
        if why:
            bad.append(f"{name} (sm_{cc[0]}{cc[1]}){why}")
            floor = knowledge.dropped_below(kit.short) or ""
            line += (
                f"; CUDA {kit.major_minor[0]} supports sm_{floor.replace('.', '')} and newer only"
                if "dropped" in why
                else ""
            )
        ev.append(line)
    if bad:
        fix = "use CUDA 12.x for GPUs below sm_75" if any("dropped" in b for b in bad) else "install a newer CUDA"
        fits = [k for k in facts.inv.cuda if k.nvcc and not any(_unsupported(k.short, cc) for _, cc in targets)]
        return finding(
            "F13", FAIL, "; ".join(bad), ev, fix=fix, fix_command=f"envmgr shell --cuda {fits[0].short}" if fits else ""
        )
    return finding("F13", OK, f"CUDA {kit.short} supports every target architecture", ev)


def _unsupported(short: str, cc: Version) -> str:
    """Why CUDA `short` cannot build for compute capability cc ("" when it can)."""
    need = knowledge.min_cuda_for(cc)
    floor = knowledge.dropped_below(short)
    if need and not knowledge.cuda_at_least(short, need):
        return f" needs CUDA {need} or newer"
    if floor and cc < Version.of(floor):
        return f": CUDA {mm(short).major} dropped architectures below sm_{floor.replace('.', '')}"
    return ""


@check("F16", WINDOWS)
def f16(facts: Facts) -> Finding:
    host, bad, ev = facts.host, [], []
    for name in ("CUDA_PATH", "HIP_PATH"):
        value = facts.env.get(name)
        if not value:
            continue
        for sub in ("bin", "lib"):
            folder = join(host, value, sub)
            there = host.is_dir(folder)
            ev.append(f"{name}\\{sub} = {folder}: {'exists' if there else 'MISSING'}")
            if not there:
                bad.append(f"{name}\\{sub}")
    if not ev:
        return finding("F16", OK, "CUDA_PATH/HIP_PATH not set")
    if bad:
        return finding(
            "F16",
            FAIL,
            f"{', '.join(bad)} missing: import llama_cpp raises [WinError 3]",
            ev,
            fix="correct or unset CUDA_PATH/HIP_PATH (uninstallers leave them behind)",
            fix_command="envmgr shell",
        )
    return finding("F16", OK, "CUDA_PATH/HIP_PATH folders exist", ev)


@check("F17")
def f17(facts: Facts) -> Finding:
    kit = facts.cuda
    if kit is None or not facts.inv.gpus:
        return finding(
            "F17", SKIPPED, "no GPU driver visible" if kit else "no CUDA toolkit", list(facts.inv.gpu_problems)
        )
    driver = facts.inv.gpus[0].driver_version
    need = knowledge.driver_minimum(kit.short, facts.windows)
    if need is None or not driver:
        return finding("F17", SKIPPED, f"no driver minimum known for CUDA {kit.short}")
    ev = [f"driver {driver} ({facts.inv.gpus[0].name})", f"CUDA {kit.major_minor[0]}.x needs driver >= {need}"]
    if Version.of(driver) < Version.of(need):
        fits = [
            k
            for k in facts.inv.cuda
            if k.nvcc
            and (m := knowledge.driver_minimum(k.short, facts.windows))
            and Version.of(driver) >= Version.of(m)
        ]
        return finding(
            "F17",
            FAIL,
            f"driver {driver} is too old for CUDA {kit.short}",
            ev,
            fix=f"update the NVIDIA driver to {need} or newer, or use an older CUDA",
            fix_command=f"envmgr shell --cuda {fits[0].short}" if fits else "",
        )
    return finding("F17", OK, f"driver {driver} supports CUDA {kit.short}", ev)
