"""`envmgr install`: a CUDA package from bare machine to proof (doctor, then a cached, indexed or built
wheel, then verify); the flow is install_flow.py, the wheel's build-or-reuse install_build.py."""
from __future__ import annotations

import sys

import click

from envmgr.cli.main import Ctx
from envmgr.cli.options import RecipeArgs, Selection, recipe_options, selector_options
from envmgr.commands import install_closure
from envmgr.commands.install_build import InstallOptions
from envmgr.commands.install_flow import flow_package, start_flow
from envmgr.commands.install_prebuilt import Options
from envmgr.commands.install_recipe import recipe_route


@click.command("install", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@selector_options
@recipe_options
@click.option("--no-deps", is_flag=True, help="Install the wheel without its dependencies.")
@click.option("--rebuild", is_flag=True, help="Build again even when the wheel cache holds this key.")
@click.option("--wheel-index", metavar="URL|DIR", help="Look the key up in this wheel index before building "
              "(default: ENVMGR_WHEEL_INDEX, or [wheels] index in config.toml; '' turns it off).")
@click.option("--publish", "publish_to", metavar="DIR", help="Then publish the wheel into this index folder.")
@click.option("--fix", is_flag=True, help="Take the recipe's safe route past doctor findings (both routes).")
@click.option("--prebuilt-lib", metavar="DIR", help="llama-cpp-python flow: use this llama.cpp CUDA build folder.")
@click.option("--prebuilt-index", multiple=True, metavar="URL|DIR", help="llama-cpp-python flow: read published "
              "CUDA wheels here before building (repeatable; default: [wheels] prebuilt in config.toml, else "
              "llama-cpp-python's whl/cuXYZ indexes).")
@click.option("--no-prebuilt", is_flag=True, help="llama-cpp-python flow: skip the prebuilt indexes.")
@click.option("--dry-run", is_flag=True, help="llama-cpp-python flow: print the routes and the prebuilt plan "
              "(every wheel seen, the one chosen, why not the others); install nothing.")
@click.option("--undo-dll-fix", metavar="MANIFEST", help="Remove the files an earlier --fix added, as its manifest "
              "lists them (the CUDA DLLs copied into llama_cpp\\lib; F24's CUDA components laid into a toolkit); "
              "nothing else.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (docs/json.md).")
@click.option("--pre", is_flag=True, help="Consider prereleases (dev, rc) too, as pip's --pre; passed on to pip. "
              "Without it a prerelease is taken only when the spec names one.")
@click.argument("pip_args", nargs=-1, type=click.UNPROCESSED, metavar="[PIP OPTIONS] SPEC")
@click.pass_obj
def command(obj: Ctx, selection: Selection, recipe: RecipeArgs, no_deps: bool, rebuild: bool, wheel_index: str | None,
            publish_to: str | None, pip_args: tuple[str, ...], fix: bool = False, prebuilt_lib: str | None = None,
            as_json: bool = False, prebuilt_index: tuple[str, ...] = (), no_prebuilt: bool = False,
            dry_run: bool = False, undo_dll_fix: str | None = None, pre: bool = False) -> None:
    """Build SPEC with a recipe once, cache the wheel, and pip install it (here or into --python EXE).

    \b
      envmgr install llama-cpp-python [SPEC]     doctor, build or cache, install, verify, report
      envmgr install llama-cpp-python --dry-run  the routes: cache, team index, prebuilt wheels, build
      envmgr install --prebuilt-lib DIR llama-cpp-python   your llama.cpp CUDA build, verified
      envmgr install --recipe llama-cpp-python "llama-cpp-python==0.3.36"
      envmgr install --recipe llama-cpp-python --python .venv/bin/python ./llama_cpp_python-0.3.36.tar.gz
      envmgr install --recipe llama-cpp-python --no-index --find-links ./wheels llama-cpp-python==0.3.36
    The cache key is (package, version, source, CUDA, architectures, generator, CMAKE_ARGS, Python
    tag, platform): the same key in any venv installs the cached wheel in seconds. pip options
    (before SPEC) go to both `pip wheel` and `pip install`. The first --python is the target.
    """
    if undo_dll_fix:
        sys.exit(install_closure.undo(undo_dll_fix))
    if not pip_args:
        raise click.UsageError("Missing argument '[PIP OPTIONS] SPEC'.")
    args = [a for a in pip_args if a != "--"] if pip_args[:1] == ("--",) else list(pip_args)

    options = InstallOptions(no_deps, rebuild, wheel_index, publish_to)
    flow = flow_package(recipe.name if recipe.given else None, args, prebuilt_lib)   # a project default keeps the flow
    if pre and "--pre" not in args:     # pip's own option: after the flow's package, before a SPEC (N14)
        args = [*args[:1], "--pre", *args[1:]] if flow else ["--pre", *args]
    if flow:
        routes = Options(tuple(prebuilt_index), no_prebuilt, dry_run)
        sys.exit(start_flow(obj, args, fix, prebuilt_lib, as_json, selection, recipe, options, routes))
    sys.exit(recipe_route(obj, args, selection, recipe, options, fix, as_json))

