"""envmgr installed the way pipx and `uv tool install` install it: its built wheel in an isolated venv of
its own whose bin is on PATH, envmgr run from there as a subprocess (the console script pip wrote). Its
own Python is the one the user never runs; install, verify and doctor must target the user's: the
active venv, a .venv in the folder or a parent, else the first python on PATH. The tool venv gets the
wheel with --no-deps and sees the dependencies of this test run through a .pth file (no network)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    sys.platform == "win32",
    reason="the POSIX venv layout; the Windows layouts are test_target_python.py's, under Windows CPython",
)

REPO = Path(__file__).resolve().parents[3]
MACHINE = str(REPO / "tests" / "machines" / "community-buildtools-cuda124.toml")


def make_venv(where: Path) -> Path:
    venv.EnvBuilder(with_pip=False, symlinks=True).create(where)
    return where / "bin" / "python"


@pytest.fixture(scope="module")
def tool(tmp_path_factory) -> Path:
    """The tool venv's bin folder, with `envmgr` and `python` in it (as pipx's venv has)."""
    base = tmp_path_factory.mktemp("pipx")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(base / "dist"), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    [wheel] = (base / "dist").glob("*.whl")
    root = base / "venvs" / "envmgr"
    venv.EnvBuilder(with_pip=True, symlinks=True).create(root)
    python = root / "bin" / "python"
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    site = next((root / "lib").glob("python3*/site-packages"))
    deps = [p for p in sys.path if p.endswith("site-packages")]
    (site / "zz-test-deps.pth").write_text("\n".join(deps) + "\n")  # after the venv's own: envmgr is the wheel's
    where = subprocess.run([str(root / "bin" / "envmgr"), "--version"], capture_output=True, text=True)
    assert where.returncode == 0, where.stderr
    imported = subprocess.run(
        [str(python), "-c", "import envmgr; print(envmgr.__file__)"], capture_output=True, text=True, cwd=base
    )  # not the checkout: `python -c` puts the working folder first
    assert imported.stdout.startswith(str(site)), imported.stdout  # not the source tree
    return root / "bin"


def envmgr(
    tool: Path, cwd: Path, tmp: Path, *args: str, extra_path: str = "", virtual_env: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH")}
    env.update(
        {
            "PATH": os.pathsep.join(p for p in (str(tool), extra_path, "/nonexistent-empty") if p),
            "ENVMGR_CACHE_DIR": str(tmp / "cache"),
            "ENVMGR_CONFIG_DIR": str(tmp / "config"),
            "ENVMGR_DATA_DIR": str(tmp / "data"),
            "ENVMGR_WHEEL_INDEX": "",
            "ENVMGR_PREBUILT_INDEX": "",
            "NO_COLOR": "1",
        }
    )
    if virtual_env:
        env["VIRTUAL_ENV"] = virtual_env
    return subprocess.run([str(tool / "envmgr"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def dry_run_target(tool: Path, cwd: Path, tmp: Path, **kw: str) -> dict[str, str]:
    (tmp / "srv").mkdir(exist_ok=True)
    r = envmgr(
        tool,
        cwd,
        tmp,
        "--machine",
        MACHINE,
        "install",
        "llama-cpp-python",
        "--dry-run",
        "--json",
        "--prebuilt-index",
        str(tmp / "srv"),
        **kw,
    )
    assert r.returncode == 0, r.stderr
    target = json.loads(r.stdout)["target_python"]
    assert f"envmgr: target Python {target['path']} (" in r.stderr
    return target


def test_with_a_project_venv_active(tool, tmp_path):
    project = make_venv(tmp_path / "proj" / "env")
    target = dry_run_target(tool, tmp_path, tmp_path, virtual_env=str(tmp_path / "proj" / "env"))
    assert target == {"path": str(project), "why": "VIRTUAL_ENV"}


def test_with_a_dot_venv_in_the_folder_and_in_a_parent(tool, tmp_path):
    dot = make_venv(tmp_path / "proj" / ".venv")
    (tmp_path / "proj" / "src" / "pkg").mkdir(parents=True)
    assert dry_run_target(tool, tmp_path / "proj", tmp_path) == {"path": str(dot), "why": ".venv"}
    assert dry_run_target(tool, tmp_path / "proj" / "src" / "pkg", tmp_path) == {"path": str(dot), "why": ".venv"}


def test_with_none_the_first_python_on_path(tool, tmp_path):
    other = tmp_path / "userbin"
    other.mkdir()
    (other / "python").symlink_to(sys.executable)
    target = dry_run_target(tool, tmp_path, tmp_path, extra_path=str(other))
    assert target == {"path": str(other / "python"), "why": "PATH"}  # not the tool venv's bin/python


def test_with_nothing_else_envmgrs_own(tool, tmp_path):
    assert dry_run_target(tool, tmp_path, tmp_path) == {"path": str(tool / "python"), "why": "envmgr"}


def test_verify_targets_the_project_venv(tool, tmp_path):
    project = make_venv(tmp_path / "proj" / ".venv")
    r = envmgr(tool, tmp_path / "proj", tmp_path, "verify", "no-such-package-h26f", "--json")
    assert r.returncode == 1, r.stderr
    data = json.loads(r.stdout)
    assert data["target_python"] == {"path": str(project), "why": ".venv"}
    assert data["python"] == str(project)  # the child that looked for the package was the project's Python


def test_doctor_inspects_the_project_venv(tool, tmp_path):
    project = make_venv(tmp_path / "proj" / ".venv")
    r = envmgr(tool, tmp_path / "proj", tmp_path, "doctor", "--only", "F14", "--json")
    assert r.returncode in (0, 1), r.stderr
    assert json.loads(r.stdout)["target_python"] == {"path": str(project), "why": ".venv"}
    assert f"envmgr: target Python {project} (the .venv of {tmp_path / 'proj'})" in r.stderr
