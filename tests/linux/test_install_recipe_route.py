"""`envmgr install --recipe NAME SPEC` (issue 33, deliverable 6): the llama-cpp-python flow's doctor before the
build and diagnosis after a failed one. The toolkit is a recorded machine's (tests/machines), the build is a
real pip wheel of a tiny source folder whose backend runs the real g++ on a file that includes cuBLAS's
header with no toolkit on the include path: it fails in about a second, with g++'s own error."""
from __future__ import annotations

import json

import pytest

from tests.conftest import MACHINES, run_cli
from tests.linux.test_wheels_e2e import envmgr, fake_cuda_project, make_venv

VS2026 = str(MACHINES / "vs2026-vs2022.toml")   # doctor: F01 (fix-msbuild's command) and F24 block

BACKEND = '''
import subprocess
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    with open("kernel.cpp", "w") as fh:
        fh.write('#include "cublas_v2.h"\\nint main() { return 0; }\\n')
    subprocess.run(["g++", "-c", "kernel.cpp", "-o", "kernel.o"], check=True)
    raise SystemExit(1)
'''


def test_recipe_route_runs_doctor_first_and_stops_with_paste_able_commands(tmp_path):
    env = {"ENVMGR_CACHE_DIR": str(tmp_path / "cache"), "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
           "ENVMGR_WHEEL_INDEX": ""}
    r = run_cli("--machine", VS2026, "install", "--recipe", "llama-cpp-python", "llama-cpp-python==0.3.36", env=env)
    assert r.code == 1 and "Traceback" not in r.stderr and r.stdout == ""
    assert "envmgr: error: envmgr doctor found 2 blocking problem(s): F01, F24; nothing was built" in r.stderr
    fixes = [line.strip()[len("fix: "):] for line in r.stderr.splitlines() if line.strip().startswith("fix: envmgr ")]
    assert 'envmgr fix-msbuild --vs "C:\\Program Files\\Microsoft Visual Studio\\18\\Insiders" --cuda 13.0' in fixes
    assert "add --fix to take the safe route for F01" in r.stderr
    assert not (tmp_path / "cache" / "wheels").exists()


@pytest.mark.slow
def test_a_failing_recipe_build_is_diagnosed_and_its_log_kept(tmp_path):
    fake_cuda_project(tmp_path)         # the fake-cuda recipe in tmp_path/config/recipes
    src = tmp_path / "failing"
    src.mkdir()
    (src / "pyproject.toml").write_text('[build-system]\nrequires = []\nbuild-backend = "backend"\n'
                                        'backend-path = ["."]\n[project]\nname = "failing"\nversion = "0.1"\n')
    (src / "backend.py").write_text(BACKEND)
    py = make_venv(tmp_path / "venv")
    r = envmgr(tmp_path, "install", "--recipe", "fake-cuda", "--arch-list", "90", "--python", str(py),
               "--no-index", str(src))
    assert r.returncode == 1, r.stderr
    assert "cublas_v2.h: No such file or directory" in r.stdout + r.stderr   # g++'s own words, shown live
    assert "F24" in r.stderr and "header=cublas_v2.h" in r.stderr          # the diagnosis of the log
    error = next(line for line in r.stderr.splitlines() if line.startswith("envmgr: error:"))
    assert error.startswith("envmgr: error: pip wheel failed with exit code 1")
    logs = list((tmp_path / "cache" / "wheels" / ".logs").glob("build-*.log"))
    assert len(logs) == 1 and "cublas_v2.h" in logs[0].read_text(errors="replace")
    assert f"envmgr doctor --log {logs[0]}" in r.stderr


@pytest.mark.slow
def test_a_recipe_build_that_works_reports_as_the_flow_does(tmp_path):
    sdist = fake_cuda_project(tmp_path)
    py = make_venv(tmp_path / "venv")
    r = envmgr(tmp_path, "install", "--recipe", "fake-cuda", "--arch-list", "90", "--python", str(py),
               "--no-index", "--json", str(sdist))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)                                   # stdout: the JSON alone (pip's went to stderr)
    assert doc["recipe"] == "fake-cuda" and doc["recipe_from"] == "--recipe" and doc["python"] == str(py)
    assert doc["wheel"]["origin"] == "built" and doc["wheel"]["file"].startswith("fakecuda-1.2.3")
    # the recorded machine's driver is too old for its CUDA 13.0: a wheel build goes on, and says so
    assert any(line.startswith("doctor: F17 does not stop a wheel build") for line in doc["report"])
    assert "doctor" in doc["seconds"] and "build_install" in doc["seconds"]
