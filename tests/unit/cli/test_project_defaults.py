"""Defaults a project carries (issue 33, deliverable 8): envmgr.toml or pyproject.toml's [tool.envmgr] found
upward from the working folder, the environment (ENVMGR_CUDA...), flags over all of them; `envmgr config`
shows each with its source; a bad file is one line, exit 2. And --gpu / ENVMGR_GPU, the override for a
machine with no visible GPU, reported as an override by list and doctor.

The project files are hand-written here (they are the user's own few lines; docs/config.md shows the same)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from envmgr.cli.defaults import layered
from envmgr.cli.main import Ctx
from envmgr.cli.options import selector_options
from envmgr.files.project import ProjectFile, find_project
from tests.conftest import MACHINES, run_cli
from tests.unit.wheels.test_prebuilt_index import HERE_LIB, wheel

CUDA124 = str(MACHINES / "community-buildtools-cuda124.toml")  # CUDA 12.4.99 and 11.8.89


def settings(tmp_path, *args, env=None):
    r = run_cli("config", "--json", *args, env={"ENVMGR_CONFIG_DIR": str(tmp_path / "config"), **(env or {})})
    assert r.code == 0, r.stderr
    return {s["key"]: (s["value"], s["source"], s["where"]) for s in json.loads(r.stdout)["settings"]}


@pytest.fixture
def project(tmp_path, monkeypatch):
    """tmp/proj/{envmgr.toml?, pyproject.toml?}/src/deep: envmgr runs in src/deep."""
    root = tmp_path / "proj"
    deep = root / "src" / "deep"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    for name in ("ENVMGR_CUDA", "ENVMGR_VS", "ENVMGR_TOOLSET", "ENVMGR_RECIPE", "ENVMGR_PYTHON", "ENVMGR_GPU"):
        monkeypatch.delenv(name, raising=False)
    return root


# ---- finding upward ------------------------------------------------------------------------------


def test_envmgr_toml_is_found_from_a_folder_below(project, tmp_path):
    (project / "envmgr.toml").write_text('cuda = "12.4"\nvs = "community"\n')
    got = settings(tmp_path)
    assert got["cuda"] == ("12.4", "envmgr.toml", str(project / "envmgr.toml"))
    assert got["vs"] == ("community", "envmgr.toml", str(project / "envmgr.toml"))
    assert got["toolset"][1] == "built-in default" and got["gpu"][0] is None


def test_pyproject_tool_envmgr_is_found_and_a_relative_python_is_the_files(project, tmp_path):
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.envmgr]\ncuda = "11.8"\n'
        'python = ".venv/bin/python"\nrecipe = "llama-cpp-python"\n'
    )
    got = settings(tmp_path)
    where = str(project / "pyproject.toml")
    assert got["cuda"] == ("11.8", "pyproject.toml", where)
    assert got["python"] == (str(project / ".venv" / "bin" / "python"), "pyproject.toml", where)
    assert got["recipe"] == ("llama-cpp-python", "pyproject.toml", where)


def test_a_pyproject_without_the_table_is_passed_over_and_the_nearest_folder_wins(project):
    (project / "envmgr.toml").write_text('cuda = "12.4"\n')
    (project / "src" / "pyproject.toml").write_text('[project]\nname = "inner"\n')  # no [tool.envmgr]
    assert [f.path for f in find_project(str(project / "src" / "deep"))] == [str(project / "envmgr.toml")]
    (project / "src" / "envmgr.toml").write_text('vs = "2022"\n')  # nearer: it alone counts
    (found,) = find_project(str(project / "src" / "deep"))
    assert found.path == str(project / "src" / "envmgr.toml") and found.values == (("vs", "2022"),)


def test_no_project_file_anywhere_is_nothing(tmp_path):
    assert find_project(str(tmp_path)) == ()


# ---- precedence: flag > environment > envmgr.toml > pyproject.toml > built-in ------------------------


def test_precedence_over_every_layer(project, tmp_path):
    (project / "pyproject.toml").write_text(
        '[tool.envmgr]\ncuda = "11.8"\nvs = "buildtools"\ntoolset = "14.38"\nrecipe = "from-pyproject"\n'
    )
    (project / "envmgr.toml").write_text('cuda = "12.4"\nvs = "community"\n')
    got = settings(tmp_path, "--cuda", "13.0", env={"ENVMGR_VS": "2019"})
    assert got["cuda"][:2] == ("13.0", "flag")
    assert got["vs"][:2] == ("2019", "environment") and got["vs"][2] == "ENVMGR_VS"
    assert got["toolset"][:2] == ("14.38", "pyproject.toml")  # envmgr.toml does not say: pyproject does
    assert got["recipe"][:2] == ("from-pyproject", "pyproject.toml")
    assert settings(tmp_path)["cuda"][:2] == ("12.4", "envmgr.toml")  # envmgr.toml over pyproject.toml


def test_layered_is_pure_and_orders_the_sources():
    files = (
        ProjectFile("/p/envmgr.toml", "envmgr.toml", (("cuda", "12.4"),)),
        ProjectFile("/p/pyproject.toml", "pyproject.toml", (("cuda", "11.8"), ("vs", "2022"))),
    )
    got = {s.key: (s.value, s.source) for s in layered({"toolset": "14.40"}, {"ENVMGR_RECIPE": "r"}, files)}
    assert got == {
        "cuda": ("12.4", "envmgr.toml"),
        "vs": ("2022", "pyproject.toml"),
        "toolset": ("14.40", "flag"),
        "recipe": ("r", "environment"),
        "python": (None, "built-in default"),
    }


def test_commands_take_the_defaults_and_flags_beat_them(project):
    """The selector options every command shares (shell, export, run, install) fill what no flag gave."""
    seen = []

    @click.command()
    @selector_options
    def probe(selection):
        seen.append(selection)

    (project / "envmgr.toml").write_text('cuda = "12.4"\ntoolset = "14.38"\npython = "python3"\n')
    assert CliRunner().invoke(probe, ["--vs", "community"], obj=Ctx()).exit_code == 0
    assert CliRunner().invoke(probe, ["--cuda", "11.8"], env={"ENVMGR_TOOLSET": "14.29"}, obj=Ctx()).exit_code == 0
    assert [(s.vs, s.cuda, s.toolset, s.pythons) for s in seen] == [
        ("community", "12.4", "14.38", ()),
        (None, "11.8", "14.29", ()),
    ]


def test_doctor_checks_for_the_projects_cuda_unless_a_flag_says_otherwise(project, tmp_path):
    (project / "envmgr.toml").write_text('cuda = "11.8"\n')
    env = {"ENVMGR_CONFIG_DIR": str(tmp_path / "config"), "ENVMGR_CACHE_DIR": str(tmp_path / "cache")}
    first = run_cli("--machine", CUDA124, "doctor", "--only", "F12", env=env).stdout.splitlines()[0]
    assert "CUDA 11.8.89" in first
    flagged = run_cli("--machine", CUDA124, "doctor", "--only", "F12", "--cuda", "12.4", env=env)
    assert "CUDA 12.4.99" in flagged.stdout.splitlines()[0]
    viaenv = run_cli("--machine", CUDA124, "doctor", "--only", "F12", env={**env, "ENVMGR_CUDA": "12.4"})
    assert "CUDA 12.4.99" in viaenv.stdout.splitlines()[0]


# ---- bad files: one line, exit 2 -------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, text, says",
    [
        ("envmgr.toml", 'cuda = "12.4\n', "not a valid envmgr.toml file"),
        ("envmgr.toml", "cuda = 12.4\n", "key 'cuda' must be a non-empty string"),
        ("envmgr.toml", 'cuda = ""\n', "key 'cuda' must be a non-empty string"),
        ("envmgr.toml", 'cuad = "12.4"\n', "unknown key 'cuad'"),
        ("envmgr.toml", "a" + ".a" * 150 + " = 1\n", "nested 100 or more levels deep"),
        ("pyproject.toml", 'tool.envmgr = "12.4"\n', "[tool.envmgr] must be a table"),
        ("pyproject.toml", '[tool.envmgr]\ncuda = "12.4"\n[tool.envmgr\n', "not a valid pyproject.toml file"),
        ("envmgr.toml", b"\xff\xfe\x00\xd8 bad", "not UTF-8 or UTF-16"),
    ],
)
def test_a_bad_project_file_is_one_line_exit_2(project, tmp_path, name, text, says):
    path = project / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    for args in (("config",), ("--machine", CUDA124, "doctor", "--only", "F12")):
        r = run_cli(*args, env={"ENVMGR_CONFIG_DIR": str(tmp_path / "config")})
        assert r.code == 2 and "Traceback" not in r.stderr and r.stdout == ""
        first = r.stderr.splitlines()[0]
        assert first.startswith(f"envmgr: error: {path}") and says in first, r.stderr


def test_a_folder_named_envmgr_toml_is_not_a_project_file(project, tmp_path):
    (project / "envmgr.toml").mkdir()
    r = run_cli("config")
    assert r.code == 0 and "no envmgr.toml or pyproject.toml [tool.envmgr] from here upward" in r.stdout


# ---- --gpu / ENVMGR_GPU --------------------------------------------------------------------------


def test_gpu_flag_stands_for_the_gpus_in_list_and_says_override(project, tmp_path):
    env = {"ENVMGR_CONFIG_DIR": str(tmp_path / "config")}
    plain = json.loads(run_cli("--machine", CUDA124, "list", "--json", env=env).stdout)["gpus"]
    r = run_cli("--machine", CUDA124, "list", "--json", "--gpu", "sm_89", env=env)
    (gpu,) = json.loads(r.stdout)["gpus"]
    assert gpu["compute_cap"] == "8.9" and gpu["compute_cap_source"] == "override (--gpu)"
    assert "override" in gpu["name"]
    # the flag held for that command only: the next one sees the machine's own GPUs again
    assert json.loads(run_cli("--machine", CUDA124, "list", "--json", env=env).stdout)["gpus"] == plain
    text = run_cli("--machine", CUDA124, "list", env={**env, "ENVMGR_GPU": "12.0"}).stdout
    assert "sm_120 (override: ENVMGR_GPU)" in text


def test_gpu_override_in_doctor_and_config(project, tmp_path):
    env = {"ENVMGR_CONFIG_DIR": str(tmp_path / "config"), "ENVMGR_GPU": "sm_86"}
    r = run_cli("--machine", CUDA124, "doctor", "--only", "F12", "--json", env=env)
    (f12,) = [f for f in json.loads(r.stdout)["checks"] if f["id"] == "F12"]
    assert f12["status"] == "warn" and "override (ENVMGR_GPU)" in f12["summary"]
    assert "CMAKE_CUDA_ARCHITECTURES=86" in f12["fix"]
    assert settings(tmp_path, env=env)["gpu"] == ("sm_86", "environment", "ENVMGR_GPU")
    assert settings(tmp_path, "--gpu", "89", env=env)["gpu"] == ("89", "flag", "--gpu")


@pytest.mark.parametrize(
    "args, env, says",
    [
        (("--gpu", "rtx4090"), {}, "--gpu 'rtx4090' is not a GPU architecture"),
        ((), {"ENVMGR_GPU": "ampere"}, "ENVMGR_GPU='ampere' is not a GPU architecture"),
    ],
)
def test_a_bad_gpu_is_one_line_exit_2(project, tmp_path, args, env, says):
    for cmd in (("list",), ("doctor", "--only", "F12"), ("config",)):
        r = run_cli("--machine", CUDA124, *cmd, *args, env={"ENVMGR_CONFIG_DIR": str(tmp_path / "config"), **env})
        assert r.code == 2 and r.stderr.splitlines()[0] == f"envmgr: error: {says}", r.stderr


def test_gpu_override_in_installs_plan_chooses_the_wheel_for_it(project, tmp_path):
    """The recorded machine's RTX 4070 SUPER (8.9) cannot run the index's wheel (cubin sm_90a, PTX compute_90:
    test_prebuilt_index.py); with --gpu sm_90 (a docker build for an H100) the plan names the override and
    chooses that wheel."""
    folder = tmp_path / "cu124"
    wheel(folder, "0.3.16", HERE_LIB)
    env = {
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "ENVMGR_WHEEL_INDEX": "",
    }
    r = run_cli(
        "--machine",
        CUDA124,
        "install",
        "--gpu",
        "sm_90",
        "llama-cpp-python",
        "--dry-run",
        "--json",
        "--prebuilt-index",
        str(folder),
        env=env,
    )
    assert r.code == 0, r.stderr
    plan = json.loads(r.stdout)["prebuilt"]
    assert plan["machine"]["gpus"] == [{"name": "sm_90 (override: --gpu)", "compute_capability": "9.0"}]
    (cand,) = plan["candidates"]
    assert cand["verdict"] == "chosen" and "sm_90 (override: --gpu)" in cand["reason"]
    assert "GPU(s) sm_90 (override: --gpu) (9.0)" in r.stderr


def test_the_projects_python_is_installs_target_and_a_missing_one_names_its_file(project, tmp_path):
    seen = []

    @click.command("install")
    @selector_options
    def probe(selection):
        seen.append(selection)

    (project / "envmgr.toml").write_text(f'python = "{Path(sys.executable).as_posix()}"\n')
    assert CliRunner().invoke(probe, [], obj=Ctx()).exit_code == 0
    assert seen[-1].target_python == os.path.normpath(sys.executable)
    (project / "envmgr.toml").write_text('python = "venv/bin/python"\n')
    r = run_cli(
        "install",
        "--recipe",
        "llama-cpp-python",
        "x==1",
        env={"ENVMGR_CACHE_DIR": str(tmp_path / "cache"), "ENVMGR_CONFIG_DIR": str(tmp_path / "config")},
    )
    assert r.code == 2 and r.stderr.splitlines()[0].endswith(f"(python from envmgr.toml {project / 'envmgr.toml'})")
    assert str(project / "venv" / "bin" / "python") in r.stderr.splitlines()[0]
