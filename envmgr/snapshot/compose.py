"""compose: a Choice (+ a vcvars capture on Windows) -> one Snapshot."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from envmgr import __version__
from envmgr.discover.model import CudaToolkit, Inventory
from envmgr.host.base import WINDOWS, Host, join
from envmgr.snapshot.envdelta import PREPEND, REMOVE, SET, EnvDelta, VarOp, combine
from envmgr.snapshot.form import Snapshot
from envmgr.snapshot.select import Choice


def cuda_delta(platform: str, kit: CudaToolkit, others: tuple[CudaToolkit, ...], host: Host) -> EnvDelta:
    """CUDA_PATH, CUDA_PATH_VX_Y (MSBuild's CUDA props read it), CUDA_HOME, CUDACXX, CUDAToolkit_ROOT;
    its bin dirs first on PATH and every other toolkit's bin dirs removed
    (docs/knowledge.md#cuda-toolkits-on-windows)."""
    major, minor = kit.major_minor
    ops = [
        VarOp("CUDA_PATH", SET, kit.path),
        VarOp("CUDA_HOME", SET, kit.path),
        VarOp("CUDAToolkit_ROOT", SET, kit.path),
    ]
    if platform == WINDOWS:
        ops.append(VarOp(f"CUDA_PATH_V{major}_{minor}", SET, kit.path))
    if kit.nvcc:
        ops.append(VarOp("CUDACXX", SET, kit.nvcc))
    other_bins = tuple(d for o in others if o.path != kit.path for d in _bins(o, platform, host))
    if other_bins:
        ops.append(VarOp("PATH", REMOVE, other_bins))
    ops.append(VarOp("PATH", PREPEND, kit.bin_dirs))
    if platform != WINDOWS and kit.lib_dirs:
        # the runtime (libcudart.so.N) of a pip or /usr/local toolkit for programs built against it
        ops.append(VarOp("LD_LIBRARY_PATH", PREPEND, kit.lib_dirs))
    return EnvDelta(platform, tuple(ops))


def _bins(kit: CudaToolkit, platform: str, host: Host) -> tuple[str, ...]:
    extra = (join(host, kit.path, "libnvvp"),) if platform == WINDOWS else ()
    return tuple(kit.bin_dirs) + extra


def host_compiler_delta(choice: Choice) -> EnvDelta:
    cc = choice.host_compiler
    if cc is None:
        return EnvDelta(choice.platform, ())
    # CMake reads CUDAHOSTCXX; nvcc itself reads NVCC_CCBIN (CUDA 12.x+).
    return EnvDelta(choice.platform, (VarOp("CUDAHOSTCXX", SET, cc.path), VarOp("NVCC_CCBIN", SET, cc.path)))


def summary(choice: Choice, inv: Inventory) -> tuple[tuple[str, str], ...]:
    out = []
    if choice.vs is not None:
        out += [
            ("vs", choice.vs.label),
            ("vs_short", choice.vs.short_name),
            ("vs_path", choice.vs.path),
            ("vs_major", str(choice.vs.major or "")),
        ]
    if choice.toolset is not None:
        out.append(("toolset", choice.toolset.version))
    if choice.platform == WINDOWS:
        out.append(("arch", choice.arch))
    if choice.cuda is not None:
        out += [("cuda", choice.cuda.version), ("cuda_short", choice.cuda.short), ("cuda_path", choice.cuda.path)]
    if choice.host_compiler is not None:
        out.append(("host_compiler", f"{choice.host_compiler.name} {choice.host_compiler.version}"))
    if inv.gpus:
        out.append(("gpu", ", ".join(f"{g.name} (sm_{(g.compute_cap or '?').replace('.', '')})" for g in inv.gpus)))
    return tuple(out)


def identity(choice: Choice, args: tuple[str, ...], sdk: str | None) -> tuple[tuple[str, str], ...]:
    out = [("platform", choice.platform), ("envmgr", __version__)]
    if choice.vs is not None:
        out += [
            ("vs_instance_id", choice.vs.instance_id),
            ("vs_version", choice.vs.version),
            ("vcvarsall", choice.vs.vcvarsall or ""),
            ("vcvars_args", " ".join(args)),
        ]
    if choice.toolset is not None:
        out.append(("toolset", choice.toolset.version))
    if sdk:
        out.append(("windows_sdk", sdk))
    if choice.cuda is not None:
        out += [("cuda_path", choice.cuda.path), ("cuda_version", choice.cuda.version)]
    if choice.host_compiler is not None:
        out.append(("host_compiler", choice.host_compiler.path))
    return tuple(out)


def _quiet(message: str) -> AbstractContextManager[object]:
    return nullcontext()


def compose(
    host: Host, choice: Choice, inv: Inventory, progress: Callable[[str], AbstractContextManager[object]] | None = None
) -> Snapshot:
    """`progress(message)`: a context manager around the slow step (vcvarsall.bat); the CLI passes
    its spinner (output.Spinner), the core shows nothing."""
    progress = progress or _quiet
    deltas = []
    args: tuple[str, ...] = ()
    sdk = None
    if choice.platform == WINDOWS and choice.vs is not None and choice.toolset is not None:
        from envmgr.snapshot.capture import base_environment, capture_vcvars, vcvars_args

        assert choice.vs.vcvarsall is not None  # select.choose() picks only instances that have one
        pin = choice.toolset.version if not choice.toolset.is_default else None
        args = vcvars_args(choice.arch, pin)
        with progress(f"running vcvarsall.bat {' '.join(args)} ({choice.vs.label})"):
            vc_delta, out = capture_vcvars(host, choice.vs.vcvarsall, args, base_environment(host.env))
        sdk = out.env.get("WindowsSDKVersion", "").rstrip("\\") or None
        deltas.append(vc_delta)
    if choice.cuda is not None:
        deltas.append(cuda_delta(choice.platform, choice.cuda, inv.cuda, host))
    deltas.append(host_compiler_delta(choice))
    created = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    return Snapshot(
        choice.platform,
        combine(choice.platform, *deltas),
        summary(choice, inv),
        identity(choice, args, sdk),
        choice.notes,
        __version__,
        created,
    )
