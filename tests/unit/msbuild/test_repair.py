"""envmgr/msbuild/repair.py: fix-msbuild's steps without prompts, on the classic recorded machine (VS 2022 Build
Tools lacks CUDA 12.4's BuildCustomizations, Community has them) laid out as real files under a Wine-style
drive_c (tests/unit/msbuild/test_msbuild_apply.py's `tree`: the record answers registry, environment and
vswhere; every file is real; no wine runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from envmgr.discover import discover
from envmgr.errors import ApplyFailed
from envmgr.host.recorded import load_machine
from envmgr.msbuild.repair import apply_and_verify, elevated_command, pair_plan, verify, writer
from tests.unit.msbuild.test_msbuild_apply import BT, EXT, MACHINE, NAMES, tree  # noqa: F401  (tree: a fixture)

BT_PATH = "C:\\Program Files (x86)\\Microsoft Visual Studio\\2022\\BuildTools"


def _pair(host):
    inv = discover(host)
    vs = next(v for v in inv.visual_studio if v.path == BT_PATH)
    kit = next(k for k in inv.cuda if k.short == "12.4")
    return inv, vs, kit


def test_a_record_cannot_be_written_and_says_why():
    ops, why = writer(load_machine(str(MACHINE)))
    assert ops is None and why.startswith("recorded machines are for planning")


def test_plan_one_pair_apply_and_verify_on_real_files(tree):  # noqa: F811
    ops, why = writer(tree)
    assert ops is not None and why == ""
    inv, vs, kit = _pair(tree)
    plan = pair_plan(tree, inv, vs, kit)
    assert sorted(c.dest.rsplit("\\", 1)[1] for c in plan.copies) == sorted(NAMES)
    assert all(c.dest.startswith(BT + "\\") for c in plan.copies)
    assert elevated_command(plan) == f"envmgr fix-msbuild --vs {vs.instance_id} --cuda {kit.short}"
    with pytest.raises(ApplyFailed) as caught:  # nothing written yet: every file is still missing
        verify(tree, inv, plan)
    assert len(caught.value.details) == 4
    outcome = apply_and_verify(tree, inv, plan, ops)
    assert len(outcome.changes) == 4 and outcome.run_id
    for name in NAMES:
        copied, source = (Path(tree.unix_path(f"{folder}\\{name}")) for folder in (BT, EXT))
        assert copied.read_bytes() == source.read_bytes()
    assert pair_plan(tree, inv, vs, kit).copies == ()  # a fresh plan has nothing left to copy
    assert elevated_command(pair_plan(tree, inv, vs, kit)) == "envmgr fix-msbuild"
