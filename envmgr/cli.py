"""The command line: parse -> build context -> call one core function -> render. Nothing else."""
from __future__ import annotations

import os
import sys

import click

from . import __version__
from .errors import EnvmgrError, InputFileError

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Ctx:
    """What every command needs: the host (live, recorded or Wine) and output options."""

    def __init__(self, machine: str | None, wine_prefix: str | None) -> None:
        self.machine = machine
        self.wine_prefix = wine_prefix
        self._host = None

    @property
    def host(self):
        if self._host is None:
            if self.machine:
                from .host.recorded import load_machine

                self._host = load_machine(self.machine)
            elif self.wine_prefix:
                from .host.wine import WineHost

                self._host = WineHost(self.wine_prefix)
            else:
                from .host.live import LiveHost

                self._host = LiveHost()
        return self._host


class EnvmgrGroup(click.Group):
    """Turns an EnvmgrError into one line + remedy on stderr and its exit code (also under CliRunner)."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except EnvmgrError as exc:
            from .output import print_error

            print_error(exc.message, exc.remedy, exc.details)
            ctx.exit(exc.exit_code)


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
@click.pass_obj
def record_cmd(obj: Ctx, output: str, pythons: tuple[str, ...], description: str) -> None:
    """Record what discovery reads on this machine into a machine file.

    Attach the file to a bug report: `envmgr --machine FILE list` replays it anywhere.
    Only the environment variables that discovery reads are recorded.
    """
    import tomlkit

    from .discover import discover
    from .fsutil import atomic_write
    from .host.machinefile import machine_document
    from .host.recording import RecordingHost
    from .output import Spinner, say

    rec = RecordingHost(obj.host)
    with Spinner("recording"):
        inv = discover(rec, (None, *pythons))
    doc = machine_document(rec, version=__version__, description=description)
    try:
        saved = atomic_write(output, tomlkit.dumps(doc).encode("utf-8"))
    except OSError as exc:
        raise InputFileError(f"{output}: cannot write: {exc.strerror}", "choose a writable path for -o") from None
    say(f"recorded {len(inv.visual_studio)} Visual Studio instance(s), {len(inv.cuda)} CUDA toolkit(s), "
        f"{len(inv.gpus)} GPU(s) into {output}" + (f" (previous file kept as {saved})" if saved else ""))


def main(argv: list[str] | None = None) -> None:
    try:
        rc = cli.main(args=argv, prog_name="envmgr", standalone_mode=False)
    except EnvmgrError as exc:
        from .output import print_error

        print_error(exc.message, exc.remedy, exc.details)
        sys.exit(exc.exit_code)
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
