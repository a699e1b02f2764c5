"""`envmgr install --recipe NAME SPEC`: the same doctor before the build, diagnosis after a failed one
(install_build.py: the build's log scanned as `envmgr run --log` scans it) and report as the
llama-cpp-python flow (install_flow.py), whose steps it calls; what it lacks is verify, which knows
llama-cpp-python only."""

from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from envmgr import spawn
from envmgr.catalog import FailureId
from envmgr.cli.main import Ctx
from envmgr.cli.options import RecipeArgs, Selection, get_snapshot
from envmgr.commands import install_build
from envmgr.commands.install_build import Installed, InstallOptions
from envmgr.commands.install_flow import Report, _build_and_install, _doctor
from envmgr.errors import UsageError
from envmgr.output import emit_json, say
from envmgr.wheels.remote import configured_index
from envmgr.wheels.store import wheels_dir

# Findings about running on this machine's GPU, not about building: a wheel built here (a docker build, a CI
# runner) is for its user's machine, and this route has no verify step; with --cuda-arch the GPU seen here
# does not choose the device code either (F12, F13). The report names them.
RUN_ONLY: frozenset[FailureId] = frozenset({"F17", "F23"})


def recipe_route(
    obj: Ctx,
    args: list[str],
    selection: Selection,
    recipe_args: RecipeArgs,
    options: InstallOptions,
    fix: bool,
    as_json: bool,
) -> int:
    """doctor (a blocking finding stops before anything is built, with its fix) -> wheel -> report."""
    name = recipe_args.name
    if not name:
        raise UsageError(
            "envmgr install needs --recipe NAME and a SPEC",
            "e.g. envmgr install --recipe llama-cpp-python llama-cpp-python==0.3.36 (see `envmgr recipes`)",
        )
    spec = args[-1]
    install_build._install_args(args, name, options.publish_to)  # bad input is exit 2 before doctor runs
    if selection.from_file:
        get_snapshot(obj, selection)  # so is a bad snapshot file,
    configured_index(options.wheel_index)  # a bad config.toml,
    _check_cache(wheels_dir())  # and a wheel cache that cannot be written
    rep = Report(spec, name, "--recipe" if recipe_args.given else "the project's default (envmgr config)", spec)
    rep.target = selection.target.as_json() if selection.target else None

    def invoke_install(recipe: str, pip_args: list[str], **extra: Any) -> Installed:
        return install_build.install_wheel(
            obj, pip_args, selection, replace(recipe_args, name=recipe), options, **extra
        )

    with spawn.children_print_to_stderr() if as_json else contextlib.nullcontext():  # stdout: the JSON alone
        t0 = time.perf_counter()
        _doctor(
            obj,
            selection,
            fix,
            rep,
            skip_build_checks=False,
            checks_recipe=name,
            not_blocking=RUN_ONLY | ({"F12", "F13"} if recipe_args.arch_list else set()),
            pip_opts=args[:-1],
        )
        rep.timings["doctor"] = time.perf_counter() - t0
        say(f"envmgr: recipe {name} (from {rep.recipe_why}); spec {spec}; doctor: nothing blocks the build")
        _build_and_install(invoke_install, name, args[:-1], spec, rep)
    return _report(rep, selection.target_python or sys.executable, as_json)


def _check_cache(root: Path) -> None:
    """The wheel cache can be made (what is made to find out is removed: a stopped build leaves nothing)."""
    missing = [p for p in (root, *root.parents) if not p.exists()]
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise install_build._cache_unwritable(root, exc) from None
    for made in missing:
        made.rmdir()


def _report(rep: Report, python: str, as_json: bool) -> int:
    if as_json:
        emit_json(
            {
                "schema": 1,
                "recipe": rep.recipe,
                "recipe_from": rep.recipe_why,
                "spec": rep.spec,
                "python": python,
                "target_python": rep.target,
                "ok": True,
                "wheel": rep.wheel,
                "fixes": rep.fixes.items,
                "report": rep.lines,
                "seconds": {k: round(v, 1) for k, v in rep.timings.items()},
            }
        )
        return 0
    click.echo(
        f"envmgr install --recipe {rep.recipe} {rep.spec}: installed into {python} (recipe from {rep.recipe_why})"
    )
    for line in rep.lines:
        click.echo(f"  {line}")
    return 0
