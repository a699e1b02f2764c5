"""`envmgr config`: the defaults every command takes, and where each comes from (docs/config.md)."""

from __future__ import annotations

import click

from envmgr.cli.defaults import ENV_NAMES, gpu_option, gpu_setting, layered, project_files
from envmgr.cli.main import Ctx
from envmgr.output import emit_json


@click.command("config")
@click.option("--cuda", metavar="X.Y|PATH", help="As every command's --cuda: shown as the flag's value.")
@click.option("--vs", metavar="WHICH", help="As every command's --vs.")
@click.option("--toolset", metavar="14.XX", help="As every command's --toolset.")
@click.option("--recipe", metavar="NAME", help="As every command's --recipe.")
@click.option("--python", metavar="EXE", help="As install's --python.")
@gpu_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON (docs/json.md, config).")
@click.pass_obj
def command(
    obj: Ctx,
    cuda: str | None,
    vs: str | None,
    toolset: str | None,
    recipe: str | None,
    python: str | None,
    as_json: bool,
) -> None:
    """Show the defaults commands take here, each with its source.

    \b
    Precedence: a flag, then the environment (ENVMGR_CUDA, ENVMGR_VS, ENVMGR_TOOLSET, ENVMGR_RECIPE,
    ENVMGR_PYTHON, ENVMGR_GPU), then envmgr.toml, then pyproject.toml's [tool.envmgr] (the nearest
    folder from here upward that holds either), then envmgr's own choice.
      envmgr config                  what `envmgr shell`/`install` would take here
      envmgr config --cuda 12.4      the same with a flag
      envmgr config --json
    """
    files = project_files(click.get_current_context())
    flags = {"cuda": cuda, "vs": vs, "toolset": toolset, "recipe": recipe, "python": python}
    settings = (*layered(flags, obj.env, files), gpu_setting())
    if as_json:
        emit_json(
            {
                "schema": 1,
                "files": [{"path": f.path, "kind": f.kind} for f in files],
                "environment": list(ENV_NAMES.values()) + ["ENVMGR_GPU"],
                "settings": [s.to_json() for s in settings],
            }
        )
        return
    for s in settings:
        value = s.value if s.value is not None else "-"
        source = f"{s.source}: {s.where}" if s.source != "built-in default" else f"built-in default ({s.where})"
        click.echo(f"{s.key:8} {value:24} {source}")
    if not files:
        click.echo("no envmgr.toml or pyproject.toml [tool.envmgr] from here upward")
