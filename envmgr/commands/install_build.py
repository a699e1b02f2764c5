"""A wheel for `envmgr install --recipe`: from the local wheel cache, a team's index, or a build; then pip install."""

from __future__ import annotations

import functools
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from envmgr import spawn
from envmgr.cli.main import Ctx
from envmgr.cli.options import RecipeArgs, Selection, environment_for, get_snapshot, say_target
from envmgr.commands.run import diagnose, this_machine
from envmgr.errors import CheckFailed, ChildFailed, InputFileError, UsageError
from envmgr.host.base import Host
from envmgr.output import say
from envmgr.recipes.recipe import get_recipe
from envmgr.snapshot.activation import activation_delta
from envmgr.wheels import index as wheelindex
from envmgr.wheels import remote as wheelremote
from envmgr.wheels import store as wheels
from envmgr.wheels.index import check_dest
from envmgr.wheels.remote import configured_index
from envmgr.wheels.url import IndexUrl

if TYPE_CHECKING:
    from envmgr.doctor.verdict import MachineFacts

_PY_ID = (
    "import sys, sysconfig; i = sys.implementation; "
    "print(f'{i.name[:2] if i.name == \"cpython\" else i.name}{sys.version_info[0]}{sys.version_info[1]}'); "
    "print(sysconfig.get_platform())"
)


@dataclass(frozen=True)
class Installed:
    """What `envmgr install --recipe` did, in its own words: the install flow reports from this."""

    code: int  # pip install's exit code
    origin: str  # "built", "cache" (the local wheel cache), "index" (--wheel-index) or "source"
    wheel: str  # the wheel's file name
    path: str
    build_seconds: float  # the build's time: this build's, or the one that made the cached/index wheel
    digest: str = ""  # the cache key's digest ("" for a source folder or URL: never cached)
    index: str = ""  # the wheel index it came from (origin "index")


# The routes between the team index and a build: (python, pip options, no_deps, env) -> Installed or None.
BeforeBuild = Callable[[str, list[str], bool, dict[str, str]], "Installed | None"]


@dataclass(frozen=True)
class InstallOptions:
    """install's own options beside the selection and the recipe."""

    no_deps: bool = False  # pip install --no-deps
    rebuild: bool = False  # build even when the wheel cache holds the key
    wheel_index: str | None = None  # a team's index to look the key up in (None: the configured one)
    publish_to: str | None = None  # then publish the wheel into this index folder
    announce: bool = False  # say the target Python once the selectors resolved (the recipe route)


def install_wheel(
    obj: Ctx,
    args: list[str],
    selection: Selection,
    recipe_args: RecipeArgs,
    options: InstallOptions,
    before_build: BeforeBuild | None = None,
    dry_run: bool = False,
) -> Installed:
    """Build SPEC (the last of args) with the recipe, or take its wheel from the cache or the index; pip install it.
    before_build(python, pip_opts, no_deps, env): the routes between the team index and a build (the install
    flow's prebuilt indexes); its Installed ends the search. dry_run: the cache is looked up, nothing else done."""

    recipe, no_deps = recipe_args.name, options.no_deps
    wheel_index, publish_to = options.wheel_index, options.publish_to
    spec, pip_opts = _install_args(args, recipe, publish_to)
    assert recipe is not None  # _install_args refused a missing --recipe
    t = _target(obj, selection, recipe_args, recipe, spec, options.announce)
    python, env, info = t.python, t.env, t.info
    if dry_run:
        return _dry(
            t.key_for, info, t.is_cuda, wheel_index, options.rebuild, before_build, python, pip_opts, no_deps, env
        )
    if info.name and info.version and info.source and not options.rebuild:
        key = t.key_for(info.name, info.version, info.source)
        reused = _reuse(key, t.is_cuda, wheel_index, publish_to, python, pip_opts, no_deps, env)
        if reused is not None:
            return reused
    if before_build is not None:
        done = before_build(python, pip_opts, no_deps, env)
        if done is not None:
            return done
    _say_why_built(spec, info)
    return _build_and_install(t, spec, pip_opts, no_deps, publish_to)


def _build_and_install(t: _Target, spec: str, pip_opts: list[str], no_deps: bool, publish_to: str | None) -> Installed:
    """The last route: SPEC built (and cached unless it is a source), published when asked, pip installed."""
    python, env, info = t.python, t.env, t.info
    start = time.perf_counter()
    entry_or_path = _build(
        python,
        spec,
        pip_opts,
        env,
        t.key_for,
        info,
        t.is_cuda,
        start,
        datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        t.machine,
    )
    seconds, path = time.perf_counter() - start, Path(entry_or_path)
    publish_installed(publish_to, entry_or_path)
    return Installed(
        _pip_install(python, entry_or_path, pip_opts, no_deps, env),
        "source" if info.source is None else "built",
        path.name,
        str(path),
        seconds,
        "" if info.source is None else path.parent.name,
    )


@dataclass(frozen=True)
class _Target:
    """What install_wheel resolves before any route: the target Python, its build environment, the spec."""

    python: str
    env: dict[str, str]
    info: wheels.SpecInfo
    is_cuda: bool
    key_for: Callable[[str, str, str], wheels.WheelKey]  # (name, version, source) -> the wheel cache's key
    machine: Callable[[], MachineFacts | None]  # this machine's facts, read only if a build fails


def _target(obj: Ctx, selection: Selection, recipe_args: RecipeArgs, recipe: str, spec: str, announce: bool) -> _Target:
    """The snapshot resolved once (the environment and the CUDA version come from it), then the wheel key's facts."""
    snap = get_snapshot(obj, selection)
    if announce and selection.target is not None:  # after the selectors: a no-match is the first line
        say_target(selection.target)
    delta, marker, _ = environment_for(obj, selection, recipe_args, snap=snap)
    env = activation_delta(delta, obj.env, marker).apply(obj.env)
    python = selection.target_python or sys.executable
    py_tag, platform = _python_identity(obj.local, python, env)
    cuda_version = dict(snap.summary).get("cuda_short", "")
    is_cuda = _is_cuda_recipe(recipe) and bool(cuda_version)
    archs, generator, cmake_args = wheels.build_facts(env)
    info = wheels.parse_spec(spec, obj.local)

    def key_for(name: str, version: str, source: str) -> wheels.WheelKey:
        return wheels.WheelKey(
            name, version, source, cuda_version if is_cuda else "", archs, generator, cmake_args, py_tag, platform
        )

    return _Target(python, env, info, is_cuda, key_for, functools.partial(this_machine, obj, selection, python))


def _dry(
    key_for: Callable[[str, str, str], wheels.WheelKey],
    info: wheels.SpecInfo,
    is_cuda: bool,
    wheel_index: str | None,
    rebuild: bool,
    before_build: BeforeBuild | None,
    python: str,
    pip_opts: list[str],
    no_deps: bool,
    env: dict[str, str],
) -> Installed:
    """--dry-run: the wheel cache looked up and the team index named (not asked); the later routes planned."""
    if not (info.name and info.version and info.source):
        say("envmgr: route 1-2, wheel cache and team index: the spec pins no version (or is a source): not looked up")
    elif rebuild:
        say("envmgr: route 1-2, wheel cache and team index: skipped (--rebuild)")
    else:
        key = key_for(info.name, info.version, info.source)
        hit = wheels.lookup(key, is_cuda, lambda m: say(f"envmgr: {m}"))
        index = configured_index(wheel_index)
        say(f"envmgr: route 1, wheel cache: {'holds ' + hit.wheel if hit else 'no wheel'} for key {key.digest()}")
        say(f"envmgr: route 2, team index: {f'{IndexUrl(index)} would be asked' if index else 'none configured'}")
        if hit is not None:
            return Installed(0, "cache", hit.wheel, str(hit.path), hit.build_seconds, hit.folder.name)
    done = before_build(python, pip_opts, no_deps, env) if before_build is not None else None
    return done or Installed(0, "plan", "", "", 0.0)


def _install_args(args: list[str], recipe: str | None, publish_to: str | None) -> tuple[str, list[str]]:
    """(SPEC, the pip options before it), checked before anything is resolved; a bad --publish folder too."""

    if not args or not recipe:
        raise UsageError(
            "envmgr install needs --recipe NAME and a SPEC",
            "e.g. envmgr install --recipe llama-cpp-python llama-cpp-python==0.3.36 (see `envmgr recipes`)",
        )
    spec, pip_opts = args[-1], args[:-1]
    _check_spec(spec)
    if publish_to:
        check_dest(Path(publish_to).expanduser())
    return spec, pip_opts


def _reuse(
    key: wheels.WheelKey,
    is_cuda: bool,
    wheel_index: str | None,
    publish_to: str | None,
    python: str,
    pip_opts: list[str],
    no_deps: bool,
    env: dict[str, str],
) -> Installed | None:
    """The wheel of `key` from the local cache, else from the wheel index, installed; None when neither has it."""

    hit = wheels.lookup(key, is_cuda, lambda m: say(f"envmgr: {m}"))
    origin = "cache"
    if hit is not None:
        say(
            f"envmgr: reusing the cached wheel {hit.wheel} (built in {hit.build_seconds:.0f} s, {hit.created}); "
            f"key {hit.key.digest()}"
        )
    else:
        hit, origin = from_index(wheel_index, key, is_cuda), "index"
    if hit is None:
        return None
    index = str(IndexUrl(configured_index(wheel_index) or "")) if origin == "index" else ""  # shown: no token
    publish_installed(publish_to, hit.path)
    return Installed(
        _pip_install(python, hit.path, pip_opts, no_deps, env),
        origin,
        hit.wheel,
        str(hit.path),
        hit.build_seconds,
        hit.folder.name,
        index,
    )


def _say_why_built(spec: str, info: wheels.SpecInfo) -> None:
    """Why SPEC is built rather than taken from the cache, when the spec itself is the reason."""

    if info.source is None:
        say(f"envmgr: {spec} is a source folder or URL: built every time, never cached")
    elif info.version is None and info.name:
        old = wheels.newest_for(info.name)
        say(
            f"envmgr: {spec} pins no version: building"
            + (f" (the cache holds {old.key.version}; pin =={old.key.version} to reuse it)" if old else "")
        )


def _build(
    python: str,
    spec: str,
    pip_opts: list[str],
    env: dict[str, str],
    key_for: Callable[[str, str, str], wheels.WheelKey],
    info: wheels.SpecInfo,
    is_cuda: bool,
    start: float,
    created: str,
    machine: Callable[[], MachineFacts | None] | None = None,
) -> str | Path:
    root = wheels.wheels_dir()
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=root))
    except OSError as exc:
        raise _cache_unwritable(root, exc) from None
    try:
        argv = [python, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "-w", str(tmp), *pip_opts, spec]
        say(f"envmgr: building: {' '.join(argv)}")
        say(f"envmgr: CMAKE_ARGS={env.get('CMAKE_ARGS', '')!r} CMAKE_GENERATOR={env.get('CMAKE_GENERATOR', '')!r}")
        verbose = bool(_VERBOSE & set(pip_opts))
        code = _watched_build(argv, env, tmp / "build.log", info.name or "build", verbose=verbose)
        seconds = time.perf_counter() - start
        if code != 0:
            raise _build_failed(_keep_log(root, tmp / "build.log", created), code, seconds, machine)
        built = sorted(tmp.glob("*.whl"))
        if len(built) != 1:
            raise CheckFailed(f"pip wheel produced {len(built)} wheels in {tmp}, expected one", "report this")
        name, version, _ = wheels.parse_wheel_name(built[0].name)
        if info.name and name != info.name:
            say(f"envmgr: the wheel is {name}, the spec said {info.name}: keyed by the wheel's name")
        if info.source is None:
            problems = wheels.check_wheel(built[0], name, is_cuda)
            if problems:
                raise CheckFailed(
                    f"{built[0].name} will not be installed: {'; '.join(problems)}",
                    "the build did not enable CUDA: check CMAKE_ARGS and the build log (-v)",
                )
            keep = Path(tempfile.mkdtemp(prefix="envmgr-wheel-"))
            return shutil.move(str(built[0]), keep / built[0].name)
        try:
            entry = wheels.store(key_for(name, version, info.source), built[0], seconds, is_cuda, created)
        except OSError as exc:
            raise _cache_unwritable(root, exc) from None
        say(f"envmgr: built {entry.wheel} in {seconds:.0f} s; cached as {entry.key.digest()} in {entry.folder}")
        return entry.path
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _build_failed(
    log: Path, code: int, seconds: float, machine: Callable[[], MachineFacts | None] | None = None
) -> ChildFailed:
    """A failed build: its kept log's tail shown and diagnosed (the catalog's cause judged by this machine, as
    `envmgr run --log` does), the error to raise."""
    _say_tail(log)
    diagnose(str(log), machine)
    return ChildFailed(
        f"pip wheel failed with exit code {code} after {seconds:.0f} s; nothing was cached",
        f"the build's log is {log} (`envmgr doctor --log {log}` reads it again); "
        "rerun with -v before SPEC to see the build's output as it comes",
        code,
    )


_VERBOSE = {"-v", "-vv", "-vvv", "--verbose"}


def _watched_build(argv: list[str], env: dict[str, str], log: Path, name: str, *, verbose: bool) -> int:
    """pip wheel -v with its output in the build's log (no colour codes) and a progress line on stderr: elapsed
    time, CMake/ninja's [n/N] or MSBuild's project, the last line (issue 33). -v given: the output shows too."""
    return spawn.run_watched(
        [*argv[:4], "-v", *argv[4:]] if not verbose else argv,
        env,
        f"building {name}",
        str(log),
        interrupted="the build stopped; nothing was cached",
        echo=verbose,
    )


def _say_tail(log: Path, lines: int = 25) -> None:
    """The end of a failed build's log, where pip and CMake say what went wrong."""
    try:
        with open(log, "rb") as fh:
            fh.seek(max(os.fstat(fh.fileno()).st_size - 64 * 1024, 0))
            tail = fh.read().decode("utf-8", "replace").splitlines()[-lines:]
    except OSError:
        return
    say("\n".join(f"  | {line}" for line in tail))


def _keep_log(root: Path, log: Path, created: str) -> Path:
    """The failed build's log, moved out of the build folder (removed next) into the cache's .logs."""
    dest = root / ".logs" / f"build-{created.replace(':', '')}.log"
    try:
        dest.parent.mkdir(exist_ok=True)
        return Path(shutil.move(str(log), dest))
    except OSError:
        keep = Path(tempfile.mkdtemp(prefix="envmgr-log-")) / "build.log"
        return Path(shutil.move(str(log), keep))


def _cache_unwritable(root: Path, exc: OSError) -> InputFileError:
    return InputFileError(
        f"the wheel cache {root} cannot be written: {exc.strerror or exc}",
        "set ENVMGR_CACHE_DIR to a folder you can write, or fix that folder's permissions",
    )


_ARCHIVES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".zip", ".whl")


def _check_spec(spec: str) -> None:
    """A SPEC that names a local file or folder must exist (pip would fail with its own traceback)."""

    if not spec.strip():
        raise UsageError("envmgr install needs a SPEC", "e.g. llama-cpp-python==0.3.36, a source folder or an sdist")
    if "://" in spec or " @ " in spec or "@" in spec.split("/")[0]:
        return  # a URL, or `name @ url`: pip fetches it
    looks_local = (
        spec.startswith((".", "/", "~"))
        or os.sep in spec
        or "/" in spec
        or spec.lower().endswith(_ARCHIVES)
        or (os.altsep is not None and os.altsep in spec)
    )
    if looks_local and not os.path.exists(os.path.expanduser(spec)):
        raise InputFileError(
            f"{spec}: no such file or folder",
            "give an existing source folder or sdist, a URL, or a requirement like NAME==VERSION",
        )


def _pip_install(python: str, wheel: str | Path, pip_opts: list[str], no_deps: bool, env: dict[str, str]) -> int:
    """--force-reinstall --no-deps replaces a same-version (say CPU-only) install; then the dependencies."""

    stopped = f"pip install stopped; the wheel stays ({wheel})"
    code = spawn.run(
        [python, "-m", "pip", "install", "--force-reinstall", "--no-deps", *pip_opts, str(wheel)],
        env,
        interrupted=stopped,
    )
    if code == 0 and not no_deps:
        code = spawn.run([python, "-m", "pip", "install", *pip_opts, str(wheel)], env, interrupted=stopped)
    if code != 0:
        say(f"envmgr: pip install failed with exit code {code}; the cached wheel stays ({wheel})")
    return code


def _python_identity(local: Host, python: str, env: Mapping[str, str]) -> tuple[str, str]:
    out = local.run([python, "-c", _PY_ID], timeout=60, env=env)
    if out.start_error:
        raise UsageError(f"{python}: cannot be run: {out.start_error}", "point --python at a Python executable")
    if not out.ok or len(out.stdout.split()) < 2:
        raise UsageError(
            f"{python}: not a working Python ({out.stderr.strip()[-200:] or out.describe_failure()})",
            "point --python at a Python executable",
        )
    tag, plat = out.stdout.split()[:2]
    return tag, plat.replace("-", "_").replace(".", "_")


def _is_cuda_recipe(name: str) -> bool:
    r = get_recipe(name)
    return r.kind == "torch-extension" or (
        r.kind == "cmake" and (r.cuda_architectures or any("CUDA" in a.upper() for a in r.cmake_args))
    )


def from_index(index_flag: str | None, key: wheels.WheelKey, is_cuda: bool) -> wheels.Entry | None:
    """The index's wheel for key in the local cache, or None; every outcome is said on stderr."""

    index = wheelremote.configured_index(index_flag)
    if not index:
        return None
    return wheelremote.fetch(index, key, is_cuda, lambda m: say(f"envmgr: {m}"))


def publish_installed(dest: str | None, wheel_path: str | Path) -> None:
    """--publish DEST after install got its wheel from the cache (built, reused or downloaded)."""

    if not dest:
        return
    entry = wheelindex.entry_for_path(Path(wheel_path))
    if entry is None:
        say(f"envmgr: not published to {dest}: {wheel_path} is not a cached wheel (a source folder or URL build)")
        return
    (done,) = wheelindex.publish([entry], Path(dest).expanduser())
    say(f"envmgr: published {entry.wheel} to {dest} ({done.status})")
