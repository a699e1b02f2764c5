"""Windows toolchain checks: which VS instance CMake picks and what it holds (F01-F06).

CMake's choice is re-implemented from Kitware/CMake Source/cmVSSetupHelper.cxx
(EnumerateAndChooseVSInstance, ChooseVSInstance): CMAKE_GENERATOR_INSTANCE, then the instance whose
Common7/Tools is VS<NN>0COMNTOOLS, then the "highest" installationVersion, compared as std::string
(so "17.5.33530.505" beats "17.14.37027.9"; docs/knowledge.md#vswhere).
"""

from __future__ import annotations

import re

from envmgr import knowledge
from envmgr.binaries.dll import binary_machine
from envmgr.discover.model import CudaToolkit, VsInstance
from envmgr.doctor.checks import (
    FAIL,
    OK,
    SKIPPED,
    WARN,
    Facts,
    Finding,
    check,
    finding,
    quote,
    uses_vs_generator,
    vs_generator,
    worst,
)
from envmgr.host.base import WINDOWS, host_path, join, same_path
from envmgr.knowledge import HostLimits
from envmgr.version import Version


def generator_major(facts: Facts) -> tuple[int | None, str]:
    gen = vs_generator(facts.env) or ""
    m = re.match(r"Visual Studio (\d+)", gen, re.I)
    if m:
        return int(m.group(1)), f"CMAKE_GENERATOR={gen}"
    majors = sorted({v.major for v in facts.inv.visual_studio if v.major and v.toolsets}, reverse=True)
    cm = Version.of(facts.cmake_version).mm if Version.parse(facts.cmake_version) else None
    for major in majors:
        since = knowledge.generator_since(major)
        if not cm or since is None or cm >= since:
            how = f"cmake {facts.cmake_version}" if cm else "cmake version unknown"
            return major, f"the newest Visual Studio generator CMake knows ({how}) is VS {major}"
    return None, "no Visual Studio generator fits the installed instances"


def cmake_instance(facts: Facts, major: int) -> tuple[VsInstance | None, str]:
    """(instance, why) as CMake would choose it in this shell; None when it finds none."""
    env = facts.env
    pool = [
        v
        for v in facts.inv.visual_studio
        if v.major == major and v.default_toolset and any(t.version == v.default_toolset for t in v.toolsets)
    ]
    pinned = (env.get("CMAKE_GENERATOR_INSTANCE") or "").split(",")[0].strip()
    if pinned and vs_generator(env):
        hit = next((v for v in facts.inv.visual_studio if same_path(WINDOWS, v.path, pinned)), None)
        return hit, f"CMAKE_GENERATOR_INSTANCE={pinned}"
    var = f"VS{major}0COMNTOOLS"
    tools = env.get(var)
    if tools:
        hit = next((v for v in pool if same_path(WINDOWS, join(facts.host, v.path, "Common7", "Tools"), tools)), None)
        if hit is not None:
            return hit, f"{var} points at its Common7\\Tools (set by its vcvars)"
    if not pool:
        return None, f"no VS {major} instance with a default MSVC toolset"
    best = pool[0]
    for v in pool[1:]:
        if best.version < v.version:  # std::string operator< in CMake
            best = v
    why = "it has the highest installationVersion"
    numeric = max(pool, key=lambda v: Version.of(v.version))
    if numeric is not best:
        why += (
            f" as CMake compares versions (as text: '{best.version}' > '{numeric.version}', "
            "although the other is newer)"
        )
    elif len(pool) > 1:
        why += f" ({best.version})"
    return best, why


def _bc_verdict(vs: VsInstance, want: str) -> tuple[str, str]:
    bc = vs.build_customizations
    folder = (
        bc.dir if bc is not None else "\\".join((vs.path, *(knowledge.build_customizations_subdir(vs.major) or ())))
    )
    short = "\\".join(folder.split("\\")[-5:])
    if bc is None or not bc.cuda_versions:
        return FAIL, f"its {short} has no CUDA *.props at all: CMake stops with 'No CUDA toolset found.'"
    if want not in bc.cuda_versions:
        return FAIL, (
            f"its {short} has CUDA {', '.join(bc.cuda_versions)} but no CUDA {want}.props "
            f"(CMake would take CUDA {bc.cuda_versions[-1]} instead)"
        )
    return OK, f"its {short} has CUDA {want}.props"


@check("F01", WINDOWS)
def f01(facts: Facts) -> Finding:
    if not uses_vs_generator(facts.env):
        return finding("F01", OK, f"CMAKE_GENERATOR={vs_generator(facts.env)}: MSBuild's CUDA integration is not used")
    kit = facts.cuda
    if kit is None:
        return finding("F01", SKIPPED, "no CUDA toolkit to build with")
    major, how = generator_major(facts)
    if major is None:
        return finding("F01", SKIPPED, how)
    evidence, statuses, bad = [how], [], []
    vs, why = cmake_instance(facts, major)
    scenarios = [("in this shell", vs, why)]
    chosen = facts.vs
    if (
        chosen is not None
        and chosen is not vs
        and not (facts.env.get("CMAKE_GENERATOR_INSTANCE") and vs_generator(facts.env))
    ):
        if chosen.major == major:
            scenarios.append(
                ("in the shell envmgr prepares", chosen, f"envmgr selects it and its vcvars sets VS{major}0COMNTOOLS")
            )
        else:  # e.g. VS 2022 chosen for CUDA 13.1 beside VS 2026: its vcvars sets VS170COMNTOOLS, not VS180's
            evidence.append(
                f"in the shell envmgr prepares: envmgr selects {chosen.label}, but the VS {major} "
                f"generator does not use it (its vcvars sets VS{chosen.major}0COMNTOOLS); "
                "Ninja uses it"
            )
    for where, inst, reason in scenarios:
        if inst is None:
            statuses.append(FAIL)
            evidence.append(f"{where}: CMake finds no instance ({reason})")
            continue
        status, verdict = _bc_verdict(inst, kit.short)
        statuses.append(status)
        evidence.append(f"{where}: CMake would pick {inst.edition} {inst.version} because {reason}; {verdict}")
        if status == FAIL:
            bad.append(inst)
    if not kit.msbuild_extensions:
        evidence.append(
            f"CUDA {kit.short} has no extras\\visual_studio_integration\\MSBuildExtensions: "
            "nothing to copy; use Ninja (CMAKE_GENERATOR=Ninja in a vcvars shell)"
        )
    status = worst(statuses)
    if status == OK:
        return finding("F01", OK, f"CMake's Visual Studio instance has the CUDA {kit.short} integration", evidence)
    target = bad[0]
    cmd = f"envmgr fix-msbuild --vs {quote(target.path)} --cuda {kit.short}" if kit.msbuild_extensions else ""
    return finding(
        "F01",
        FAIL,
        f"{target.edition} {target.version} lacks the CUDA {kit.short} MSBuild integration (No CUDA toolset found.)",
        evidence,
        fix=f"copy CUDA {kit.short}'s MSBuildExtensions into {target.edition}'s BuildCustomizations "
        "(admin), "
        "or build with CMAKE_GENERATOR=Ninja from a vcvars shell, or set CMAKE_GENERATOR_INSTANCE to "
        "an instance that has it",
        fix_command=cmd,
    )


@check("F02", WINDOWS)
def f02(facts: Facts) -> Finding:
    if not uses_vs_generator(facts.env):
        return finding("F02", OK, "not using a Visual Studio generator: CUDA comes from CUDACXX/PATH")
    kit = facts.cuda
    major, _ = generator_major(facts)
    if kit is None or major is None:
        return finding("F02", SKIPPED, "no CUDA toolkit or no Visual Studio generator")
    toolset = facts.env.get("CMAKE_GENERATOR_TOOLSET", "")
    if "cuda=" in toolset and vs_generator(facts.env):
        return finding("F02", OK, f"CMAKE_GENERATOR_TOOLSET={toolset} pins the CUDA toolset")
    vs, why = cmake_instance(facts, major)
    bc = vs.build_customizations if vs is not None else None
    if vs is None or bc is None or not bc.cuda_versions:
        return finding("F02", SKIPPED, "CMake's instance has no CUDA *.props (see F01)")
    highest = max(bc.cuda_versions, key=Version.of)
    ev = [
        f"CMake would pick {vs.edition} {vs.version} ({why})",
        f"its BuildCustomizations: CUDA {', '.join(bc.cuda_versions)}; the VS generator takes the highest, {highest}",
    ]
    if highest == kit.short:
        return finding("F02", OK, f"the VS generator's CUDA toolset ({highest}) is the chosen CUDA", ev)
    return finding(
        "F02",
        WARN,
        f"the VS generator would build with CUDA {highest}, not CUDA {kit.short}",
        ev,
        fix=f"set CMAKE_GENERATOR_TOOLSET=cuda={kit.short} (with CMAKE_GENERATOR set), or use Ninja",
        fix_command=f"envmgr shell --cuda {kit.short}",
    )


@check("F03", WINDOWS)
def f03(facts: Facts) -> Finding:
    usable = [v for v in facts.inv.visual_studio if v.toolsets and v.vcvarsall and v.usable]
    ev = [
        f"{v.label}: {'MSVC ' + ', '.join(t.version for t in v.toolsets) if v.toolsets else 'no C++ tools'}"
        + ("" if v.usable else f"; unusable: {'; '.join(v.unusable)}")
        for v in facts.inv.visual_studio
    ] or ["no Visual Studio instance found"]
    if not usable:
        near = next((v for v in facts.inv.visual_studio if v.toolsets and v.unusable), None)
        return finding(
            "F03",
            FAIL,
            "no usable Visual Studio instance (C++ tools, VC MSBuild targets, Windows SDK, "
            "complete install): CMake falls back to NMake or fails its compiler check",
            ev,
            fix=f"{near.label}: {'; '.join(near.unusable)}"
            if near
            else "install Build Tools with 'Desktop development with C++' (VC x64 tools + Windows SDK)",
        )
    gen = vs_generator(facts.env) or ""
    m = re.match(r"Visual Studio (\d+)", gen, re.I)
    if m and not any(v.major == int(m.group(1)) for v in usable):
        return finding(
            "F03",
            FAIL,
            f"CMAKE_GENERATOR={gen} but no VS {m.group(1)} with C++ tools is installed",
            ev,
            fix="unset CMAKE_GENERATOR, or name an installed Visual Studio",
            fix_command="envmgr shell",
        )
    major, how = generator_major(facts)
    if uses_vs_generator(facts.env) and major is None:
        return finding(
            "F03",
            FAIL,
            f"{how}: cmake {facts.cmake_version} predates the installed Visual Studio",
            ev,
            fix=_newer_cmake_fix(),
        )

    bits, what = python_bits(facts)
    ev.append(f"Python: {what}")
    if bits == 32 or "ARM" in what:
        return finding(
            "F03",
            FAIL,
            f"{what}: scikit-build-core builds for the Python's platform, and CUDA needs x64",
            ev,
            fix="install and use a 64-bit (x64) Python",
        )
    return finding("F03", OK, f"{len(usable)} Visual Studio instance(s) with C++ tools", ev)


def _newer_cmake_fix() -> str:
    newest = knowledge.VS_MAJORS[0]
    need = newest.generator_cmake
    return f'use CMake >= {need} for VS {newest.year} (pip install "cmake>={need}"), or Ninja from a vcvars shell'


def _toolset_rows(facts: Facts, vs: VsInstance, kit: CudaToolkit) -> tuple[VsInstance, CudaToolkit, HostLimits | None]:
    """(toolset, nvcc verdict, stl min) for the instance envmgr uses, default toolset first."""
    host = facts.limits.host.get(kit.path) or knowledge.host_limits(kit.short)
    return vs, kit, host


@check("F04", WINDOWS)
def f04(facts: Facts) -> Finding:
    if facts.vs is None or facts.cuda is None or not facts.vs.toolsets:
        return finding("F04", SKIPPED, "needs a Visual Studio instance with MSVC and a CUDA toolkit")
    vs, kit, limits = _toolset_rows(facts, facts.vs, facts.cuda)
    if limits is None or limits.msc_max_excl is None:
        return finding("F04", SKIPPED, f"no host-compiler limits known for CUDA {kit.short}")
    src = (
        "its include\\crt\\host_config.h"
        if limits.source == "host_config.h"
        else "envmgr's table (host_config.h unreadable)"
    )
    ev = [f"CUDA {kit.short}'s nvcc accepts {limits.describe_msvc()} per {src}"]
    ok = [t for t in vs.toolsets if t.msc_ver and limits.msvc_ok(t.msc_ver)]
    default = next((t for t in vs.toolsets if t.is_default), vs.toolsets[0])
    ev.append(
        f"{vs.label}: default MSVC {default.version} (_MSC_VER {default.msc_ver}); installed: "
        + ", ".join(t.version for t in vs.toolsets)
    )
    if default in ok:
        return finding("F04", OK, f"MSVC {default.version} is accepted by CUDA {kit.short}", ev)
    newest = knowledge.msvc_of_msc(limits.msc_max_excl - 1)
    if not ok:
        return _f04_none_accepted(vs, kit, limits, ev, newest)
    return finding(
        "F04",
        WARN,
        f"the default MSVC {default.version} is too new for CUDA {kit.short}; MSVC {ok[0].version} works",
        ev,
        fix=f"use vcvars -vcvars_ver={ok[0].version[:5]} (envmgr does) "
        f"or CMAKE_GENERATOR_TOOLSET=version={ok[0].version[:5]}",
        fix_command=f"envmgr shell --toolset {ok[0].version[:5]} --cuda {kit.short}",
    )


def _f04_none_accepted(vs: VsInstance, kit: CudaToolkit, limits: HostLimits, ev: list[str], newest: str) -> Finding:
    """Every toolset too new: name the installer component of the newest toolset this CUDA accepts
    (STL included) and the command that adds it. -allow-unsupported-compiler is never offered where
    the toolset's STL (STL1002) would stop the build anyway."""
    summary = (
        f"every MSVC toolset of {vs.edition} is too new for CUDA {kit.short} "
        "(unsupported Microsoft Visual Studio version!)"
    )
    stl = [
        t
        for t in vs.toolsets
        if (need := knowledge.stl_min_cuda(t.version)) and not knowledge.cuda_at_least(kit.short, need)
    ]
    if stl:
        ev.append(
            f"-allow-unsupported-compiler would not help: the STL of MSVC {stl[0].version} demands CUDA "
            f"{knowledge.stl_min_cuda(stl[0].version)} or newer (STL1002)"
        )
    pinned = knowledge.toolset_component(kit.short, limits)
    if pinned is None:
        return finding(
            "F04",
            FAIL,
            summary,
            ev,
            fix=f"install the MSVC v{newest} toolset side by side (VS Installer, Individual components) "
            "or a newer CUDA",
            fix_command="",
        )
    msvc, component = pinned
    ev.append(f"MSVC {msvc} is the Visual Studio Installer component {component}")
    return finding(
        "F04",
        FAIL,
        summary,
        ev,
        fix=f"add the MSVC {msvc} toolset to {vs.edition} {vs.year} (component {component}; envmgr then "
        f"uses it with -vcvars_ver={msvc}), or install {_cuda_for(vs)}",
        fix_command=knowledge.installer_command(vs.path, component),
    )


def _cuda_for(vs: VsInstance) -> str:
    """The oldest CUDA whose STL minimum every toolset of `vs` meets (13.2 for VS 2026's 14.50)."""
    needs = [n for t in vs.toolsets if (n := knowledge.stl_min_cuda(t.version))]
    return f"CUDA {max(needs, key=Version.of)} or newer" if needs else "a newer CUDA"


@check("F05", WINDOWS)
def f05(facts: Facts) -> Finding:
    if facts.vs is None or facts.cuda is None or not facts.vs.toolsets:
        return finding("F05", SKIPPED, "needs a Visual Studio instance with MSVC and a CUDA toolkit")
    vs, kit = facts.vs, facts.cuda
    toolset = (
        facts.choice.toolset
        if facts.choice is not None and facts.choice.toolset
        else next((t for t in vs.toolsets if t.is_default), vs.toolsets[0])
    )
    need = facts.limits.stl.get(toolset.path)
    src = f"{toolset.version}\\include\\yvals_core.h (or envmgr's table)"
    if not need:
        return finding("F05", OK, f"MSVC {toolset.version}'s STL sets no CUDA minimum", [src])
    ev = [f"MSVC {toolset.version}'s STL demands CUDA {need} or newer ({src})", f"chosen: {kit.short}"]
    if knowledge.cuda_at_least(kit.short, need):
        return finding("F05", OK, f"CUDA {kit.short} satisfies the STL's CUDA {need} minimum", ev)
    pinned = knowledge.toolset_component(kit.short, facts.limits.host.get(kit.path) or knowledge.host_limits(kit.short))
    if pinned is None:
        return finding(
            "F05",
            FAIL,
            f"STL1002: MSVC {toolset.version} expects CUDA {need} or newer, not {kit.short}",
            ev,
            fix=f"install CUDA {need} or newer, or use an older MSVC toolset (-vcvars_ver=14.39)",
        )
    msvc, component = pinned
    have = any(t.version.startswith(msvc + ".") for t in vs.toolsets)
    return finding(
        "F05",
        FAIL,
        f"STL1002: MSVC {toolset.version} expects CUDA {need} or newer, not {kit.short}",
        ev,
        fix=f"install CUDA {need} or newer, or use MSVC {msvc} (-vcvars_ver={msvc})"
        + ("" if have else f", which the installer component {component} adds"),
        fix_command=(
            f"envmgr shell --toolset {msvc} --cuda {kit.short}"
            if have
            else knowledge.installer_command(vs.path, component)
        ),
    )


@check("F06", WINDOWS)
def f06(facts: Facts) -> Finding:
    host = facts.host
    cl, link = host.which("cl"), host.which("link")
    ev, status, summary, fix = [], OK, "", ""
    if cl is None:
        ev.append("no cl.exe on PATH (fine for the Visual Studio generator; Ninja needs a vcvars shell)")
    else:
        ev.append(f"first cl.exe on PATH: {cl}")
        if re.search(r"\\Hostx86\\|\\x86\\cl\.exe$", cl, re.I):
            status, summary = WARN, "the first cl.exe is a 32-bit (x86) compiler; nvcc needs Hostx64\\x64"
            fix = "run vcvarsall x64 once (envmgr shell), not vcvars32"
        if not facts.env.get("VSCMD_ARG_TGT_ARCH"):
            ev.append("VSCMD_ARG_TGT_ARCH is not set: cl.exe was not put there by vcvars")
    if link is not None:
        ev.append(f"first link.exe on PATH: {link}")
        if not re.search(r"\\VC\\Tools\\MSVC\\", link, re.I):
            status, summary = FAIL if cl else WARN, f"{link} (not MSVC's linker) comes first on PATH"
            fix = "remove Git's usr\\bin (or MSYS/Cygwin) from PATH ahead of vcvars, or use envmgr shell"
    if status == OK:
        return finding("F06", OK, "cl.exe/link.exe on PATH are fine", ev)
    return finding("F06", status, summary, ev, fix=fix, fix_command="envmgr shell")


def python_bits(facts: Facts) -> tuple[int | None, str]:
    """The interpreter's word size from its executable's PE/ELF header (read through the host)."""

    py = facts.python
    if py is None:
        return None, "no Python interpreter known"
    exe = py.executable
    try:
        data = facts.host.read_bytes(exe)
    except OSError as exc:
        return None, f"cannot read {exe}: {exc.strerror or exc}"
    machine = binary_machine(data[:4096])
    if machine is None:
        return None, f"{exe} is not a PE/ELF executable"
    return machine[1], f"{host_path(facts.host, exe).name}: {machine[0]}"
