"""`envmgr install llama-cpp-python` through its build routes with a real pip and real venvs (about 15 s):
the report says where the wheel came from — built, a wheel cache hit, or another engineer's wheel index —
from install_wheel's own result, and a verify failure after the install exits 1.

The build is test_wheels_e2e.py's fake CUDA sdist and `fake-cuda` recipe (given with --recipe; the toolkit
from the recorded linux-two-toolkits machine, so no nvcc is needed); the llama_cpp that verify imports is
test_install_flow.py's hand-made fake, on PYTHONPATH. The doctor step is the real one, on the recorded
machine with `--cuda 12.4`: that toolkit holds cuBLAS (its version.json lists libcublas), the driver
supports it and it builds for both GPUs, so doctor finds nothing blocking (its CUDA 13.0, without cuBLAS
and too new for the driver, stops the flow: the last test). The --fix routes are test_install_fix.py's.
"""

from __future__ import annotations

import pytest

from tests.conftest import run_cli
from tests.linux.test_wheels_e2e import MACHINE, fake_cuda_project, make_venv
from tests.unit.commands.test_install_flow import GPU, NO_GPU, fake_llama

pytestmark = pytest.mark.slow
WHEEL = "fakecuda-1.2.3-py3-none-any.whl"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    base = tmp_path_factory.mktemp("install-flow-e2e")
    fake_cuda_project(base)
    fake_llama(base / "gpu", GPU)
    fake_llama(base / "nogpu", NO_GPU)
    return base


def flow(base, cache: str, venv: str, fake: str, *extra: str, cuda: str = "12.4"):
    py = make_venv(base / venv)
    env = {
        "ENVMGR_CONFIG_DIR": str(base / "config"),
        "ENVMGR_CACHE_DIR": str(base / cache),
        "ENVMGR_WHEEL_INDEX": "",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PYTHONPATH": str(base / fake / "site"),
    }
    return run_cli(
        "--machine",
        str(MACHINE),
        "install",
        "--recipe",
        "fake-cuda",
        "--cuda",
        cuda,
        "--arch-list",
        "90",
        "--python",
        str(py),
        *extra,
        "llama-cpp-python",
        "--no-index",
        str(base / "fakecuda-1.2.3.tar.gz"),
        env=env,
    )


def test_built_then_cache_hit_then_from_the_index(base):
    index = base / "index"
    built = flow(base, "cache-a", "a", "gpu", "--fix", "--json", "--publish", str(index))
    assert built.code == 0, built.stderr
    data = built.json()
    w = data["wheel"]
    assert (w["origin"], w["file"], w["index"]) == ("built", WHEEL, None) and w["build_seconds"] > 0
    assert data["recipe"] == "fake-cuda" and data["recipe_from"] == "--recipe"
    assert data["spec"].endswith("fakecuda-1.2.3.tar.gz") and data["ok"] is True
    assert data["report"][0] == "doctor: no blocking finding (CUDA 12.4, 2 GPU(s))" and data["fixes"] == []
    assert f"built {WHEEL} in " in "\n".join(data["report"]) and data["layers_offloaded"] == "3/3"
    assert set(data["seconds"]) == {"doctor", "build_install", "verify"}

    hit = flow(base, "cache-a", "b", "gpu", "--fix")
    assert hit.code == 0, hit.stderr
    line = next(x for x in hit.stdout.splitlines() if "wheel cache hit" in x)
    assert f"wheel cache hit: {WHEEL} (key {w['digest']}, built earlier in" in line and "nothing built" in line
    assert "  built " not in hit.stdout and "building" not in hit.stderr

    # Another engineer's machine: an empty wheel cache, the team's index. Comparing cache entries before
    # and after (the old way) saw a new entry here and called it built.
    other = flow(base, "cache-b", "c", "gpu", "--fix", "--json", "--wheel-index", str(index))
    assert other.code == 0, other.stderr
    w2 = other.json()["wheel"]
    assert (w2["origin"], w2["file"], w2["digest"], w2["index"]) == ("index", WHEEL, w["digest"], str(index))
    assert any(x.startswith(f"from the wheel index {index}: {WHEEL}") for x in other.json()["report"])
    assert "building" not in other.stderr


def test_a_verify_failure_after_a_cached_install_exits_1_and_says_so(base):
    first = flow(base, "cache-d", "d", "gpu", "--fix")
    assert first.code == 0, first.stderr
    r = flow(base, "cache-d", "e", "nogpu", "--fix")
    assert r.code == 1
    assert "envmgr: installed, but NOT verified on the GPU: F12" in r.stderr
    assert "wheel cache hit" in r.stdout and "NOT verified: F12" in r.stdout and "layers offloaded: 0/3" in r.stdout


def test_the_real_doctor_step_stops_the_flow_before_a_build_with_cuda_13(base):
    r = flow(base, "cache-f", "f", "gpu", "--fix", cuda="13.0")
    assert r.code == 1 and "Traceback" not in r.stderr
    assert "envmgr doctor found 3 blocking problem(s): F13, F17, F24; nothing was built" in r.stderr
    assert "envmgr shell --cuda 12.4" in r.stderr  # F24's fix: the toolkit that has cuBLAS
    assert not (base / "cache-f" / "wheels").exists() and r.stdout == ""
