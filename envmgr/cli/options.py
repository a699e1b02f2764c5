"""The options every command shares (selectors, recipe), checked before anything slow runs, and what
they resolve to: the snapshot, and the environment a recipe adds to it."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from envmgr.cache.resolve import resolve
from envmgr.cli.defaults import gpu_option, project_default, project_setting
from envmgr.cli.flags import check_pythons, check_recipe_flags, check_selector_flags
from envmgr.cli.grammar import refuse_inapplicable
from envmgr.cli.main import Ctx
from envmgr.discover.target import TargetPython
from envmgr.errors import UsageError
from envmgr.output import Spinner, detail, say
from envmgr.recipes.context import with_recipe
from envmgr.recipes.recipe import get_recipe
from envmgr.snapshot.envdelta import EnvDelta
from envmgr.snapshot.form import Snapshot
from envmgr.snapshot.selectors import Selectors


@dataclass(frozen=True)
class Selection:
    """What the selector options chose, built once by the CLI: the Visual Studio, toolset, architecture and
    CUDA to select (or a snapshot file instead), the Pythons whose pip CUDA counts, and how to resolve."""

    vs: str | None = None
    toolset: str | None = None
    arch: str = "x64"
    cuda: str | None = None
    pythons: tuple[str, ...] = ()  # install: its --python first, then every --pip-cuda-python
    from_file: str | None = None
    refresh: bool = False
    strict: bool = False
    target: TargetPython | None = None  # install: the Python chosen (target.choose_python), once

    @property
    def selectors(self) -> Selectors:
        return Selectors(self.vs, self.toolset, self.arch, self.cuda)

    @property
    def target_python(self) -> str | None:
        """Where install and verify put and prove the package: the chosen target, else the first --python."""
        if self.target is not None:
            return self.target.path
        return self.pythons[0] if self.pythons else None


@dataclass(frozen=True)
class RecipeArgs:
    """What the recipe options asked for: a recipe by name (None: none), its architectures, nvcc's
    -allow-unsupported-compiler, and NAME=VALUE parameters as given (checked when the recipe is applied)."""

    name: str | None = None
    arch_list: str | None = None
    allow_unsupported_compiler: bool = False
    params: tuple[str, ...] = ()
    given: bool = True  # False: the name is a default (ENVMGR_RECIPE, the project's envmgr.toml/pyproject.toml)


SELECTION_FLAGS = ("vs", "toolset", "arch", "cuda", "pythons", "from_file", "refresh", "strict")
RECIPE_FLAGS = ("recipe", "arch_list", "allow_unsupported_compiler", "recipe_params")


def selector_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--vs/--toolset/--arch/--cuda/--pip-cuda-python/--from/--refresh/--strict: the same on every command."""
    options = [
        click.option(
            "--vs",
            "vs",
            metavar="WHICH",
            help="Visual Studio: edition, year, major, version prefix, instance id or path.",
        ),
        click.option(
            "--toolset", metavar="14.XX", help="MSVC toolset (version prefix); default: the newest nvcc accepts."
        ),
        click.option(
            "--arch",
            default="x64",
            show_default=True,
            metavar="ARCH",
            help="Target (x64, x86, arm64) or host_target pair (x64_arm64).",
        ),
        click.option("--cuda", metavar="X.Y|PATH", help="CUDA toolkit: version prefix or folder; default: the newest."),
        click.option(
            "--pip-cuda-python",
            "pythons",
            multiple=True,
            metavar="EXE",
            help="Also consider the pip CUDA (nvidia-* wheels) of this Python (repeatable).",
        ),
        click.option("--from", "from_file", metavar="FILE", help="Use a snapshot file instead of selecting."),
        click.option("--refresh", is_flag=True, help="Ignore the cache and capture again."),
        click.option("--strict", is_flag=True, help="With --from: refuse a snapshot whose paths do not exist here."),
    ]
    checked = gpu_option(_collecting(func, SELECTION_FLAGS, "selection", _selection))
    for option in reversed(options):
        checked = option(checked)
    return checked


def _collecting(
    func: Callable[..., Any], flags: tuple[str, ...], name: str, build: Callable[..., object]
) -> Callable[..., Any]:
    """The command, called with one value `name` built (and checked: exit 2 before anything slow runs)
    from its options `flags` instead of one parameter each."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        kwargs[name] = build(**{flag: kwargs.pop(flag) for flag in flags})
        return func(*args, **kwargs)

    return wrapper


def _selection(
    vs: str | None,
    toolset: str | None,
    arch: str,
    cuda: str | None,
    pythons: tuple[str, ...],
    from_file: str | None,
    refresh: bool,
    strict: bool,
) -> Selection:
    target = None
    if from_file is None:  # a snapshot file is the whole choice: no default joins it
        ctx = click.get_current_context()
        vs, toolset, cuda = (
            given or project_default(ctx, key) for key, given in (("vs", vs), ("toolset", toolset), ("cuda", cuda))
        )
        target = _project_target(ctx)
    _check_selectors(from_file, strict, pythons)
    return Selection(vs, toolset, arch, cuda, tuple(pythons), from_file, refresh, strict, target)


def _project_target(ctx: click.Context) -> TargetPython | None:
    """install's target from the project (`python` in envmgr.toml, [tool.envmgr] or ENVMGR_PYTHON) when no
    --python was given; probed on this machine, where pip runs."""
    if ctx.info_name != "install" or ctx.params.get("python"):
        return None
    python = project_setting(ctx, "python")
    if python is None or not python.value:
        return None
    try:
        check_pythons(ctx.find_root().obj.local, (python.value,), "python")
    except UsageError as exc:
        raise UsageError(f"{exc.message} (python from {python.source} {python.where})", exc.remedy) from None
    return TargetPython(python.value, "project", f"{python.source} {python.where}")


def _recipe_args(
    recipe: str | None, arch_list: str | None, allow_unsupported_compiler: bool, recipe_params: tuple[str, ...]
) -> RecipeArgs:
    given = recipe is not None
    recipe = recipe or project_default(click.get_current_context(), "recipe")
    check_recipe_flags(recipe, arch_list, allow_unsupported_compiler, recipe_params)
    return RecipeArgs(recipe, arch_list, allow_unsupported_compiler, tuple(recipe_params), given)


def _check_selectors(from_file: str | None, strict: bool, pythons: tuple[str, ...]) -> None:
    check_selector_flags(from_file, strict)
    if from_file is not None:
        refuse_inapplicable(
            click.get_current_context(),
            ("vs", "toolset", "arch", "cuda", "pythons", "refresh"),
            f"with --from {from_file} (the snapshot already chose the environment)",
            "drop {flag}, or drop --from to select",
        )
    if pythons:  # install's target (--python) is probed on this machine by install itself
        check_pythons(click.get_current_context().obj.host, pythons, "--pip-cuda-python")


def say_target(target: TargetPython) -> None:
    """The one line that says which Python install or verify acts on and why; -v adds what was passed over."""
    say(target.line())
    for passed in target.passed:
        detail(f"envmgr:   passed over: {passed}")


def get_snapshot(obj: Ctx, selection: Selection) -> Snapshot:
    return resolve_snapshot(obj, selection)[0]


def resolve_snapshot(obj: Ctx, selection: Selection) -> tuple[Snapshot, str]:
    """The selection's snapshot and where it came from ("file", "cache" or "captured"), said and shown as every
    command says it (warnings on stderr, a spinner while discovery or a capture runs)."""
    return resolve(
        obj.host,
        selection.selectors,
        from_file=selection.from_file,
        refresh=selection.refresh,
        strict=selection.strict,
        pythons=selection.pythons,
        use_cache=obj.here,
        warn=lambda m: say(f"envmgr: {m}"),
        progress=Spinner,
    )


def recipe_options(func: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--recipe", metavar="NAME", help="Add a build recipe's variables (see `envmgr recipes`)."),
        click.option(
            "--cuda-arch",
            "arch_list",
            metavar="LIST",
            help="CUDA architectures for the recipe, e.g. '86;89' (--arch is the MSVC target).",
        ),
        click.option(
            "--allow-unsupported-compiler",
            is_flag=True,
            help="Recipe: pass -allow-unsupported-compiler to nvcc (skips its host compiler check).",
        ),
        click.option(
            "--recipe-param",
            "recipe_params",
            multiple=True,
            metavar="NAME=VALUE",
            help="A recipe parameter, e.g. lib_path=C:\\llama.cpp\\build\\bin (repeatable).",
        ),
    ]

    checked = _collecting(func, RECIPE_FLAGS, "recipe", _recipe_args)
    for option in reversed(options):
        checked = option(checked)
    return checked


def environment_for(
    obj: Ctx, selection: Selection, recipe: RecipeArgs, snap: Snapshot | None = None
) -> tuple[EnvDelta, str, tuple[str, ...]]:
    """(delta, marker, notes): the snapshot (and recipe) for the selectors. A caller that needs the
    snapshot itself resolves it and passes it as `snap`: each command resolves once (one capture)."""

    snap = snap if snap is not None else get_snapshot(obj, selection)
    delta = snap.delta
    notes: tuple[str, ...] = ()
    marker = snap.marker()
    if recipe.name:
        params = []
        for item in recipe.params:
            name, eq, value = item.partition("=")
            if not eq or not name:
                raise UsageError(f"--recipe-param {item!r} is not NAME=VALUE", "e.g. --recipe-param lib_path=FOLDER")
            params.append((name, value))
        chosen = get_recipe(recipe.name, lambda m: say(f"envmgr: {m}"))
        delta, notes = with_recipe(
            obj.host,
            snap,
            chosen,
            dict(obj.env),
            arch_list=recipe.arch_list,
            allow_unsupported=recipe.allow_unsupported_compiler,
            params=tuple(params),
        )
        marker = f"{marker} {recipe.name}"
        for note in notes:
            say(f"envmgr: {note}")
    return delta, marker, notes


def refuse_records(obj: Ctx, what: str) -> None:
    if obj.machine:
        raise UsageError(
            f"envmgr {what} starts programs on this machine; --machine/ENVMGR_MACHINE only describes another one",
            "use `envmgr --machine FILE list|doctor|fix-msbuild --dry-run`, or drop --machine",
        )
