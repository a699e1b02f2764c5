"""Discovery on this real Linux machine: its nvcc 13.0, and a pip-installed CUDA 13.2."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.linux


def _kit(data, path):
    found = [k for k in data["cuda"] if k["path"] == str(path)]
    assert found, f"{path} not in {[k['path'] for k in data['cuda']]}"
    return found[0]


def test_usr_local_cuda_13_0_is_found_with_its_nvcc(cli, cuda_13_0):
    result = cli("list", "--json")
    assert result.code == 0, result.stderr
    kit = _kit(result.json(), cuda_13_0)
    # This toolkit has no version.json: the version must come from running its nvcc.
    assert kit["version"] == "13.0.88"
    assert kit["version_source"] == "nvcc --version"
    assert kit["nvcc"] == f"{cuda_13_0}/bin/nvcc"
    assert "/usr/local" in kit["sources"]
    assert kit["problems"] == []


def test_pip_installed_cuda_13_2_is_a_second_toolkit(cli, cuda_13_0, pip_cuda_venv):
    python = pip_cuda_venv / "bin" / "python"
    result = cli("list", "--json", "--python", str(python))
    assert result.code == 0, result.stderr
    data = result.json()
    site = subprocess.run(
        [str(python), "-c", "import sysconfig;print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    kit = _kit(data, f"{site}/nvidia/cu13")
    assert kit["version"].startswith("13.2.")
    assert kit["nvcc"] == f"{site}/nvidia/cu13/bin/nvcc"
    assert any(s.startswith("pip (") for s in kit["sources"])
    names = dict(kit["components"])
    assert names["nvidia-cuda-nvcc"].startswith("13.2.")
    assert kit["problems"] == []
    assert _kit(data, cuda_13_0)["version"] == "13.0.88"


def test_record_then_replay_gives_the_same_inventory(cli, tmp_path, cuda_13_0):
    out = tmp_path / "me.toml"
    recorded = cli("record", "-o", str(out))
    assert recorded.code == 0, recorded.stderr
    live = cli("list", "--json").json()
    replay = cli("--machine", str(out), "list", "--json")
    assert replay.code == 0, replay.stderr
    assert replay.json() == live


def test_envmgr_runs_as_a_module_and_reports_its_version():
    done = subprocess.run([sys.executable, "-m", "envmgr", "--version"], capture_output=True, text=True)
    assert done.returncode == 0
    from envmgr import __version__

    assert done.stdout.strip() == f"envmgr, version {__version__}"
