"""`envmgr init SHELL`: the one profile line that loads envmgr's shell hook."""

from __future__ import annotations

import click

from envmgr.cli.grammar import AliasChoice
from envmgr.shellkit.init import hook_script, profile_line

INIT_SHELLS = ("powershell", "pwsh", "cmd", "bash", "zsh", "fish")


@click.command("init")
@click.argument("shell", type=AliasChoice(INIT_SHELLS, {"ps1": "powershell"}))
@click.option("--script", is_flag=True, help="Print the hook itself (what the profile line runs).")
def command(shell: str, script: bool) -> None:
    """Print the line to add to your shell's profile (activation functions and completion)."""

    click.echo(hook_script(shell) if script else profile_line(shell))
