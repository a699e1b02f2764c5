"""Selection: the pure choice of (VS instance, MSVC toolset, arch, CUDA toolkit, host compiler).

Shared by every command. No match -> NoMatchError (exit 3) listing the candidates; several
matches -> the newest, with a note saying so; an unpinned toolset -> the newest one the chosen
nvcc and the toolset's STL both accept, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from envmgr.discover.model import CudaToolkit, HostCompiler, Inventory, Toolset, VsInstance
from envmgr.errors import NoMatchError, UsageError
from envmgr.knowledge import (
    HostLimits,
    Limits,
    cuda_at_least,
    installer_command,
    msvc_of_msc,
    toolset_component,
)
from envmgr.snapshot.selectors import Selectors  # (re-exported too: the selectors live apart to keep start-up fast)
from envmgr.version import Version
from envmgr.winenv import path_key

# --arch: a target (host x64) or an explicit host_target pair, as vcvarsall spells them.
ARCHES = {
    "x64": "x64",
    "amd64": "x64",
    "x86": "x64_x86",
    "arm64": "x64_arm64",
    "x64_x86": "x64_x86",
    "x64_arm64": "x64_arm64",
    "x86_x64": "x86_x64",
    "arm64_x64": "arm64_x64",
    "arm64_x86": "arm64_x86",
    "arm64_arm64": "arm64",
}


@dataclass(frozen=True)
class Choice:
    platform: str
    vs: VsInstance | None
    toolset: Toolset | None
    arch: str  # vcvarsall's argument, e.g. x64 or x64_arm64
    cuda: CudaToolkit | None
    host_compiler: HostCompiler | None = None  # Linux: g++ to pin when the default is too new
    notes: tuple[str, ...] = ()


def match_vs(vs: VsInstance, query: str) -> bool:
    q = query.strip().lower()
    if not q:
        return True
    path = vs.path.lower().rstrip("\\")
    return (
        q
        in (
            vs.edition.lower(),
            vs.year,
            str(vs.major),
            vs.instance_id.lower(),
            vs.nickname.lower(),
            vs.channel.lower(),
            f"vs{vs.year}",
            f"{vs.edition.lower()}{vs.year}",
        )
        or vs.version.startswith(q)
        or path == q.rstrip("\\")
        or (len(q) > 3 and q in vs.display_name.lower())
    )


def match_cuda(kit: CudaToolkit, query: str) -> bool:
    """A version prefix, or the toolkit's folder or nvcc (after `selectors.real_cuda_query`)."""
    q = query.strip().rstrip("\\/")
    if any(c in q for c in "\\/:"):
        return any(p and path_key(p) == path_key(q) for p in (kit.path, kit.nvcc))
    q = q.lstrip("vV")
    return kit.version == q or kit.short == q or kit.version.startswith(q + ".")


def _no_cuda_match(inv: Inventory, query: str) -> NoMatchError:
    return NoMatchError(
        f"no CUDA toolkit matches --cuda {query}",
        "pick one of the versions below, or give the toolkit's folder",
        details=tuple(f"CUDA {k.version}  {k.path}" for k in inv.cuda) or ("(none found)",),
    )


def _toolset_matches(t: Toolset, query: str) -> bool:
    return t.version == query or t.version.startswith(query + ".")


def check_selectors(inv: Inventory, sel: Selectors) -> None:
    """Refuse a selector that names nothing on this machine (NoMatchError, exit 3) or an unknown
    --arch (exit 2), before anything is chosen: `doctor` diagnoses a choice that exists but does
    not work together; a selector that matches nothing is an error on every command."""
    if ARCHES.get(sel.arch.lower()) is None:
        raise UsageError(f"unknown --arch {sel.arch}", "use one of: " + ", ".join(sorted(set(ARCHES))))
    if sel.cuda and not any(match_cuda(k, sel.cuda) for k in inv.cuda):
        raise _no_cuda_match(inv, sel.cuda)
    if inv.platform != "windows":
        return  # --vs/--toolset are ignored off Windows (choose() says so)
    pool = [v for v in inv.visual_studio if match_vs(v, sel.vs)] if sel.vs else list(inv.visual_studio)
    if sel.vs and not pool:
        raise NoMatchError(
            f"no Visual Studio instance matches --vs {sel.vs}",
            "pick one below with --vs",
            details=tuple(f"{v.label}  [{v.instance_id}] {v.path}" for v in inv.visual_studio)
            or ("(no Visual Studio found)",),
        )
    if sel.toolset and pool and not any(_toolset_matches(t, sel.toolset) for v in pool for t in v.toolsets):
        where = pool[0].label if len(pool) == 1 else "any Visual Studio instance"
        raise NoMatchError(
            f"no MSVC toolset {sel.toolset} in {where} (--toolset matches nothing)",
            "install it in the Visual Studio Installer (Individual components), or pick one below",
            details=tuple(f"{v.label}: {', '.join(t.version for t in v.toolsets) or '(no C++ tools)'}" for v in pool),
        )


def _cuda(inv: Inventory, sel: Selectors, notes: list[str]) -> CudaToolkit | None:
    usable = [k for k in inv.cuda if k.nvcc]
    if sel.cuda:
        found = [k for k in inv.cuda if match_cuda(k, sel.cuda)]
        if not found:
            raise _no_cuda_match(inv, sel.cuda)
        ok = [k for k in found if k.nvcc] or found
        if len(ok) > 1:
            notes.append(
                f"--cuda {sel.cuda} matches {len(ok)} toolkits; using the newest, {ok[0].version} at {ok[0].path}"
            )
        return ok[0]
    if len(usable) > 1:
        notes.append(f"{len(usable)} CUDA toolkits; using the newest, {usable[0].version} (pin one with --cuda)")
    return usable[0] if usable else None


def _vs_candidates(inv: Inventory, sel: Selectors) -> list[VsInstance]:
    usable = [v for v in inv.visual_studio if v.toolsets and v.vcvarsall]
    pool = [v for v in inv.visual_studio if match_vs(v, sel.vs)] if sel.vs else usable
    candidates = [v for v in pool if v.toolsets and v.vcvarsall]
    if not candidates:
        listing = tuple(
            f"{v.label}  [{v.instance_id}] {v.path}" + ("" if v.toolsets else "  (no C++ tools)")
            for v in inv.visual_studio
        ) or ("(no Visual Studio found)",)
        what = f"--vs {sel.vs}" if sel.vs else "any"
        raise NoMatchError(
            f"no Visual Studio instance with C++ tools matches {what}",
            "install the 'Desktop development with C++' workload, or pick one below with --vs",
            details=listing,
        )
    return candidates


def _vs_and_toolset(
    inv: Inventory, sel: Selectors, cuda: CudaToolkit | None, limits: Limits, notes: list[str]
) -> tuple[VsInstance, Toolset]:
    """The newest toolset the chosen CUDA accepts inside any matching instance (a v143 14.44 component
    inside VS 2026 counts as much as VS 2022's own); on a tie, the newest instance."""
    candidates = _vs_candidates(inv, sel)
    first_error: NoMatchError | None = None
    found: list[tuple[VsInstance, Toolset, list[str]]] = []
    for vs in candidates:
        local: list[str] = []
        try:
            toolset = _toolset(vs, cuda, sel, limits, local)
        except NoMatchError as exc:
            first_error = first_error or exc
            notes.append(f"skipping {vs.label}: " + ("; ".join(exc.details) or exc.message))
            continue
        found.append((vs, toolset, local))
    if not found:
        assert first_error is not None
        raise first_error
    vs, toolset, local = max(found, key=lambda f: Version.of(f[1].version))  # max keeps the first of equals
    if len(candidates) > 1:
        notes.append(f"{len(candidates)} Visual Studio instances match; using {vs.label} (pin one with --vs)")
    notes.extend(local)
    return vs, toolset


def _toolset(vs: VsInstance, cuda: CudaToolkit | None, sel: Selectors, limits: Limits, notes: list[str]) -> Toolset:
    if sel.toolset:
        found = [t for t in vs.toolsets if _toolset_matches(t, sel.toolset)]
        if not found:
            raise NoMatchError(
                f"{vs.label} has no MSVC toolset {sel.toolset}",
                "install it in the Visual Studio Installer (Individual components), or pick one below",
                details=tuple(t.version for t in vs.toolsets),
            )
        return found[0]
    if cuda is None:
        return _default_toolset(vs)
    host = limits.host.get(cuda.path)
    rejected: list[str] = []
    for t in vs.toolsets:  # newest first
        why = toolset_rejection(t, cuda, host, limits.stl.get(t.path))
        if why is None:
            if t is not vs.toolsets[0] or rejected:
                notes.append(
                    f"using MSVC {t.version} inside {vs.label} (vcvars -vcvars_ver={t.version}): " + "; ".join(rejected)
                )
            return t
        rejected.append(f"{t.version} rejected ({why})")
    raise NoMatchError(
        f"no MSVC toolset of {vs.label} works with CUDA {cuda.version}",
        advice_for(vs, host, cuda.short),
        details=tuple(rejected),
    )


def _default_toolset(vs: VsInstance) -> Toolset:
    return next((t for t in vs.toolsets if t.is_default), vs.toolsets[0])


def toolset_rejection(t: Toolset, cuda: CudaToolkit, host: HostLimits | None, stl_min: str | None) -> str | None:
    if host is not None and t.msc_ver is not None and not host.msvc_ok(t.msc_ver):
        return f"CUDA {cuda.short}'s nvcc accepts {host.describe_msvc()} per {host.source}"
    if stl_min and not cuda_at_least(cuda.short, stl_min):
        return f"its STL demands CUDA {stl_min} or newer (STL1002)"
    return None


def advice_for(vs: VsInstance, host: HostLimits | None, cuda: str | None = None) -> str:
    """What to install when no toolset of `vs` works with CUDA `cuda`: the pinned toolset's installer
    component and the command that adds it where one is known; never -allow-unsupported-compiler."""
    if (
        host is not None
        and host.msc_max_excl is not None
        and all((t.msc_ver or 0) >= host.msc_max_excl for t in vs.toolsets)
    ):
        pinned = toolset_component(cuda, host) if cuda else None
        if pinned is not None:
            msvc, component = pinned
            return (
                f"add the MSVC {msvc} toolset to {vs.label} (component {component}): "
                f"{installer_command(vs.path, component)}; then envmgr picks it (-vcvars_ver={msvc}), "
                "or install a newer CUDA"
            )
        newest = msvc_of_msc(host.msc_max_excl - 1)
        oldest = msvc_of_msc(host.msc_min) if host.msc_min else "14.20"
        return (
            f"install an older toolset (MSVC v{oldest}-{newest} build tools "
            f"in the Visual Studio Installer) and pass --toolset {newest}, or install a newer CUDA"
        )
    return "install a newer CUDA toolkit, or an MSVC toolset it supports"


def _host_compiler(inv: Inventory, cuda: CudaToolkit | None, limits: Limits, notes: list[str]) -> HostCompiler | None:
    """Linux: pin g++-N when the default g++ is newer than nvcc accepts (gcc limit in host_config.h)."""
    if cuda is None:
        return None
    host = limits.host.get(cuda.path)
    if host is None or host.gcc_max is None:
        return None
    default = next((c for c in inv.host_compilers if c.name == "g++"), None)
    if default is None or default.major is None or default.major <= host.gcc_max:
        return None
    ok = sorted(
        (c for c in inv.host_compilers if c.name.startswith("g++-") and c.major and c.major <= host.gcc_max),
        key=lambda c: Version.of(c.version),
        reverse=True,
    )
    if not ok:
        notes.append(
            f"g++ {default.version} is newer than CUDA {cuda.short} accepts (gcc <= {host.gcc_max}); "
            f"install g++-{host.gcc_max} (e.g. apt install g++-{host.gcc_max})"
        )
        return None
    notes.append(
        f"g++ {default.version} is newer than CUDA {cuda.short} accepts (gcc <= {host.gcc_max}); "
        f"pinning {ok[0].name} {ok[0].version} as the host compiler"
    )
    return ok[0]


def choose(inv: Inventory, sel: Selectors, limits: Limits) -> Choice:
    check_selectors(inv, sel)
    arch = ARCHES[sel.arch.lower()]
    notes: list[str] = []
    cuda = _cuda(inv, sel, notes)
    if inv.platform != "windows":
        if sel.vs or sel.toolset:
            notes.append("--vs/--toolset apply to Windows only; ignored here")
        return Choice(inv.platform, None, None, arch, cuda, _host_compiler(inv, cuda, limits, notes), tuple(notes))
    vs, toolset = _vs_and_toolset(inv, sel, cuda, limits, notes)
    return Choice(inv.platform, vs, toolset, arch, cuda, None, tuple(notes))
