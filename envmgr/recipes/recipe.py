"""Build recipes: what a CUDA package's build needs on top of the snapshot (templates/recipes/*.toml).

A recipe file is data; the few decisions that depend on the machine (generator, CUDA
architectures, TEMP) are made here, purely, from a RecipeContext.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from envmgr import knowledge
from envmgr.errors import InputFileError, NoMatchError, UsageError
from envmgr.files.schema import RECIPE, check, check_env, check_version
from envmgr.files.tomlread import load_toml, read_text_file
from envmgr.host import dirs
from envmgr.snapshot.envdelta import SET, UNSET, EnvDelta, VarOp

SCHEMA = 1


@dataclass(frozen=True)
class Recipe:
    name: str
    description: str
    kind: str
    origin: str
    package: str = ""
    cmake_args: tuple[str, ...] = ()
    cuda_architectures: bool = False
    generator: str = "auto"
    short_temp: bool = False
    drop_env: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    params: tuple[tuple[str, str], ...] = ()
    required_files: tuple[tuple[str, tuple[str, ...]], ...] = ()
    architectures_env: str = ""  # a variable for the CUDA architectures instead of CMAKE_ARGS (pywhispercpp)
    # a CMake variable of the project's own for plain architectures ("86;89"), instead of
    # CMAKE_CUDA_ARCHITECTURES, which such a project overwrites (bitsandbytes' COMPUTE_CAPABILITY)
    architectures_define: str = ""


@dataclass(frozen=True)
class RecipeContext:
    platform: str
    cuda_short: str = ""
    cuda_path: str = ""
    nvcc: str = ""
    vs_path: str = ""
    vs_major: int | None = None
    toolset: str = ""
    cuda_in_build_customizations: bool = True
    gpu_caps: tuple[str, ...] = ()  # "8.9", ...
    ninja: str | None = None
    arch_list: str | None = None  # --cuda-arch "86;89"
    allow_unsupported_compiler: bool = False
    params: tuple[tuple[str, str], ...] = ()
    system_drive: str = "C:"
    temp: str = ""
    cpu_count: int = 1
    memory_mib: int | None = None  # physical memory: MAX_JOBS for torch extensions
    lib_files: tuple[str, ...] = field(default=())  # files in params' lib_path (prebuilt-lib)


def recipe_dirs() -> list[Path]:
    """Built-in recipes, then the user's (platformdirs config dir), which override by name."""
    return [dirs.shipped("templates", "recipes"), dirs.config_dir() / "recipes"]


def parse_recipe(text: str, origin: str) -> Recipe:
    data = load_toml(text, origin, "recipe", "fix the TOML at that line")
    check_version(data, (SCHEMA,), origin, "recipe", "set schema = 1 (see docs/recipes.md)")
    check(data, RECIPE, origin, "recipe", "see docs/recipes.md")
    check_env(data.get("env", {}), [], "env", None, origin, "recipe", "see docs/recipes.md")
    check_env({}, data.get("drop_env", []), "drop_env", None, origin, "recipe", "see docs/recipes.md")
    if "name" in data and not data["name"].strip():
        raise InputFileError(
            f"{origin}: 'name' is empty", "give the recipe a name, or drop the key (the file name is used)"
        )
    g = data.get
    return Recipe(
        name=g("name") or Path(origin).stem,
        description=g("description", ""),
        kind=data["kind"],
        origin=origin,
        package=g("package", ""),
        cmake_args=tuple(g("cmake_args", ())),
        cuda_architectures=g("cuda_architectures", False),
        generator=g("generator", "auto"),
        short_temp=g("short_temp", False),
        drop_env=tuple(g("drop_env", ())),
        env=tuple(g("env", {}).items()),
        params=tuple(g("params", {}).items()),
        required_files=tuple((k, tuple(v)) for k, v in g("required_files", {}).items()),
        architectures_env=g("architectures_env", ""),
        architectures_define=g("architectures_define", ""),
    )


def load_recipes(problems: list[tuple[str, InputFileError]] | None = None) -> dict[str, Recipe]:
    """Built-in recipes, then the user's. A user file that cannot be read or parsed is skipped and
    added to `problems` (it must not hide the built-in recipes); a broken built-in one is raised."""

    found: dict[str, Recipe] = {}
    for index, folder in enumerate(recipe_dirs()):
        for path in sorted(folder.glob("*.toml")) if os.path.isdir(folder) else []:  # pathlib may raise
            try:
                text = read_text_file(path, "recipe", "check the recipe file", "a recipe is a TOML file")
                recipe = parse_recipe(text, str(path))
            except InputFileError as exc:
                if index == 0:
                    raise
                if problems is not None:
                    problems.append((path.stem, exc))
                continue
            found[recipe.name] = recipe
    return found


def get_recipe(name: str, warn: Callable[[str], object] | None = None) -> Recipe:
    problems: list[tuple[str, InputFileError]] = []
    recipes = load_recipes(problems)
    for stem, problem in problems:
        if warn is not None and stem != name:
            warn(f"skipped {problem.message}")
    if name not in recipes:
        broken = next((p for stem, p in problems if stem == name), None)
        if broken is not None:
            raise broken
        raise NoMatchError(
            f"unknown recipe {name!r}",
            "pick one of: " + ", ".join(sorted(recipes)),
            details=tuple(f"{r.name}: {r.description}" for r in recipes.values()),
        )
    return recipes[name]


def default_architectures(gpu_caps: Iterable[str | None], cuda_short: str) -> tuple[tuple[str, ...], str]:
    """THE architecture rule (docs/recipes.md, "CUDA architectures"): the GPUs found; with no GPU
    visible, the fixed list for the toolkit. The recipes build it and doctor's F20 measures against
    it, so envmgr never warns about its own choice. Returns (architectures like ("86", "89"), why)."""
    caps = sorted({c.replace(".", "") for c in gpu_caps if c}, key=int)
    if caps:
        return tuple(caps), "the GPUs found"
    # never "native" without a GPU: it needs one at configure time (knowledge.CUDA_RELEASES)
    why = f"no GPU visible: a fixed list for CUDA {cuda_short or '?'} (never 'native' without a GPU)"
    return knowledge.fallback_architectures(cuda_short), why


def cuda_architectures(ctx: RecipeContext) -> tuple[str, str]:
    """(CMake list like "86;89", where it came from): --cuda-arch, else `default_architectures`."""
    if ctx.arch_list:
        listed = [a.strip().replace(".", "") for a in ctx.arch_list.replace(",", ";").split(";") if a.strip()]
        return ";".join(listed), "--cuda-arch"
    archs, why = default_architectures(ctx.gpu_caps, ctx.cuda_short)
    return ";".join(archs), why


def _vs_generator(major: int | None) -> str:
    return knowledge.generator(major) or knowledge.DEFAULT_GENERATOR


def apply_recipe(recipe: Recipe, ctx: RecipeContext) -> tuple[EnvDelta, tuple[str, ...]]:
    """The recipe's variables for this machine, and notes that explain each decision."""
    ops: list[VarOp] = [VarOp(name, UNSET) for name in recipe.drop_env]
    notes: list[str] = []
    ops += [VarOp(k, SET, v) for k, v in recipe.env]
    if recipe.kind == "cmake":
        ops += _cmake_ops(recipe, ctx, notes)
    elif recipe.kind == "torch-extension":
        ops = _torch_ops(ops, ctx, notes)
    elif recipe.kind == "prebuilt-lib":
        ops += _prebuilt_ops(recipe, ctx, notes)
    if recipe.short_temp and ctx.platform == "windows" and not _short_ascii(ctx.temp):
        short = f"{ctx.system_drive}\\envmgr-tmp"
        ops += [VarOp("TEMP", SET, short), VarOp("TMP", SET, short)]
        notes.append(f"TEMP/TMP={short}: {ctx.temp or '(unset)'} is long, has spaces or non-ASCII characters")
    return EnvDelta(ctx.platform, tuple(ops)), tuple(notes)


# One nvcc/cicc job of a heavy extension (flash-attn, xformers) takes several GiB: with as many jobs as
# cores, ninja exhausts the memory (flash-attn's README: MAX_JOBS when RAM is short; xformers: OOM).
MIB_PER_JOB = 4096


def max_jobs(cpu_count: int, memory_mib: int | None) -> tuple[int, str]:
    """(MAX_JOBS, why): the cores, but no more than one job per MIB_PER_JOB of memory."""
    if not memory_mib:
        return max(1, cpu_count), f"{cpu_count} cores (memory unknown)"
    by_memory = max(1, memory_mib // MIB_PER_JOB)
    jobs = max(1, min(cpu_count, by_memory))
    return jobs, f"{cpu_count} cores, {memory_mib // 1024} GiB memory at {MIB_PER_JOB // 1024} GiB a job"


def _torch_ops(ops: list[VarOp], ctx: RecipeContext, notes: list[str]) -> list[VarOp]:
    archs, why = cuda_architectures(ctx)
    listed = ";".join(f"{a[:-1]}.{a[-1]}" for a in archs.split(";"))
    ops.append(VarOp("TORCH_CUDA_ARCH_LIST", SET, listed))
    notes.append(f"TORCH_CUDA_ARCH_LIST={listed} from {why}")
    jobs, how = max_jobs(ctx.cpu_count, ctx.memory_mib)
    ops.append(VarOp("MAX_JOBS", SET, str(jobs)))
    notes.append(f"MAX_JOBS={jobs} from {how}")
    if ctx.ninja:
        notes.append(f"ninja ({ctx.ninja}): torch.utils.cpp_extension builds in parallel")
    else:
        notes.append("no ninja on PATH: torch.utils.cpp_extension compiles one file at a time (pip install ninja)")
    if ctx.platform != "windows":
        ops = [op for op in ops if op.name != "DISTUTILS_USE_SDK"]
    return ops


def _short_ascii(path: str) -> bool:
    return bool(path) and path.isascii() and " " not in path and len(path) <= 40


def _cmake_ops(recipe: Recipe, ctx: RecipeContext, notes: list[str]) -> list[VarOp]:
    args = list(recipe.cmake_args)
    ops: list[VarOp] = []
    if recipe.cuda_architectures and recipe.architectures_define:
        # plain numbers: the project makes each one real and adds PTX for the newest itself
        archs, why = cuda_architectures(ctx)
        args.append(f"-D{recipe.architectures_define}={archs}")
        notes.append(f"CUDA architectures {archs} as {recipe.architectures_define} from {why}")
    elif recipe.cuda_architectures:
        archs, why = cuda_architectures(ctx)
        if not ctx.arch_list and ctx.gpu_caps:
            # what `native` would give: machine code for these GPUs only, no PTX (measured on an H200:
            # "90" also embeds PTX and made the wheel 270 MB instead of 152 MB)
            archs = ";".join(f"{a}-real" for a in archs.split(";"))
        if recipe.architectures_env:
            ops.append(VarOp(recipe.architectures_env, SET, archs))
            notes.append(f"{recipe.architectures_env}={archs} from {why}")
        else:
            args.append(f"-DCMAKE_CUDA_ARCHITECTURES={archs}")
            notes.append(f"CUDA architectures {archs} from {why}")
    if ctx.allow_unsupported_compiler:
        args.append("-DCMAKE_CUDA_FLAGS=-allow-unsupported-compiler")
        notes.append("-allow-unsupported-compiler: you asked for it; nvcc's host compiler check is skipped")
    # scikit-build-core splits CMAKE_ARGS with shlex: quote each argument so it survives intact.
    ops.append(VarOp("CMAKE_ARGS", SET, " ".join(shlex.quote(a) for a in args)))
    if ctx.nvcc:
        ops.append(VarOp("CUDACXX", SET, ctx.nvcc))
    ops.append(VarOp("CMAKE_BUILD_PARALLEL_LEVEL", SET, str(max(1, ctx.cpu_count))))
    if recipe.generator == "auto" and ctx.ninja:
        ops.append(VarOp("CMAKE_GENERATOR", SET, "Ninja"))
        notes.append(
            f"generator Ninja ({ctx.ninja}): no MSBuild CUDA integration needed"
            if ctx.platform == "windows"
            else f"generator Ninja ({ctx.ninja})"
        )
    elif recipe.generator == "auto" and ctx.platform == "windows" and ctx.vs_path:
        gen = _vs_generator(ctx.vs_major)
        ops += [
            VarOp("CMAKE_GENERATOR", SET, gen),
            VarOp("CMAKE_GENERATOR_INSTANCE", SET, ctx.vs_path),
            VarOp("CMAKE_GENERATOR_PLATFORM", SET, "x64"),
        ]
        toolset = [f"version={'.'.join(ctx.toolset.split('.')[:2])}"] if ctx.toolset else []
        if not ctx.cuda_in_build_customizations and ctx.cuda_path:
            toolset.append(f"cuda={ctx.cuda_path}")
            notes.append(
                f"this Visual Studio has no CUDA {ctx.cuda_short} BuildCustomizations: "
                f"CMAKE_GENERATOR_TOOLSET names the toolkit (or run `envmgr fix-msbuild`)"
            )
        if toolset:
            ops.append(VarOp("CMAKE_GENERATOR_TOOLSET", SET, ",".join(toolset)))
        notes.append(
            f"no ninja on PATH: generator {gen} pinned to {ctx.vs_path} (pip install ninja for the faster route)"
        )
    return ops


def _prebuilt_ops(recipe: Recipe, ctx: RecipeContext, notes: list[str]) -> list[VarOp]:
    params = dict(ctx.params)
    lib = params.get("lib_path")
    if not lib:
        raise UsageError(
            f"recipe {recipe.name} needs --recipe-param lib_path=FOLDER",
            dict(recipe.params).get("lib_path", "the folder of your llama.cpp build"),
        )
    wanted = dict(recipe.required_files).get(ctx.platform, ())
    have = {f.lower() for f in ctx.lib_files}
    missing = [f for f in wanted if f.lower() not in have]
    if missing:
        raise UsageError(
            f"{lib} does not hold {', '.join(missing)}: not a CUDA build of llama.cpp",
            "build llama.cpp with -DGGML_CUDA=on and point lib_path at the folder with its libraries",
        )
    notes.append(f"LLAMA_CPP_LIB_PATH={lib}: llama_cpp will load this CUDA build")
    return [VarOp("LLAMA_CPP_LIB_PATH", SET, lib)]
