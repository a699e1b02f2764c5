"""Gather what a recipe needs from the machine (GPUs, ninja, BuildCustomizations, TEMP) through the Host."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envmgr.discover.gpu import discover_gpus
from envmgr.host.base import Host, join, which_in
from envmgr.recipes.recipe import Recipe, RecipeContext, apply_recipe
from envmgr.snapshot.envdelta import EnvDelta, combine
from envmgr.snapshot.form import Snapshot
from envmgr.winenv import env_get


def gather(
    host: Host,
    snap: Snapshot,
    env: Mapping[str, str],
    *,
    arch_list: str | None,
    allow_unsupported: bool,
    params: tuple[tuple[str, str], ...],
) -> RecipeContext:
    d = dict(snap.summary)
    gpus, _ = discover_gpus(host) if not arch_list else ((), ())
    path = env_get(env, "PATH", True, "")
    ninja = which_in(host.platform, "ninja", path, env.get("PATHEXT", ""), host.exists) if path else None
    vs_path, major = d.get("vs_path", ""), _int(d.get("vs_major"))
    in_bc = True
    if vs_path and d.get("cuda_short"):
        folder = (
            join(host, vs_path, "Common7", "IDE", "VC", "VCTargets", "BuildCustomizations")
            if major == 15
            else join(host, vs_path, "MSBuild", "Microsoft", "VC", f"v{major or 17}0", "BuildCustomizations")
        )
        in_bc = host.exists(join(host, folder, f"CUDA {d['cuda_short']}.props"))
    lib = dict(params).get("lib_path")
    lib_files: tuple[str, ...] = ()
    if lib:
        try:
            lib_files = tuple(host.listdir(lib))
        except OSError:
            lib_files = ()
    return RecipeContext(
        platform=host.platform,
        cuda_short=d.get("cuda_short", ""),
        cuda_path=d.get("cuda_path", ""),
        nvcc=next(
            (
                op.value
                for op in snap.delta.ops
                if op.name == "CUDACXX" and op.op == "set" and isinstance(op.value, str)
            ),
            "",
        ),
        vs_path=vs_path,
        vs_major=major,
        toolset=d.get("toolset", ""),
        cuda_in_build_customizations=in_bc,
        gpu_caps=tuple(g.compute_cap for g in gpus if g.compute_cap),
        ninja=ninja,
        arch_list=arch_list,
        allow_unsupported_compiler=allow_unsupported,
        params=params,
        system_drive=env.get("SystemDrive", "C:"),
        temp=env.get("TEMP", ""),
        cpu_count=host.cpu_count,
        memory_mib=host.memory_mib,
        lib_files=lib_files,
    )


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def with_recipe(
    host: Host, snap: Snapshot, recipe: Recipe, env: Mapping[str, str], **options: Any
) -> tuple[EnvDelta, tuple[str, ...]]:
    """The snapshot's delta with the recipe's variables added, and the recipe's notes."""
    ctx = gather(host, snap, snap.delta.apply(env), **options)
    extra, notes = apply_recipe(recipe, ctx)
    return combine(snap.platform, snap.delta, extra), notes
