"""The options every command shares (selectors, recipe), checked before anything slow runs, and what
they resolve to: the snapshot, and the environment a recipe adds to it."""
from __future__ import annotations

import functools

import click

from envmgr.cache.resolve import resolve
from envmgr.cli.flags import check_pythons, check_recipe_flags, check_selector_flags
from envmgr.cli.main import Ctx
from envmgr.errors import UsageError
from envmgr.output import Spinner, say
from envmgr.recipes.context import with_recipe
from envmgr.recipes.recipe import get_recipe
from envmgr.snapshot.selectors import Selectors


def selector_options(func):
    """--vs/--toolset/--arch/--cuda/--python/--from/--refresh/--strict: the same on every command."""
    options = [
        click.option("--vs", "vs", metavar="WHICH", help="Visual Studio: edition, year, major, version prefix, instance id or path."),
        click.option("--toolset", metavar="14.XX", help="MSVC toolset (version prefix); default: the newest nvcc accepts."),
        click.option("--arch", default="x64", show_default=True, metavar="ARCH",
                     help="Target (x64, x86, arm64) or host_target pair (x64_arm64)."),
        click.option("--cuda", metavar="X.Y|PATH", help="CUDA toolkit: version prefix or folder; default: the newest."),
        click.option("--python", "pythons", multiple=True, metavar="EXE", help="Also consider pip CUDA of this Python."),
        click.option("--from", "from_file", metavar="FILE", help="Use a snapshot file instead of selecting."),
        click.option("--refresh", is_flag=True, help="Ignore the cache and capture again."),
        click.option("--strict", is_flag=True, help="With --from: refuse a snapshot whose paths do not exist here."),
    ]
    checked = _checking(func, lambda kw: _check_selectors(kw["from_file"], kw["strict"], kw["pythons"]))
    for option in reversed(options):
        checked = option(checked)
    return checked


def _checking(func, check):
    """The command, with its flags' values checked first (exit 2 before anything slow runs)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        check(kwargs)
        return func(*args, **kwargs)

    return wrapper


def _check_selectors(from_file, strict, pythons) -> None:
    check_selector_flags(from_file, strict)
    if pythons:
        ctx = click.get_current_context()
        if ctx.info_name == "install":
            # install runs pip with the first --python on this machine, even when --machine describes
            # the toolchain: it is probed here, not in the record.
            check_pythons(ctx.obj.local, pythons[:1])
            check_pythons(ctx.obj.host, pythons[1:])
        else:
            check_pythons(ctx.obj.host, pythons)


def get_snapshot(obj: Ctx, vs, toolset, arch, cuda, pythons, from_file, refresh, strict):
    snap, _ = resolve(obj.host, Selectors(vs, toolset, arch, cuda), from_file=from_file, refresh=refresh,
                      strict=strict, pythons=pythons, use_cache=obj.here, warn=lambda m: say(f"envmgr: {m}"),
                      progress=Spinner)
    return snap


def recipe_options(func):
    options = [
        click.option("--recipe", metavar="NAME", help="Add a build recipe's variables (see `envmgr recipes`)."),
        click.option("--arch-list", metavar="LIST", help="CUDA architectures for the recipe, e.g. '86;89'."),
        click.option("--allow-unsupported-compiler", is_flag=True,
                     help="Recipe: pass -allow-unsupported-compiler to nvcc (skips its host compiler check)."),
        click.option("--recipe-param", "recipe_params", multiple=True, metavar="NAME=VALUE",
                     help="A recipe parameter, e.g. lib_path=C:\\llama.cpp\\build\\bin (repeatable)."),
    ]

    def check(kw):
        check_recipe_flags(kw["recipe"], kw["arch_list"], kw["allow_unsupported_compiler"], kw["recipe_params"])

    checked = _checking(func, check)
    for option in reversed(options):
        checked = option(checked)
    return checked


def environment_for(obj: Ctx, sel: tuple, recipe: str | None, arch_list, allow_unsupported, recipe_params,
                    snap=None):
    """(delta, marker, notes): the snapshot (and recipe) for the selectors. A caller that needs the
    snapshot itself resolves it and passes it as `snap`: each command resolves once (one capture)."""

    snap = snap if snap is not None else get_snapshot(obj, *sel)
    delta, notes = snap.delta, ()
    marker = snap.marker()
    if recipe:
        params = []
        for item in recipe_params:
            name, eq, value = item.partition("=")
            if not eq or not name:
                raise UsageError(f"--recipe-param {item!r} is not NAME=VALUE", "e.g. --recipe-param lib_path=FOLDER")
            params.append((name, value))
        chosen = get_recipe(recipe, lambda m: say(f"envmgr: {m}"))
        delta, notes = with_recipe(obj.host, snap, chosen, dict(obj.env), arch_list=arch_list,
                                   allow_unsupported=allow_unsupported, params=tuple(params))
        marker = f"{marker} {recipe}"
        for note in notes:
            say(f"envmgr: {note}")
    return delta, marker, notes


def refuse_records(obj: Ctx, what: str) -> None:
    if obj.machine:
        raise UsageError(f"envmgr {what} starts programs on this machine; --machine/ENVMGR_MACHINE only "
                         "describes another one", "use `envmgr --machine FILE list|doctor|fix-msbuild --dry-run`, "
                         "or drop --machine")
