"""Start-up (issue 33): `envmgr --help` lists commands from cli.main's table without importing them,
`envmgr CMD --help` loads none of the heavy modules, and the fast path prints the help click printed
last time, byte for byte. The times themselves are measured by bench/startup.py, never asserted here.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from envmgr.cli.main import COMMANDS, HIDDEN, cli, module_of
from envmgr.fastpath import helptext
from envmgr.fastpath import main as fast

ROOT = Path(__file__).resolve().parents[2]
HEAVY = (
    "pefile",
    "elftools",
    "envmgr.buildlog.engine",
    "envmgr.buildlog.facts",
    "envmgr.discover.vs",
    "envmgr.discover.cuda",
)
PROBE = (
    "import io, sys, contextlib\n"
    "sys.argv = ['envmgr', *sys.argv[1:]]\n"
    "from envmgr.cli.main import main\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
    "sys.stderr.write(repr(sorted(m for m in sys.modules if m in %r or m.startswith('envmgr.commands.'))))\n"
)
SCRIPT = Path(sys.executable).with_name("envmgr")


def test_the_table_names_every_command_module():
    on_disk = {
        p.stem.replace("_", "-")
        for p in (ROOT / "envmgr" / "commands").glob("*.py")
        if "\ncommand = " in p.read_text() or "def command(" in p.read_text()
    }
    assert set(COMMANDS) == on_disk


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_line_of_the_table_is_the_commands_own_short_help(name):
    """click shortens the table's line exactly as it shortens the command's docstring, at every width."""
    real = importlib.import_module(module_of(name)).command
    assert real.hidden == (name in HIDDEN)
    stand_in = click.Command(name, help=COMMANDS[name])
    for limit in (20, 45, 60, 94, 200):
        assert stand_in.get_short_help_str(limit) == real.get_short_help_str(limit), limit


def _modules_loaded(args: list[str]) -> tuple[str, list[str]]:
    env = {**os.environ, "COLUMNS": "100"}
    env.pop("ENVMGR_MACHINE", None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (HEAVY,), *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )
    return done.stdout, eval(done.stderr.splitlines()[-1])  # the probe's own repr of a list


def test_the_groups_help_imports_no_command_and_no_heavy_module():
    out, loaded = _modules_loaded(["--help"])
    assert "Commands:" in out and "fix-msbuild" in out and "complete-words" not in out
    assert loaded == []


@pytest.mark.parametrize("name", sorted(set(COMMANDS) - HIDDEN))
def test_a_commands_help_imports_no_heavy_module(name):
    out, loaded = _modules_loaded([name, "--help"])
    assert out.startswith(f"Usage: envmgr {name}")
    assert [m for m in loaded if not m.startswith("envmgr.commands.")] == []


def test_the_table_is_what_click_would_list():
    """The group's help from the table equals click's listing of the imported commands."""
    ctx = click.Context(cli, info_name="envmgr")
    from_table = cli.get_help(ctx)
    for name in COMMANDS:
        cli.get_command(ctx, name)
    imported = cli.get_help(ctx)
    assert from_table == imported and "install  " in from_table


# ---- the fast path's kept help ---------------------------------------------------------------------
@pytest.fixture
def env(tmp_path):
    base = {k: v for k, v in os.environ.items() if not k.startswith("ENVMGR_")}
    return {**base, "ENVMGR_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "90"}


@pytest.mark.skipif(sys.platform == "win32", reason="the fast path runs on POSIX only")
@pytest.mark.parametrize(
    "args", [["--help"], ["install", "--help"], ["doctor", "-h"], ["cache", "--help"]], ids=" ".join
)
def test_the_kept_help_is_clicks_byte_for_byte(args, env, tmp_path):
    full = subprocess.run(
        [sys.executable, "-c", "from envmgr.cli.main import main; main()", *args],
        capture_output=True,
        env=env,
        timeout=120,
    )
    first = subprocess.run([str(SCRIPT), *args], capture_output=True, env=env, timeout=120)
    assert len(list((tmp_path / "cache" / "help").glob("*.txt"))) == 1
    probe = (
        "import sys\nsys.argv = ['envmgr', *sys.argv[1:]]\nfrom envmgr.fastpath.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(repr(sorted(m for m in sys.modules if m in ('click', 'typing', 'envmgr.cli.main'))))"
    )
    second = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, env=env, timeout=120)
    assert full.returncode == first.returncode == 0
    assert full.stdout == first.stdout == second.stdout and full.stdout.startswith(b"Usage: envmgr")
    assert second.stderr.decode().endswith("[]")  # answered without click


@pytest.mark.skipif(sys.platform == "win32", reason="the fast path runs on POSIX only")
def test_a_failed_help_is_not_kept(env, tmp_path):
    done = subprocess.run([str(SCRIPT), "no-such-command", "--help"], capture_output=True, env=env, timeout=120)
    assert done.returncode == 2 and b"No such command" in done.stderr
    assert not (tmp_path / "cache" / "help").exists()


def test_only_plain_help_forms_are_kept():
    assert helptext.help_form(["--help"]) and helptext.help_form(["-h"]) and helptext.help_form(["fix-msbuild", "-h"])
    for argv in (
        [],
        ["list"],
        ["list", "--json", "--help"],
        ["--machine", "--help"],
        ["../x", "--help"],
        ["--help", "list"],
    ):
        assert not helptext.help_form(argv), argv


def test_the_key_follows_width_and_arguments(env, tmp_path):
    folder = str(tmp_path)
    one = helptext.help_file(["--help"], env, folder)
    assert one == helptext.help_file(["--help"], dict(env), folder)
    assert one != helptext.help_file(["--help"], {**env, "COLUMNS": "60"}, folder)
    assert one != helptext.help_file(["-h"], env, folder)
    assert helptext.help_file(["--help"], {**env, "COLUMNS": "300"}, folder) == helptext.help_file(
        ["--help"], {**env, "COLUMNS": "100"}, folder
    )  # click caps at 100 columns


def test_the_sources_token_sees_envmgr_and_click():
    token = helptext.sources_token().replace("\\", "/")
    assert "/envmgr/cli/main.py:" in token and "/click/core.py:" in token


@pytest.mark.skipif(sys.platform == "win32", reason="the fast path runs on POSIX only")
def test_other_hosts_are_not_kept(env):
    assert fast.help_to_keep(["--help"], env) is not None
    assert fast.help_to_keep(["--help"], {**env, "ENVMGR_MACHINE": "x.toml"}) is None
    assert fast.help_to_keep(["--help"], {**env, "_ENVMGR_COMPLETE": "bash_complete"}) is None
    assert fast.help_to_keep(["list"], env) is None
