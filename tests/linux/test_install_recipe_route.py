"""`envmgr install --recipe NAME SPEC` (issue 33, deliverable 6): the llama-cpp-python flow's doctor before the
build and diagnosis after a failed one. The toolkit is a recorded machine's (tests/machines), the build is a
real pip wheel of a tiny source folder whose backend runs the real g++ on a file that includes cuBLAS's
header with no toolkit on the include path: it fails in about a second, with g++'s own error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import MACHINES, run_cli
from tests.linux.test_wheels_e2e import ROOT, envmgr, fake_cuda_project, make_venv

VS2026 = str(MACHINES / "vs2026-vs2022.toml")  # doctor: F01 (fix-msbuild's command) and F24 block

BACKEND = """
import subprocess
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    with open("kernel.cpp", "w") as fh:
        fh.write('#include "cublas_v2.h"\\nint main() { return 0; }\\n')
    subprocess.run(["g++", "-c", "kernel.cpp", "-o", "kernel.o"], check=True)
    raise SystemExit(1)
"""


def test_recipe_route_runs_doctor_first_and_stops_with_paste_able_commands(tmp_path):
    env = {
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "ENVMGR_WHEEL_INDEX": "",
    }
    r = run_cli("--machine", VS2026, "install", "--recipe", "llama-cpp-python", "llama-cpp-python==0.3.36", env=env)
    assert r.code == 1 and "Traceback" not in r.stderr and r.stdout == ""
    assert "envmgr: error: envmgr doctor found 2 blocking problem(s): F01, F24; nothing was built" in r.stderr
    fixes = [line.strip()[len("fix: ") :] for line in r.stderr.splitlines() if line.strip().startswith("fix: envmgr ")]
    assert 'envmgr fix-msbuild --vs "C:\\Program Files\\Microsoft Visual Studio\\18\\Insiders" --cuda 13.0' in fixes
    assert "add --fix to take the safe route for F01" in r.stderr
    assert not (tmp_path / "cache" / "wheels").exists()


@pytest.mark.slow
def test_a_failing_recipe_build_is_diagnosed_and_its_log_kept(tmp_path):
    fake_cuda_project(tmp_path)  # the fake-cuda recipe in tmp_path/config/recipes
    src = tmp_path / "failing"
    src.mkdir()
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\n'
        'backend-path = ["."]\n[project]\nname = "failing"\nversion = "0.1"\n'
    )
    (src / "backend.py").write_text(BACKEND)
    py = make_venv(tmp_path / "venv")
    r = envmgr(
        tmp_path, "install", "--recipe", "fake-cuda", "--arch-list", "90", "--python", str(py), "--no-index", str(src)
    )
    assert r.returncode == 1, r.stderr
    assert "cublas_v2.h: No such file or directory" in r.stdout + r.stderr  # g++'s own words, shown live
    assert "F24" in r.stderr and "header=cublas_v2.h" in r.stderr  # the diagnosis of the log
    error = next(line for line in r.stderr.splitlines() if line.startswith("envmgr: error:"))
    assert error.startswith("envmgr: error: pip wheel failed with exit code 1")
    logs = list((tmp_path / "cache" / "wheels" / ".logs").glob("build-*.log"))
    assert len(logs) == 1 and "cublas_v2.h" in logs[0].read_text(errors="replace")
    assert f"envmgr doctor --log {logs[0]}" in r.stderr


@pytest.mark.slow
def test_a_recipe_build_that_works_reports_as_the_flow_does(tmp_path):
    sdist = fake_cuda_project(tmp_path)
    py = make_venv(tmp_path / "venv")
    r = envmgr(
        tmp_path,
        "install",
        "--recipe",
        "fake-cuda",
        "--arch-list",
        "90",
        "--python",
        str(py),
        "--no-index",
        "--json",
        str(sdist),
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)  # stdout: the JSON alone (pip's went to stderr)
    assert doc["recipe"] == "fake-cuda" and doc["recipe_from"] == "--recipe" and doc["python"] == str(py)
    assert doc["wheel"]["origin"] == "built" and doc["wheel"]["file"].startswith("fakecuda-1.2.3")
    # the recorded machine's driver is too old for its CUDA 13.0: a wheel build goes on, and says so
    assert any(line.startswith("doctor: F17 does not stop a wheel build") for line in doc["report"])
    assert "doctor" in doc["seconds"] and "build_install" in doc["seconds"]


# ---- --fix for F24: the missing CUDA libraries laid into the toolkit, and undone ------------------------


def _wheel(folder: Path, name: str, version: str, files: dict[str, bytes]) -> Path:
    """A wheel as pip reads it. Hand-made (the real nvidia-cublas wheel is ~500 MB): its files are named and
    placed as the real nvidia-cublas 13.0 wheel places them (nvidia/cu13/include, nvidia/cu13/lib)."""
    dist = f"{name.replace('-', '_')}-{version}.dist-info"
    files = {
        **files,
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{n},,\n" for n in files) + f"{dist}/RECORD,,\n"
    path = folder / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for n, data in {**files, f"{dist}/RECORD": record.encode()}.items():
            zf.writestr(n, data)
    return path


def _toolkit_without_cublas(root: Path) -> Path:
    """A CUDA 13.0 toolkit assembled from nvidia-* wheels (the layout of this machine's /usr/local/cuda-13.0:
    dist-info kept in <root>/dist-info), its nvcc this machine's real one, and no cuBLAS."""
    kit = root / "cuda-13.0"
    (kit / "bin").mkdir(parents=True)
    (kit / "bin" / "nvcc").symlink_to(REAL_NVCC)
    (kit / "include").mkdir()
    (kit / "include" / "cuda_runtime.h").write_text("/* test */\n")
    (kit / "lib").mkdir()
    (kit / "lib" / "libcudart.so.13").write_bytes(b"\x7fELF test")
    (kit / "dist-info" / "nvidia_cuda_nvcc-13.0.88.dist-info").mkdir(parents=True)
    (kit / "dist-info" / "nvidia_cuda_nvcc-13.0.88.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: nvidia-cuda-nvcc\nVersion: 13.0.88\n"
    )
    return kit


REAL_NVCC = Path("/usr/local/cuda-13.0/bin/nvcc")


@pytest.mark.slow
@pytest.mark.skipif(not REAL_NVCC.exists(), reason="needs this machine's CUDA 13.0 nvcc (tests/setup)")
def test_fix_lays_f24s_missing_libraries_into_the_toolkit_and_undo_removes_them(tmp_path):
    sdist = fake_cuda_project(tmp_path)
    (tmp_path / "config" / "recipes" / "fake.toml").write_text(
        'schema = 1\nname = "llama-cpp-python"\ndescription = "test: the llama-cpp-python recipe\'s F24 needs"\n'
        'kind = "cmake"\ncmake_args = ["-DGGML_CUDA=on"]\ncuda_architectures = true\ngenerator = "auto"\n'
    )
    kit = _toolkit_without_cublas(tmp_path)
    links = tmp_path / "links"
    links.mkdir()
    _wheel(
        links,
        "nvidia-cublas",
        "13.0.99",
        {
            "nvidia/cu13/include/cublas_v2.h": b"/* test */\n",
            "nvidia/cu13/include/cublasLt.h": b"/* test */\n",
            "nvidia/cu13/lib/libcublas.so.13": b"\x7fELF test",
            "nvidia/cu13/lib/libcublasLt.so.13": b"\x7fELF test",
        },
    )
    py = make_venv(tmp_path / "venv")
    extra = {
        "CUDA_HOME": str(kit),
        "PIP_FIND_LINKS": str(links),
        "PIP_NO_INDEX": "1",
        "ENVMGR_DATA_DIR": str(tmp_path / "data"),
    }
    args = ("install", "--recipe", "llama-cpp-python", "--cuda", str(kit), "--arch-list", "90", "--python", str(py))

    stopped = local_envmgr(tmp_path, extra, *args, str(sdist))
    assert stopped.returncode == 1, stopped.stderr
    assert "blocking problem(s): F24; nothing was built" in stopped.stderr
    assert (
        f"fix: add --fix to lay nvidia-cublas==13.0.* into {kit} (include/, lib/, dist-info/) (undoable)"
        in stopped.stderr
    )
    assert "add --fix to take the safe route for F24" in stopped.stderr
    assert not (kit / "include" / "cublas_v2.h").exists()

    fixed = local_envmgr(tmp_path, extra, *args, "--fix", "--json", str(sdist))
    assert fixed.returncode == 0, fixed.stderr
    doc = json.loads(fixed.stdout)
    (item,) = [f for f in doc["fixes"] if f["id"] == "F24"]
    assert item["action"] == "components-added" and item["requirements"] == ["nvidia-cublas==13.0.*"]
    assert "CUDA 13.0 now has cublas, cublasLt" in item["text"]
    added = [
        kit / "include" / "cublas_v2.h",
        kit / "lib" / "libcublas.so.13",
        kit / "lib" / "libcublas.so",
        kit / "dist-info" / "nvidia_cublas-13.0.99.dist-info" / "METADATA",
    ]
    assert all(p.is_file() for p in added)
    assert doc["wheel"]["origin"] == "built"
    doctor = local_envmgr(tmp_path, extra, "doctor", "--cuda", str(kit), "--only", "F24")
    assert doctor.returncode == 0 and "OK      F24" in doctor.stdout

    undone = local_envmgr(tmp_path, extra, *item["undo"].split()[1:])
    assert undone.returncode == 0, undone.stderr
    assert not any(p.exists() for p in added) and (kit / "lib" / "libcudart.so.13").is_file()
    again = local_envmgr(tmp_path, extra, "doctor", "--cuda", str(kit), "--only", "F24")
    assert again.returncode == 1 and "FAIL    F24" in again.stdout


def local_envmgr(base: Path, extra: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """envmgr on this machine (no --machine): the toolkit is a folder of tmp_path's, named by CUDA_HOME."""
    env = {
        **os.environ,
        "ENVMGR_CONFIG_DIR": str(base / "config"),
        "ENVMGR_CACHE_DIR": str(base / "cache"),
        "NO_COLOR": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PYTHONPATH": str(ROOT),
        **extra,
    }
    env.pop("ENVMGR_MACHINE", None)
    return subprocess.run([sys.executable, "-m", "envmgr", *args], env=env, capture_output=True, text=True, timeout=300)
