"""envmgr/commands/fix_msbuild_flow.py: fix-msbuild's steps called directly: refused off Windows, --check on a
record, apply then undo on real files (the classic machine under a Wine-style drive_c, tests/unit/msbuild/
test_msbuild_apply.py's tree), the elevated step refusing a record before it opens the plan file."""

from __future__ import annotations

from pathlib import Path

import pytest

from envmgr.commands import fix_msbuild_flow as flow
from envmgr.errors import CheckFailed, UsageError
from envmgr.host.recorded import load_machine
from tests.conftest import MACHINES
from tests.unit.msbuild.test_msbuild_apply import BT, EXT, NAMES, tree  # noqa: F401  (tree: the fixture)

CLASSIC = str(MACHINES / "community-buildtools-cuda124.toml")


def test_a_linux_machine_is_refused_with_the_record_route():
    with pytest.raises(UsageError, match=r"^fix-msbuild is a Windows repair \(this machine is linux\)$"):
        flow.run(load_machine(str(MACHINES / "linux-two-toolkits.toml")), flow.Options())


def test_check_on_a_record_prints_the_plan_and_fails(capsys):
    with pytest.raises(CheckFailed, match=r"^4 CUDA integration file\(s\) missing or stale$"):
        flow.run(load_machine(CLASSIC), flow.Options(mode="check"))
    out = capsys.readouterr().out
    assert "CUDA 12.4.props" in out and "BuildTools" in out
    assert flow.run(load_machine(CLASSIC), flow.Options(mode="dry-run")) == 0


def test_apply_then_undo_on_real_files(tree, capsys):  # noqa: F811
    assert flow.run(tree, flow.Options(yes=True)) == 0
    dest = [Path(tree.unix_path(f"{BT}\\{n}")) for n in NAMES]
    assert all(p.read_bytes() == Path(tree.unix_path(f"{EXT}\\{p.name}")).read_bytes() for p in dest)
    assert "undo with: envmgr fix-msbuild --undo" in capsys.readouterr().err
    assert flow.run(tree, flow.Options(yes=True)) == 0 and "nothing to fix" in capsys.readouterr().err
    assert flow.run_undo(tree, flow.Options(yes=True)) == 0
    assert not any(p.exists() for p in dest)
    assert flow.run_undo(tree, flow.Options(yes=True)) == 0 and "nothing to undo" in capsys.readouterr().err


def test_the_elevated_step_refuses_a_record_before_reading_the_plan(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text("{}")
    with pytest.raises(UsageError, match="recorded machines are for planning"):
        flow.run_plan_file(load_machine(CLASSIC), str(plan))
    assert not (tmp_path / "plan.json.result.json").exists()
