"""`envmgr install` end to end with a real pip, a real venv and a tiny real package (about 10 s).

The package is built by an in-tree PEP 517 backend (no network, no setuptools) that behaves like a
CMake project: it adds a CUDA shared library (a real one: tests/corpus/devicecode) only when CMAKE_ARGS
holds -DGGML_CUDA=on. The
recipe comes from ENVMGR_CONFIG_DIR/recipes; the toolkit from a recorded machine, so no nvcc is needed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import venv
from pathlib import Path

import pytest

from tests.conftest import CUDA_SO, sample_bytes

ROOT = Path(__file__).resolve().parents[2]
MACHINE = ROOT / "tests" / "machines" / "linux-two-toolkits.toml"

BACKEND = """
import base64, hashlib, os, zipfile

def _line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = {"fakecuda/__init__.py": b"BUILT = True\\n"}
    if "GGML_CUDA=on" in os.environ.get("CMAKE_ARGS", ""):
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "libtiny_cuda.so"), "rb") as fh:
            files["fakecuda/lib/libfake_cuda.so"] = fh.read()   # nvcc 13.0's output: real device code
    dist = "fakecuda-1.2.3.dist-info"
    files[dist + "/METADATA"] = b"Metadata-Version: 2.1\\nName: fakecuda\\nVersion: 1.2.3\\n"
    files[dist + "/WHEEL"] = b"Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    files[dist + "/RECORD"] = ("\\n".join([_line(n, d) for n, d in files.items()] + [dist + "/RECORD,,"]) + "\\n").encode()
    name = "fakecuda-1.2.3-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as zf:
        for n, d in files.items():
            zf.writestr(n, d)
    return name
"""
PYPROJECT = '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
RECIPE = (
    'schema = 1\nname = "{name}"\ndescription = "test"\nkind = "cmake"\ncmake_args = [{args}]\n'
    'cuda_architectures = true\ngenerator = "auto"\n'
)


def fake_cuda_project(base: Path) -> Path:
    """base/fakecuda-1.2.3.tar.gz (an sdist whose backend writes a wheel with a CUDA library when
    CMAKE_ARGS asks for GGML_CUDA) and the `fake-cuda` recipe in base/config/recipes."""
    src = base / "fakecuda-1.2.3"
    src.mkdir()
    (src / "pyproject.toml").write_text(PYPROJECT)
    (src / "backend.py").write_text(BACKEND)
    (src / "libtiny_cuda.so").write_bytes(sample_bytes(CUDA_SO))
    sdist = base / "fakecuda-1.2.3.tar.gz"
    with tarfile.open(sdist, "w:gz") as tf:
        tf.add(src, arcname="fakecuda-1.2.3")
    recipes = base / "config" / "recipes"
    recipes.mkdir(parents=True)
    (recipes / "fake.toml").write_text(RECIPE.format(name="fake-cuda", args='"-DGGML_CUDA=on"'))
    return sdist


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    base = tmp_path_factory.mktemp("wheels-e2e")
    sdist = fake_cuda_project(base)
    (base / "config" / "recipes" / "fake-cpu.toml").write_text(
        RECIPE.format(name="fake-cpu", args='"-DGGML_CUDA=off", "-DX=CUDA"')
    )
    return base, sdist


def make_venv(path: Path) -> Path:
    # No pip of its own (ensurepip takes seconds): the base pip, seen through system site-packages,
    # installs into the venv all the same.
    venv.EnvBuilder(with_pip=False, system_site_packages=True).create(path)
    return path / "bin" / "python"


def envmgr(base: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "ENVMGR_CONFIG_DIR": str(base / "config"),
        "ENVMGR_CACHE_DIR": str(base / "cache"),
        "NO_COLOR": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("ENVMGR_MACHINE", None)
    return subprocess.run(
        [sys.executable, "-m", "envmgr", "--machine", str(MACHINE), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_build_once_then_reuse_in_another_venv(setup):
    base, sdist = setup
    py_a = make_venv(base / "a")
    first = envmgr(
        base, "install", "--recipe", "fake-cuda", "--arch-list", "90", "--python", str(py_a), "--no-index", str(sdist)
    )
    assert first.returncode == 0, first.stderr
    assert "built fakecuda-1.2.3-py3-none-any.whl" in first.stderr
    assert subprocess.run([str(py_a), "-c", "import fakecuda"]).returncode == 0

    py_b = make_venv(base / "b")
    second = envmgr(
        base, "install", "--recipe", "fake-cuda", "--arch-list", "90", "--python", str(py_b), "--no-index", str(sdist)
    )
    assert second.returncode == 0, second.stderr
    assert "reusing the cached wheel" in second.stderr and "building" not in second.stderr
    assert subprocess.run([str(py_b), "-c", "import fakecuda"]).returncode == 0

    other_arch = envmgr(
        base, "install", "--recipe", "fake-cuda", "--arch-list", "86", "--python", str(py_b), "--no-index", str(sdist)
    )
    assert other_arch.returncode == 0 and "building" in other_arch.stderr
    listed = envmgr(base, "wheels", "list")
    assert "2 cached wheel(s)" in listed.stdout


@pytest.mark.slow
def test_a_cpu_build_for_a_cuda_request_is_refused(setup):
    base, sdist = setup
    py = make_venv(base / "c")
    out = envmgr(
        base, "install", "--recipe", "fake-cpu", "--arch-list", "90", "--python", str(py), "--no-index", str(sdist)
    )
    assert out.returncode == 1
    assert "CPU-only wheel" in out.stderr and "not be installed" in out.stderr
    assert subprocess.run([str(py), "-c", "import fakecuda"], capture_output=True).returncode != 0
