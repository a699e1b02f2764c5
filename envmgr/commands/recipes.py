"""`envmgr recipes`: the build recipes envmgr knows (built-in and the user's)."""

from __future__ import annotations

import click

from envmgr.errors import InputFileError
from envmgr.output import emit_json, say
from envmgr.recipes.recipe import load_recipes, recipe_dirs


@click.command("recipes")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def command(as_json: bool) -> None:
    """List build recipes (built-in, and yours in the config folder's recipes/)."""

    problems: list[tuple[str, InputFileError]] = []
    recipes = load_recipes(problems)
    for _, problem in problems:
        say(f"envmgr: skipped {problem.message} ({problem.remedy})")
    if as_json:
        emit_json(
            {
                "schema": 1,
                "recipes": [
                    {
                        "name": r.name,
                        "description": r.description,
                        "kind": r.kind,
                        "origin": r.origin,
                        "params": dict(r.params),
                    }
                    for r in recipes.values()
                ],
            }
        )
        return
    for r in sorted(recipes.values(), key=lambda r: r.name):
        click.echo(f"{r.name:28} {r.description}")
        for k, v in r.params:
            click.echo(f"{'':28}   --recipe-param {k}=...  ({v})")
    click.echo(f"\nyour own recipes go in {recipe_dirs()[1]}")
