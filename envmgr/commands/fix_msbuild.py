"""`envmgr fix-msbuild`: repair CUDA's BuildCustomizations in Visual Studio, safely (docs/fix-msbuild.md)."""

from __future__ import annotations

import click

from envmgr.cli.grammar import AliasChoice, refuse_inapplicable
from envmgr.cli.main import Ctx
from envmgr.commands.fix_msbuild_flow import Options, run
from envmgr.errors import UsageError
from envmgr.shellkit import SHELL_FORMATS

SCRIPT_FORMATS = ("ps1", "cmd", "sh", "fish", "dotenv", "github")


@click.command("fix-msbuild")
@click.option(
    "--vs",
    "vs",
    multiple=True,
    metavar="WHICH",
    help="Only these Visual Studio instances (edition, year, version prefix, id or path; repeatable).",
)
@click.option("--cuda", "cuda", multiple=True, metavar="X.Y|PATH", help="Only these CUDA toolkits (repeatable).")
@click.option("--dry-run", "dry_run", is_flag=True, help="Show the plan and stop.")
@click.option(
    "--check", "check", is_flag=True, help="Show the plan; exit 1 when a file is missing or stale (for scripts and CI)."
)
@click.option("--undo", is_flag=True, help="Restore the files the last run changed, exactly as they were.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask before copying.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (shape in docs/fix-msbuild.md).")
@click.option(
    "--export-route",
    type=AliasChoice(SCRIPT_FORMATS, SHELL_FORMATS),
    metavar="FORMAT",
    help="Print the no-admin route (CMAKE_GENERATOR...) as a script: " + ", ".join(SCRIPT_FORMATS) + ".",
)
@click.option("--apply-plan", metavar="FILE", hidden=True, help="The elevated step: apply a checked plan file.")
@click.pass_obj
def command(
    obj: Ctx,
    vs: tuple[str, ...],
    cuda: tuple[str, ...],
    dry_run: bool,
    check: bool,
    undo: bool,
    yes: bool,
    as_json: bool,
    export_route: str | None,
    apply_plan: str | None,
) -> None:
    """Copy CUDA's MSBuild integration into Visual Studio instances that lack it.

    Fixes CMake's `No CUDA toolset found.` with the Visual Studio generator: each toolkit's
    extras\\visual_studio_integration\\MSBuildExtensions files are compared with each instance's
    BuildCustomizations folder; missing or stale ones are copied as one transaction (backed up,
    verified, rolled back on failure, undoable). Writing there needs administrator rights: envmgr
    asks, and otherwise prints the routes that need none.

    \b
      envmgr fix-msbuild --dry-run            what is missing, changes nothing
      envmgr fix-msbuild --check              exit 1 if anything is missing (CI)
      envmgr fix-msbuild --vs buildtools -y   copy without asking
      envmgr fix-msbuild --undo               put back what the last run changed
    """

    if dry_run and check:
        # Together, one of them would silently win (it was --dry-run: exit 0 where --check alone exits 1).
        raise UsageError(
            "--dry-run and --check do not combine",
            "--check alone: it changes nothing and exits 1 when a file is missing or stale",
        )
    ctx = click.get_current_context()
    if undo:
        refuse_inapplicable(
            ctx,
            ("vs", "cuda", "dry_run", "check", "export_route"),
            "with --undo (it restores what the last run changed)",
            "drop {flag}",
        )
    if export_route:
        refuse_inapplicable(
            ctx,
            ("dry_run", "check", "yes", "as_json"),
            "with --export-route (it prints the no-admin route as a script)",
            "drop {flag}",
        )
    mode = "check" if check else "dry-run" if dry_run else None
    opts = Options(tuple(vs), tuple(cuda), mode or "apply", undo, yes, as_json, export_route, apply_plan)
    code = run(obj.host, opts)
    if code:
        click.get_current_context().exit(code)
