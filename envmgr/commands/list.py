"""`envmgr list`: the inventory as JSON (docs/json.md) and as a screen people can read."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

import click

from envmgr.cli.defaults import gpu_option
from envmgr.cli.flags import check_pythons
from envmgr.cli.main import Ctx
from envmgr.discover import discover
from envmgr.discover.model import Inventory, to_json
from envmgr.output import JSON_SCHEMA_VERSION, Painter, Spinner, emit_json


def inventory_json(inv: Inventory) -> dict[str, Any]:
    return {
        "schema": JSON_SCHEMA_VERSION,
        "platform": inv.platform,
        "visual_studio": [dict(to_json(v), usable=v.usable) for v in inv.visual_studio],
        "cuda": to_json(inv.cuda),
        "gpus": [dict(to_json(g), problems=[]) for g in inv.gpus],
        "host_compilers": to_json(inv.host_compilers),
        "windows_sdks": list(inv.windows_sdks),
        "problems": list(inv.problems) + list(inv.gpu_problems),
    }


def render_inventory(inv: Inventory, paint: Painter) -> str:
    out: list[str] = []
    if inv.platform == "windows":
        _visual_studio(out, inv, paint)
    _cuda(out, inv, paint)
    _gpus(out, inv, paint)
    if inv.platform != "windows":
        out.append("")
        out.append(paint(f"Host compilers ({len(inv.host_compilers)})", "bold"))
        for c in inv.host_compilers:
            out.append(f"  {c.name} {c.version}  {c.path}")
            _problems(out, paint, c.problems)
    if inv.problems:
        out.append("")
        out.append(paint("Machine", "bold"))
        _problems(out, paint, inv.problems, "  ")
    return "\n".join(out)


def _problems(out: list[str], paint: Painter, items: Iterable[str], indent: str = "    ") -> None:
    for p in items:
        out.append(f"{indent}{paint('! ' + p, 'yellow')}")


def _visual_studio(out: list[str], inv: Inventory, paint: Painter) -> None:
    out.append(paint(f"Visual Studio ({len(inv.visual_studio)})", "bold"))
    if not inv.visual_studio:
        out.append("  none found")
    for vs in inv.visual_studio:
        state = "" if vs.is_complete is not False else paint(" incomplete", "red")
        state += "" if vs.usable else paint(" UNUSABLE", "red")
        nick = f' "{vs.nickname}"' if vs.nickname else ""
        out.append(f"  {paint(vs.label, 'cyan')}{nick}{state}  [{vs.instance_id}] via {vs.source}")
        out.append(f"    {vs.path}")
        if vs.toolsets:
            names = ", ".join(t.version + ("*" if t.is_default else "") for t in vs.toolsets)
            out.append(f"    MSVC toolsets: {names}   (* default)")
        bc = vs.build_customizations
        if bc is not None:
            cuda = (
                ", ".join(bc.cuda_versions)
                if bc.cuda_versions
                else paint("no CUDA" if bc.exists else "folder missing", "yellow")
            )
            out.append(f"    BuildCustomizations: {cuda}   {bc.dir}")
        _problems(out, paint, vs.problems)
        for why in vs.unusable:
            out.append(f"    {paint('x cannot build: ' + why, 'red')}")
    if inv.windows_sdks:
        out.append(f"  Windows SDKs: {', '.join(inv.windows_sdks)}")
    out.append("")


def _cuda(out: list[str], inv: Inventory, paint: Painter) -> None:
    out.append(paint(f"CUDA toolkits ({len(inv.cuda)})", "bold"))
    if not inv.cuda:
        out.append("  none found")
    for kit in inv.cuda:
        out.append(f"  {paint('CUDA ' + kit.version, 'cyan')}  {kit.path}")
        out.append(f"    nvcc: {kit.nvcc or paint('missing', 'red')}   version from {kit.version_source}")
        out.append(f"    found by: {', '.join(kit.sources)}")
        if kit.msbuild_extensions:
            out.append(f"    MSBuildExtensions: {len(kit.msbuild_extensions)} files")
        _problems(out, paint, kit.problems)
    out.append("")


def _gpus(out: list[str], inv: Inventory, paint: Painter) -> None:
    out.append(paint(f"GPUs ({len(inv.gpus)})", "bold"))
    if not inv.gpus:
        out.append("  none found (no nvidia-smi, or no NVIDIA GPU)")
    for g in inv.gpus:
        cc = f"sm_{g.compute_cap.replace('.', '')}" if g.compute_cap else "compute capability unknown"
        via = "" if g.compute_cap_source == "nvidia-smi" else f" ({g.compute_cap_source})"
        mem = f", {g.memory_mib} MiB" if g.memory_mib else ""
        out.append(f"  [{g.index}] {g.name}: {cc}{via}, driver {g.driver_version}{mem}")
    _problems(out, paint, inv.gpu_problems, "  ")


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (schema in docs/json.md).")
@click.option(
    "--pip-cuda-python",
    "pythons",
    multiple=True,
    metavar="EXE",
    help="Also look for pip-installed CUDA in this Python's site-packages (repeatable).",
)
@gpu_option
@click.pass_obj
def command(obj: Ctx, as_json: bool, pythons: tuple[str, ...]) -> None:
    """List Visual Studio instances, CUDA toolkits, GPUs and host compilers."""
    from envmgr.commands.list import inventory_json, render_inventory

    if pythons:
        check_pythons(obj.host, pythons, "--pip-cuda-python")
    with Spinner("looking for Visual Studio, CUDA and GPUs"):
        inv = discover(obj.host, (None, *pythons))
    if as_json:
        emit_json(inventory_json(inv))
    else:
        click.echo(render_inventory(inv, Painter(sys.stdout)))
