"""The commands table lists every command envmgr has (issue 11: install, wheels and deactivate
were missing), and its selectors paragraph names the commands whose options differ. Both moved from
README.md to docs/commands.md when README became a front door (issue 33); README links there."""

from __future__ import annotations

import re

import click

from envmgr.cli.main import cli
from tests.conftest import ROOT


def _commands() -> set[str]:
    ctx = click.Context(cli)
    return {
        name for name in cli.list_commands(ctx) if not cli.get_command(ctx, name).hidden and name != "complete-words"
    }  # the tab-completion helper the init scripts call


COMMANDS_DOC = ROOT / "docs" / "commands.md"


def test_every_command_is_in_the_readme_table():
    readme = COMMANDS_DOC.read_text(encoding="utf-8")
    rows = re.findall(r"^\| `envmgr ([a-z-]+)", readme, flags=re.M)
    assert _commands() - set(rows) == set()


def test_selectors_paragraph_says_where_they_differ():
    readme = COMMANDS_DOC.read_text(encoding="utf-8")
    para = readme[readme.index("Selectors:") : readme.index("Exit codes:")]
    for phrase in ("`list` takes none", "`doctor` takes", "no `--from`", "`fix-msbuild` takes", "exit 3"):
        assert phrase in para


def test_readme_links_to_the_commands_table():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "/docs/commands.md" in readme
