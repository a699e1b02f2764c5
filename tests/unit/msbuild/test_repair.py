"""envmgr/msbuild/repair.py: fix-msbuild's steps without prompts, on the classic recorded machine (VS 2022
Build Tools lacks CUDA 12.4's BuildCustomizations, Community has them) laid out as real files under a
Wine-style drive_c: the record answers registry, environment and vswhere, every file is real (no wine runs)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from envmgr.discover import discover
from envmgr.errors import ApplyFailed
from envmgr.host.base import WINDOWS
from envmgr.host.recorded import load_machine
from envmgr.host.wine import WineHost
from envmgr.msbuild.repair import apply_and_verify, elevated_command, pair_plan, verify, writer
from tests.conftest import EXAMPLES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MACHINE = EXAMPLES / "community-buildtools-cuda124.toml"
BT_PATH = "C:\\Program Files (x86)\\Microsoft Visual Studio\\2022\\BuildTools"
BT = BT_PATH + "\\MSBuild\\Microsoft\\VC\\v170\\BuildCustomizations"
EXT = ("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\extras\\visual_studio_integration"
       "\\MSBuildExtensions")
NAMES = ("CUDA 12.4.props", "CUDA 12.4.targets", "CUDA 12.4.xml", "Nvda.Build.CudaTasks.v12.4.dll")


class TreeHost:
    """The record's registry, environment and commands; its files real, under a Wine-style drive_c."""

    platform = WINDOWS

    def __init__(self, record, files: WineHost) -> None:
        self.record, self.files = record, files

    def __getattr__(self, name):
        if name in ("read_bytes", "read_text", "exists", "is_dir", "listdir", "stat", "realpath", "unix_path",
                    "local_path", "writes_files", "needs_elevation", "name"):
            return getattr(self.files, name)
        return getattr(self.record, name)

    @property
    def env(self):
        return self.record.env


@pytest.fixture
def tree(tmp_path) -> TreeHost:
    wine = WineHost(str(tmp_path / "pfx"))
    for path, value in tomllib.loads(MACHINE.read_text("utf-8"))["files"].items():
        target = Path(tmp_path / "pfx" / "drive_c", *path[3:].split("\\"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(value.encode("utf-8"))
    for name in NAMES:         # distinct contents, as the real files have (the record holds placeholders)
        Path(wine.unix_path(f"{EXT}\\{name}")).write_bytes(f"<!-- real {name} -->\r\n".encode() * 20)
    return TreeHost(load_machine(str(MACHINE)), wine)


def _pair(host):
    inv = discover(host)
    vs = next(v for v in inv.visual_studio if v.path == BT_PATH)
    kit = next(k for k in inv.cuda if k.short == "12.4")
    return inv, vs, kit


def test_a_record_cannot_be_written_and_says_why():
    ops, why = writer(load_machine(str(MACHINE)))
    assert ops is None and why.startswith("recorded machines are for planning")


def test_plan_one_pair_apply_and_verify_on_real_files(tree):
    ops, why = writer(tree)
    assert ops is not None and why == ""
    inv, vs, kit = _pair(tree)
    plan = pair_plan(tree, inv, vs, kit)
    assert sorted(c.dest.rsplit("\\", 1)[1] for c in plan.copies) == sorted(NAMES)
    assert all(c.dest.startswith(BT + "\\") for c in plan.copies)
    assert elevated_command(plan) == f"envmgr fix-msbuild --vs {vs.instance_id} --cuda {kit.short}"
    with pytest.raises(ApplyFailed) as caught:        # nothing written yet: every file is still missing
        verify(tree, inv, plan)
    assert len(caught.value.details) == 4
    outcome = apply_and_verify(tree, inv, plan, ops)
    assert len(outcome.changes) == 4 and outcome.run_id
    for name in NAMES:
        assert Path(tree.unix_path(f"{BT}\\{name}")).read_bytes() == f"<!-- real {name} -->\r\n".encode() * 20
    assert pair_plan(tree, inv, vs, kit).copies == ()   # a fresh plan has nothing left to copy
    assert elevated_command(pair_plan(tree, inv, vs, kit)) == "envmgr fix-msbuild"
