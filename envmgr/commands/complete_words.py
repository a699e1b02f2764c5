"""`envmgr complete-words`: completions from click's own machinery, for PowerShell's completer."""

from __future__ import annotations

import click
from click.shell_completion import ShellComplete

from envmgr.cli.main import cli


@click.command("complete-words", hidden=True)
@click.option("--incomplete", default="")
@click.argument("words", nargs=-1, type=click.UNPROCESSED)
def command(incomplete: str, words: tuple[str, ...]) -> None:
    done = ShellComplete(cli, {}, "envmgr", "_ENVMGR_COMPLETE")
    for item in done.get_completions(list(words), incomplete):
        click.echo(item.value)
