"""The command line: parse -> build context -> call one core function -> render. Nothing else."""

from __future__ import annotations

import _signal  # the builtin: `signal` imports enum (start-up time)
import functools
import importlib
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from envmgr import __version__
from envmgr.cli.flags import check_wine_prefix
from envmgr.cli.grammar import better_no_such_option, no_such_command, renamed
from envmgr.errors import EnvmgrError, UsageError
from envmgr.host.base import Host
from envmgr.output import COLOR_CHOICES, configure, guard_stdout, quiet_fd1, show_error, utf8_pipes

if TYPE_CHECKING:
    from envmgr.host.recording import RecordingHost

# command name -> its one-line help. The group lists these, so `envmgr --help` imports no command module (as
# pip's does): cli/ sits below commands/ in the layer rule, so the group names its commands, never imports
# them; a command's module (envmgr.commands.<name with _>) is imported only when click asks for that command.
# Each line is the first sentence of the command's own docstring; tests/unit/test_startup.py holds them
# equal, so they cannot drift.
COMMANDS = {
    "cache": "The snapshot cache (under the user cache folder).",
    "complete-words": "",
    "config": "Show the defaults commands take here, each with its source.",
    "deactivate": "Print the script that restores the environment from before activation.",
    "doctor": "Diagnose why a CUDA build of llama-cpp-python fails (or would fail) here.",
    "export": "Write the environment snapshot to stdout.",
    "fix-msbuild": "Copy CUDA's MSBuild integration into Visual Studio instances that lack it.",
    "hook": "Make a Python start with the compiler environment of a snapshot (install, remove, status).",
    "init": "Print the line to add to your shell's profile (activation functions and completion).",
    "install": "Build SPEC with a recipe once, cache the wheel, and pip install it into the target Python.",
    "list": "List Visual Studio instances, CUDA toolkits, GPUs and host compilers.",
    "recipes": "List build recipes (built-in, and yours in the config folder's recipes/).",
    "record": "Record what discovery reads on this machine into a machine file.",
    "run": "Run one command in the environment and return its exit code.",
    "shell": "Start your shell with the environment applied (and a prompt marker).",
    "verify": "Prove that PACKAGE (default llama-cpp-python; any installed distribution) runs on the GPU.",
    "wheels": "The wheel cache of `envmgr install` (under the user cache folder).",
}
HIDDEN = {"complete-words"}  # shell completion's helper: not listed


def module_of(name: str) -> str:
    return f"envmgr.commands.{name.replace('-', '_')}"


CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Ctx:
    """What every command needs: the host it describes (this machine, a record or a Wine prefix), this
    machine (`local`: where envmgr, pip and `run`'s command run), the environment envmgr was started in
    (`env`), and the flags that chose them. Tests give hosts directly: `cli.main(obj=Ctx(host=...))`."""

    def __init__(
        self,
        machine: str | None = None,
        wine_prefix: str | None = None,
        *,
        host: Host | None = None,
        local: Host | None = None,
    ) -> None:
        self.machine = machine
        self.wine_prefix = wine_prefix
        self._host = host
        self._local = local
        self.given = host is not None

    @property
    def host(self) -> Host:
        if self._host is None:
            if self.machine:
                from envmgr.host.recorded import load_machine  # start-up: `--help` reads no machine

                self._host = load_machine(self.machine)
            elif self.wine_prefix:
                from envmgr.host.wine import WineHost  # start-up, as above

                check_wine_prefix(self.wine_prefix)
                self._host = WineHost(self.wine_prefix)
            else:
                self._host = self.local
        return self._host

    @property
    def local(self) -> Host:
        """This machine: the host itself when no --machine/--wine-prefix (or given host) describes another."""
        if self._local is None:
            from envmgr.host.live import LiveHost  # start-up: `--help` touches no machine

            self._local = LiveHost()
        return self._local

    def recording(self) -> RecordingHost:
        """The host, wrapped so that what discovery reads is kept (`envmgr record` writes it)."""
        from envmgr.host.recording import RecordingHost  # start-up: only `record` records

        return RecordingHost(self.host)

    @property
    def here(self) -> bool:
        """Whether the host is this machine (the snapshot cache and `verify` are for this machine only)."""
        return not (self.machine or self.wine_prefix) and (not self.given or self._host is self._local)

    @property
    def env(self) -> Mapping[str, str]:
        """The environment envmgr was started in: what exports, `run` and `install` apply the snapshot to."""
        return self.local.env


class EnvmgrGroup(click.Group):
    """Turns an EnvmgrError into one line + remedy on stderr and its exit code (also under CliRunner)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        command = super().get_command(ctx, name)
        if command is None and name in COMMANDS:
            command = importlib.import_module(module_of(name)).command
            _refusing_empty_values(command)
            self.add_command(command, name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's listing, from the table for the commands not yet imported: a stand-in given the table's
        line as its help is shortened by click exactly as the command's own docstring would be."""
        names = [n for n in self.list_commands(ctx) if n not in HIDDEN]
        commands = [self.commands.get(n) or click.Command(n, help=COMMANDS[n]) for n in names]
        shown = [(n, c) for n, c in zip(names, commands, strict=True) if not c.hidden]
        if shown:
            limit = formatter.width - 6 - max(len(n) for n, _ in shown)
            with formatter.section("Commands"):
                formatter.write_dl([(n, c.get_short_help_str(limit)) for n, c in shown])

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if args and not ctx.resilient_parsing and not name.startswith("-") and self.get_command(ctx, name) is None:
            raise no_such_command(ctx, name, self.list_commands(ctx))  # did-you-mean over the lazy commands too
        cmd_name, cmd, rest = super().resolve_command(ctx, args)
        if cmd is not None and cmd_name is not None:  # old option names: their new one, said once (cli/grammar.py)
            rest, notes = renamed(cmd, cmd_name, rest)
            for note in dict.fromkeys(notes) if not ctx.params.get("quiet") else ():  # -q: parsed already
                click.echo(note, err=True)
        return cmd_name, cmd, rest

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:  # --help and --version print here, before invoke
            return super().make_context(info_name, args, parent, **extra)
        except click.NoSuchOption as exc:
            raise better_no_such_option(exc) from None
        except BrokenPipeError:
            reader_gone()
            raise  # not reached: reader_gone exits

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.NoSuchOption as exc:  # a subcommand's option: suggested by edit distance (cli/grammar.py)
            raise better_no_such_option(exc) from None
        except EnvmgrError as exc:
            ctx.exit(show_error(exc))
        except BrokenPipeError:
            reader_gone()


# Options whose empty value means something (or that word their own refusal of one); any other option
# given an empty value on the command line is refused, never read as "not given" (audit E4).
EMPTY_MEANS = {
    "wheel_index": "turns the index off",
    "description": "no description",
    "incomplete": "a word to complete",
    "arch_list": "its own check: an empty list is not an architecture",
    "recipe_params": "its own check: '' is not NAME=VALUE",
}
_NOUNS = {
    "FILE": "a file name",
    "DIR": "a folder",
    "NAME": "a name",
    "EXE": "a path",
    "X.Y|PATH": "a version or a folder",
    "PATH|llama_cpp": "a path",
    "IDS": "check ids (e.g. F03,F24)",
    "WHICH": "a value",
    "URL|DIR": "a URL or a folder",
}


def refuse_empty_values(ctx: click.Context) -> None:
    """One line, exit 2, for the first option given an empty (or blank) value on the command line."""
    for param in ctx.command.params:
        if not isinstance(param, click.Option) or param.is_flag or param.name in EMPTY_MEANS:
            continue
        if ctx.get_parameter_source(param.name) is not click.core.ParameterSource.COMMANDLINE:
            continue
        value = ctx.params.get(param.name)
        values = value if isinstance(value, (tuple, list)) else (value,)
        if any(isinstance(v, str) and not v.strip() for v in values):
            flag = max(param.opts, key=len) if param.opts[0].startswith("--") else param.opts[0]
            noun = _NOUNS.get(param.metavar or "", "a value")
            raise UsageError(f"{flag} needs {noun}", f"give {flag} {param.metavar or 'a value'}, or leave {flag} out")


def _refusing_empty_values(command: click.Command) -> None:
    """Check every option of `command` (and of its subcommands) before its callback runs."""
    if command.callback is not None and not getattr(command.callback, "_refuses_empty", False):
        callback = command.callback

        def checked(*args: Any, **kwargs: Any) -> Any:
            refuse_empty_values(click.get_current_context())
            return callback(*args, **kwargs)

        checked._refuses_empty = True  # type: ignore[attr-defined]  # a mark on the function, read above
        command.callback = functools.update_wrapper(checked, callback)
    for sub in getattr(command, "commands", {}).values():
        _refusing_empty_values(sub)


def reader_gone() -> None:
    """stdout's reader went away (`envmgr list | head -1`): not an error worth a traceback, nor a failed
    check: exit 0. Raised here as SystemExit, which click.main lets through (it turns an OSError with
    EPIPE into exit 1 before main() could see it); stdout goes to devnull so the exit's flush is quiet."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(0)


@click.group(cls=EnvmgrGroup, context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="envmgr")
@click.option(
    "--machine",
    metavar="FILE",
    envvar="ENVMGR_MACHINE",
    help="Run against a recorded machine file instead of this machine (also ENVMGR_MACHINE).",
)
@click.option(
    "--wine-prefix",
    metavar="DIR",
    envvar="ENVMGR_WINEPREFIX",
    hidden=False,
    help="Treat a Wine prefix as the machine: C: is its drive_c, programs run through wine, "
    "the registry is read with its reg.exe (also ENVMGR_WINEPREFIX).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print only data and errors (no notes on stderr).")
@click.option("-v", "--verbose", is_flag=True, help="Also print details (the Pythons passed over, doctor's evidence).")
@click.option(
    "--color",
    type=click.Choice(COLOR_CHOICES),
    default="auto",
    show_default=True,
    help="Colour on a terminal; auto honours NO_COLOR and FORCE_COLOR.",
)
@click.pass_context
def cli(
    ctx: click.Context,
    machine: str | None,
    wine_prefix: str | None,
    quiet: bool = False,
    verbose: bool = False,
    color: str = "auto",
) -> None:
    """envmgr: find every Visual Studio and CUDA toolkit, and get a shell where CUDA builds work.

    \b
    Examples:
      envmgr list                       what is installed, and its problems
      envmgr list --json                the same, for scripts (docs/json.md)
      envmgr --machine rec.toml list    a recorded machine (see `envmgr record`)
      envmgr record -o machine.toml     record this machine for a bug report
    """
    refuse_empty_values(ctx)  # --machine '' and --wine-prefix '' are mistakes, not "no machine"
    if quiet and verbose:
        raise UsageError("-q/--quiet and -v/--verbose do not combine", "choose one")
    configure(-1 if quiet else 1 if verbose else 0, color)
    if not isinstance(ctx.obj, Ctx):  # a test may give one (with its host); the command line makes one
        ctx.obj = Ctx(machine, wine_prefix)


class _Terminated(BaseException):
    """SIGTERM reached envmgr outside a child's run (spawn relays it to a child): raised where envmgr is, so a write
    in progress cleans up (files/atomic.py removes its temporary file) before the exit, 128 + 15 as shells give."""


def _on_sigterm(signum: int, _frame: object) -> None:
    raise _Terminated(signum)


def main(argv: list[str] | None = None) -> None:
    utf8_pipes()
    guard_stdout()  # a full disk, `ulimit -f` or a closed stdout: one line and exit 2, not a traceback (N24)
    if hasattr(_signal, "SIGTERM"):
        _signal.signal(_signal.SIGTERM, _on_sigterm)
    try:
        _main(argv)
    except _Terminated as stop:
        quiet_fd1()  # what is buffered for a reader that stopped reading must not hold the exit
        print("envmgr: stopped by SIGTERM", file=sys.stderr)
        sys.exit(128 + stop.args[0])


def _main(argv: list[str] | None) -> None:
    try:
        try:
            rc = cli.main(args=argv, prog_name="envmgr", standalone_mode=False)
        except SystemExit:  # a command's own sys.exit: its output is flushed here too, where a failure is one line
            sys.stdout.flush()
            raise
        sys.stdout.flush()  # here, where a closed pipe is still caught, not at exit
    except BrokenPipeError:
        reader_gone()
    except EnvmgrError as exc:  # raised while click parsed the group's own options, before invoke
        sys.exit(show_error(exc))
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(rc if isinstance(rc, int) else 0)
