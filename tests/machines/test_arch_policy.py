"""One architecture rule for the recipes and doctor's F20: envmgr never warns about its own choice
(issue 11 item 8: the llama-cpp-python recipe without a GPU picked 7 architectures, and doctor then
warned F20 "7 CUDA architectures multiply the build time").

Each test builds the environment the way a user gets it (`export --recipe llama-cpp-python`) and
runs `doctor` inside it: on the recorded Linux machine with its two GPUs, on the same record with
its nvidia-smi answer removed (no GPU visible, composed here), and on this machine.
"""

from __future__ import annotations

import pytest
import tomlkit

from tests.conftest import MACHINES, run_cli

LINUX = MACHINES / "linux-two-toolkits.toml"


def _recipe_cmake_args(machine: str | None, env: dict | None = None) -> str:
    pre = ("--machine", machine) if machine else ()
    got = run_cli(*pre, "export", "--recipe", "llama-cpp-python", "--format", "json", env=env)
    assert got.code == 0, got.stderr
    return got.json()["env"]["CMAKE_ARGS"]["set"]


@pytest.fixture
def no_gpu_record(tmp_path):
    doc = tomlkit.parse(LINUX.read_text(encoding="utf-8"))
    keep = [c for c in doc["commands"] if "nvidia-smi" not in c["argv"][0]]
    doc["commands"] = tomlkit.aot()
    for c in keep:
        doc["commands"].append(c)
    path = tmp_path / "linux-no-gpu.toml"
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return path


def _record_with(source, tmp_path, **env):
    doc = tomlkit.parse(source.read_text(encoding="utf-8"))
    for k, v in env.items():
        doc["env"][k] = v
    path = tmp_path / f"with-env-{len(list(tmp_path.iterdir()))}.toml"
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return path


def _doctor_f20(record) -> dict:
    got = run_cli("--machine", str(record), "doctor", "--json", "--only", "F20")
    assert got.code in (0, 1), got.stderr
    return got.json()["checks"][0]


def test_no_gpu_the_recipe_picks_the_fixed_list_and_doctor_accepts_it(no_gpu_record, tmp_path):
    args = _recipe_cmake_args(str(no_gpu_record))
    assert "75;80;86;89;90;100;120" in args  # CUDA 13.0's fixed list: 7 architectures
    f20 = _doctor_f20(_record_with(no_gpu_record, tmp_path, CMAKE_ARGS=args))
    assert f20["status"] == "ok", f20
    assert any("envmgr's rule here: 75;80;86;89;90;100;120 (no GPU visible" in e for e in f20["evidence"])


def test_with_gpus_the_recipe_builds_them_and_doctor_accepts_it(tmp_path):
    args = _recipe_cmake_args(str(LINUX))
    assert "70-real;89-real" in args
    f20 = _doctor_f20(_record_with(LINUX, tmp_path, CMAKE_ARGS=args))
    assert f20["status"] == "ok", f20


@pytest.mark.parametrize(
    "archs,status",
    [
        ("all", "warn"),
        ("all-major", "warn"),
        ("70;75;80;86;89", "warn"),  # GPUs here are sm_70 and sm_89: three the rule would not build
        ("70;89", "ok"),
        ("89", "ok"),
        ("70-real;89-virtual", "ok"),
        ("86;89", "ok"),  # two: a deliberate extra is not "very long"
    ],
)
def test_f20_warns_only_beyond_the_rule(tmp_path, archs, status):
    f20 = _doctor_f20(_record_with(LINUX, tmp_path, CMAKE_ARGS=f"-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES={archs}"))
    assert f20["status"] == status, f20
    if status == "warn":
        assert "70;89" in f20["summary"] or "every architecture" in f20["summary"]


def test_no_gpu_a_list_beyond_the_fixed_one_still_warns(no_gpu_record, tmp_path):
    args = "-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=50;52;60;61;70;75;80;86;89;90;100;120"
    assert _doctor_f20(_record_with(no_gpu_record, tmp_path, CMAKE_ARGS=args))["status"] == "warn"


@pytest.mark.posix
def test_this_machine_recipe_then_doctor(tmp_path):
    """The issue's steps on the machine the tests run on, GPU or not."""
    args = _recipe_cmake_args(None, env={"ENVMGR_CACHE_DIR": str(tmp_path)})
    got = run_cli("doctor", "--json", "--only", "F20", env={"CMAKE_ARGS": args, "ENVMGR_CACHE_DIR": str(tmp_path)})
    assert got.code == 0, got.stderr
    assert got.json()["checks"][0]["status"] == "ok", got.json()["checks"][0]
