"""`envmgr hook install|remove|status`: a Python that starts with the compiler environment of a snapshot."""

from __future__ import annotations

import datetime
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from envmgr import __version__
from envmgr.cache.resolve import snapshot_key
from envmgr.cli.main import Ctx
from envmgr.cli.options import (
    RecipeArgs,
    Selection,
    environment_for,
    recipe_options,
    resolve_snapshot,
    say_target,
    selector_options,
)
from envmgr.discover.target import choose_python
from envmgr.errors import UsageError
from envmgr.files.read import read_regular
from envmgr.hook import apply, plan
from envmgr.hook.status import hook_status, render_status, snapshot_digest
from envmgr.output import emit_json, say
from envmgr.snapshot.envdelta import EnvDelta
from envmgr.snapshot.form import Snapshot, to_toml
from envmgr.snapshot.overrides import compiler_overrides, override_lines

_PYTHON_HELP = (
    "The Python to hook (default: the active venv or conda environment, else a .venv here or above; "
    "any other Python only when named here)."
)
_OWN = ("--python", "VIRTUAL_ENV", "CONDA_PREFIX", ".venv")


@click.group("hook")
def command() -> None:
    """Make a Python start with the compiler environment of a snapshot (install, remove, status).

    \b
    The hook is a .pth line and a small module in the Python's site folder: at start-up it applies the
    snapshot's variables (PATH, INCLUDE, LIB, CUDA_PATH...) to that process only, from a file written at
    install time, so cl/nvcc/gcc started by setuptools, torch.utils.cpp_extension or triton find them.
    Nothing outside that Python changes; `envmgr hook remove` leaves it byte for byte as before.
    \b
      envmgr hook install --cuda 13.0                 the active venv
      envmgr hook install --python C:\\app\\python\\python.exe --from env.toml
      envmgr hook status --json
    """


def _python_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--python", "python", metavar="EXE", help=_PYTHON_HELP)(func)


def _json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON (docs/json.md).")(func)


def _target(obj: Ctx, python: str | None) -> apply.Target:
    if obj.machine or obj.wine_prefix:
        raise UsageError(
            "envmgr hook writes into a Python on this machine; --machine/--wine-prefix describe another one",
            "drop --machine/--wine-prefix",
        )
    chosen = choose_python(obj.local, os.getcwd(), sys.executable, python)
    if chosen.why not in _OWN:
        raise UsageError(
            "no virtual environment or conda environment here to hook",
            "give --python EXE (a Python whose every start should carry the environment)",
        )
    say_target(chosen)
    return apply.locate(obj.local, chosen.path)


@command.command("install")
@selector_options
@recipe_options
@_python_option
@_json_option
@click.pass_obj
def hook_install(obj: Ctx, selection: Selection, recipe: RecipeArgs, python: str | None, as_json: bool) -> None:
    """Write the hook into a Python: every start of it applies the snapshot chosen by the selectors."""
    target = _target(obj, python)
    snap, origin = resolve_snapshot(obj, selection)
    delta, _, _ = environment_for(obj, selection, recipe, snap=snap)
    info = _snapshot_info(obj, selection, snap, origin)
    selectors = _selectors(selection, recipe)
    files = _hook_files(delta, snap, selectors)
    old = apply.read_record(target)
    if old is not None:
        apply.remove(target, old)
        say(f"envmgr: replaced the hook installed {old.get('installed', '')}")
    record = plan.record(
        probe=target.probe,
        placement=target.placement,
        created=files,
        pycache_existed=(target.site / "__pycache__").is_dir(),
        snapshot=info,
        selectors=selectors,
        envmgr=__version__,
        when=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    )
    written = apply.install(target, files, record)
    overrides = compiler_overrides(obj.env, snap.platform, delta)
    if as_json:
        emit_json(
            {
                "schema": 1,
                "action": "install",
                "python": target.probe.executable,
                "kind": target.probe.kind,
                "site": str(target.site),
                "files": written,
                "pth_changed": target.placement.pth_file,
                "snapshot": info,
                "selectors": selectors,
                "overrides": [{"name": n, "value": v, "why": w} for n, v, w in overrides],
            }
        )
        return
    _say_installed(target, snap, overrides)


def _selectors(selection: Selection, recipe: RecipeArgs) -> dict[str, Any]:
    """What chose the snapshot (the file, or the selectors and pip's CUDA Pythons) and the recipe: recorded."""
    chosen = (
        {"from": selection.from_file}
        if selection.from_file
        else {**selection.selectors._asdict(), "pip_cuda_python": list(selection.pythons)}
    )
    return {**chosen, "recipe": recipe.name}


def _hook_files(delta: EnvDelta, snap: Snapshot, selectors: dict[str, Any]) -> dict[str, bytes]:
    """The hook's files by role: the standard-library module, the env file and the .pth that imports it."""
    comments = (
        f"envmgr {__version__}: {snap.headline()}",
        "selectors: " + ", ".join(f"{k}={v}" for k, v in selectors.items() if v),
    )
    return {
        plan.PY: read_regular(Path(plan.__file__).with_name("site_module.py")),
        plan.ENV: plan.env_text(delta, comments).encode("utf-8"),
        plan.PTH: plan.PTH_TEXT.encode("utf-8"),
    }


def _say_installed(target: apply.Target, snap: Snapshot, overrides: tuple[tuple[str, str, str], ...]) -> None:
    """hook install's report in words: where, what, and the compiler variables the snapshot overrides."""
    click.echo(
        f"envmgr hook: installed in {target.site} ({target.probe.kind}, Python {target.probe.version}): "
        f"{snap.headline()}"
    )
    if target.placement.pth_file:
        click.echo(
            f"  enabled `import site` in {target.placement.pth_file} (the embeddable Python's path file); "
            "`envmgr hook remove` restores its exact bytes"
        )
    for line in override_lines(overrides):
        say(f"envmgr: warning: {line}")


def _snapshot_info(obj: Ctx, selection: Selection, snap: Snapshot, origin: str) -> dict[str, Any]:
    info: dict[str, Any] = {
        "origin": origin,
        "headline": snap.headline(),
        "platform": snap.platform,
        "summary": dict(snap.summary),
        "sha256": snapshot_digest(snap.text or to_toml(snap)),
    }
    if origin == "file" and selection.from_file:
        info["file"] = os.path.abspath(selection.from_file)
    elif obj.here:
        info["key"] = snapshot_key(obj.host, selection.selectors, selection.pythons)
    return info


@command.command("remove")
@_python_option
@_json_option
@click.pass_obj
def hook_remove(obj: Ctx, python: str | None, as_json: bool) -> None:
    """Undo `hook install`: delete what it wrote (checked by hash) and restore what it changed."""
    target = _target(obj, python)
    record = apply.read_record(target)
    removed = apply.remove(target, record) if record is not None else []
    if as_json:
        emit_json(
            {
                "schema": 1,
                "action": "remove",
                "python": target.probe.executable,
                "site": str(target.site),
                "was_installed": record is not None,
                "removed": removed,
            }
        )
    elif record is None:
        click.echo(f"envmgr hook: no hook in {target.site}; nothing to remove")
    else:
        click.echo(f"envmgr hook: removed from {target.site} ({len(removed)} file(s) removed or restored)")


@command.command("status")
@_python_option
@_json_option
@click.pass_obj
def hook_status_command(obj: Ctx, python: str | None, as_json: bool) -> None:
    """Show the hook of a Python: its snapshot, whether that is still current, and variables that override it.

    Exit codes: 0 installed and current, 1 not installed, stale, changed, or overridden.
    """
    target = _target(obj, python)
    report = hook_status(target, obj.env)
    if as_json:
        emit_json(report)
    else:
        click.echo(render_status(report), nl=False)
    click.get_current_context().exit(0 if report["ok"] else 1)
