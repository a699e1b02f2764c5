"""fix-msbuild for real in a Wine prefix's drive_c: discovery through Wine (vswhere.exe built here answers
with a real vswhere sample, the registry through Wine's reg.exe, NVIDIA's nvcc.exe), files written and
undone on disk. The five CUDA 13.2 MSBuildExtensions files are hand-made placeholders: NVIDIA's
integration files are not in the PyPI wheels, so no real sample exists here; only their names are real.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import CORPUS, run_cli
from tests.wine.conftest import CUDA_DIR

pytestmark = pytest.mark.wine

BUILDTOOLS = "C:\\Program Files (x86)\\Microsoft Visual Studio\\2022\\BuildTools"
V170 = BUILDTOOLS + "\\MSBuild\\Microsoft\\VC\\v170\\BuildCustomizations"
EXT = CUDA_DIR + "\\extras\\visual_studio_integration\\MSBuildExtensions"
NAMES = (
    "CUDA 13.2.props",
    "CUDA 13.2.targets",
    "CUDA 13.2.Version.props",
    "CUDA 13.2.xml",
    "Nvda.Build.CudaTasks.v13.2.dll",
)
VSWHERE_SAMPLE = "vswhere-products-star-json-vs2022-buildtools-17.14.28-no-vctools.json"


def put(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def snapshot(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture
def machine(wine_prefix, fake_vswhere, tmp_path):
    """Build Tools 2022 (the real sample's instance, given MSVC 14.44) and CUDA 13.2's integration files."""
    fake_vswhere.answer((CORPUS / VSWHERE_SAMPLE).read_bytes())
    bt = wine_prefix.unix(BUILDTOOLS)
    put(bt / "VC" / "Tools" / "MSVC" / "14.44.35207" / "bin" / "Hostx64" / "x64" / "cl.exe", b"")
    put(bt / "VC" / "Auxiliary" / "Build" / "vcvarsall.bat", b"@echo off\r\n")
    put(bt / "VC" / "Auxiliary" / "Build" / "Microsoft.VCToolsVersion.default.txt", b"14.44.35207\r\n")
    put(wine_prefix.unix(V170) / "masm.props", b"<Project />\r\n")
    ext = wine_prefix.unix(EXT)
    for name in NAMES:
        put(ext / name, f"<!-- hand-made stand-in for {name} -->\r\n".encode() * 40)
    env = {"ENVMGR_DATA_DIR": str(tmp_path / "data")}
    try:
        yield wine_prefix, env
    finally:
        shutil.rmtree(bt)
        shutil.rmtree(wine_prefix.unix(CUDA_DIR + "\\extras"))


def fix(prefix, env, *args):
    return run_cli("--wine-prefix", str(prefix.path), "fix-msbuild", *args, env=env)


def test_plan_apply_again_and_undo_in_drive_c(machine):
    prefix, env = machine
    folder = prefix.unix(V170)
    before = snapshot(folder)

    planned = fix(prefix, env, "--dry-run", "--json")
    assert planned.code == 0, planned.stderr
    data = planned.json()
    work = [p for p in data["pairs"] if p["status"] == "work"]
    assert [(p["folder"], p["cuda"]["version"]) for p in work] == [(V170, "13.2")]
    assert [(f["name"], f["status"]) for f in work[0]["files"]] == [(n, "missing") for n in NAMES]
    assert fix(prefix, env, "--check").code == 1

    applied = fix(prefix, env, "--yes", "--json")
    assert applied.code == 0, applied.stderr
    assert [c["action"] for c in applied.json()["applied"]["changes"]] == ["create"] * 5
    for name in NAMES:
        assert (folder / name).read_bytes() == (prefix.unix(EXT) / name).read_bytes()
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]

    again = fix(prefix, env, "--yes")
    assert again.code == 0 and "nothing to fix" in again.stderr
    assert fix(prefix, env, "--check").code == 0

    undone = fix(prefix, env, "--undo", "--yes")
    assert undone.code == 0, undone.stderr
    assert snapshot(folder) == before


def test_plan_file_through_a_link_is_refused(machine, tmp_path):
    prefix, env = machine
    planned = fix(prefix, env, "--dry-run", "--json").json()
    copies = [
        {"source": f["source"], "dest": f["dest"], "source_sha256": f["source_sha256"], "dest_sha256": f["dest_sha256"]}
        for p in planned["pairs"]
        if p["status"] == "work"
        for f in p["files"]
    ]
    outside = tmp_path / "outside.xml"
    outside.write_bytes(b"not yours")
    os.symlink(outside, prefix.unix(V170) / "CUDA 13.2.xml")
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps({"schema": 1, "kind": "envmgr-msbuild-plan", "copies": copies}))
    try:
        refused = fix(prefix, env, "--apply-plan", str(plan_file))
    finally:
        (prefix.unix(V170) / "CUDA 13.2.xml").unlink()
    assert refused.code == 2, refused.stderr
    assert "link or junction" in refused.stderr
    assert outside.read_bytes() == b"not yours"
    assert not [n for n in NAMES if (prefix.unix(V170) / n).exists()]
