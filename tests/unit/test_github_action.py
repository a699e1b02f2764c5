"""This repository's GitHub Action: action.yml's structure (actionlint checks workflows, not action
metadata), and its script, .github/scripts/envmgr_action.py, run against recorded machines with
stand-in $GITHUB_ENV / $GITHUB_PATH / $GITHUB_OUTPUT files: what it writes, and that a failed doctor
check (or a selector that matches nothing) stops it before anything is written."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import MACHINES, ROOT

ACTION = ROOT / "action.yml"
SCRIPT = ROOT / ".github" / "scripts" / "envmgr_action.py"
RUNNER = MACHINES / "windows-latest-vs2026.toml"
LAPTOP = MACHINES / "vs2026-laptop-no-v143.toml"
LINUX = MACHINES / "linux-two-toolkits.toml"
V143_BIN = "C:\\Program Files\\Microsoft Visual Studio\\18\\Enterprise\\VC\\Tools\\MSVC\\14.44.35207\\bin\\HostX64\\x64"
V143 = "Microsoft.VisualStudio.Component.VC.14.44.17.14.x86.x64"


def load_yaml(path: Path) -> dict:
    yaml = pytest.importorskip("yaml")  # PyYAML: tests/requirements.txt (the script tests need none)
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def metadata() -> dict:
    return load_yaml(ACTION)


def test_action_metadata_has_the_required_keys_and_inputs():
    meta = metadata()
    assert {"name", "description", "inputs", "runs"} <= set(meta)
    assert {"cuda", "vs", "recipe", "python"} <= set(meta["inputs"])
    for name, spec in meta["inputs"].items():
        assert spec.get("description"), f"input {name} has no description"
        assert spec.get("required") is False and spec.get("default") == "", name
    assert meta["runs"]["using"] == "composite"


def test_composite_steps_set_a_shell_and_use_every_input_through_env():
    meta = metadata()
    steps = meta["runs"]["steps"]
    text = ACTION.read_text(encoding="utf-8")
    for step in steps:
        assert ("run" in step) != ("uses" in step), step
        if "run" in step:
            assert step.get("shell") in ("bash", "pwsh", "python", "sh", "cmd", "powershell"), step
            # inputs reach scripts through env:, never spliced into the script text (injection)
            assert "${{" not in step["run"], step["run"]
    used = set(re.findall(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}|inputs\.([\w-]+)\s*!=", text))
    used_names = {a or b for a, b in used}
    assert used_names == set(meta["inputs"]), used_names ^ set(meta["inputs"])
    ids = {s.get("id") for s in steps}
    for name, out in meta["outputs"].items():
        step = re.fullmatch(r"\$\{\{ steps\.([\w-]+)\.outputs\.([\w-]+) \}\}", out["value"])
        assert step and step.group(1) in ids and step.group(2) == name, out
    scripts = re.findall(r"\$ACTION_PATH/([\w./-]+\.py)", text)
    assert scripts and all((ROOT / s).is_file() for s in scripts)


def test_the_team_index_workflow_uses_the_action():
    workflow = load_yaml(ROOT / ".github" / "workflows" / "cuda-wheels.yml")
    steps = workflow["jobs"]["build"]["steps"]
    (step,) = [s for s in steps if str(s.get("uses", "")).startswith("./")]
    assert step["uses"] == "./envmgr-src"  # the checkout of this repository, action.yml at its root
    assert set(step["with"]) <= set(metadata()["inputs"])
    assert step["with"]["cuda"] == "${{ matrix.cuda }}"


def run_action(tmp_path: Path, machine: Path, **inputs: str) -> tuple[subprocess.CompletedProcess, dict]:
    files = {name: tmp_path / name.lower() for name in ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT")}
    for f in files.values():
        f.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_", "ENVMGR_")) and k != "ENVMGR"}
    env.update({k: str(v) for k, v in files.items()})
    env.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
    # This checkout's envmgr even where the interpreter's path names another (the Windows-CPython tier's
    # embeddable Python lists one checkout in its ._pth file): ENVMGR is the command the script runs.
    boot = f"import runpy, sys; sys.path.insert(0, {str(ROOT)!r}); runpy.run_module('envmgr', run_name='__main__')"
    env["ENVMGR"] = shlex.join([sys.executable, "-c", boot])
    env.update(
        {
            "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
            "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
            "ENVMGR_DATA_DIR": str(tmp_path / "data"),
            "NO_COLOR": "1",
            "PYTHONIOENCODING": "utf-8",
        }
    )
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--machine", str(machine)],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    return done, {k: f.read_text(encoding="utf-8") for k, f in files.items()}


def test_runner_exports_the_v143_toolset_inside_vs2026(tmp_path):
    done, out = run_action(tmp_path, RUNNER, cuda="12.8.1", checks="F03,F04,F05")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "::warning title=envmgr doctor F04" in done.stdout  # the default 14.50 is too new: a warning
    assert "VCToolsVersion=14.44.35207" in out["GITHUB_ENV"].splitlines()
    assert "CUDA_PATH=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.8" in out["GITHUB_ENV"]
    assert V143_BIN in out["GITHUB_PATH"].splitlines()
    outputs = dict(line.split("=", 1) for line in out["GITHUB_OUTPUT"].splitlines())
    assert outputs["toolset"] == "14.44.35207" and outputs["cuda"] == "12.8.93"
    assert outputs["vs-path"] == "C:\\Program Files\\Microsoft Visual Studio\\18\\Enterprise"


def test_a_failed_check_stops_before_anything_is_exported(tmp_path):
    done, out = run_action(tmp_path, LAPTOP, cuda="12.8", checks="F03,F04,F05")
    assert done.returncode == 1, done.stdout + done.stderr
    (f04,) = [line for line in done.stdout.splitlines() if line.startswith("::error title=envmgr doctor F04")]
    assert V143 in f04 and "vs_installer.exe" in f04 and "-allow-unsupported-compiler would not help" in f04
    assert "%0A" in f04 and "\r" not in f04  # one workflow command per finding, newlines escaped
    assert "::error title=envmgr selection::no MSVC toolset of VS 2026 Community" in done.stdout
    assert out == {"GITHUB_ENV": "", "GITHUB_PATH": "", "GITHUB_OUTPUT": ""}


def test_every_check_by_default(tmp_path):
    # Without `checks`, doctor's F01 (no CUDA MSBuild integration in VS 2026 for the VS generator) stops it.
    done, out = run_action(tmp_path, RUNNER, cuda="12.8")
    assert done.returncode == 1
    assert any(line.startswith("::error title=envmgr doctor F01") for line in done.stdout.splitlines())
    assert out["GITHUB_ENV"] == "" and out["GITHUB_PATH"] == ""


def test_a_selector_that_matches_nothing_is_envmgrs_exit_code(tmp_path):
    done, out = run_action(tmp_path, RUNNER, vs="2019")
    assert done.returncode == 3
    assert "no Visual Studio instance matches --vs 2019" in done.stderr
    assert "::error title=envmgr doctor::envmgr doctor --vs 2019 exited 3" in done.stdout
    assert out["GITHUB_ENV"] == ""


def test_linux_machine_with_another_toolkit_on_path(tmp_path):
    # The snapshot removes CUDA 13.0's folders from PATH (a `remove` op): appending to $GITHUB_ENV
    # resolves it against the current PATH as every other format does (exit 2, "unknown operation
    # 'remove'", before), and 12.4's bin goes through $GITHUB_PATH.
    done, out = run_action(tmp_path, LINUX, cuda="12.4", checks="F13")
    assert done.returncode == 0, done.stdout + done.stderr
    env = out["GITHUB_ENV"].splitlines()
    assert "CUDA_PATH=/usr/local/cuda-12.4" in env
    assert not any(line.startswith("PATH=") and "cuda-13.0" in line for line in env)
    assert "/usr/local/cuda-12.4/bin" in out["GITHUB_PATH"].splitlines()
    assert "cuda=12.4.1" in out["GITHUB_OUTPUT"].splitlines()
