"""`envmgr export`: the environment snapshot (and a recipe) as TOML, JSON or a shell script on stdout."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import replace

import click

from envmgr.cli.grammar import AliasChoice
from envmgr.cli.main import Ctx
from envmgr.cli.options import RecipeArgs, Selection, environment_for, get_snapshot, recipe_options, selector_options
from envmgr.errors import InputFileError, UsageError
from envmgr.fastpath.slot_ps1 import write_from_cli
from envmgr.files.atomic import append_user_file
from envmgr.output import emit_json, say
from envmgr.shellkit import SHELL_FORMATS, render, render_github, resolve_removals, stream_encoding
from envmgr.snapshot.activation import activation_delta
from envmgr.snapshot.form import Snapshot, to_toml
from envmgr.snapshot.form_json import snapshot_json

EXPORT_FORMATS = ("toml", "json", "ps1", "cmd", "sh", "fish", "dotenv", "github")


@click.command("export")
@selector_options
@recipe_options
@click.option(
    "--activate",
    is_flag=True,
    help="Script formats: also record what to restore (used by Enter-Envmgr and envmgr_activate).",
)
@click.option(
    "--format",
    "fmt",
    type=AliasChoice(EXPORT_FORMATS, SHELL_FORMATS),
    default="toml",
    show_default=True,
    help="Output format; a shell's name (pwsh, powershell, bash, zsh) picks its script format.",
)
@click.pass_obj
def command(obj: Ctx, selection: Selection, recipe: RecipeArgs, activate: bool, fmt: str) -> None:
    """Write the environment snapshot to stdout.

    \b
      envmgr export > env.toml
      envmgr export --from env.toml --format ps1 | Invoke-Expression
      eval "$(envmgr export --cuda 13.0 --format sh)"
      envmgr export --format github >> "$GITHUB_ENV"   (see docs/snapshot.md for $GITHUB_PATH)
    """
    if activate and fmt in ("toml", "json", "dotenv", "github"):
        raise UsageError("--activate is for shell scripts", "use --format sh, fish, ps1 or cmd")
    snap = served = get_snapshot(obj, selection)
    if recipe.name or activate:
        delta, marker, notes = environment_for(obj, selection, recipe, snap=snap)
        if activate:
            delta = activation_delta(delta, obj.env, marker)

        snap = replace(snap, delta=delta, notes=snap.notes + tuple(notes), text="")
    if fmt == "toml":
        if snap.text:
            click.echo(snap.text, nl=False)
        else:
            click.echo(to_toml(snap), nl=False)
    elif fmt == "json":
        emit_json(snapshot_json(snap))
    elif fmt == "github" and obj.env.get("GITHUB_ENV") and obj.env.get("GITHUB_PATH"):
        _append_github_files(snap, obj.env)
    else:
        text = render(snap.delta, fmt, dict(obj.env))
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode(stream_encoding(fmt)))
        if activate and fmt == "ps1" and not recipe.name and obj.here and obj.env.get("ENVMGR_SLOT"):
            write_from_cli(obj.env["ENVMGR_SLOT"], sys.argv[1:], obj.host, served, obj.env)


def _append_github_files(snap: Snapshot, env: Mapping[str, str]) -> None:
    """Inside a GitHub Actions step: append to the files the runner reads after the step."""

    # As render() does: a `remove` (another toolkit's folders on PATH) becomes the current value without them.
    env_text, path_text = render_github(resolve_removals(snap.delta, env), dict(env))
    for var, text in (("GITHUB_ENV", env_text), ("GITHUB_PATH", path_text)):
        if text:
            try:  # the runner's own file: appended in place; a FIFO nobody reads is refused, not waited on
                append_user_file(env[var], text.encode("utf-8"))
            except OSError as exc:
                raise InputFileError(
                    f"${var} ({env[var]}): cannot append to it: {exc.strerror or exc}",
                    "run this inside a GitHub Actions step, or use --format sh/ps1",
                ) from None
    say(
        f"envmgr: appended {env_text.count(chr(10))} line(s) to $GITHUB_ENV and "
        f"{path_text.count(chr(10))} to $GITHUB_PATH for the next steps"
    )
