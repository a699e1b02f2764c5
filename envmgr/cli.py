"""The command line: parse -> build context -> call one core function -> render. Nothing else."""
from __future__ import annotations

import os
import sys

import click

from . import __version__
from .errors import EnvmgrError, InputFileError

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Ctx:
    """What every command needs: the host it describes (this machine, a record or a Wine prefix), this
    machine (`local`: where envmgr, pip and `run`'s command run), the environment envmgr was started in
    (`env`), and the flags that chose them. Tests give hosts directly: `cli.main(obj=Ctx(host=...))`."""

    def __init__(self, machine: str | None = None, wine_prefix: str | None = None, *, host=None,
                 local=None) -> None:
        self.machine = machine
        self.wine_prefix = wine_prefix
        self._host = host
        self._local = local
        self.given = host is not None

    @property
    def host(self):
        if self._host is None:
            if self.machine:
                from .host.recorded import load_machine

                self._host = load_machine(self.machine)
            elif self.wine_prefix:
                from .flags import check_wine_prefix
                from .host.wine import WineHost

                check_wine_prefix(self.wine_prefix)

                self._host = WineHost(self.wine_prefix)
            else:
                self._host = self.local
        return self._host

    @property
    def local(self):
        """This machine: the host itself when no --machine/--wine-prefix (or given host) describes another."""
        if self._local is None:
            from .host.live import LiveHost

            self._local = LiveHost()
        return self._local

    @property
    def here(self) -> bool:
        """Whether the host is this machine (the snapshot cache and `verify` are for this machine only)."""
        return not (self.machine or self.wine_prefix) and (not self.given or self._host is self._local)

    @property
    def env(self):
        """The environment envmgr was started in: what exports, `run` and `install` apply the snapshot to."""
        return self.local.env


class EnvmgrGroup(click.Group):
    """Turns an EnvmgrError into one line + remedy on stderr and its exit code (also under CliRunner)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from .commands import LAZY

        return sorted({*super().list_commands(ctx), *LAZY})

    def get_command(self, ctx: click.Context, name: str):
        command = super().get_command(ctx, name)
        if command is None:
            from .commands import LAZY, load

            if name in LAZY:
                command = load(name)
                self.add_command(command, name)
        return command

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except EnvmgrError as exc:
            from .output import show_error

            ctx.exit(show_error(exc))


@click.group(cls=EnvmgrGroup, context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="envmgr")
@click.option("--machine", metavar="FILE", envvar="ENVMGR_MACHINE",
              help="Run against a recorded machine file instead of this machine (also ENVMGR_MACHINE).")
@click.option("--wine-prefix", metavar="DIR", envvar="ENVMGR_WINEPREFIX", hidden=False,
              help="Treat a Wine prefix as the machine: C: is its drive_c, programs run through wine, "
                   "the registry is read with its reg.exe (also ENVMGR_WINEPREFIX).")
@click.pass_context
def cli(ctx: click.Context, machine: str | None, wine_prefix: str | None) -> None:
    """envmgr: find every Visual Studio and CUDA toolkit, and get a shell where CUDA builds work.

    \b
    Examples:
      envmgr list                       what is installed, and its problems
      envmgr list --json                the same, for scripts (docs/json.md)
      envmgr --machine rec.toml list    a recorded machine (see `envmgr record`)
      envmgr record -o machine.toml     record this machine for a bug report
    """
    if not isinstance(ctx.obj, Ctx):   # a test may give one (with its host); the command line makes one
        ctx.obj = Ctx(machine, wine_prefix)


@cli.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (schema in docs/json.md).")
@click.option("--python", "pythons", multiple=True, metavar="EXE",
              help="Also look for pip-installed CUDA in this Python's site-packages (repeatable).")
@click.pass_obj
def list_cmd(obj: Ctx, as_json: bool, pythons: tuple[str, ...]) -> None:
    """List Visual Studio instances, CUDA toolkits, GPUs and host compilers."""
    from .discover import discover
    from .output import Painter, Spinner, emit_json
    from .render_list import inventory_json, render_inventory

    if pythons:
        from .flags import check_pythons

        check_pythons(obj.host, pythons)
    with Spinner("looking for Visual Studio, CUDA and GPUs"):
        inv = discover(obj.host, (None, *pythons))
    if as_json:
        emit_json(inventory_json(inv))
    else:
        click.echo(render_inventory(inv, Painter(sys.stdout)))


@cli.command("record")
@click.option("-o", "--output", "output", required=True, metavar="FILE",
              help="Machine file to write (TOML). An existing file is kept as FILE.bak.")
@click.option("--python", "pythons", multiple=True, metavar="EXE",
              help="Also record pip-installed CUDA of this Python (repeatable).")
@click.option("--description", default="", help="A line saying what this machine is.")
@click.option("--capture", is_flag=True,
              help="Also record the vcvars capture of the selected environment, so `export` replays too.")
@click.option("--vs", "vs", metavar="WHICH", help="With --capture: the Visual Studio to capture.")
@click.option("--toolset", metavar="14.XX", help="With --capture: the MSVC toolset.")
@click.option("--arch", default="x64", show_default=True, metavar="ARCH", help="With --capture: the architecture.")
@click.option("--cuda", metavar="X.Y|PATH", help="With --capture: the CUDA toolkit.")
@click.pass_obj
def record_cmd(obj: Ctx, output: str, pythons: tuple[str, ...], description: str, capture: bool, vs, toolset,
               arch, cuda) -> None:
    """Record what discovery reads on this machine into a machine file.

    Attach the file to a bug report: `envmgr --machine FILE list` (and `doctor`) replays it anywhere;
    with --capture, `envmgr --machine FILE export` (same selectors) replays the vcvars capture too.
    Only the environment variables that discovery reads are recorded.
    """
    import tomlkit

    from .discover import discover
    from .errors import NoMatchError, UsageError
    from .fsutil import atomic_write
    from .host.machinefile import machine_document
    from .host.recording import RecordingHost
    from .flags import check_output_file, check_pythons
    from .output import Spinner, say

    check_output_file(output, "-o")
    if not capture and (vs or toolset or cuda or arch != "x64"):
        raise UsageError("--vs, --toolset, --arch and --cuda choose what --capture captures",
                         "add --capture, or drop them")
    check_pythons(obj.host, pythons)
    rec = RecordingHost(obj.host)
    with Spinner("recording"):
        inv = discover(rec, (None, *pythons))
    if capture:
        from .resolve import resolve
        from .selectors import Selectors

        try:
            resolve(rec, Selectors(vs, toolset, arch, cuda), pythons=pythons, use_cache=False, progress=Spinner)
        except (NoMatchError, UsageError):
            raise  # a selector that matches nothing is a mistake to fix, not a machine to record
        except EnvmgrError as exc:  # a failing capture is exactly what a bug report should hold
            say(f"envmgr: the capture failed ({exc.message}); recorded anyway")
    doc = machine_document(rec, version=__version__, description=description)
    try:
        saved = atomic_write(output, tomlkit.dumps(doc).encode("utf-8"))
    except OSError as exc:
        raise InputFileError(f"{output}: cannot write: {exc.strerror}", "choose a writable path for -o") from None
    say(f"recorded {len(inv.visual_studio)} Visual Studio instance(s), {len(inv.cuda)} CUDA toolkit(s), "
        f"{len(inv.gpus)} GPU(s) into {output}" + (f" (previous file kept as {saved})" if saved else ""))


def selector_options(func):
    """--vs/--toolset/--arch/--cuda/--python/--from/--refresh/--strict: the same on every command."""
    options = [
        click.option("--vs", "vs", metavar="WHICH", help="Visual Studio: edition, year, major, version prefix, instance id or path."),
        click.option("--toolset", metavar="14.XX", help="MSVC toolset (version prefix); default: the newest nvcc accepts."),
        click.option("--arch", default="x64", show_default=True, metavar="ARCH",
                     help="Target (x64, x86, arm64) or host_target pair (x64_arm64)."),
        click.option("--cuda", metavar="X.Y|PATH", help="CUDA toolkit: version prefix or folder; default: the newest."),
        click.option("--python", "pythons", multiple=True, metavar="EXE", help="Also consider pip CUDA of this Python."),
        click.option("--from", "from_file", metavar="FILE", help="Use a snapshot file instead of selecting."),
        click.option("--refresh", is_flag=True, help="Ignore the cache and capture again."),
        click.option("--strict", is_flag=True, help="With --from: refuse a snapshot whose paths do not exist here."),
    ]
    checked = _checking(func, lambda kw: _check_selectors(kw["from_file"], kw["strict"], kw["pythons"]))
    for option in reversed(options):
        checked = option(checked)
    return checked


def _checking(func, check):
    """The command, with its flags' values checked first (exit 2 before anything slow runs)."""
    import functools

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        check(kwargs)
        return func(*args, **kwargs)

    return wrapper


def _check_selectors(from_file, strict, pythons) -> None:
    from .flags import check_pythons, check_selector_flags

    check_selector_flags(from_file, strict)
    if pythons:
        ctx = click.get_current_context()
        if ctx.info_name == "install":
            # install runs pip with the first --python on this machine, even when --machine describes
            # the toolchain: it is probed here, not in the record.
            check_pythons(ctx.obj.local, pythons[:1])
            check_pythons(ctx.obj.host, pythons[1:])
        else:
            check_pythons(ctx.obj.host, pythons)


def get_snapshot(obj: Ctx, vs, toolset, arch, cuda, pythons, from_file, refresh, strict):
    from .output import Spinner, say
    from .resolve import resolve
    from .selectors import Selectors

    snap, _ = resolve(obj.host, Selectors(vs, toolset, arch, cuda), from_file=from_file, refresh=refresh,
                      strict=strict, pythons=pythons, use_cache=obj.here, warn=lambda m: say(f"envmgr: {m}"),
                      progress=Spinner)
    return snap


def recipe_options(func):
    options = [
        click.option("--recipe", metavar="NAME", help="Add a build recipe's variables (see `envmgr recipes`)."),
        click.option("--arch-list", metavar="LIST", help="CUDA architectures for the recipe, e.g. '86;89'."),
        click.option("--allow-unsupported-compiler", is_flag=True,
                     help="Recipe: pass -allow-unsupported-compiler to nvcc (skips its host compiler check)."),
        click.option("--recipe-param", "recipe_params", multiple=True, metavar="NAME=VALUE",
                     help="A recipe parameter, e.g. lib_path=C:\\llama.cpp\\build\\bin (repeatable)."),
    ]

    def check(kw):
        from .flags import check_recipe_flags

        check_recipe_flags(kw["recipe"], kw["arch_list"], kw["allow_unsupported_compiler"], kw["recipe_params"])

    checked = _checking(func, check)
    for option in reversed(options):
        checked = option(checked)
    return checked


def environment_for(obj: Ctx, sel: tuple, recipe: str | None, arch_list, allow_unsupported, recipe_params,
                    snap=None):
    """(delta, marker, notes): the snapshot (and recipe) for the selectors. A caller that needs the
    snapshot itself resolves it and passes it as `snap`: each command resolves once (one capture)."""
    from .output import say

    snap = snap if snap is not None else get_snapshot(obj, *sel)
    delta, notes = snap.delta, ()
    marker = snap.marker()
    if recipe:
        from .errors import UsageError
        from .recipe_ctx import with_recipe
        from .recipes import get_recipe

        params = []
        for item in recipe_params:
            name, eq, value = item.partition("=")
            if not eq or not name:
                raise UsageError(f"--recipe-param {item!r} is not NAME=VALUE", "e.g. --recipe-param lib_path=FOLDER")
            params.append((name, value))
        chosen = get_recipe(recipe, lambda m: say(f"envmgr: {m}"))
        delta, notes = with_recipe(obj.host, snap, chosen, dict(obj.env), arch_list=arch_list,
                                   allow_unsupported=allow_unsupported, params=tuple(params))
        marker = f"{marker} {recipe}"
        for note in notes:
            say(f"envmgr: {note}")
    return delta, marker, notes


EXPORT_FORMATS = ("toml", "json", "ps1", "cmd", "sh", "fish", "dotenv", "github")


@cli.command("export")
@selector_options
@recipe_options
@click.option("--activate", is_flag=True,
              help="Script formats: also record what to restore (used by Enter-Envmgr and envmgr_activate).")
@click.option("--format", "fmt", type=click.Choice(EXPORT_FORMATS), default="toml", show_default=True,
              help="Output format.")
@click.pass_obj
def export_cmd(obj: Ctx, vs, toolset, arch, cuda, pythons, from_file, refresh, strict, recipe, arch_list,
               allow_unsupported_compiler, recipe_params, activate, fmt) -> None:
    """Write the environment snapshot to stdout.

    \b
      envmgr export > env.toml
      envmgr export --from env.toml --format ps1 | Invoke-Expression
      eval "$(envmgr export --cuda 13.0 --format sh)"
      envmgr export --format github >> "$GITHUB_ENV"   (see docs/snapshot.md for $GITHUB_PATH)
    """
    sel = (vs, toolset, arch, cuda, pythons, from_file, refresh, strict)
    if activate and fmt in ("toml", "json", "dotenv", "github"):
        from .errors import UsageError

        raise UsageError("--activate is for shell scripts", "use --format sh, fish, ps1 or cmd")
    snap = served = get_snapshot(obj, *sel)
    if recipe or activate:
        delta, marker, notes = environment_for(obj, sel, recipe, arch_list, allow_unsupported_compiler,
                                               recipe_params, snap=snap)
        if activate:
            from .activation import activation_delta

            delta = activation_delta(delta, obj.env, marker)
        from dataclasses import replace

        snap = replace(snap, delta=delta, notes=snap.notes + tuple(notes), text="")
    if fmt == "toml":
        if snap.text:
            click.echo(snap.text, nl=False)
        else:
            from .snapshot import to_toml

            click.echo(to_toml(snap), nl=False)
    elif fmt == "json":
        from .output import emit_json
        from .snapshot_json import snapshot_json

        emit_json(snapshot_json(snap))
    elif fmt == "github" and obj.env.get("GITHUB_ENV") and obj.env.get("GITHUB_PATH"):
        _append_github_files(snap, obj.env)
    else:
        from .shellkit import render, stream_encoding

        text = render(snap.delta, fmt, dict(obj.env))
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode(stream_encoding(fmt)))
        if activate and fmt == "ps1" and not recipe and obj.here and obj.env.get("ENVMGR_SLOT"):
            from .reactivate_ps1 import write_from_cli    # Enter-Envmgr's next call: no Python

            write_from_cli(obj.env["ENVMGR_SLOT"], sys.argv[1:], obj.host, served, obj.env)


def _append_github_files(snap, env) -> None:
    """Inside a GitHub Actions step: append to the files the runner reads after the step."""
    from .output import say
    from .shellkit import render_github

    env_text, path_text = render_github(snap.delta, dict(env))
    for var, text in (("GITHUB_ENV", env_text), ("GITHUB_PATH", path_text)):
        if text:
            with open(env[var], "a", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
    say(f"envmgr: appended {env_text.count(chr(10))} line(s) to $GITHUB_ENV and "
        f"{path_text.count(chr(10))} to $GITHUB_PATH for the next steps")


@cli.group("cache")
def cache_group() -> None:
    """The snapshot cache (under the user cache folder)."""


@cache_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def cache_list(as_json: bool) -> None:
    """List cached snapshots and whether they are still valid."""
    from . import cache
    from .output import emit_json

    rows = []
    for e in cache.entries():
        valid = bool(e.snapshot_toml) and all(cache.stat_token(p) == t for p, t in e.validity.items())
        headline = next((l[2:] for l in e.snapshot_toml.splitlines()[1:2] if l.startswith("# ")), "(unreadable)")
        rows.append({"key": e.key, "path": str(e.path), "valid": valid, "summary": headline})
    if as_json:
        emit_json({"schema": 1, "cache_dir": str(cache.cache_dir()), "entries": rows})
        return
    click.echo(f"{len(rows)} cached snapshot(s) in {cache.cache_dir()}")
    for r in rows:
        click.echo(f"  {r['key']}  {'valid' if r['valid'] else 'stale'}  {r['summary']}")


@cache_group.command("clear")
def cache_clear() -> None:
    """Delete every cached snapshot."""
    from . import cache

    click.echo(f"removed {cache.clear()} cached snapshot(s)")


def main(argv: list[str] | None = None) -> None:
    from .output import utf8_pipes

    utf8_pipes()
    try:
        rc = cli.main(args=argv, prog_name="envmgr", standalone_mode=False)
    except EnvmgrError as exc:   # raised while click parsed the group's own options, before invoke
        from .output import show_error

        sys.exit(show_error(exc))
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        # `envmgr list | head`: the reader went away; not an error worth a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    sys.exit(rc if isinstance(rc, int) else 0)
