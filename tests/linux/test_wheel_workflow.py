"""The jobs of .github/workflows/cuda-wheels.yml, run here as CI runs them: two build jobs
(.github/scripts/wheel-build.sh, two architecture lists) and the index job (wheel-index.sh)
merging their caches into an index that already exists. The package is test_wheels_e2e.py's
in-tree backend (no network); the CUDA toolkit is this machine's. What only a runner has (NVIDIA's
installers, upload/download-artifact, releases, Pages) is not run here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envmgr.wheels import index as wheelindex
from tests.conftest import need
from tests.linux.test_wheels_e2e import RECIPE, ROOT, fake_cuda_project

pytestmark = [pytest.mark.slow, pytest.mark.linux]
SCRIPTS = ROOT / ".github" / "scripts"
WORKFLOW = ROOT / ".github" / "workflows" / "cuda-wheels.yml"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    need(shutil.which("nvcc") is not None, "no nvcc on PATH: the recipe needs a CUDA toolkit on this machine")
    base = tmp_path_factory.mktemp("wheel-workflow")
    fake_cuda_project(base)
    return base


def job(base: Path, script: str, **env: str) -> subprocess.CompletedProcess:
    full = {
        **os.environ,
        "ENVMGR_CONFIG_DIR": str(base / "config"),
        "NO_COLOR": "1",
        "PYTHONPATH": str(ROOT),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PYTHON": sys.executable,
        "ENVMGR": f"{sys.executable} -m envmgr",
        **env,
    }
    for name in ("ENVMGR_MACHINE", "ENVMGR_WHEEL_INDEX", "ENVMGR_CACHE_DIR"):
        full.pop(name, None)
    return subprocess.run(["bash", str(SCRIPTS / script)], env=full, capture_output=True, text=True, timeout=300)


def build_job(base: Path, name: str, archs: str) -> subprocess.CompletedProcess:
    gh = base / f"{name}-github"
    gh.mkdir()
    return job(
        base,
        "wheel-build.sh",
        SPEC=str(base / "fakecuda-1.2.3.tar.gz"),
        RECIPE="fake-cuda",
        CUDA="13.0.2",
        ARCHS=archs,
        PIP_OPTIONS="--no-index",
        OUT=str(base / name),
        IMPORT="fakecuda",
        GITHUB_ENV=str(gh / "env"),
        GITHUB_PATH=str(gh / "path"),
    )


def test_the_scripts_the_workflow_runs_exist():
    named = set(re.findall(r"\.github/scripts/([\w-]+\.sh)", WORKFLOW.read_text()))
    assert named == {"wheel-build.sh", "wheel-index.sh"}
    assert all((SCRIPTS / n).is_file() for n in named)


def test_build_jobs_then_the_index_job(base):
    one = build_job(base, "job-90", "90")
    assert one.returncode == 0, one.stdout + one.stderr
    assert "verified fakecuda-1.2.3-py3-none-any.whl" in one.stdout and "CUDA 13.0, archs 90" in one.stdout
    assert "fakecuda/lib/libfake_cuda.so" in one.stdout and "imported fakecuda" in one.stdout
    exported = (base / "job-90-github" / "env").read_text()
    assert "CMAKE_ARGS=" in exported and "CMAKE_CUDA_ARCHITECTURES=90" in exported

    # the previous run's index: job-90's wheel alone, published before this run
    site = base / "site"
    first = job(base, "wheel-index.sh", CACHES=str(base / "job-90" / "cache"), SITE=str(site))
    assert first.returncode == 0, first.stdout + first.stderr
    before = (site / "fakecuda" / "index.html").read_text()

    two = build_job(base, "job-86", "86")
    assert two.returncode == 0, two.stdout + two.stderr
    # download-artifact with merge-multiple: every job's cache/wheels/<digest>/ in one folder
    caches = base / "caches" / "wheels"
    for name in ("job-90", "job-86"):
        shutil.copytree(base / name / "cache" / "wheels", caches, dirs_exist_ok=True)
    merged = job(base, "wheel-index.sh", CACHES=str(base / "caches"), SITE=str(site))
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "published 1 new wheel(s), 1 already there" in merged.stdout
    assert "1 project(s), 2 envmgr wheel(s), every hash and key file checked" in merged.stdout
    links = wheelindex.parse_links((site / "fakecuda" / "index.html").read_text())
    assert len(links) == 2 and wheelindex.parse_links(before)[0] in links


def test_a_cpu_only_build_fails_the_job(base):
    (base / "config" / "recipes" / "cpu.toml").write_text(
        RECIPE.format(name="fake-cpu", args='"-DGGML_CUDA=off", "-DX=CUDA"')
    )
    out = job(
        base,
        "wheel-build.sh",
        SPEC=str(base / "fakecuda-1.2.3.tar.gz"),
        RECIPE="fake-cpu",
        CUDA="13.0",
        ARCHS="90",
        PIP_OPTIONS="--no-index",
        OUT=str(base / "job-cpu"),
    )
    assert out.returncode != 0 and "CPU-only wheel" in out.stderr
