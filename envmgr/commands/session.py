"""`envmgr shell`, `envmgr run`, `envmgr recipes`, `envmgr init`, `envmgr deactivate`."""
from __future__ import annotations

import os
import sys

import click

from ..cli import Ctx, environment_for, recipe_options, selector_options

INIT_SHELLS = ("powershell", "pwsh", "cmd", "bash", "zsh", "fish")
STOPPED = {129: "SIGHUP", 130: "Ctrl+C", 143: "SIGTERM"}     # 128 + N


@click.command("run", context_settings={"ignore_unknown_options": True})
@selector_options
@recipe_options
@click.option("--log", "log_file", metavar="FILE",
              help="Run in a pseudo-terminal, copy the output to FILE, and diagnose a failure.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.pass_obj
def run_command(obj: Ctx, vs, toolset, arch, cuda, pythons, from_file, refresh, strict, recipe, arch_list,
                allow_unsupported_compiler, recipe_params, log_file, command):
    """Run one command in the environment and return its exit code.

    \b
      envmgr run --cuda 13.0 -- nvcc --version
      envmgr run --recipe llama-cpp-python --log build.log -- pip install llama-cpp-python -v
    """
    from .. import spawn
    from ..activation import activation_delta

    _refuse_records(obj, "run")
    if log_file is not None:
        _check_log_file(log_file)
    delta, marker, _ = environment_for(obj, (vs, toolset, arch, cuda, pythons, from_file, refresh, strict),
                                       recipe, arch_list, allow_unsupported_compiler, recipe_params)
    env = activation_delta(delta, obj.env, marker).apply(obj.env)
    argv = list(command[1:] if command and command[0] == "--" else command)
    if not log_file:
        sys.exit(spawn.run(argv, env))
    code = spawn.run_logged(argv, env, log_file)
    if code in STOPPED:  # stopped by the user or the system: no failure to diagnose
        click.echo(f"envmgr: the command was stopped ({STOPPED[code]}); its output so far is in {log_file}", err=True)
    elif code != 0:
        _diagnose(log_file)
    sys.exit(code)


def _check_log_file(log_file: str) -> None:
    """The log can be written (before anything runs), and stdin is open (the pty copies it)."""
    from ..errors import InputFileError, UsageError

    if not log_file.strip():
        raise UsageError("--log needs a file name", "e.g. --log build.log")
    try:
        with open(log_file, "ab"):
            pass
    except OSError as exc:
        raise InputFileError(f"--log {log_file}: cannot write it: {exc.strerror or exc}",
                             "give a file in a folder that exists and that you can write") from None
    try:
        os.fstat(0)
    except OSError:  # stdin closed (`<&-`, some CI runners): the child reads nothing, as without --log
        fd = os.open(os.devnull, os.O_RDONLY)
        if fd != 0:
            os.dup2(fd, 0)
            os.close(fd)


def _refuse_records(obj: Ctx, what: str) -> None:
    if obj.machine:
        from ..errors import UsageError

        raise UsageError(f"envmgr {what} starts programs on this machine; --machine/ENVMGR_MACHINE only "
                         "describes another one", "use `envmgr --machine FILE list|doctor|fix-msbuild --dry-run`, "
                         "or drop --machine")


def _diagnose(log_file: str) -> None:
    try:
        from ..doctor.logscan import render_matches, scan_path
    except ImportError:  # pragma: no cover - doctor not installed in this build
        return
    from ..errors import InputFileError
    from ..output import Painter

    try:
        matches = scan_path(log_file).matches   # streamed: a long build's log is never held whole
    except InputFileError:                       # empty (the command printed nothing) or unreadable
        matches = ()
    if matches:
        click.echo("\n" + render_matches(matches, Painter(sys.stderr)), err=True)
    else:
        click.echo(f"envmgr: the command failed; no known failure signature in {log_file}", err=True)


@click.command("shell")
@selector_options
@recipe_options
@click.option("--shell", "shell_name", metavar="NAME",
              help="pwsh, powershell, cmd, bash, zsh, fish or sh (default: the shell you are in).")
@click.pass_obj
def shell_command(obj: Ctx, vs, toolset, arch, cuda, pythons, from_file, refresh, strict, recipe, arch_list,
                  allow_unsupported_compiler, recipe_params, shell_name):
    """Start your shell with the environment applied (and a prompt marker).

    \b
      envmgr shell --cuda 12.4 --vs community
      envmgr shell --recipe llama-cpp-python      then: pip install llama-cpp-python
    Inside an active envmgr shell, a new one replaces the environment (PATHs never stack).
    """
    import shutil

    from .. import spawn
    from ..activation import ACTIVE, activation_delta
    from ..output import say
    from ..shellhost import build_session, detect_shell

    _refuse_records(obj, "shell")
    host = obj.host                        # records were refused: this machine, or a Wine prefix
    base = dict(host.env)
    name = detect_shell(shell_name or host.default_shell, base)
    delta, marker, _ = environment_for(obj, (vs, toolset, arch, cuda, pythons, from_file, refresh, strict),
                                       recipe, arch_list, allow_unsupported_compiler, recipe_params)
    if base.get(ACTIVE):
        say(f"envmgr: already inside an envmgr environment ({base[ACTIVE]}); the new one replaces it")
    session = build_session(name, activation_delta(delta, base, marker), base, marker)
    say(f"envmgr: starting {name} ({marker}); `exit` returns here")
    argv, env = host.interactive(session.argv, session.env)
    try:
        code = spawn.run(argv, env)
    finally:
        shutil.rmtree(session.folder, ignore_errors=True)
    sys.exit(code)


@click.command("recipes")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def recipes_command(as_json: bool):
    """List build recipes (built-in, and yours in the config folder's recipes/)."""
    from ..output import emit_json
    from ..output import say
    from ..recipes import load_recipes, recipe_dirs

    problems: list = []
    recipes = load_recipes(problems)
    for _, problem in problems:
        say(f"envmgr: skipped {problem.message} ({problem.remedy})")
    if as_json:
        emit_json({"schema": 1, "recipes": [{"name": r.name, "description": r.description, "kind": r.kind,
                                             "origin": r.origin, "params": dict(r.params)} for r in recipes.values()]})
        return
    for r in sorted(recipes.values(), key=lambda r: r.name):
        click.echo(f"{r.name:28} {r.description}")
        for k, v in r.params:
            click.echo(f"{'':28}   --recipe-param {k}=...  ({v})")
    click.echo(f"\nyour own recipes go in {recipe_dirs()[1]}")


@click.command("deactivate")
@click.option("--format", "fmt", type=click.Choice(("sh", "fish", "ps1", "cmd")), required=True)
@click.pass_obj
def deactivate_command(obj: Ctx, fmt: str):
    """Print the script that restores the environment from before activation."""
    from ..activation import deactivation_delta
    from ..shellkit import render

    delta = deactivation_delta(obj.env, obj.local.platform)
    if delta is None:
        click.echo("envmgr: no envmgr environment is active here", err=True)
        return
    sys.stdout.write(render(delta, fmt))


@click.command("init")
@click.argument("shell", type=click.Choice(INIT_SHELLS))
@click.option("--script", is_flag=True, help="Print the hook itself (what the profile line runs).")
def init_command(shell: str, script: bool):
    """Print the line to add to your shell's profile (activation functions and completion)."""
    from ..shellinit import hook_script, profile_line

    click.echo(hook_script(shell) if script else profile_line(shell))


