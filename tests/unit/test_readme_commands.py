"""README's commands table lists every command envmgr has (issue 11: install, wheels and deactivate
were missing), and its selectors paragraph names the commands whose options differ."""
from __future__ import annotations

import re

import click

from envmgr.cli.main import cli
from tests.conftest import ROOT


def _commands() -> set[str]:
    ctx = click.Context(cli)
    return {name for name in cli.list_commands(ctx) if not cli.get_command(ctx, name).hidden
            and name != "complete-words"}   # the tab-completion helper the init scripts call


def test_every_command_is_in_the_readme_table():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `envmgr ([a-z-]+)", readme, flags=re.M)
    assert _commands() - set(rows) == set()


def test_selectors_paragraph_says_where_they_differ():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    para = readme[readme.index("Selectors:"):readme.index("Exit codes:")]
    for phrase in ("`list` takes none", "`doctor` takes", "no `--from`", "`fix-msbuild` takes", "exit 3"):
        assert phrase in para
