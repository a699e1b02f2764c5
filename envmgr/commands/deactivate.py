"""`envmgr deactivate`: the script that undoes an activation."""

from __future__ import annotations

import sys

import click

from envmgr.cli.grammar import AliasChoice
from envmgr.cli.main import Ctx
from envmgr.shellkit import SHELL_FORMATS, render
from envmgr.snapshot.activation import deactivation_delta


@click.command("deactivate")
@click.option(
    "--format",
    "fmt",
    type=AliasChoice(("sh", "fish", "ps1", "cmd"), SHELL_FORMATS),
    required=True,
    help="The script format, or the shell's name (pwsh, powershell, bash, zsh).",
)
@click.pass_obj
def command(obj: Ctx, fmt: str) -> None:
    """Print the script that restores the environment from before activation."""

    delta = deactivation_delta(obj.env, obj.local.platform)
    if delta is None:
        click.echo("envmgr: no envmgr environment is active here", err=True)
        return
    sys.stdout.write(render(delta, fmt))
