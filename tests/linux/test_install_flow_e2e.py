"""`envmgr install llama-cpp-python` through its build routes with a real pip and real venvs (about 15 s):
the report says where the wheel came from — built, a wheel cache hit, or another engineer's wheel index —
from install_wheel's own result, and a verify failure after the install exits 1.

The build is test_wheels_e2e.py's fake CUDA sdist and `fake-cuda` recipe (given with --recipe; the toolkit
from the recorded linux-two-toolkits machine, so no nvcc is needed); the llama_cpp that verify imports is
test_install_flow.py's hand-made fake, on PYTHONPATH. The doctor step is replaced here: every recorded
machine (and this one) fails F24 (their file trees hold no cuBLAS), which rightly stops the real flow before
a build; test_install_flow.py tests that stop on the recorded machines. Here the doctor step returns the
recorded vs2026-vs2022 machine's real F01 finding only, so `--fix` has a recipe route to report.
"""
from __future__ import annotations

import pytest

from tests.conftest import MACHINES, run_cli
from tests.linux.test_wheels_e2e import MACHINE, fake_cuda_project, make_venv
from tests.unit.test_install_flow import GPU, NO_GPU, fake_llama

pytestmark = pytest.mark.slow
WHEEL = "fakecuda-1.2.3-py3-none-any.whl"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    base = tmp_path_factory.mktemp("install-flow-e2e")
    fake_cuda_project(base)
    fake_llama(base / "gpu", GPU)
    fake_llama(base / "nogpu", NO_GPU)
    return base


@pytest.fixture(autouse=True)
def doctor_f01_only(monkeypatch):
    from envmgr.commands import install_flow
    from envmgr.doctor.run import gather, run_checks
    from envmgr.host.recorded import load_machine
    from envmgr.selectors import Selectors

    facts = gather(load_machine(str(MACHINES / "vs2026-vs2022.toml")), Selectors())
    findings = tuple(f for f in run_checks(facts) if f.id == "F01")
    assert findings and findings[0].status == "fail"
    monkeypatch.setattr(install_flow, "_findings", lambda obj, sel: (facts, findings))


def flow(base, cache: str, venv: str, fake: str, *extra: str):
    py = make_venv(base / venv)
    env = {"ENVMGR_CONFIG_DIR": str(base / "config"), "ENVMGR_CACHE_DIR": str(base / cache),
           "ENVMGR_WHEEL_INDEX": "", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONPATH": str(base / fake / "site")}
    return run_cli("--machine", str(MACHINE), "install", "--recipe", "fake-cuda", "--arch-list", "90", "--python",
                   str(py), *extra, "llama-cpp-python", "--no-index", str(base / "fakecuda-1.2.3.tar.gz"), env=env)


def test_built_then_cache_hit_then_from_the_index(base):
    index = base / "index"
    built = flow(base, "cache-a", "a", "gpu", "--fix", "--json", "--publish", str(index))
    assert built.code == 0, built.stderr
    data = built.json()
    w = data["wheel"]
    assert (w["origin"], w["file"], w["index"]) == ("built", WHEEL, None) and w["build_seconds"] > 0
    assert data["recipe"] == "fake-cuda" and data["recipe_from"] == "--recipe"
    assert data["spec"].endswith("fakecuda-1.2.3.tar.gz") and data["ok"] is True
    assert any(line.startswith("fixed F01: the recipe's generator route") for line in data["report"])
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
