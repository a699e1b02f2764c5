"""Recipes: the built-in files, the decisions they make on a machine, and bad recipe files."""

from __future__ import annotations

import shlex

import pytest

from envmgr.errors import InputFileError, NoMatchError, UsageError
from envmgr.recipes.recipe import (
    RecipeContext,
    apply_recipe,
    cuda_architectures,
    get_recipe,
    load_recipes,
    parse_recipe,
)


def ops(delta):
    return {(o.name, o.op): o.value for o in delta.ops}


def test_builtin_recipes_are_listed(cli):
    assert {"llama-cpp-python", "llama-cpp-python-prebuilt", "torch-extension"} <= set(load_recipes())
    result = cli("recipes", "--json")
    assert {r["name"] for r in result.json()["recipes"]} >= {"llama-cpp-python", "torch-extension"}


def test_llama_on_windows_with_ninja_and_a_gpu():
    ctx = RecipeContext(
        "windows",
        cuda_short="12.4",
        cuda_path="C:\\CUDA\\v12.4",
        nvcc="C:\\CUDA\\v12.4\\bin\\nvcc.exe",
        vs_path="C:\\VS",
        vs_major=17,
        gpu_caps=("8.9", "8.6", "8.9"),
        ninja="C:\\VS\\ninja.exe",
        temp="C:\\Users\\Jörg\\AppData\\Local\\Temp",
        cpu_count=16,
    )
    delta, notes = apply_recipe(get_recipe("llama-cpp-python"), ctx)
    got = ops(delta)
    assert shlex.split(got[("CMAKE_ARGS", "set")]) == ["-DGGML_CUDA=on", "-DCMAKE_CUDA_ARCHITECTURES=86-real;89-real"]
    assert got[("CMAKE_GENERATOR", "set")] == "Ninja"
    assert ("CMAKE_GENERATOR_INSTANCE", "set") not in got
    assert got[("CUDACXX", "set")] == "C:\\CUDA\\v12.4\\bin\\nvcc.exe"
    assert got[("TEMP", "set")] == got[("TMP", "set")] == "C:\\envmgr-tmp"
    assert got[("CMAKE_BUILD_PARALLEL_LEVEL", "set")] == "16"
    assert {("LLAMA_CUBLAS", "unset"), ("FORCE_CMAKE", "unset")} <= set(got)
    assert "-allow-unsupported-compiler" not in got[("CMAKE_ARGS", "set")]
    assert any("the GPUs found" in n for n in notes)


def test_llama_without_ninja_pins_the_vs_generator_and_names_the_toolkit_when_msbuild_lacks_it():
    ctx = RecipeContext(
        "windows",
        cuda_short="12.4",
        cuda_path="C:\\CUDA\\v12.4",
        vs_path="C:\\BT",
        vs_major=17,
        toolset="14.44.35207",
        cuda_in_build_customizations=False,
        temp="C:\\t",
    )
    got = ops(apply_recipe(get_recipe("llama-cpp-python"), ctx)[0])
    assert got[("CMAKE_GENERATOR", "set")] == "Visual Studio 17 2022"
    assert got[("CMAKE_GENERATOR_INSTANCE", "set")] == "C:\\BT"
    assert got[("CMAKE_GENERATOR_TOOLSET", "set")] == "version=14.44,cuda=C:\\CUDA\\v12.4"
    assert ("TEMP", "set") not in got
    ctx26 = RecipeContext("windows", cuda_short="13.2", vs_path="C:\\VS18", vs_major=18)
    assert (
        ops(apply_recipe(get_recipe("llama-cpp-python"), ctx26)[0])[("CMAKE_GENERATOR", "set")]
        == "Visual Studio 18 2026"
    )


def test_never_native_without_a_gpu_and_arch_list_wins():
    assert cuda_architectures(RecipeContext("linux", cuda_short="13.0"))[0] == "75;80;86;89;90;100;120"
    assert "native" not in cuda_architectures(RecipeContext("linux", cuda_short="11.8"))[0]
    assert cuda_architectures(RecipeContext("linux", gpu_caps=("9.0",), arch_list="8.6,89"))[0] == "86;89"


def test_allow_unsupported_compiler_only_on_request():
    ctx = RecipeContext("linux", cuda_short="12.4", allow_unsupported_compiler=True, gpu_caps=("8.9",))
    args = shlex.split(ops(apply_recipe(get_recipe("llama-cpp-python"), ctx)[0])[("CMAKE_ARGS", "set")])
    assert args[-1] == "-DCMAKE_CUDA_FLAGS=-allow-unsupported-compiler"


def test_torch_extension_sets_arch_list_and_sdk_only_on_windows():
    win = ops(apply_recipe(get_recipe("torch-extension"), RecipeContext("windows", gpu_caps=("8.6", "12.0")))[0])
    assert win[("TORCH_CUDA_ARCH_LIST", "set")] == "8.6;12.0" and win[("DISTUTILS_USE_SDK", "set")] == "1"
    lin = ops(apply_recipe(get_recipe("torch-extension"), RecipeContext("linux", gpu_caps=("9.0",)))[0])
    assert lin[("TORCH_CUDA_ARCH_LIST", "set")] == "9.0" and ("DISTUTILS_USE_SDK", "set") not in lin


def test_prebuilt_variant_checks_the_folder_holds_the_cuda_backend():
    recipe = get_recipe("llama-cpp-python-prebuilt")
    ok = RecipeContext("windows", params=(("lib_path", "C:\\llama\\bin"),), lib_files=("llama.dll", "GGML-CUDA.dll"))
    got = ops(apply_recipe(recipe, ok)[0])
    assert got[("LLAMA_CPP_LIB_PATH", "set")] == "C:\\llama\\bin" and ("LLAMA_CPP_LIB", "unset") in got
    with pytest.raises(UsageError, match="ggml-cuda.dll"):
        apply_recipe(recipe, RecipeContext("windows", params=(("lib_path", "C:\\x"),), lib_files=("llama.dll",)))
    with pytest.raises(UsageError, match="lib_path"):
        apply_recipe(recipe, RecipeContext("windows"))


def test_bad_recipe_key_names_file_key_and_allowed_keys():
    with pytest.raises(InputFileError) as err:
        parse_recipe('schema = 1\nname = "x"\nkind = "cmake"\ncmake_arg = []\n', "/cfg/recipes/x.toml")
    assert "/cfg/recipes/x.toml" in err.value.message and "'cmake_arg'" in err.value.message
    assert "cmake_args" in err.value.message


def test_user_recipes_override_builtins(tmp_path, monkeypatch):
    folder = tmp_path / "recipes"
    folder.mkdir()
    (folder / "mine.toml").write_text('schema = 1\nname = "llama-cpp-python"\ndescription = "mine"\nkind = "cmake"\n')
    monkeypatch.setenv("ENVMGR_CONFIG_DIR", str(tmp_path))
    assert get_recipe("llama-cpp-python").description == "mine"


def test_unknown_recipe_lists_the_valid_ones():
    with pytest.raises(NoMatchError) as err:
        get_recipe("pytorch")
    assert "llama-cpp-python" in err.value.remedy and err.value.exit_code == 3


@pytest.mark.posix
def test_run_log_diagnoses_a_real_failure_log(tmp_path):
    """`envmgr run --log` on a command that prints a real CMake failure from the corpus and fails."""
    import os
    import subprocess
    import sys

    from tests.conftest import CORPUS, ROOT

    log = tmp_path / "build.log"
    sample = CORPUS / "cmake-no-cuda-toolset-found-vs2019-cmake3.24.txt"

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "envmgr",
            "run",
            "--from",
            str(_linux_snapshot(tmp_path)),
            "--log",
            str(log),
            "--",
            "sh",
            "-c",
            f"cat '{sample}'; exit 1",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"},
    )
    assert done.returncode == 1
    assert "No CUDA toolset found" in log.read_text()
    assert "F01" in done.stderr and "fix-msbuild" in done.stderr


@pytest.mark.posix
def test_run_log_says_what_to_do_for_a_failure_outside_the_catalog(tmp_path):
    """`envmgr run --log` on a command that stops on a full disk (pip's own words): no catalog id, but the kind of
    stop and its advice; a command whose output shows no such stop gets the plain line only (the other reasons
    doctor gives speak of pastes, not of a run's whole log)."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    def run(script: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "envmgr",
                "run",
                "--from",
                str(_linux_snapshot(tmp_path)),
                "--log",
                str(tmp_path / "build.log"),
                "--",
                "sh",
                "-c",
                script,
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"},
        )

    full = run(
        "echo 'Collecting llama-cpp-python'; echo 'ERROR: Could not install packages due to an OSError: "
        "[Errno 28] No space left on device'; exit 1"
    )
    assert full.returncode == 1
    assert "no known failure signature in" in full.stderr
    assert "disk filled up" in full.stderr and "free space" in full.stderr and "line 2:" in full.stderr
    plain = run("echo 'compiling'; exit 2")
    assert plain.returncode == 2
    assert "no known failure signature in" in plain.stderr and "why:" not in plain.stderr


def _linux_snapshot(tmp_path):
    path = tmp_path / "env.toml"
    path.write_text('schema = 1\nplatform = "linux"\n[env]\nX = "1"\n', encoding="utf-8")
    return path
