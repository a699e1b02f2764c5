"""The built-in recipes of issue 21: stable-diffusion-cpp-python, pywhispercpp, torch-extension."""

from __future__ import annotations

import shlex

from envmgr.recipes.recipe import RecipeContext, apply_recipe, get_recipe, max_jobs, parse_recipe


def _vars(name: str, ctx: RecipeContext) -> tuple[dict, list, tuple]:
    delta, notes = apply_recipe(get_recipe(name), ctx)
    return (
        {op.name: op.value for op in delta.ops if op.op == "set"},
        [op.name for op in delta.ops if op.op == "unset"],
        notes,
    )


def test_stable_diffusion_turns_on_sd_cuda_for_the_gpus_found():
    env, _, _ = _vars(
        "stable-diffusion-cpp-python",
        RecipeContext("linux", cuda_short="13.0", gpu_caps=("9.0",), ninja="/usr/bin/ninja", cpu_count=16),
    )
    assert env["CMAKE_ARGS"] == "-DSD_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90-real"
    assert env["CMAKE_GENERATOR"] == "Ninja"


def test_pywhispercpp_gets_its_switches_as_variables_and_nothing_that_picks_another_backend():
    """pywhispercpp 1.5.1's setup.py passes every variable to CMake as -DNAME=VALUE and splits CMAKE_ARGS
    on spaces: the architectures travel as a variable, with no quotes to survive."""
    env, dropped, _ = _vars("pywhispercpp", RecipeContext("linux", cuda_short="13.0", gpu_caps=("8.6", "8.9")))
    assert env["GGML_CUDA"] == "1" and env["CMAKE_CUDA_ARCHITECTURES"] == "86-real;89-real"
    assert "'" not in env["CMAKE_ARGS"] and "ARCHITECTURES" not in env["CMAKE_ARGS"]
    assert {"GGML_VULKAN", "GGML_METAL", "WHISPER_COREML", "LLAMA_CUBLAS"} <= set(dropped)
    # a non-editable build gets no RUNPATH of its own: without $ORIGIN, _pywhispercpp cannot find
    # libwhisper.so.1 beside it (verify on the H100, bench/results/2026-11-25-issue21-gpu-proof.md)
    assert env["CMAKE_INSTALL_RPATH"] == "$ORIGIN" and env["CMAKE_BUILD_WITH_INSTALL_RPATH"] == "ON"


def test_torch_extension_archs_max_jobs_and_distutils_only_on_windows():
    env, _, notes = _vars(
        "torch-extension",
        RecipeContext("windows", cuda_short="12.4", gpu_caps=("8.9",), cpu_count=32, memory_mib=32768),
    )
    assert env["TORCH_CUDA_ARCH_LIST"] == "8.9" and env["DISTUTILS_USE_SDK"] == "1"
    assert env["MAX_JOBS"] == "8" and any("MAX_JOBS=8" in n and "32 GiB" in n for n in notes)
    assert any("no ninja" in n for n in notes)
    linux, _, _ = _vars(
        "torch-extension",
        RecipeContext(
            "linux", cuda_short="13.0", gpu_caps=("9.0",), cpu_count=16, memory_mib=131072, ninja="/usr/bin/ninja"
        ),
    )
    assert "DISTUTILS_USE_SDK" not in linux and linux["MAX_JOBS"] == "16"


def test_max_jobs_rule():
    assert max_jobs(64, 16384)[0] == 4  # memory bound: 4 GiB a job
    assert max_jobs(4, 1 << 20)[0] == 4  # core bound
    assert max_jobs(8, None)[0] == 8  # memory unknown: the cores
    assert max_jobs(1, 1024)[0] == 1  # never 0


def test_bitsandbytes_selects_the_cuda_backend_and_its_own_architecture_variable():
    """bitsandbytes 0.50.1's CMakeLists builds the CPU library unless COMPUTE_BACKEND=cuda and overwrites
    CMAKE_CUDA_ARCHITECTURES from COMPUTE_CAPABILITY (plain numbers; it adds -real and the newest PTX itself)."""
    env, dropped, notes = _vars(
        "bitsandbytes",
        RecipeContext("linux", cuda_short="13.0", gpu_caps=("9.0",), ninja="/usr/bin/ninja", cpu_count=16),
    )
    assert env["CMAKE_ARGS"] == "-DCOMPUTE_BACKEND=cuda -DCOMPUTE_CAPABILITY=90"
    assert "CMAKE_CUDA_ARCHITECTURES" not in env["CMAKE_ARGS"] and "-real" not in env["CMAKE_ARGS"]
    assert env["CMAKE_GENERATOR"] == "Ninja" and "BNB_SKIP_CMAKE" in dropped
    assert any("COMPUTE_CAPABILITY from the GPUs found" in n for n in notes)


def test_bitsandbytes_architectures_survive_scikit_build_cores_split():
    """Two GPUs, or none (the toolkit's fixed list): the ';' list stays one argument after shlex.split,
    as scikit-build-core splits CMAKE_ARGS."""
    two, _, _ = _vars("bitsandbytes", RecipeContext("windows", cuda_short="12.8", gpu_caps=("8.6", "8.9")))
    assert shlex.split(two["CMAKE_ARGS"]) == ["-DCOMPUTE_BACKEND=cuda", "-DCOMPUTE_CAPABILITY=86;89"]
    none, _, notes = _vars("bitsandbytes", RecipeContext("linux", cuda_short="13.0"))
    assert shlex.split(none["CMAKE_ARGS"])[1] == "-DCOMPUTE_CAPABILITY=75;80;86;89;90;100;120"
    assert any("no GPU visible" in n for n in notes)


def test_a_user_recipe_may_name_its_own_architecture_variable():
    r = parse_recipe(
        'schema = 1\nkind = "cmake"\ncuda_architectures = true\narchitectures_define = "GPU_ARCHS"\n', "mine.toml"
    )
    delta, _ = apply_recipe(r, RecipeContext("linux", cuda_short="13.0", arch_list="8.9"))
    assert {op.name: op.value for op in delta.ops}["CMAKE_ARGS"] == "-DGPU_ARCHS=89"
