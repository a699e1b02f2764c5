"""`envmgr run`: one command in the environment, optionally logged and diagnosed."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from envmgr import spawn
from envmgr.cli.main import Ctx
from envmgr.cli.options import RecipeArgs, Selection, environment_for, recipe_options, refuse_records, selector_options
from envmgr.discover.target import choose_python
from envmgr.errors import InputFileError, UsageError
from envmgr.files.atomic import hold_for_writing
from envmgr.output import Painter, Spinner
from envmgr.snapshot.activation import activation_delta

if TYPE_CHECKING:
    from envmgr.doctor.verdict import MachineFacts

THIS = "this machine"  # doctor/verdict.py's name for the machine envmgr runs on

STOPPED = {129: "SIGHUP", 130: "Ctrl+C", 143: "SIGTERM"}  # 128 + N
_held_log: int | None = None  # --log FIFO: our writer end, so its reader never sees an early end of file


class RunCommand(click.Command):
    """`run`'s options, then the command: unknown options are let through for the command's own
    (`envmgr run nvcc --version`), but an unknown option before the command starts is envmgr's typo
    (`run --cuad 13.0 -- nvcc` ran `--cuad`, exit 127: audit M6): click's "No such option", exit 2."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        options = [p for p in self.get_params(ctx) if isinstance(p, click.Option)]
        known = {o for p in options for o in (*p.opts, *p.secondary_opts)}
        takes_value = {o for p in options if not p.is_flag and not p.count for o in p.opts}
        i = 0
        while i < len(args) and args[i].startswith("-") and args[i] not in ("-", "--"):
            name = args[i].split("=", 1)[0]
            if name not in known:
                raise click.NoSuchOption(name, possibilities=sorted(known), ctx=ctx)
            i += 2 if name in takes_value and "=" not in args[i] else 1
        return super().parse_args(ctx, args)


@click.command("run", cls=RunCommand, context_settings={"ignore_unknown_options": True})
@selector_options
@recipe_options
@click.option(
    "--log",
    "log_file",
    metavar="FILE",
    help="Run in a pseudo-terminal, copy the output to FILE, and diagnose a failure.",
)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.pass_obj
def command(obj: Ctx, selection: Selection, recipe: RecipeArgs, log_file: str | None, command: tuple[str, ...]) -> None:
    """Run one command in the environment and return its exit code.

    \b
      envmgr run --cuda 13.0 -- nvcc --version
      envmgr run --recipe llama-cpp-python --log build.log -- pip install llama-cpp-python -v
    """

    refuse_records(obj, "run")
    if log_file is not None:
        _check_log_file(log_file)
    delta, marker, _ = environment_for(obj, selection, recipe)
    env = activation_delta(delta, obj.env, marker).apply(obj.env)
    argv = list(command[1:] if command and command[0] == "--" else command)
    if not log_file:
        sys.exit(spawn.run(argv, env))
    code = spawn.run_logged(argv, env, log_file, functools.partial(_log_stopped, log_file))
    if code in STOPPED:  # stopped by the user or the system: no failure to diagnose
        click.echo(f"envmgr: the command was stopped ({STOPPED[code]}); its output so far is in {log_file}", err=True)
    elif code != 0:
        diagnose(log_file, functools.partial(this_machine, obj, selection))
    sys.exit(code)


def _check_log_file(log_file: str) -> None:
    """The log can be written (before anything runs), and stdin is open (the pty copies it)."""

    if not log_file.strip():
        raise UsageError("--log needs a file name", "e.g. --log build.log")
    global _held_log
    try:  # a FIFO nobody reads is refused, not waited on; one with a reader is held open until we exit
        _held_log = hold_for_writing(log_file)
    except OSError as exc:
        raise InputFileError(
            f"--log {log_file}: cannot write it: {exc.strerror or exc}",
            "give a file in a folder that exists and that you can write",
        ) from None
    try:
        os.fstat(0)
    except OSError:  # stdin closed (`<&-`, some CI runners): the child reads nothing, as without --log
        fd = os.open(os.devnull, os.O_RDONLY)
        if fd != 0:
            os.dup2(fd, 0)
            os.close(fd)


def _log_stopped(log_file: str, written: int, exc: OSError) -> None:
    """One warning where the log could not be written on (a full disk, `ulimit -f`): the command runs on (N26)."""
    size = f"{written} bytes" if written < 1024 else f"{written // 1024} KB"
    click.echo(
        f"envmgr: warning: the log {log_file} stopped at {size}: {exc.strerror or exc}; the command runs on "
        "and its exit code is kept",
        err=True,
    )


def this_machine(obj: Ctx, selection: Selection, target: str | None = None) -> MachineFacts | None:
    """The machine's facts for the verdicts (doctor/verdict.py): doctor's facts and checks of this run, for the
    selection the command ran with and the Python whose packages it ran (the target, as doctor chooses it)."""
    from envmgr.doctor.machine import read_machine  # start-up: read only after a failure

    if target is None and obj.here:
        target = choose_python(obj.local, os.getcwd(), sys.executable).path
    with Spinner("checking this machine"):
        return read_machine(
            obj.host,
            THIS if obj.here else (obj.machine or obj.host.name),
            selection.selectors,
            target if obj.here else None,
        )


def diagnose(log_file: str, machine: Callable[[], MachineFacts | None] | None = None) -> None:
    """The catalog's cause of the failed command, from its log; with none, a failure outside the catalog that the
    log stops on (a full disk, the network, pip's requires-python...) with what to do. The other reasons doctor gives
    for naming nothing (no outcome shown, no program output, a success) speak of a paste, not of a whole run's log.
    `machine`: this machine's facts, read only when the log names a cause; each candidate is then confirmed or
    ruled out by them (doctor/verdict.py)."""
    try:
        # start-up: the log engine's ~120 compiled patterns load only when a log is scanned (issue 33)
        from envmgr.buildlog.scan import render_matches, scan_path, unnamed_text

        scan = scan_path(log_file)  # streamed: a long build's log is never held whole
    except InputFileError:  # empty (the command printed nothing) or unreadable
        scan = None
    facts = machine() if machine is not None and scan is not None and scan.matches else None
    if scan is not None and scan.matches and facts is not None:
        from envmgr.doctor.verdict import judge, report_text

        click.echo("\n" + report_text(scan, judge(scan.matches, facts), Painter(sys.stderr), facts.source), err=True)
        return
    if scan is not None and scan.matches:
        click.echo("\n" + render_matches(scan.matches, Painter(sys.stderr)), err=True)
        return
    click.echo(f"envmgr: the command failed; no known failure signature in {log_file}", err=True)
    if scan is not None and scan.unnamed is not None and scan.unnamed.reason == "outside":
        click.echo("\n".join(unnamed_text(scan.unnamed, Painter(sys.stderr))), err=True)
