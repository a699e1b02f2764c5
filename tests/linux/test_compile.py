"""Real compiles through envmgr: a tiny CUDA library built with CMake + Ninja under each toolkit."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import need

pytestmark = [pytest.mark.linux, pytest.mark.slow]
PROJECT = Path(__file__).parent / "tinycuda"


def envmgr(*args, cache):
    return subprocess.run(
        [sys.executable, "-m", "envmgr", *args],
        capture_output=True,
        text=True,
        env={**_env(), "ENVMGR_CACHE_DIR": str(cache)},
    )


def _env():
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith(("CUDA", "ENVMGR_"))}


@pytest.mark.parametrize("version", ["13.0", "13.2"])
def test_envmgr_run_builds_a_tiny_cuda_library_with_the_chosen_toolkit(version, tmp_path, cuda_13_0, pip_cuda_venv):
    need(shutil.which("cmake") is not None and shutil.which("ninja") is not None, "cmake and ninja are needed")
    python = str(pip_cuda_venv / "bin" / "python")
    build = tmp_path / "build"
    configure = envmgr(
        "run",
        "--cuda",
        version,
        "--python",
        python,
        "--",
        "cmake",
        "-S",
        str(PROJECT),
        "-B",
        str(build),
        "-G",
        "Ninja",
        "-DCMAKE_CUDA_ARCHITECTURES=75",
        cache=tmp_path / "cache",
    )
    assert configure.returncode == 0, configure.stdout + configure.stderr
    found = re.search(r"envmgr-test CUDA compiler version: (\S+)", configure.stdout)
    assert found and found.group(1).startswith(version + "."), configure.stdout
    compiler = re.search(r"envmgr-test CUDA compiler: (\S+)", configure.stdout).group(1)
    if version == "13.2":
        assert "nvidia/cu13/bin/nvcc" in compiler
    else:
        assert compiler == f"{cuda_13_0}/bin/nvcc"
    built = envmgr(
        "run", "--cuda", version, "--python", python, "--", "cmake", "--build", str(build), cache=tmp_path / "cache"
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert (build / "libtiny.so").exists()


def test_eval_of_sh_export_gives_a_shell_with_cuda_13_0(tmp_path, cuda_13_0):
    """The issue's acceptance line: eval "$(envmgr export --cuda 13.0 --format sh)"."""
    script = (
        f'eval "$({sys.executable} -m envmgr export --cuda 13.0 --format sh)" && '
        'nvcc --version | grep release && printf "%s\\n" "$CUDA_HOME"'
    )
    done = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        env={**_env(), "ENVMGR_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert "release 13.0, V13.0.88" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == str(cuda_13_0)


def test_recipe_cmake_args_survive_scikit_build_cores_shlex_split(tmp_path, cuda_13_0):
    """The issue's acceptance line for recipes, and that shlex gives back each argument intact."""
    import shlex

    done = envmgr(
        "run",
        "--cuda",
        "13.0",
        "--recipe",
        "llama-cpp-python",
        "--arch-list",
        "86;89",
        "--",
        "sh",
        "-c",
        'echo "$CMAKE_ARGS"',
        cache=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert shlex.split(done.stdout.strip()) == ["-DGGML_CUDA=on", "-DCMAKE_CUDA_ARCHITECTURES=86;89"]


def test_run_returns_the_child_exit_code_and_127_for_a_missing_program(tmp_path, cuda_13_0):
    assert envmgr("run", "--cuda", "13.0", "--", "sh", "-c", "exit 7", cache=tmp_path).returncode == 7
    missing = envmgr("run", "--cuda", "13.0", "--", "no-such-program-xyz", cache=tmp_path)
    assert missing.returncode == 127
    assert "no-such-program-xyz: command not found" in missing.stderr
