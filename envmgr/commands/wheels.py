"""`envmgr install` (build through a recipe once, reuse the wheel) and `envmgr wheels list|clear`."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from ..cli import Ctx, environment_for, recipe_options, selector_options

_PY_ID = ("import sys, sysconfig; i = sys.implementation; "
          "print(f'{i.name[:2] if i.name == \"cpython\" else i.name}{sys.version_info[0]}{sys.version_info[1]}'); "
          "print(sysconfig.get_platform())")


@click.command("install", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@selector_options
@recipe_options
@click.option("--no-deps", is_flag=True, help="Install the wheel without its dependencies.")
@click.option("--rebuild", is_flag=True, help="Build again even when the wheel cache holds this key.")
@click.option("--wheel-index", metavar="URL|DIR", help="Look the key up in this wheel index before building "
              "(default: ENVMGR_WHEEL_INDEX, or [wheels] index in config.toml; '' turns it off).")
@click.option("--publish", "publish_to", metavar="DIR", help="Then publish the wheel into this index folder.")
@click.option("--fix", is_flag=True, help="llama-cpp-python flow: take the recipe's safe route past doctor findings.")
@click.option("--prebuilt-lib", metavar="DIR", help="llama-cpp-python flow: use this llama.cpp CUDA build folder.")
@click.option("--json", "as_json", is_flag=True, help="llama-cpp-python flow: print the report as JSON.")
@click.argument("pip_args", nargs=-1, required=True, type=click.UNPROCESSED, metavar="[PIP OPTIONS] SPEC")
@click.pass_obj
def install_command(obj: Ctx, vs, toolset, arch, cuda, pythons, from_file, refresh, strict, recipe, arch_list,
                    allow_unsupported_compiler, recipe_params, no_deps, rebuild, wheel_index, publish_to, pip_args, fix=False,
                    prebuilt_lib=None, as_json=False):
    """Build SPEC with a recipe once, cache the wheel, and pip install it (here or into --python EXE).

    \b
      envmgr install llama-cpp-python [SPEC]     doctor, build or cache, install, verify, report
      envmgr install --prebuilt-lib DIR llama-cpp-python   your llama.cpp CUDA build, verified
      envmgr install --recipe llama-cpp-python "llama-cpp-python==0.3.36"
      envmgr install --recipe llama-cpp-python --python .venv/bin/python ./llama_cpp_python-0.3.36.tar.gz
      envmgr install --recipe llama-cpp-python --no-index --find-links ./wheels llama-cpp-python==0.3.36
    The cache key is (package, version, source, CUDA, architectures, generator, CMAKE_ARGS, Python
    tag, platform): the same key in any venv installs the cached wheel in seconds. pip options
    (before SPEC) go to both `pip wheel` and `pip install`. The first --python is the target.
    """
    args = [a for a in pip_args if a != "--"] if pip_args[:1] == ("--",) else list(pip_args)
    from .install_flow import flow_package, start_flow   # `install llama-cpp-python [SPEC]` (issue 15)

    if flow_package(recipe, args, prebuilt_lib):
        sys.exit(start_flow(click.get_current_context(), args, fix, prebuilt_lib, as_json))
    sys.exit(install_wheel(obj, args, vs=vs, toolset=toolset, arch=arch, cuda=cuda, pythons=pythons,
                           from_file=from_file, refresh=refresh, strict=strict, recipe=recipe, arch_list=arch_list,
                           allow_unsupported_compiler=allow_unsupported_compiler, recipe_params=recipe_params,
                           no_deps=no_deps, rebuild=rebuild, wheel_index=wheel_index, publish_to=publish_to).code)


@dataclass(frozen=True)
class Installed:
    """What `envmgr install --recipe` did, in its own words: the install flow reports from this."""
    code: int              # pip install's exit code
    origin: str            # "built", "cache" (the local wheel cache), "index" (--wheel-index) or "source"
    wheel: str             # the wheel's file name
    path: str
    build_seconds: float   # the build's time: this build's, or the one that made the cached/index wheel
    digest: str = ""       # the cache key's digest ("" for a source folder or URL: never cached)
    index: str = ""        # the wheel index it came from (origin "index")


def install_wheel(obj: Ctx, args: list[str], *, vs, toolset, arch, cuda, pythons, from_file, refresh, strict, recipe,
                  arch_list, allow_unsupported_compiler, recipe_params, no_deps, rebuild, wheel_index,
                  publish_to) -> Installed:
    """Build SPEC (the last of args) with the recipe, or take its wheel from the cache or the index; pip install it."""
    import time
    from datetime import datetime, timezone

    from .. import wheels
    from ..activation import activation_delta

    spec, pip_opts = _install_args(args, recipe, publish_to)
    from ..cli import get_snapshot

    sel = (vs, toolset, arch, cuda, pythons, from_file, refresh, strict)
    snap = get_snapshot(obj, *sel)       # resolved once: the environment and the CUDA version come from it
    delta, marker, _ = environment_for(obj, sel, recipe, arch_list, allow_unsupported_compiler, recipe_params,
                                       snap=snap)
    env = activation_delta(delta, obj.env, marker).apply(obj.env)
    python = pythons[0] if pythons else sys.executable
    py_tag, platform = _python_identity(obj.local, python, env)
    cuda_version = dict(snap.summary).get("cuda_short", "")
    is_cuda = _is_cuda_recipe(recipe) and bool(cuda_version)
    archs, generator, cmake_args = wheels.build_facts(env)
    info = wheels.parse_spec(spec, obj.local)

    def key_for(name: str, version: str, source: str) -> wheels.WheelKey:
        return wheels.WheelKey(name, version, source, cuda_version if is_cuda else "", archs, generator,
                               cmake_args, py_tag, platform)

    from .wheelpublish import publish_installed

    if info.name and info.version and info.source and not rebuild:
        reused = _reuse(key_for(info.name, info.version, info.source), is_cuda, wheel_index, publish_to,
                        python, pip_opts, no_deps, env)
        if reused is not None:
            return reused
    _say_why_built(spec, info)
    start = time.perf_counter()
    entry_or_path = _build(python, spec, pip_opts, env, key_for, info, is_cuda, start,
                           datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    seconds, path = time.perf_counter() - start, Path(entry_or_path)
    publish_installed(publish_to, entry_or_path)
    return Installed(_pip_install(python, entry_or_path, pip_opts, no_deps, env),
                     "source" if info.source is None else "built", path.name, str(path), seconds,
                     "" if info.source is None else path.parent.name)


def _install_args(args: list[str], recipe, publish_to) -> tuple[str, list[str]]:
    """(SPEC, the pip options before it), checked before anything is resolved; a bad --publish folder too."""
    from ..errors import UsageError

    if not args or not recipe:
        raise UsageError("envmgr install needs --recipe NAME and a SPEC", "e.g. envmgr install --recipe "
                         "llama-cpp-python llama-cpp-python==0.3.36 (see `envmgr recipes`)")
    spec, pip_opts = args[-1], args[:-1]
    _check_spec(spec)
    if publish_to:
        from ..wheelindex import check_dest

        check_dest(Path(publish_to).expanduser())
    return spec, pip_opts


def _reuse(key, is_cuda: bool, wheel_index, publish_to, python: str, pip_opts: list[str], no_deps: bool,
           env: dict) -> Installed | None:
    """The wheel of `key` from the local cache, else from the wheel index, installed; None when neither has it."""
    from .. import wheels
    from ..output import say
    from ..wheelremote import configured_index
    from .wheelpublish import from_index, publish_installed

    hit = wheels.lookup(key, is_cuda, lambda m: say(f"envmgr: {m}"))
    origin = "cache"
    if hit is not None:
        say(f"envmgr: reusing the cached wheel {hit.wheel} (built in {hit.build_seconds:.0f} s, {hit.created}); "
            f"key {hit.key.digest()}")
    else:
        hit, origin = from_index(wheel_index, key, is_cuda), "index"
    if hit is None:
        return None
    index = configured_index(wheel_index) or "" if origin == "index" else ""
    publish_installed(publish_to, hit.path)
    return Installed(_pip_install(python, hit.path, pip_opts, no_deps, env), origin, hit.wheel, str(hit.path),
                     hit.build_seconds, hit.folder.name, index)


def _say_why_built(spec: str, info) -> None:
    """Why SPEC is built rather than taken from the cache, when the spec itself is the reason."""
    from .. import wheels
    from ..output import say

    if info.source is None:
        say(f"envmgr: {spec} is a source folder or URL: built every time, never cached")
    elif info.version is None and info.name:
        old = wheels.newest_for(info.name)
        say(f"envmgr: {spec} pins no version: building" +
            (f" (the cache holds {old.key.version}; pin =={old.key.version} to reuse it)" if old else ""))


def _build(python, spec, pip_opts, env, key_for, info, is_cuda, start, created):
    import shutil
    import tempfile
    import time
    from pathlib import Path

    from .. import spawn, wheels
    from ..errors import CheckFailed, ChildFailed
    from ..output import say

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
        code = spawn.run(argv, env, interrupted="the build stopped; nothing was cached")
        seconds = time.perf_counter() - start
        if code != 0:
            raise ChildFailed(f"pip wheel failed with exit code {code} after {seconds:.0f} s; nothing was cached",
                              "rerun with -v before SPEC, or `envmgr run --recipe ... --log build.log -- pip wheel -v ...`"
                              " to have the log diagnosed", code)
        built = sorted(tmp.glob("*.whl"))
        if len(built) != 1:
            raise CheckFailed(f"pip wheel produced {len(built)} wheels in {tmp}, expected one", "report this")
        name, version, _ = wheels.parse_wheel_name(built[0].name)
        if info.name and name != info.name:
            say(f"envmgr: the wheel is {name}, the spec said {info.name}: keyed by the wheel's name")
        if info.source is None:
            problems = wheels.check_wheel(built[0], name, is_cuda)
            if problems:
                raise CheckFailed(f"{built[0].name} will not be installed: {'; '.join(problems)}",
                                  "the build did not enable CUDA: check CMAKE_ARGS and the build log (-v)")
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


def _cache_unwritable(root, exc: OSError):
    from ..errors import InputFileError

    return InputFileError(f"the wheel cache {root} cannot be written: {exc.strerror or exc}",
                          "set ENVMGR_CACHE_DIR to a folder you can write, or fix that folder's permissions")


_ARCHIVES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".zip", ".whl")


def _check_spec(spec: str) -> None:
    """A SPEC that names a local file or folder must exist (pip would fail with its own traceback)."""
    from ..errors import InputFileError, UsageError

    if not spec.strip():
        raise UsageError("envmgr install needs a SPEC", "e.g. llama-cpp-python==0.3.36, a source folder or an sdist")
    if "://" in spec or " @ " in spec or "@" in spec.split("/")[0]:
        return  # a URL, or `name @ url`: pip fetches it
    looks_local = spec.startswith((".", "/", "~")) or os.sep in spec or "/" in spec or \
        spec.lower().endswith(_ARCHIVES) or (os.altsep is not None and os.altsep in spec)
    if looks_local and not os.path.exists(os.path.expanduser(spec)):
        raise InputFileError(f"{spec}: no such file or folder",
                             "give an existing source folder or sdist, a URL, or a requirement like NAME==VERSION")


def _pip_install(python, wheel, pip_opts, no_deps, env) -> int:
    """--force-reinstall --no-deps replaces a same-version (say CPU-only) install; then the dependencies."""
    from .. import spawn
    from ..output import say

    stopped = f"pip install stopped; the wheel stays ({wheel})"
    code = spawn.run([python, "-m", "pip", "install", "--force-reinstall", "--no-deps", *pip_opts, str(wheel)], env,
                     interrupted=stopped)
    if code == 0 and not no_deps:
        code = spawn.run([python, "-m", "pip", "install", *pip_opts, str(wheel)], env, interrupted=stopped)
    if code != 0:
        say(f"envmgr: pip install failed with exit code {code}; the cached wheel stays ({wheel})")
    return code


def _python_identity(local, python: str, env) -> tuple[str, str]:
    from ..errors import UsageError

    out = local.run([python, "-c", _PY_ID], timeout=60, env=env)
    if out.start_error:
        raise UsageError(f"{python}: cannot be run: {out.start_error}", "point --python at a Python executable")
    if not out.ok or len(out.stdout.split()) < 2:
        raise UsageError(f"{python}: not a working Python ({out.stderr.strip()[-200:] or out.describe_failure()})",
                         "point --python at a Python executable")
    tag, plat = out.stdout.split()[:2]
    return tag, plat.replace("-", "_").replace(".", "_")


def _is_cuda_recipe(name: str) -> bool:
    from ..recipes import get_recipe

    r = get_recipe(name)
    return r.kind == "torch-extension" or (r.kind == "cmake" and (r.cuda_architectures or any(
        "CUDA" in a.upper() for a in r.cmake_args)))


@click.group("wheels")
def wheels_group() -> None:
    """The wheel cache of `envmgr install` (under the user cache folder)."""


@wheels_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (docs/wheels.md).")
def wheels_list(as_json: bool) -> None:
    """List cached wheels with their keys."""
    from dataclasses import asdict

    from .. import wheels
    from ..output import emit_json

    rows = []
    for e in wheels.entries():
        if isinstance(e, wheels.Entry):
            rows.append({"digest": e.folder.name, "wheel": e.wheel, "path": str(e.path), "sha256": e.sha256,
                         "build_seconds": e.build_seconds, "created": e.created, "key": asdict(e.key)})
        else:
            rows.append({"digest": e.name, "wheel": None, "path": str(e), "broken": True})
    if as_json:
        emit_json({"schema": 1, "wheels_dir": str(wheels.wheels_dir()), "wheels": rows})
        return
    click.echo(f"{len(rows)} cached wheel(s) in {wheels.wheels_dir()}")
    for r in rows:
        if r.get("broken"):
            click.echo(f"  {r['digest']}  (broken entry: discarded at the next install with its key)")
            continue
        k = r["key"]
        cuda = f"CUDA {k['cuda']} archs {k['archs'] or '?'}" if k["cuda"] else "CPU"
        click.echo(f"  {r['digest']}  {k['package']} {k['version']}  {cuda}  {k['generator']}  "
                   f"{k['python_tag']} {k['platform']}  built in {r['build_seconds']:.0f} s")


@wheels_group.command("clear")
def wheels_clear() -> None:
    """Delete every cached wheel."""
    from .. import wheels

    click.echo(f"removed {wheels.clear()} cached wheel(s)")


def _add_publish() -> None:
    from .wheelpublish import publish_command

    wheels_group.add_command(publish_command)


_add_publish()
