"""`envmgr shell`: an interactive shell with the environment applied and a prompt marker."""

from __future__ import annotations

import shutil
import sys

import click

from envmgr import spawn
from envmgr.cli.main import Ctx
from envmgr.cli.options import RecipeArgs, Selection, environment_for, recipe_options, refuse_records, selector_options
from envmgr.host.base import WINDOWS
from envmgr.output import say
from envmgr.shellkit.launch import build_session, detect_shell
from envmgr.snapshot.activation import ACTIVE, activation_delta


@click.command("shell")
@selector_options
@recipe_options
@click.option(
    "--shell",
    "shell_name",
    metavar="NAME",
    help="pwsh, powershell, cmd, bash, zsh, fish or sh (ps1: PowerShell; default: the shell you are in).",
)
@click.pass_obj
def command(obj: Ctx, selection: Selection, recipe: RecipeArgs, shell_name: str | None) -> None:
    """Start your shell with the environment applied (and a prompt marker).

    \b
      envmgr shell --cuda 12.4 --vs community
      envmgr shell --recipe llama-cpp-python      then: pip install llama-cpp-python
    Inside an active envmgr shell, a new one replaces the environment (PATHs never stack).
    """

    refuse_records(obj, "shell")
    host = obj.host  # records were refused: this machine, or a Wine prefix
    base = dict(host.env)
    if shell_name and shell_name.strip().lower() == "ps1":  # the script format's name: its shell (cli/grammar)
        shell_name = "powershell" if host.platform == WINDOWS else "pwsh"
    name = detect_shell(shell_name or host.default_shell, base)
    delta, marker, _ = environment_for(obj, selection, recipe)
    if base.get(ACTIVE):
        say(f"envmgr: already inside an envmgr environment ({base[ACTIVE]}); the new one replaces it")
    session = build_session(name, activation_delta(delta, base, marker), base, marker)
    say(f"envmgr: starting {name} ({marker}); `exit` returns here")
    argv, env = host.interactive(session.argv, session.env)
    try:
        code = spawn.run(argv, env)
    finally:
        shutil.rmtree(session.folder, ignore_errors=True)
    sys.exit(code)
