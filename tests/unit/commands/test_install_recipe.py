"""envmgr/commands/install_recipe.py: `install --recipe NAME SPEC`'s checks before doctor and its report."""

from __future__ import annotations

import json

import pytest

from envmgr.cli.options import RecipeArgs
from envmgr.commands.install_flow import Report
from envmgr.commands.install_recipe import RUN_ONLY, _check_cache, _report, recipe_route
from envmgr.errors import UsageError


def test_a_recipe_name_is_needed():
    with pytest.raises(UsageError, match="^envmgr install needs --recipe NAME and a SPEC$"):
        recipe_route(None, ["llama-cpp-python"], None, RecipeArgs(name=None), None, False, False)


def test_checking_the_wheel_cache_leaves_nothing_behind(tmp_path):
    root = tmp_path / "a" / "b" / "wheels"
    _check_cache(root)
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "kept").mkdir()
    _check_cache(tmp_path / "kept")
    assert (tmp_path / "kept").is_dir()


def test_the_report_as_text_and_json(capsys):
    rep = Report(
        "pywhispercpp==1.3.0",
        "pywhispercpp",
        "--recipe",
        "pywhispercpp==1.3.0",
        lines=["doctor: F17 is about running here, not about the build"],
        timings={"doctor": 1.26},
    )
    assert _report(rep, "/venv/bin/python", False) == 0
    assert capsys.readouterr().out == (
        "envmgr install --recipe pywhispercpp pywhispercpp==1.3.0: installed into "
        "/venv/bin/python (recipe from --recipe)\n"
        "  doctor: F17 is about running here, not about the build\n"
    )
    assert _report(rep, "/venv/bin/python", True) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is True and data["recipe"] == "pywhispercpp" and data["seconds"] == {"doctor": 1.3}
    assert RUN_ONLY == {"F17", "F23"}
