"""`--cuda PATH`: any path that resolves to a found toolkit selects it (issue 11 item 3).

Discovery records real paths (/usr/local/cuda-13.0), so `--cuda /usr/local/cuda`, a symlink listed
under "found by", used to say "no CUDA toolkit matches" (exit 3). The toolkit here is laid out by the
test (hand-made: a folder and an nvcc that prints a real `nvcc --version` from tests/corpus).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import CORPUS, run_cli

pytestmark = pytest.mark.posix


@pytest.fixture
def kit(tmp_path, monkeypatch):
    root = tmp_path / "kits" / "cuda-12.4"
    for sub in ("bin", "include", "lib64"):
        (root / sub).mkdir(parents=True)
    nvcc = root / "bin" / "nvcc"
    nvcc.write_text(f"#!/bin/sh\ncat '{CORPUS / 'nvcc-version-linux-12.4.131.txt'}'\n")
    nvcc.chmod(0o755)
    (tmp_path / "cuda").symlink_to(root)  # like /usr/local/cuda -> cuda-12.4
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "cu").symlink_to(tmp_path / "cuda")  # a link to a link
    monkeypatch.chdir(tmp_path)
    return root


def _env(tmp_path: Path, kit: Path) -> dict:
    return {"CUDA_HOME": str(kit), "ENVMGR_CACHE_DIR": str(tmp_path / "cache")}


@pytest.mark.parametrize(
    "given",
    [
        "{tmp}/cuda",
        "{tmp}/cuda/",
        "./cuda",
        "links/cu",
        "{tmp}/links/../cuda",
        "{kit}",
        "{kit}/bin/nvcc",
        "{tmp}/cuda/bin/nvcc",
    ],
)
def test_export_with_a_path_that_resolves_to_the_toolkit(kit, tmp_path, given):
    got = run_cli("export", "--cuda", given.format(tmp=tmp_path, kit=kit), "--format", "json", env=_env(tmp_path, kit))
    assert got.code == 0, got.stderr
    assert got.json()["summary"]["cuda_path"] == str(kit)


def test_doctor_takes_the_same_path(kit, tmp_path):
    env = _env(tmp_path, kit)
    doc = run_cli("doctor", "--cuda", str(tmp_path / "cuda"), "--json", env=env)
    assert doc.code in (0, 1), doc.stderr
    assert doc.json()["selection"]["cuda_path"] == str(kit)


def test_a_path_to_no_toolkit_is_still_exit_3(kit, tmp_path):
    (tmp_path / "empty").mkdir()
    for given in (str(tmp_path / "empty"), str(tmp_path / "nosuch")):
        got = run_cli("export", "--cuda", given, env=_env(tmp_path, kit))
        assert got.code == 3 and "no CUDA toolkit matches" in got.stderr and str(kit) in got.stderr


def test_this_machines_usr_local_cuda_symlink():
    link = Path("/usr/local/cuda")
    if not link.is_symlink() or not (link / "bin" / "nvcc").exists():
        pytest.skip("no /usr/local/cuda symlink to a toolkit on this machine")
    got = run_cli("export", "--cuda", str(link), "--format", "json")
    assert got.code == 0, got.stderr
    assert got.json()["summary"]["cuda_path"] == os.path.realpath(link)
