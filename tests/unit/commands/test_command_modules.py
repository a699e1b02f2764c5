"""envmgr/commands/: each command module against the CLI's static command table (cli/main.py COMMANDS, which
`envmgr --help` lists without importing them), and one real behaviour of each command through run_cli
(recorded machines, the test's own cache/config folders)."""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

import click
import pytest

import envmgr.commands
from envmgr.cache.store import cache_key, store
from envmgr.cli.main import COMMANDS, HIDDEN, module_of
from envmgr.commands import (
    cache,
    complete_words,
    config,
    deactivate,
    doctor,
    export,
    fix_msbuild,
    hook,
    init,
    install,
    recipes,
    record,
    run,
    shell,
    verify,
    wheels,
)
from envmgr.commands import list as list_
from envmgr.host import dirs
from tests.conftest import MACHINES

LINUX = str(MACHINES / "linux-two-toolkits.toml")
CLASSIC = str(MACHINES / "community-buildtools-cuda124.toml")
# modules of commands/ that are steps of a command, not commands (install's and fix-msbuild's)
HELPERS = {
    "fix_msbuild_flow",
    "install_build",
    "install_closure",
    "install_components",
    "install_fix",
    "install_flow",
    "install_prebuilt",
    "install_recipe",
}


# Imported by name as well as through the table, so that a command module nothing imports is seen by
# tests/unit/test_architecture_map.py's `test_every_module_is_imported_by_a_test`.
MODULES = {
    "cache": cache,
    "complete-words": complete_words,
    "config": config,
    "deactivate": deactivate,
    "doctor": doctor,
    "export": export,
    "fix-msbuild": fix_msbuild,
    "hook": hook,
    "init": init,
    "install": install,
    "list": list_,
    "recipes": recipes,
    "record": record,
    "run": run,
    "shell": shell,
    "verify": verify,
    "wheels": wheels,
}


def test_the_table_and_the_imported_modules_name_the_same_commands():
    assert set(MODULES) == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_table_name_is_its_modules_command_with_the_tables_line(name):
    module = importlib.import_module(module_of(name))
    assert module is MODULES[name] and module.__name__ == "envmgr.commands." + name.replace("-", "_")
    command = module.command
    assert isinstance(command, click.Command) and command.name == name
    first = (command.help or "").strip().splitlines()[0] if command.help else ""
    assert first == COMMANDS[name]
    assert command.hidden is (name in HIDDEN)


def test_every_module_of_commands_is_a_command_or_a_named_step():
    folder = Path(envmgr.commands.__file__).parent
    modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    assert modules - HELPERS == {n.replace("-", "_") for n in COMMANDS}
    assert HELPERS <= modules


# ---- one behaviour per command ---------------------------------------------------------------------------


@pytest.fixture
def snapshot_toml(cli) -> str:
    made = cli("--machine", LINUX, "export", "--format", "toml")
    assert made.code == 0, made.stderr
    return made.stdout


def test_cache_lists_an_entry_valid_until_its_watched_file_changes_and_clears_it(cli, snapshot_toml, tmp_path):
    watched = tmp_path / "nvcc"
    watched.write_text("1")
    key = cache_key("linux", {"cuda": "13.0"}, {})
    store(key, snapshot_toml, [str(watched)])
    rows = cli("cache", "list", "--json").json()
    assert rows["cache_dir"] == str(dirs.cache_dir())
    assert [(r["key"], r["valid"]) for r in rows["entries"]] == [(key, True)]
    assert rows["entries"][0]["summary"].startswith("CUDA 13.0.88")
    watched.write_text("22")
    assert cli("cache", "list", "--json").json()["entries"][0]["valid"] is False
    cleared = cli("cache", "clear")
    assert cleared.stdout == "removed 1 cached snapshot(s) and 0 downloaded prebuilt wheel(s)\n"
    assert cli("cache", "list", "--json").json()["entries"] == []


def test_complete_words_completes_options_and_choices(cli):
    # as shells/Envmgr.psm1's completer calls it: --incomplete WORD -- the words before it
    assert cli("complete-words", "--incomplete", "--fo", "--", "export").stdout.splitlines() == ["--format"]
    formats = cli("complete-words", "--incomplete", "", "--", "export", "--format").stdout.split()
    assert {"toml", "json", "sh", "fish", "ps1", "cmd"} <= set(formats)


def test_config_says_where_each_default_comes_from(cli):
    rows = {r["key"]: r for r in cli("config", "--json", env={"ENVMGR_CUDA": "13.0"}).json()["settings"]}
    cuda = rows["cuda"]
    assert (cuda["value"], cuda["source"], cuda["where"]) == ("13.0", "environment", "ENVMGR_CUDA")
    flagged = cli("config", "--cuda", "12.4", "--json", env={"ENVMGR_CUDA": "13.0"}).json()
    rows = {r["key"]: r for r in flagged["settings"]}
    assert (rows["cuda"]["value"], rows["cuda"]["source"]) == ("12.4", "flag")
    assert rows["vs"]["source"] == "built-in default"


def test_deactivate_restores_what_the_activation_changed(cli):
    active = {
        "ENVMGR_ACTIVE": "cuda-12.4",
        "ENVMGR_RESTORE": json.dumps({"PATH": "/usr/bin", "CUDA_HOME": None}),
        "PATH": "/opt/cuda/bin:/usr/bin",
        "CUDA_HOME": "/opt/cuda",
    }
    got = cli("deactivate", "--format", "sh", env=active)
    assert got.code == 0 and got.stdout == (
        "export PATH='/usr/bin'\nunset CUDA_HOME\nunset ENVMGR_ACTIVE\nunset ENVMGR_RESTORE\n"
    )
    none = cli("deactivate", "--format", "sh", env={"ENVMGR_ACTIVE": None, "ENVMGR_RESTORE": None})
    assert none.code == 0 and none.stdout == "" and "no envmgr environment is active here" in none.stderr


def test_doctor_runs_one_check_on_a_record(cli):
    got = cli("--machine", LINUX, "doctor", "--only", "F22", "--json")
    data = got.json()
    assert got.code == 0 and [c["id"] for c in data["checks"]] == ["F22"]
    assert data["checks"][0]["summary"] == "nvcc on PATH is CUDA 13.0" and data["selection"]["cuda"] == "13.0.88"


def test_export_from_a_snapshot_file_as_dotenv(cli, snapshot_toml, tmp_path):
    (tmp_path / "env.toml").write_text(snapshot_toml, encoding="utf-8")
    # the Linux snapshot exported for a Linux machine (a record), so the test reads the same on Windows
    got = cli(
        "--machine",
        LINUX,
        "export",
        "--from",
        str(tmp_path / "env.toml"),
        "--format",
        "dotenv",
        env={"PATH": "/usr/bin"},
    )
    assert got.code == 0, got.stderr
    assert 'CUDA_HOME="/usr/local/cuda-13.0"' in got.stdout.splitlines()
    assert 'PATH="/usr/local/cuda-13.0/bin:/usr/bin"' in got.stdout.splitlines()


def test_fix_msbuild_plans_the_missing_files_on_a_record_and_refuses_to_write(cli):
    plan = cli("--machine", CLASSIC, "fix-msbuild", "--dry-run", "--json")
    data = plan.json()
    assert plan.code == 0 and data["summary"]["copy"] == 4 and data["summary"]["missing"] == 4
    assert data["pairs"][0]["vs"]["label"].startswith("VS 2022 BuildTools")
    refused = cli("--machine", CLASSIC, "fix-msbuild", "--yes")
    assert refused.code != 0 and "recorded machines are for planning" in refused.stderr


def test_hook_status_of_a_python_without_the_hook_is_exit_1_and_writes_nothing(cli):
    got = cli("hook", "status", "--python", sys.executable, "--json")
    data = got.json()
    assert got.code == 1 and data["installed"] is False and data["ok"] is False
    site = Path(data["site"])
    before = sorted(p.name for p in site.iterdir())
    assert cli("hook", "status", "--python", sys.executable).code == 1
    assert sorted(p.name for p in site.iterdir()) == before


def test_init_prints_the_profile_line_for_each_shell(cli):
    assert cli("init", "bash").stdout == f". '{dirs.shipped('shells') / 'envmgr.sh'}'\n"
    fish = cli("init", "fish")
    assert fish.code == 0 and "envmgr.fish" in fish.stdout


def test_list_of_a_record(cli):
    data = cli("--machine", LINUX, "list", "--json").json()
    assert [k["short"] for k in data["cuda"]] == ["13.0", "12.4"] and data["visual_studio"] == []


def test_recipes_lists_the_built_in_ones_and_a_users_recipe_overrides_by_name(cli):
    names = {r["name"]: r for r in cli("recipes", "--json").json()["recipes"]}
    assert {"llama-cpp-python", "torch-extension"} <= set(names)
    builtin = Path(names["llama-cpp-python"]["origin"])
    mine = dirs.config_dir() / "recipes" / "llama-cpp-python.toml"
    mine.parent.mkdir(parents=True)
    mine.write_text(builtin.read_text(encoding="utf-8"), encoding="utf-8")
    again = {r["name"]: r for r in cli("recipes", "--json").json()["recipes"]}
    assert again["llama-cpp-python"]["origin"] == str(mine)


def test_record_writes_a_machine_file_that_replays(cli, tmp_path):
    out = tmp_path / "again.toml"
    got = cli("--machine", LINUX, "record", "-o", str(out), "--description", "re-recorded")
    assert got.code == 0 and "2 CUDA toolkit(s), 2 GPU(s) into" in got.stderr
    replayed = cli("--machine", str(out), "list", "--json").json()["cuda"]
    assert replayed == cli("--machine", LINUX, "list", "--json").json()["cuda"]
    assert cli("--machine", LINUX, "record", "-o", str(tmp_path)).code == 2  # a folder


def test_shell_starts_nothing_for_a_record(cli):
    got = cli("--machine", LINUX, "shell", "--shell", "bash")
    assert got.code == 2 and "envmgr shell starts programs on this machine" in got.stderr


def test_wheels_lists_an_empty_cache_in_the_tests_folders(cli):
    data = cli("wheels", "list", "--json").json()
    assert data["wheels_dir"] == str(dirs.cache_dir() / "wheels") and data["wheels"] == [] and data["downloads"] == []
    assert not os.path.exists(dirs.cache_dir() / "wheels")  # listing creates nothing
