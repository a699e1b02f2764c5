"""Environment checks: CMAKE_ARGS flags and quoting, path lengths, build length (F09, F10, F11, F20), and the
compiler variables that override the selected environment (a note beside the catalog's checks)."""

from __future__ import annotations

import re
import shlex

from envmgr.doctor.checks import FAIL, OK, WARN, Facts, Finding, check, cmake_args, finding, worst
from envmgr.host.base import WINDOWS
from envmgr.recipes.recipe import default_architectures
from envmgr.snapshot.overrides import compiler_overrides

_FATAL = ("LLAMA_CUBLAS",)
_WARNS = {
    "LLAMA_CUDA": "deprecated (use GGML_CUDA)",
    "GGML_CUDA_F16": "removed (ignored)",
    "LLAMA_CUDA_F16": "removed (ignored)",
    "LLAMA_CUDA_DMMV_X": "removed (ignored)",
    "CUDA_DOCKER_ARCH": "a Makefile-only variable (ignored)",
    "GGML_CUDA_FA_ALL_QUANTS": "deprecated (use GGML_CUDA_FA_QUANTS=all)",
}
_TOKEN_OK = re.compile(r"^-(D|G|T|A|C|U|W)")
# The deepest relative path of a CUDA source in pip's unpacked sdist (facts/failures.md F11: 238 characters
# under a 57-character TEMP), used to estimate the longest path a build reaches.
SDIST_DEPTH = 181
LONG_PATHS_KEY = "HKLM\\SYSTEM\\CurrentControlSet\\Control\\FileSystem"


def defines(args: str) -> dict[str, str]:
    try:
        tokens = shlex.split(args)
    except ValueError:
        tokens = args.split()
    out = {}
    for tok in tokens:
        m = re.match(r"-D\s*([A-Za-z_][A-Za-z0-9_]*)(?::[A-Z]+)?=(.*)", tok)
        if m:
            out[m.group(1)] = m.group(2)
    return out


@check("F09")
def f09(facts: Facts) -> Finding:
    args = cmake_args(facts.env)
    found = defines(args)
    ev = [f"CMAKE_ARGS={args}" if args else "CMAKE_ARGS is not set"]
    statuses, problems = [OK], []
    for name in found:
        if name in _FATAL:
            statuses.append(FAIL)
            problems.append(f"{name} is fatal now (LLAMA_CUBLAS is deprecated, use GGML_CUDA instead)")
        elif name in _WARNS:
            statuses.append(WARN)
            problems.append(f"{name} is {_WARNS[name]}")
    if facts.env.get("FORCE_CMAKE"):
        statuses.append(WARN)
        problems.append("FORCE_CMAKE does nothing since llama-cpp-python 0.2.0")
    cuda_on = re.fullmatch(r"(?i)on|1|true|yes", found.get("GGML_CUDA", ""))
    if not cuda_on and not found.get("LLAMA_CUDA") and not found.get("LLAMA_CUBLAS"):
        statuses.append(WARN)
        problems.append("no -DGGML_CUDA=on: pip install llama-cpp-python would build for the CPU only")
    status = worst(statuses)
    if status == OK:
        return finding("F09", OK, "CMAKE_ARGS asks for GGML_CUDA with current flag names", ev)
    return finding(
        "F09",
        status,
        "; ".join(problems),
        ev,
        fix="set CMAKE_ARGS=-DGGML_CUDA=on (plus -DCMAKE_CUDA_ARCHITECTURES=<cc>) and drop old flags",
        fix_command="envmgr shell --recipe llama-cpp-python",
    )


@check("F10")
def f10(facts: Facts) -> Finding:
    args, host = cmake_args(facts.env), facts.host
    ev, problems, statuses = [f"CMAKE_ARGS={args}" if args else "CMAKE_ARGS is not set"], [], [OK]
    try:
        tokens = shlex.split(args)  # scikit-build-core >= 0.9.3 splits CMAKE_ARGS like this
    except ValueError as exc:
        tokens = []
        statuses.append(FAIL)
        problems.append(f"shlex cannot split CMAKE_ARGS ({exc}): scikit-build-core will fail")
    if tokens:
        ev.append("as scikit-build-core splits it: " + " | ".join(tokens))
    for tok in tokens:
        if '"' in tok or "'" in tok:
            statuses.append(FAIL)
            problems.append(f'token {tok!r} still holds quotes (cmd\'s set X="..." form)')
        elif not _TOKEN_OK.match(tok):
            statuses.append(FAIL)
            problems.append(f"token {tok!r} is not a -D/-G/-T/-A option (mangled path or stray word)")
        m = re.match(r"-D\w+(?::\w+)?=((?:[A-Za-z]:[\\/]|/)\S*)$", tok)
        if m and not host.exists(m.group(1)):
            statuses.append(WARN)
            problems.append(f"{m.group(1)} (from {tok.split('=')[0]}) does not exist")
        if re.match(r"-DCMAKE_(BUILD_TYPE|INSTALL_PREFIX)=", tok):
            statuses.append(WARN)
            problems.append(f"{tok.split('=')[0][2:]} in CMAKE_ARGS is dropped by scikit-build-core")
    sk = facts.env.get("SKBUILD_CMAKE_ARGS", "")
    if ";" in sk and re.search(r"-D[^;]*=[^;]*;[^-]", sk):
        statuses.append(WARN)
        problems.append("SKBUILD_CMAKE_ARGS splits on ';', so a ;-list value is cut in two (use CMAKE_ARGS)")
    status = worst(statuses)
    if status == OK:
        return finding("F10", OK, "CMAKE_ARGS splits cleanly" if args else "CMAKE_ARGS is not set", ev)
    return finding(
        "F10",
        status,
        "; ".join(problems),
        ev,
        fix="write CMAKE_ARGS with forward slashes and quote the whole assignment for your shell",
        fix_command="envmgr shell",
    )


def _odd(text: str) -> str:
    reasons = [r for r, bad in (("spaces", " " in text), ("non-ASCII", not text.isascii())) if bad]
    return " and ".join(reasons)


@check("F11", WINDOWS)
def f11(facts: Facts) -> Finding:
    env, ev, problems, statuses = facts.env, [], [], [OK]
    temp = env.get("TEMP") or env.get("TMP") or ""
    values = facts.host.reg_values(LONG_PATHS_KEY) or {}
    lp = next((v.data for k, v in values.items() if k.lower() == "longpathsenabled"), None)
    ev.append(f"LongPathsEnabled = {lp if lp is not None else 'not set'!s}")
    if temp:
        depth = len(temp) + SDIST_DEPTH
        ev.append(f"TEMP = {temp} ({len(temp)} characters; deepest sdist path about {depth})")
        if depth >= 240 and not (env.get("SKBUILD_BUILD_DIR") and lp == 1):
            statuses.append(WARN)
            problems.append(f"TEMP is long: pip's unpacked sources reach about {depth} characters (limit 260)")
    for name in ("TEMP", "TMP", "USERPROFILE"):
        odd = _odd(env.get(name, ""))
        if odd:
            statuses.append(WARN)
            problems.append(f"{name} has {odd} (nvcc's vcvars call breaks)")
    path = env.get("PATH", "")
    entries = [p.strip().rstrip("\\").lower() for p in path.split(";") if p.strip()]
    dups = len(entries) - len(set(entries))
    ev.append(f"PATH: {len(path)} characters, {len(entries)} entries, {dups} duplicate(s)")
    if len(path) > 7000:
        statuses.append(WARN)
        problems.append(f"PATH is {len(path)} characters (cmd's line limit is 8191: 'The input line is too long')")
    if lp != 1 and len(temp) + SDIST_DEPTH >= 200:
        statuses.append(WARN)
        problems.append("LongPathsEnabled is off")
    status = worst(statuses)
    if status == OK:
        return finding("F11", OK, "paths are short enough", ev)
    return finding(
        "F11",
        status,
        "; ".join(problems),
        ev,
        fix="use a short ASCII TEMP (C:\\t) and SKBUILD_BUILD_DIR=C:/b/{wheel_tag}; dedupe PATH; "
        "optionally enable LongPathsEnabled (admin)",
        fix_command="envmgr shell",
    )


def _beyond_the_rule(facts: Facts, archs: list[str]) -> tuple[str, str]:
    """(the problem, or "" when the list is within envmgr's own architecture rule; the rule here).

    The rule is the one the recipes build with (recipes.default_architectures): what envmgr picks is
    never reported as a problem. Beyond it: `all`/`all-major`, or more than two architectures that
    include some the rule would not build (a GPU visible here needs none of them)."""

    caps = tuple(g.compute_cap for g in getattr(facts.inv, "gpus", ()) if g.compute_cap)
    rule, why = default_architectures(caps, facts.cuda.short if facts.cuda is not None else "")
    described = f"{';'.join(rule)} ({why})"
    if any(a in ("all", "all-major") for a in archs):
        return f"CMAKE_CUDA_ARCHITECTURES={';'.join(archs)} builds every architecture the toolkit knows", described
    base = {re.sub(r"-(real|virtual)$", "", a) for a in archs}
    extra = sorted(base - set(rule), key=lambda a: (len(a), a))
    if extra and len(base) > 2:
        return (
            f"{len(base)} CUDA architectures multiply the build time; {';'.join(rule)} would do here "
            f"(not needed: {';'.join(extra)})"
        ), described
    return "", described


@check("F20")
def f20(facts: Facts) -> Finding:
    found = defines(cmake_args(facts.env))
    archs = [a for a in re.split(r"[;,]", found.get("CMAKE_CUDA_ARCHITECTURES", "")) if a]
    ev = [
        f"CMAKE_CUDA_ARCHITECTURES: {';'.join(archs) or 'not set'}",
        f"SKBUILD_BUILD_DIR: {facts.env.get('SKBUILD_BUILD_DIR') or 'not set (a fresh temp dir every build)'}",
    ]
    problems = []
    beyond, rule = _beyond_the_rule(facts, archs)
    ev.append(f"envmgr's rule here: {rule}")
    if beyond:
        problems.append(beyond)
    if found.get("GGML_CUDA_FA_QUANTS") == "all" or found.get("GGML_CUDA_FA_ALL_QUANTS"):
        problems.append("all flash-attention quant pairs make the build much longer")
    if problems:
        return finding(
            "F20",
            WARN,
            "; ".join(problems),
            ev,
            fix="build the one arch of your GPU, keep the default FA quants, set SKBUILD_BUILD_DIR",
        )
    return finding("F20", OK, "nothing makes the build unusually long", ev)


def stray_compilers(facts: Facts) -> tuple[tuple[str, str, str], ...]:
    """(name, value, why) for CC/CXX set in the environment: setuptools, CMake and torch.utils.cpp_extension take
    them before the compiler the selected environment (shell, export, run, hook) puts first on PATH. Not a
    catalog failure (a deliberate CC is a choice), a note; CUDAHOSTCXX is F21's (its fix sets it)."""
    return tuple(o for o in compiler_overrides(facts.env, facts.host.platform) if o[0] in ("CC", "CXX"))
