"""envmgr/host/dirs.py: the shipped data folders, and the user folders from ENVMGR_*_DIR (the isolation
fixture sets them per test), else platformdirs."""

from __future__ import annotations

from pathlib import Path

import platformdirs

from envmgr.host import dirs


def test_user_folders_follow_the_settings(isolated_user_folders):
    assert dirs.cache_dir() == isolated_user_folders / "cache"
    assert dirs.config_dir() == isolated_user_folders / "config"
    assert dirs.data_dir() == isolated_user_folders / "data"


def test_without_a_setting_platformdirs_decides(monkeypatch, tmp_path):
    for name in ("ENVMGR_CACHE_DIR", "ENVMGR_CONFIG_DIR", "ENVMGR_DATA_DIR"):
        monkeypatch.delenv(name)
    # the suite's trap folders stand behind platformdirs' defaults (tests/isolation.py): nothing is created
    assert dirs.cache_dir() == Path(platformdirs.user_cache_dir("envmgr", appauthor=False))
    assert dirs.config_dir() == Path(platformdirs.user_config_dir("envmgr", appauthor=False))
    assert dirs.data_dir() == Path(platformdirs.user_data_dir("envmgr", appauthor=False))


def test_shipped_folders_hold_the_shells_and_the_recipes():
    assert (dirs.shipped("shells") / "envmgr.fish").is_file()
    recipes = dirs.shipped("templates", "recipes")
    assert recipes.is_dir() and any(recipes.glob("*.toml"))
