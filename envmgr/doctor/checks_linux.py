"""Linux checks: gcc vs nvcc, which nvcc, libcuda and the CUDA runtime libraries (F21, F22, F23)."""

from __future__ import annotations

from envmgr.binaries.elf import ld_cache, resolve_elf
from envmgr.discover.compilers import probe_compiler
from envmgr.discover.model import HostCompiler
from envmgr.doctor.checks import FAIL, OK, SKIPPED, WARN, Facts, Finding, check, finding
from envmgr.doctor.checks_install import CUDA_LIB, lib_files
from envmgr.errors import InputFileError
from envmgr.host.base import LINUX, join
from envmgr.knowledge import MIN_TESTED_CUDA, cuda_at_least
from envmgr.version import Version


def host_cxx(facts: Facts) -> tuple[str, HostCompiler | None]:
    """(name, compiler) nvcc would use: CUDAHOSTCXX, else CXX, else g++ (from discovery)."""
    env, inv = facts.env, facts.inv
    for var in ("CUDAHOSTCXX", "NVCC_CCBIN", "CXX"):
        value = env.get(var)
        if value:
            path = facts.host.which(value) or value
            real = facts.host.realpath(path)
            hit = next((c for c in inv.host_compilers if facts.host.realpath(c.path) == real), None)
            if hit is None and facts.host.exists(path):
                # a compiler outside PATH's usual names (e.g. /opt/gcc/bin/g++): ask it directly

                hit = probe_compiler(facts.host, value.rsplit("/", 1)[-1], path)
            return f"{var}={value}", hit
    return "g++ on PATH", next((c for c in inv.host_compilers if c.name == "g++"), None)


@check("F21", LINUX)
def f21(facts: Facts) -> Finding:
    kit = facts.cuda
    if kit is None:
        return finding("F21", SKIPPED, "no CUDA toolkit")
    limits = facts.limits.host.get(kit.path)
    if limits is None or limits.gcc_max is None:
        return finding("F21", SKIPPED, f"no gcc limit known for CUDA {kit.short}")
    how, cc = host_cxx(facts)
    src = "its include/crt/host_config.h" if limits.source == "host_config.h" else "envmgr's table"
    ev = [f"CUDA {kit.short} accepts gcc <= {limits.gcc_max} per {src}"]
    if cc is None or cc.major is None:
        return finding("F21", SKIPPED, f"no version for the host compiler ({how})", ev)
    ev.append(f"host compiler ({how}): {cc.name} {cc.version} at {cc.path}")
    if "clang" in cc.name:
        return finding("F21", OK, f"{cc.name} is clang (checked by __clang_major__, not __GNUC__)", ev)
    if cc.major <= limits.gcc_max:
        return finding("F21", OK, f"{cc.name} {cc.version} is accepted by CUDA {kit.short}", ev)
    older = sorted(
        (c for c in facts.inv.host_compilers if c.name.startswith("g++-") and c.major and c.major <= limits.gcc_max),
        key=lambda c: Version.of(c.version),
        reverse=True,
    )
    fix = (
        f"set CUDAHOSTCXX={older[0].path} (envmgr shell does)"
        if older
        else f"install g++-{limits.gcc_max} and set CUDAHOSTCXX to it, or use a newer CUDA"
    )
    return finding(
        "F21",
        FAIL,
        f"unsupported GNU version: {cc.name} {cc.version} is newer than CUDA {kit.short} "
        f"accepts (gcc <= {limits.gcc_max})",
        ev,
        fix=fix,
        fix_command=f"envmgr shell --cuda {kit.short}" if older else "",
    )


@check("F22", LINUX)
def f22(facts: Facts) -> Finding:
    host, env = facts.host, facts.env
    nvcc = host.which("nvcc")
    kits = [k for k in facts.inv.cuda if k.nvcc]
    if not kits:
        return finding("F22", SKIPPED, "no CUDA toolkit with nvcc (see F07)")
    ev = [f"toolkits: {', '.join(f'{k.short} ({k.path})' for k in kits)}", f"nvcc on PATH: {nvcc or 'none'}"]
    if host.exists("/usr/local/cuda"):
        ev.append(f"/usr/local/cuda -> {host.realpath('/usr/local/cuda')}")
    if nvcc is None:
        extra = " (CUDA_HOME is set, but CMake does not read it)" if env.get("CUDA_HOME") else ""
        status = OK if env.get("CUDACXX") else WARN
        return finding(
            "F22",
            status,
            f"no nvcc on PATH{extra}",
            ev,
            fix=f"export PATH={kits[0].path}/bin:$PATH CUDACXX={kits[0].path}/bin/nvcc",
            fix_command=f"envmgr shell --cuda {kits[0].short}",
        )
    kit = facts.kit_at(host.realpath(nvcc)) or next((k for k in kits if "nvcc on PATH" in " ".join(k.sources)), None)
    if kit is not None and not cuda_at_least(kit.short, MIN_TESTED_CUDA):
        return finding(
            "F22",
            FAIL,
            f"the first nvcc on PATH is CUDA {kit.short} ({nvcc}), older than llama.cpp supports ({MIN_TESTED_CUDA})",
            ev,
            fix_command=f"envmgr shell --cuda {kits[0].short}",
        )
    if nvcc.startswith("/usr/bin/") and any(k.path.startswith("/usr/local/") for k in kits):
        return finding(
            "F22",
            WARN,
            f"the distro's {nvcc} comes before /usr/local/cuda*",
            ev,
            fix_command=f"envmgr shell --cuda {kits[0].short}",
        )
    return finding("F22", OK, f"nvcc on PATH is CUDA {kit.short if kit else '?'}", ev)


@check("F23", LINUX)
def f23(facts: Facts) -> Finding:
    host = facts.host
    cache, err = ld_cache(host)
    ev = [
        f"ld.so.cache: {'libcuda.so.1 => ' + cache['libcuda.so.1'] if 'libcuda.so.1' in cache else 'no libcuda.so.1'}"
        + (f" ({err})" if err else "")
    ]
    stubs = [
        join(host, k.path, d, "libcuda.so")
        for k in facts.inv.cuda
        for d in ("lib64/stubs", "targets/x86_64-linux/lib/stubs")
        if host.exists(join(host, k.path, d, "libcuda.so"))
    ]
    if stubs:
        ev.append(f"link stub: {stubs[0]}")
    lib, names = lib_files(facts)
    so = next((n for n in names if CUDA_LIB.match(n) and n.endswith(".so")), None) if lib else None
    if so and lib:
        try:
            missing = resolve_elf(host, join(host, lib, so), cache=cache).missing()
        except InputFileError as exc:
            return finding("F23", FAIL, exc.message, ev)
        if missing:
            return finding(
                "F23",
                FAIL,
                f"{so} cannot load: {', '.join(m.name for m in missing)} not found",
                ev + [f"{m.name}: {m.why}" for m in missing],
                fix="install the driver / CUDA runtime of that major, or add its lib64 to LD_LIBRARY_PATH",
                fix_command=f"envmgr shell --cuda {facts.cuda.short}" if facts.cuda else "",
            )
        ev.append(f"{join(host, lib, so)}: every NEEDED library resolves")
    if "libcuda.so.1" not in cache and not host.exists("/usr/lib/x86_64-linux-gnu/libcuda.so.1"):
        return finding(
            "F23",
            WARN,
            "no libcuda.so.1 (no NVIDIA driver here): a build links only with "
            "-Wl,--allow-shlib-undefined, and GPU code cannot run",
            ev,
            fix="build with -DCMAKE_EXE_LINKER_FLAGS=-Wl,--allow-shlib-undefined and explicit "
            "CMAKE_CUDA_ARCHITECTURES; run where the driver is (docker run --gpus all)",
        )
    return finding("F23", OK, "libcuda.so.1 is available", ev)
