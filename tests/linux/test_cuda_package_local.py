"""Issue 21's done-when, here (no GPU): a small CMake package with a CUDA kernel, built by nvcc 13.0
through a user recipe, is cached and installed with its cubins listed; the same package built without
CUDA is refused; `envmgr verify` answers for it: device code found, no GPU here, exit 1.

The package's PEP 517 backend is in-tree (no network): it runs CMake with the recipe's CMAKE_ARGS and
CUDACXX, then packs the built library into a wheel. CMake decides CUDA or not (-DTINYK_CUDA=ON/OFF).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.linux.test_wheels_e2e import make_venv

pytestmark = [pytest.mark.linux, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "tests" / "corpus" / "devicecode" / "tiny_kernel.cu"

CMAKELISTS = """cmake_minimum_required(VERSION 3.18)
project(tinyk LANGUAGES C)
option(TINYK_CUDA "build the CUDA kernel" OFF)
if(TINYK_CUDA)
  enable_language(CUDA)
  add_library(tinyk SHARED tiny_kernel.cu)
else()
  add_library(tinyk SHARED plain.c)
endif()
"""
BACKEND = """
import base64, hashlib, os, shlex, subprocess, tempfile, zipfile

def _line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    src = os.path.dirname(os.path.abspath(__file__))
    build = tempfile.mkdtemp(prefix="tinyk-build-")
    subprocess.run(["cmake", "-S", src, "-B", build, *shlex.split(os.environ.get("CMAKE_ARGS", ""))], check=True)
    subprocess.run(["cmake", "--build", build], check=True)
    files = {"tinyk/__init__.py": b"", "tinyk/libtinyk.so": open(os.path.join(build, "libtinyk.so"), "rb").read()}
    dist = "tinyk-0.1.0.dist-info"
    files[dist + "/METADATA"] = b"Metadata-Version: 2.1\\nName: tinyk\\nVersion: 0.1.0\\n"
    files[dist + "/WHEEL"] = b"Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: false\\nTag: py3-none-linux_x86_64\\n"
    files[dist + "/top_level.txt"] = b"tinyk\\n"
    files[dist + "/RECORD"] = ("\\n".join([_line(n, d) for n, d in files.items()] + [dist + "/RECORD,,"]) + "\\n").encode()
    name = "tinyk-0.1.0-py3-none-linux_x86_64.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as zf:
        for n, d in files.items():
            zf.writestr(n, d)
    return name
"""
RECIPE = (
    'schema = 1\nname = "{name}"\ndescription = "issue 21 test"\nkind = "cmake"\ncmake_args = ["{arg}"]\n'
    'cuda_architectures = true\ngenerator = "auto"\n'
)


@pytest.fixture(scope="module")
def project(tmp_path_factory, cuda_13_0):
    base = tmp_path_factory.mktemp("tinyk")
    src = base / "tinyk-0.1.0"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(CMAKELISTS)
    (src / "tiny_kernel.cu").write_bytes(KERNEL.read_bytes())
    (src / "plain.c").write_text("int plain(int x) { return x + 1; }\n")
    (src / "backend.py").write_text(BACKEND)
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
    )
    sdist = base / "tinyk-0.1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tf:
        tf.add(src, arcname="tinyk-0.1.0")
    recipes = base / "config" / "recipes"
    recipes.mkdir(parents=True)
    (recipes / "cuda.toml").write_text(RECIPE.format(name="tinyk-cuda", arg="-DTINYK_CUDA=ON"))
    (recipes / "cpu.toml").write_text(RECIPE.format(name="tinyk-cpu", arg="-DTINYK_CUDA=OFF"))
    return base, sdist


def envmgr(base: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA", "ENVMGR_"))}
    env.update(
        {
            "ENVMGR_CONFIG_DIR": str(base / "config"),
            "ENVMGR_CACHE_DIR": str(base / "cache"),
            "NO_COLOR": "1",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PYTHONPATH": str(ROOT),
        }
    )
    return subprocess.run([sys.executable, "-m", "envmgr", *args], env=env, capture_output=True, text=True, timeout=300)


def test_a_cuda_cmake_package_is_cached_with_its_cubins_and_verify_says_no_gpu(project):
    base, sdist = project
    py = make_venv(base / "venv")
    out = envmgr(
        base,
        "install",
        "--cuda",
        "13.0",
        "--recipe",
        "tinyk-cuda",
        "--arch-list",
        "75;86",
        "--python",
        str(py),
        "--no-index",
        str(sdist),
    )
    assert out.returncode == 0, out.stderr[-3000:]
    [row] = json.loads(envmgr(base, "wheels", "list", "--json").stdout)["wheels"]
    # CMake's "75;86" is real and virtual for each: cubins and PTX
    assert row["device_code"]["cubin"] == ["sm_75", "sm_86"] and row["device_code"]["ptx"] == [
        "compute_75",
        "compute_86",
    ]
    assert row["key"]["archs"] == "75;86"
    assert "device code: cubin sm_75 sm_86; PTX compute_75 compute_86" in envmgr(base, "wheels", "list").stdout
    verify = envmgr(base, "verify", "tinyk", "--python", str(py), "--json")
    assert verify.returncode == 1, verify.stderr
    doc = json.loads(verify.stdout)
    steps = {s["name"]: s for s in doc["steps"]}
    assert (
        steps["load"]["status"] == "ok"
        and steps["cuda"]["summary"] == "device code: cubin sm_75 sm_86; PTX compute_75 compute_86"
    )
    assert steps["gpu"]["status"] == "fail" and steps["gpu"]["failure"] == "F12"
    assert "no NVIDIA GPU here" in steps["gpu"]["summary"] and doc["ok"] is False and doc["proof"] is None


def test_the_same_package_without_cuda_is_refused(project):
    base, sdist = project
    py = make_venv(base / "venv-cpu")
    out = envmgr(
        base,
        "install",
        "--cuda",
        "13.0",
        "--recipe",
        "tinyk-cpu",
        "--arch-list",
        "75",
        "--python",
        str(py),
        "--no-index",
        str(sdist),
    )
    assert out.returncode == 1
    assert "CPU-only wheel" in out.stderr and "libtinyk.so" in out.stderr and ".nv_fatbin" in out.stderr
    assert subprocess.run([str(py), "-c", "import tinyk"], capture_output=True).returncode != 0
