"""`envmgr install llama-cpp-python [SPEC]`: doctor -> build (or the wheel cache) -> install -> verify -> report.

The recipe follows from the package (--recipe still overrides); the build, the cache and pip are the
plain `envmgr install --recipe` path (commands/wheels.py), called as it is. What this adds is the
order and the proof: a blocking doctor finding stops before an hour-long build, and the flow ends
with `envmgr verify`, so a CPU build is never reported as a GPU build.

`--prebuilt-lib DIR`: a llama.cpp CUDA build folder (seed 001's route): the Python package is
installed without building the library (-DLLAMA_BUILD=OFF), and verify runs with LLAMA_CPP_LIB_PATH=DIR.
A wheel folder or index of CUDA wheels is issue 16's `--wheel-index` route.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import click
from packaging.requirements import Requirement

from envmgr import spawn
from envmgr.catalog import FailureId
from envmgr.cli.main import Ctx
from envmgr.cli.options import RecipeArgs, Selection, say_target
from envmgr.commands import install_build, install_closure, install_components, install_fix
from envmgr.commands.install_build import Installed
from envmgr.commands.install_fix import FixReport
from envmgr.commands.install_prebuilt import Chooser, Options, applies, sources
from envmgr.doctor.checks import FAIL, Facts, Finding
from envmgr.doctor.run import gather, run_checks
from envmgr.errors import CheckFailed, ChildFailed, EnvmgrError, InputFileError, UsageError
from envmgr.host.base import Host
from envmgr.output import Painter, emit_json, say
from envmgr.verify.render import render_verdict, verdict_json
from envmgr.verify.run import Verdict, verify
from envmgr.wheels.store import normalize

# install_wheel as the flow calls it: (recipe, pip arguments, before_build=/dry_run=) -> Installed.
InvokeInstall = Callable[..., Installed]

# The recipe each package takes by default.
PACKAGE_RECIPES = {"llama-cpp-python": "llama-cpp-python"}
PREBUILT_RECIPE = {"llama-cpp-python": "llama-cpp-python-prebuilt"}
# doctor findings about the installed package or pip's cache: the install is what replaces them.
NOT_BLOCKING: set[FailureId] = {"F14", "F15", "F16", "F18", "F19", "F20"}
# Failing findings the recipe environment itself avoids (the safe, no-admin routes --fix accepts):
# its generator choice (Ninja, or the VS generator pinned with cuda=<toolkit>), its one CUDA on PATH,
# its clean CMAKE_ARGS and dropped old flags, its short TEMP, its explicit CUDA architectures.
RECIPE_ROUTES: dict[FailureId, str] = {
    "F01": "the recipe's generator route (Ninja, or CMAKE_GENERATOR_TOOLSET cuda=<toolkit>; no admin)",
    "F02": "the recipe pins one toolkit for the generator and FindCUDAToolkit",
    "F06": "the recipe environment is a vcvars capture with cl.exe on PATH",
    "F08": "the recipe environment puts one CUDA first and sets CUDA_PATH to it",
    "F09": "the recipe drops LLAMA_CUBLAS/LLAMA_CUDA/FORCE_CMAKE and sets -DGGML_CUDA=on",
    "F10": "the recipe writes CMAKE_ARGS itself",
    "F11": "the recipe uses a short ASCII TEMP",
    "F12": "the recipe passes explicit CUDA architectures",
}


@dataclass
class Report:
    package: str
    recipe: str
    recipe_why: str
    spec: str
    lines: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    wheel: dict[str, Any] | None = None  # where the wheel came from, as install_wheel said (docs/json.md)
    prebuilt: str | None = None  # the --prebuilt-lib folder
    fixes: FixReport = field(default_factory=FixReport)  # what --fix did (docs/json.md "fixes")
    closure: dict[str, Any] | None = None  # Windows: the CUDA DLL closure (docs/json.md "dll_closure")
    target: dict[str, str] | None = None  # the target Python and why (docs/json.md "target_python")


def flow_package(recipe: str | None, args: list[str], prebuilt: str | None) -> str | None:
    """The package when `install` was called the new way (`install llama-cpp-python [SPEC]`), else None."""
    if prebuilt:
        return "llama-cpp-python"
    if not args or args[0].startswith("-"):
        return None

    try:
        name = normalize(Requirement(args[0]).name)
    except Exception:
        return None
    if name not in PACKAGE_RECIPES:
        return None
    # `install --recipe R SPEC` with SPEC a requirement keeps its old meaning (no doctor, no verify).
    return name if (recipe is None or len(args) > 1) else None


def split_args(package: str, args: list[str]) -> tuple[list[str], str]:
    """(pip options, SPEC): `llama-cpp-python [PIP OPTIONS] [SPEC]`, SPEC defaulting to the package."""

    rest = list(args)
    first = rest.pop(0) if rest and not rest[0].startswith("-") else None
    if first is not None and normalize(first) != package:
        return rest, first  # `install llama-cpp-python==0.3.36`: the spec names the package
    if rest and not rest[-1].startswith("-") and not (len(rest) >= 2 and rest[-2] in _VALUE_OPTS):
        return rest[:-1], rest[-1]
    return rest, package


_VALUE_OPTS = {
    "--find-links",
    "-f",
    "--index-url",
    "-i",
    "--extra-index-url",
    "--constraint",
    "-c",
    "--prefix",
    "--target",
    "-t",
    "--root",
    "--platform",
    "--python-version",
    "--only-binary",
    "--no-binary",
}


def run_flow(
    obj: Ctx,
    invoke_install: InvokeInstall,
    *,
    package: str,
    recipe: str | None,
    args: list[str],
    python: str | None,
    prebuilt: str | None,
    fix: bool,
    selection: Selection,
    as_json: bool,
    routes: Options | None = None,
) -> int:
    pip_opts, spec = split_args(package, args)
    chosen = recipe or (PREBUILT_RECIPE if prebuilt else PACKAGE_RECIPES)[package]
    why = "--recipe" if recipe else ("--prebuilt-lib" if prebuilt else f"the package {package}")
    rep = Report(package, chosen, why, spec)
    rep.target = selection.target.as_json() if selection.target else None
    routes = routes or Options()
    lib_dir = _check_prebuilt(obj.local, prebuilt) if prebuilt else None  # bad input stops before anything slow
    say(f"envmgr: {package}: recipe {chosen} (from {why}); spec {spec}")
    if selection.target is not None:
        say_target(selection.target)
    t0 = time.perf_counter()
    # The prebuilt route needs no build, so doctor's build findings wait for the build route; with no
    # prebuilt index (--no-prebuilt, an empty list) they stop the flow before any route, as before.
    use_prebuilt = not lib_dir and applies(recipe, spec, package) and (bool(sources(routes)[0]) or routes.dry_run)
    if routes.dry_run and not use_prebuilt:
        raise UsageError(
            "--dry-run plans `envmgr install llama-cpp-python [==VERSION]` (the routes to a wheel); "
            "it has no plan for --prebuilt-lib, --recipe or a source spec",
            "drop --dry-run, or give the package as a requirement",
        )
    facts, build_error = _doctor(
        obj, selection, fix, rep, skip_build_checks=bool(prebuilt), defer=use_prebuilt, pip_opts=pip_opts
    )
    rep.timings["doctor"] = time.perf_counter() - t0
    env = None
    if lib_dir:
        env = _prebuilt(obj.local, lib_dir, python, pip_opts, spec, rep)
    elif use_prebuilt:
        chooser = Chooser(obj, facts, package, spec, routes, build_error, python or sys.executable)
        say_routes(rep, build_error, routes)
        _build_and_install(invoke_install, chosen, pip_opts, spec, rep, chooser)
        if routes.dry_run:
            return _dry_report(rep, chooser, as_json)
    else:
        _build_and_install(invoke_install, chosen, pip_opts, spec, rep)
    if not lib_dir:  # Windows, any wheel (prebuilt, cached, indexed, built): its CUDA DLLs, before "done"
        install_closure.close(obj, facts, python or sys.executable, fix, rep)

    say("envmgr: verifying: a tiny model on the GPU, every layer offloaded")
    t1 = time.perf_counter()
    # where pip installed (this machine), in a plain process (verify/plain.py): no recipe environment
    verdict = verify(obj.local, python, package, extra_env=env)
    rep.timings["verify"] = time.perf_counter() - t1
    return _finish(verdict, rep, as_json)


def _findings(obj: Ctx, selection: Selection, recipe: str | None = None) -> tuple[Facts, tuple[Finding, ...]]:
    """(facts, findings): doctor on the machine (--machine: the record); recipe: the build F24 checks for
    (None: llama-cpp-python's, as `envmgr doctor`)."""

    target = selection.target.path if obj.here and selection.target and selection.target.why != "envmgr" else None
    facts = gather(obj.host, selection.selectors, target)  # the installed package is looked for in the target
    if recipe:
        facts.extra["recipe"] = recipe
    return facts, run_checks(facts)


def sort_findings(
    findings: Iterable[Finding], fix: bool, skip_build_checks: bool, not_blocking: Iterable[FailureId] = ()
) -> tuple[list[Finding], list[Finding]]:
    """(blocking, routed): failing findings that stop the flow, and those --fix leaves to the recipe's route."""

    found = [f for f in findings if f.status == FAIL and f.id not in NOT_BLOCKING and f.id not in not_blocking]
    if skip_build_checks:  # nothing is compiled on the prebuilt route: only the driver matters
        found = [f for f in found if f.id in ("F17", "F23")]
    routed = [f for f in found if f.id in RECIPE_ROUTES] if fix else []
    return [f for f in found if f not in routed], routed


def _doctor(
    obj: Ctx,
    selection: Selection,
    fix: bool,
    rep: Report,
    skip_build_checks: bool,
    defer: bool = False,
    checks_recipe: str | None = None,
    not_blocking: Iterable[FailureId] = (),
    pip_opts: Iterable[str] = (),
) -> tuple[Facts, CheckFailed | None]:
    """(facts, the build's blocking error or None): raised at once unless defer (a route before the build
    may need no build: the prebuilt indexes), then raised when the build route is reached. checks_recipe:
    the recipe F24 checks the toolkit for (`install --recipe NAME`; None: llama-cpp-python's); pip_opts: for
    the pip that fetches F24's components (install_components.py)."""
    facts, findings = _findings(obj, selection, checks_recipe)
    blocking, routed = sort_findings(findings, fix, skip_build_checks, not_blocking)
    parts = (
        None
        if skip_build_checks
        else install_components.decide(facts, findings, checks_recipe or "llama-cpp-python", obj.here)
    )
    blocking = [f for f in blocking if not (fix and parts is not None and f.id == "F24")]
    for f in findings:
        if f.status == FAIL and f.id in not_blocking:
            rep.lines.append(f"doctor: {f.id} does not stop a wheel build, but the wheel's user meets it: {f.summary}")
    msbuild = None
    if fix and not skip_build_checks:  # F01/F02: answered by the generator the build uses (install_fix.py)
        msbuild, blocking, routed = install_fix.sort_msbuild(facts, findings, blocking, routed, rep.recipe)
    if blocking:
        error = _blocking_error(blocking, fix, msbuild, parts)
        if not defer:
            raise error
        rep.lines.append(f"doctor: {', '.join(f.id for f in blocking)} block(s) the build route only")
        return facts, error
    if msbuild is not None:
        for line in install_fix.apply(msbuild, facts, rep.fixes):
            say(f"envmgr: --fix: {line[len('fixed ') :]}")
            rep.lines.append(line)
    for line in install_components.apply(obj.local, parts, list(pip_opts), rep.fixes) if fix and parts else ():
        say(f"envmgr: --fix: {line[len('fixed ') :]}")
        rep.lines.append(line)
    for f in routed:
        say(f"envmgr: --fix: {f.id} ({f.summary}) avoided by {RECIPE_ROUTES[f.id]}")
        rep.lines.append(rep.fixes.add(f.id, "route", RECIPE_ROUTES[f.id]))
    rep.lines.append(
        f"doctor: no blocking finding (CUDA {facts.cuda.short if facts.cuda else '?'}, {len(facts.inv.gpus)} GPU(s))"
    )
    return facts, None


def _blocking_error(
    blocking: list[Finding],
    fix: bool,
    msbuild: install_fix.MsbuildFix | None,
    parts: install_components.ComponentFix | None,
) -> CheckFailed:
    """doctor's blocking findings as the one error that stops the build: each with its evidence and fixes, and --fix
    offered where it takes a safe route."""
    details = tuple(
        line
        for f in blocking
        for line in (
            f"{f.id} {f.title}: {f.summary}",
            *(f"  fix: {x}" for x in (f.fix, f.fix_command) if x),
            *(install_fix.stop_error(msbuild) if msbuild is not None and f.id in msbuild.ids else ()),
            *((f"  fix: {parts.offer()}",) if parts is not None and f.id == "F24" else ()),
        )
    )
    safe = [f.id for f in blocking if (f.id in RECIPE_ROUTES or (f.id == "F24" and parts)) and not fix]
    return CheckFailed(
        f"envmgr doctor found {len(blocking)} blocking problem(s): "
        f"{', '.join(f.id for f in blocking)}; nothing was built",
        ("add --fix to take the safe route for " + ", ".join(safe) + "; " if safe else "")
        + "see `envmgr doctor` for the evidence",
        details=details,
    )


def _build_and_install(
    invoke_install: InvokeInstall,
    recipe: str,
    pip_opts: list[str],
    spec: str,
    rep: Report,
    chooser: Chooser | None = None,
) -> None:
    t0 = time.perf_counter()
    extra = {"before_build": chooser, "dry_run": chooser.opts.dry_run} if chooser is not None else {}
    try:
        done = invoke_install(recipe, [*pip_opts, spec], **extra)  # install_wheel's Installed: where it came from
    except EnvmgrError as exc:
        if chooser is None or chooser.ran:
            raise
        # No build environment (no toolkit, no Visual Studio): the cache and team routes need its key,
        # the prebuilt route does not.
        say(f"envmgr: routes 1-2 (wheel cache, team index) skipped: {exc.message}")
        chooser.build_error = chooser.build_error or exc
        chooser.skipped = exc.message
        fallback = chooser(chooser.python, pip_opts, False, dict(chooser.obj.env))
        if fallback is None:  # nothing fits and no build is possible here: the reason the build cannot start
            raise
        done = fallback
    seconds = time.perf_counter() - t0
    rep.timings["build_install"] = seconds
    if done.origin == "plan":
        return
    if done.code != 0:
        raise ChildFailed(
            f"pip install of {done.wheel} failed (exit {done.code}); nothing was verified",
            "see pip's output above; the wheel stays in the cache",
            done.code,
        )
    rep.wheel = {
        "origin": done.origin,
        "file": done.wheel,
        "path": done.path,
        "digest": done.digest or None,
        "build_seconds": round(done.build_seconds, 1),
        "index": done.index or None,
    }
    chosen = chooser.chosen if chooser is not None else None
    if done.origin == "prebuilt" and chosen is not None:
        rep.wheel.update(
            {
                "url": str(chosen.cand.url),
                "cuda": chosen.cand.cuda or None,
                "runs": chosen.how,
                "via": chosen.via,
                "device_code": chosen.code,
            }
        )
        rep.lines.append(
            f"prebuilt wheel from {done.index}: {done.wheel} (CUDA {chosen.cand.cuda or '?'}; "
            f"{chosen.reason}); installed in {seconds:.1f} s, nothing built"
        )
        return
    rep.lines.append(_wheel_line(done, seconds))


def say_routes(rep: Report, build_error: EnvmgrError | None, routes: Options) -> None:
    """The routes in their order, before any is tried."""
    indexes, source = sources(routes)
    ids = re.findall(r"\bF\d\d\b", build_error.message) if build_error else []
    build = f"blocked by doctor: {', '.join(ids) or build_error.message}" if build_error else f"recipe {rep.recipe}"
    say(
        "envmgr: routes: 1 wheel cache -> 2 team index -> 3 prebuilt indexes "
        f"({len(indexes)} from {source}) -> 4 build ({build})"
        + ("; --dry-run: nothing is installed" if routes.dry_run else "")
    )


def _dry_report(rep: Report, chooser: Chooser, as_json: bool) -> int:
    route = chooser.route
    if as_json:
        emit_json(
            {
                "schema": 1,
                "package": rep.package,
                "spec": rep.spec,
                "dry_run": True,
                "target_python": rep.target,
                "recipe": rep.recipe,
                "doctor": rep.lines,
                "cache": rep.wheel if rep.wheel else ({"skipped": chooser.skipped} if chooser.skipped else None),
                "prebuilt": route.to_json() if route else None,
                "build": {
                    "blocked_by": chooser.build_error.message if chooser.build_error else None,
                    "needed": route is not None and (route.plan is None or route.plan.chosen is None),
                },
            }
        )
        return 0
    chosen = route.plan.chosen if route and route.plan else None
    click.echo(
        f"envmgr install {rep.package} --dry-run: "
        + (
            f"would install the prebuilt {chosen.cand.filename} from {chosen.cand.index} ({chosen.reason})"
            if chosen
            else "route 3 found no wheel"
            if route
            else "the wheel cache holds it"
        )
    )
    return 0


def _wheel_line(done: Installed, seconds: float) -> str:
    key = f"key {done.digest}"
    if done.origin == "built":
        return f"built {done.wheel} in {done.build_seconds:.0f} s ({key}, now in the wheel cache)"
    if done.origin == "cache":
        return (
            f"wheel cache hit: {done.wheel} ({key}, built earlier in {done.build_seconds:.0f} s); "
            f"installed in {seconds:.1f} s, nothing built"
        )
    if done.origin == "index":
        return (
            f"from the wheel index {done.index}: {done.wheel} "
            f"({key}, built elsewhere in {done.build_seconds:.0f} s); installed in {seconds:.1f} s, nothing built"
        )
    return f"built {done.wheel} in {done.build_seconds:.0f} s (a source folder or URL: never cached)"


def _check_prebuilt(local: Host, folder: str) -> str:
    """The folder's absolute path when it holds llama.cpp's library and its CUDA backend; else the error."""

    if not local.is_dir(folder):
        raise InputFileError(
            f"--prebuilt-lib {folder}: no such folder",
            "give your llama.cpp build's folder with libllama and libggml-cuda (build/bin on Windows)",
        )
    names = set(local.listdir(folder))
    win = local.platform == "windows"
    llama, cuda = ("llama.dll", "ggml-cuda.dll") if win else ("libllama.so", "libggml-cuda.so")
    if llama not in names:
        raise InputFileError(
            f"--prebuilt-lib {folder}: no {llama} there",
            f"point it at the folder holding {llama} (llama.cpp's build/bin, or build/src and build/ggml/src)",
        )
    if cuda not in names:
        raise CheckFailed(
            f"--prebuilt-lib {folder} is a CPU-only build of llama.cpp: it has {llama} but no {cuda} (F18)",
            "rebuild llama.cpp with -DGGML_CUDA=on (cmake -B build -DGGML_CUDA=on "
            "-DBUILD_SHARED_LIBS=ON), or drop --prebuilt-lib to build llama-cpp-python with CUDA",
        )
    return os.path.abspath(folder)


def _prebuilt(
    local: Host, full: str, python: str | None, pip_opts: list[str], spec: str, rep: Report
) -> dict[str, str]:
    """Install the package without its library if needed; the variable verify's plain process then gets."""
    rep.prebuilt = full
    rep.lines.append(f"prebuilt library: {full} (LLAMA_CPP_LIB_PATH)")
    if not _installed(local, python):
        say(f"envmgr: installing {spec} without building its library (CMAKE_ARGS=-DLLAMA_BUILD=OFF)")
        code = _pip_no_lib(local, python, pip_opts, spec)
        if code != 0:
            raise CheckFailed(f"pip install of {spec} (-DLLAMA_BUILD=OFF) failed with exit {code}", "see pip's output")
    return {"LLAMA_CPP_LIB_PATH": full}


def _python(local: Host, python: str | None) -> str:
    """--python, else the Python running envmgr (this machine's interpreter(), which always answers)."""
    if python:
        return python
    here = local.interpreter()
    assert here is not None
    return here.executable


def _installed(local: Host, python: str | None) -> bool:
    exe = _python(local, python)
    done = local.run(
        [exe, "-c", "import importlib.util as u, sys; sys.exit(u.find_spec('llama_cpp') is None)"], timeout=60
    )
    return done.ok


def _pip_no_lib(local: Host, python: str | None, pip_opts: list[str], spec: str) -> int:
    env = dict(local.env)
    env["CMAKE_ARGS"] = "-DLLAMA_BUILD=OFF"
    return spawn.run([_python(local, python), "-m", "pip", "install", "--no-cache-dir", *pip_opts, spec], env)


def _finish(verdict: Verdict, rep: Report, as_json: bool) -> int:
    off = verdict.run.offloaded[-1] if verdict.run.offloaded else None
    gpu = next((s.summary for s in verdict.steps if s.name == "devices"), "no CUDA device")
    rep.lines.append(f"GPU: {gpu}")
    rep.lines.append(f"layers offloaded: {off[0]}/{off[1]}" if off else "layers offloaded: none reported")
    if as_json:
        emit_json(
            {
                "schema": 1,
                "package": rep.package,
                "recipe": rep.recipe,
                "recipe_from": rep.recipe_why,
                "spec": rep.spec,
                "target_python": rep.target,
                "ok": verdict.ok,
                "wheel": rep.wheel,
                "prebuilt_lib": rep.prebuilt,
                "gpu": gpu,
                "layers_offloaded": f"{off[0]}/{off[1]}" if off else None,
                "fixes": rep.fixes.items,
                "dll_closure": rep.closure,
                "report": rep.lines,
                "seconds": {k: round(v, 1) for k, v in rep.timings.items()},
                "verify": {**verdict_json(verdict), "target_python": rep.target},
            }
        )
    else:
        click.echo(render_verdict(verdict, Painter(sys.stdout)), nl=False)
        click.echo(f"envmgr install {rep.package}: recipe {rep.recipe} (from {rep.recipe_why})")
        for line in rep.lines:
            click.echo(f"  {line}")
    if not verdict.ok:
        f = verdict.failure
        say(
            f"envmgr: installed, but NOT verified on the GPU: {f.failure + ': ' if f and f.failure else ''}"
            f"{f.summary if f else 'no offload counted'}"
        )
        return 1
    return 0


def start_flow(
    obj: Ctx,
    args: list[str],
    fix: bool,
    prebuilt: str | None,
    as_json: bool,
    selection: Selection,
    recipe_args: RecipeArgs,
    options: install_build.InstallOptions,
    routes: Options | None = None,
) -> int:
    """Entered from `install` (commands/install.py), which parsed envmgr's flags wherever they stood (click:
    the empty-value check and every other one apply after the package too, audit N6)."""
    rest, routes = list(args), routes or Options()
    package = flow_package(recipe_args.name, rest, prebuilt) or "llama-cpp-python"
    if rest and rest[0] != package and flow_package(None, rest[:1], None) is None and prebuilt:
        rest = [package, *rest]  # `install --prebuilt-lib DIR SPEC`
    if not rest:
        rest = [package]

    def invoke_install(recipe: str, pip_args: list[str], **extra: Any) -> Installed:
        return install_build.install_wheel(
            obj, pip_args, selection, replace(recipe_args, name=recipe), options, **extra
        )

    with spawn.children_print_to_stderr() if as_json else contextlib.nullcontext():  # stdout: the JSON alone
        return run_flow(
            obj,
            invoke_install,
            package=package,
            recipe=recipe_args.name,
            args=rest,
            python=selection.target_python,
            prebuilt=prebuilt,
            fix=fix,
            selection=selection,
            as_json=as_json,
            routes=routes,
        )
