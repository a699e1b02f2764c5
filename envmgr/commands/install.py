"""`envmgr install`: a CUDA package from bare machine to proof (doctor, then a cached, indexed or built
wheel, then verify); the flow is install_flow.py, the wheel's build-or-reuse install_build.py."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from typing import Any

import click

from envmgr.cli.flags import check_pythons
from envmgr.cli.grammar import TailCommand, mistyped_option, refuse_inapplicable, tail
from envmgr.cli.main import Ctx
from envmgr.cli.options import RecipeArgs, Selection, recipe_options, selector_options
from envmgr.discover.target import TargetPython, choose_python
from envmgr.output import say


@click.command("install", cls=TailCommand, context_settings={"ignore_unknown_options": True})
@selector_options
@recipe_options
@click.option(
    "--python",
    "python",
    metavar="EXE",
    help="The Python to install into (default: the active venv "
    "or conda environment, a .venv here or above, the first python on PATH; envmgr's own last).",
)
@click.option("--no-deps", is_flag=True, help="Install the wheel without its dependencies.")
@click.option("--rebuild", is_flag=True, help="Build again even when the wheel cache holds this key.")
@click.option(
    "--wheel-index",
    metavar="URL|DIR",
    help="Look the key up in this wheel index before building "
    "(default: ENVMGR_WHEEL_INDEX, or [wheels] index in config.toml; '' turns it off).",
)
@click.option("--publish", "publish_to", metavar="DIR", help="Then publish the wheel into this index folder.")
@click.option("--fix", is_flag=True, help="Take the recipe's safe route past doctor findings (both routes).")
@click.option("--prebuilt-lib", metavar="DIR", help="llama-cpp-python flow: use this llama.cpp CUDA build folder.")
@click.option(
    "--prebuilt-index",
    multiple=True,
    metavar="URL|DIR",
    help="llama-cpp-python flow: read published "
    "CUDA wheels here before building (repeatable; default: [wheels] prebuilt in config.toml, else "
    "llama-cpp-python's whl/cuXYZ indexes).",
)
@click.option("--no-prebuilt", is_flag=True, help="llama-cpp-python flow: skip the prebuilt indexes.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="llama-cpp-python flow: print the routes and the prebuilt plan "
    "(every wheel seen, the one chosen, why not the others); install nothing.",
)
@click.option(
    "--undo-dll-fix",
    metavar="MANIFEST",
    help="Remove the files an earlier --fix added, as its manifest "
    "lists them (the CUDA DLLs copied into llama_cpp\\lib; F24's CUDA components laid into a toolkit); "
    "nothing else.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (docs/json.md).")
@click.option(
    "--pre",
    is_flag=True,
    help="Consider prereleases (dev, rc) too, as pip's --pre; passed on to pip. "
    "Without it a prerelease is taken only when the spec names one.",
)
@click.argument("pip_args", nargs=-1, type=click.UNPROCESSED, metavar="SPEC [-- PIP OPTIONS]")
@click.pass_obj
def command(
    obj: Ctx,
    selection: Selection,
    recipe: RecipeArgs,
    no_deps: bool,
    rebuild: bool,
    wheel_index: str | None,
    publish_to: str | None,
    pip_args: tuple[str, ...],
    fix: bool = False,
    prebuilt_lib: str | None = None,
    as_json: bool = False,
    prebuilt_index: tuple[str, ...] = (),
    no_prebuilt: bool = False,
    dry_run: bool = False,
    undo_dll_fix: str | None = None,
    pre: bool = False,
    python: str | None = None,
) -> None:
    """Build SPEC with a recipe once, cache the wheel, and pip install it into the target Python.

    \b
      envmgr install llama-cpp-python [SPEC]     doctor, build or cache, install, verify, report
      envmgr install llama-cpp-python --dry-run  the routes: cache, team index, prebuilt wheels, build
      envmgr install --prebuilt-lib DIR llama-cpp-python   your llama.cpp CUDA build, verified
      envmgr install --recipe llama-cpp-python "llama-cpp-python==0.3.36"
      envmgr install --recipe llama-cpp-python --python .venv/bin/python ./llama_cpp_python-0.3.36.tar.gz
      envmgr install --recipe llama-cpp-python llama-cpp-python==0.3.36 -- --no-index --find-links ./wheels
    The cache key is (package, version, source, CUDA, architectures, generator, CMAKE_ARGS, Python
    tag, platform): the same key in any venv installs the cached wheel in seconds. envmgr's options
    mean the same anywhere on the line; pip's own options go after `--`, to both `pip wheel` and
    `pip install`. The target Python: --python, else the active venv (VIRTUAL_ENV), the active conda
    environment, a .venv here or in a parent folder, the first python on PATH; envmgr's own last.
    """
    from envmgr.commands import install_build, install_closure, install_flow, install_prebuilt  # not for --help

    ctx = click.get_current_context()
    if undo_dll_fix:
        refuse_inapplicable(
            ctx,
            [p.name for p in ctx.command.params if p.name and p.name != "undo_dll_fix"],
            "with --undo-dll-fix (it removes the files its manifest lists, nothing else)",
            "drop {flag}",
        )
        sys.exit(install_closure.undo(undo_dll_fix))
    given_recipe = recipe.name if recipe.given else None
    args = _words(ctx, pip_args, given_recipe, prebuilt_lib)
    flow = install_flow.flow_package(given_recipe, args, prebuilt_lib)  # a project default keeps the flow
    _refuse_inapplicable(ctx, flow, prebuilt_lib)
    if pre and "--pre" not in args:  # pip's own option: after the flow's package, before a SPEC (N14)
        args = [*args[:1], "--pre", *args[1:]] if flow else ["--pre", *args]
    # the user's Python (discover/target.py): --python, the project's python, VIRTUAL_ENV, CONDA_PREFIX, .venv
    # upward, PATH, envmgr's own; said by each route in its place
    selection = _with_target(obj, selection, python)
    options = install_build.InstallOptions(no_deps, rebuild, wheel_index, publish_to, announce=not flow)
    if flow:
        routes = install_prebuilt.Options(tuple(prebuilt_index), no_prebuilt, dry_run)
        sys.exit(start_flow(obj, args, fix, prebuilt_lib, as_json, selection, recipe, options, routes))
    sys.exit(recipe_route(obj, args, selection, recipe, options, fix, as_json))


def _with_target(obj: Ctx, selection: Selection, python: str | None) -> Selection:
    """The selection with the target Python; the target's pip CUDA counts in selection, as when --python had both
    meanings."""
    target = _target(obj, selection, python)
    chosen = (target.path,) if target.why in ("--python", "project") else ()
    return replace(selection, target=target, pythons=(*chosen, *selection.pythons))


def _words(
    ctx: click.Context, pip_args: tuple[str, ...], given_recipe: str | None, prebuilt_lib: str | None
) -> list[str]:
    """SPEC and pip's words, where each route reads them: pip's words after `--` go after the flow's package, and
    before SPEC (the last word) on the recipe route."""
    from envmgr.commands import install_flow  # not for --help

    after = tail(ctx)
    if not pip_args and not after:
        raise click.UsageError("Missing argument 'SPEC'.")
    if any(a.startswith("-") for a in pip_args):  # today's form, kept for one release: pip options before `--`
        mistyped = mistyped_option(pip_args, ctx.command)
        if mistyped is not None:
            raise mistyped
        _say_old_form(given_recipe, list(pip_args), prebuilt_lib)
    if not pip_args:
        return list(after)
    if install_flow.flow_package(given_recipe, list(pip_args), prebuilt_lib):
        return [*pip_args[:1], *after, *pip_args[1:]]
    return [*after, *pip_args]


def start_flow(*args: Any, **kwargs: Any) -> int:
    """install_flow.start_flow, imported when the flow runs (start-up: not for `install --help`)."""
    from envmgr.commands.install_flow import start_flow as flow

    return flow(*args, **kwargs)


def recipe_route(*args: Any, **kwargs: Any) -> int:
    """install_recipe.recipe_route, imported when the route runs (start-up, as start_flow)."""
    from envmgr.commands.install_recipe import recipe_route as route

    return route(*args, **kwargs)


def _target(obj: Ctx, selection: Selection, python: str | None) -> TargetPython:
    """--python (probed on this machine: pip runs here even when --machine describes the toolchain), else
    the project's `python` (options.py put it in the selection), else the user's Python as target.py finds it."""
    if python is not None:
        check_pythons(obj.local, [python])
    elif selection.target is not None:
        return selection.target
    return choose_python(obj.local, os.getcwd(), sys.executable, python)


# The llama-cpp-python flow's own options, and what the --prebuilt-lib route (no build) has no use for.
FLOW_ONLY = ("prebuilt_index", "no_prebuilt", "dry_run")
NOT_WITH_PREBUILT_LIB = (
    "recipe",
    "arch_list",
    "allow_unsupported_compiler",
    "recipe_params",
    "rebuild",
    "wheel_index",
    "publish_to",
    "prebuilt_index",
    "no_prebuilt",
)


def _refuse_inapplicable(ctx: click.Context, flow: str | None, prebuilt_lib: str | None) -> None:
    if not flow:
        refuse_inapplicable(
            ctx,
            FLOW_ONLY,
            "to `envmgr install --recipe NAME SPEC` (it belongs to `envmgr install llama-cpp-python`)",
            "drop {flag}, or install llama-cpp-python",
        )
    if prebuilt_lib:
        refuse_inapplicable(
            ctx,
            NOT_WITH_PREBUILT_LIB,
            "with --prebuilt-lib (nothing is built or looked up: your llama.cpp build is used)",
            "drop {flag}, or drop --prebuilt-lib",
        )


def _say_old_form(recipe: str | None, pip_args: list[str], prebuilt_lib: str | None) -> None:
    """One line: where pip's words go now, with the user's own words (SPEC is the flow's or the last word)."""
    from envmgr.commands.install_flow import flow_package, split_args  # start-up, as in command()

    flow = flow_package(recipe, pip_args, prebuilt_lib)
    words, spec = split_args(flow, pip_args) if flow else (pip_args[:-1], pip_args[-1])
    said = " ".join(words)
    say(
        f"envmgr: note: pip's options go after `--`: envmgr install ... {spec} -- {said} (passing {said} to pip; "
        "this form goes away in a later release)"
    )
