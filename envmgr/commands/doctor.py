"""`envmgr doctor`: every catalog check for this platform, a DLL/.so dependency tree, or a build-log scan."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from envmgr.cli.defaults import gpu_option, project_default
from envmgr.cli.flags import check_pythons
from envmgr.cli.grammar import refuse_inapplicable
from envmgr.cli.main import Ctx
from envmgr.cli.options import say_target
from envmgr.discover.target import TargetPython, choose_python
from envmgr.doctor.run import (
    dll_json,
    dll_report,
    exit_code,
    gather,
    parse_only,
    render,
    render_tree,
    report_json,
    run_checks,
)
from envmgr.errors import UsageError
from envmgr.host.base import Host
from envmgr.output import Painter, Spinner, Talk, emit_json, say
from envmgr.snapshot.selectors import Selectors

if TYPE_CHECKING:
    from envmgr.buildlog.scan import LogScan


@click.command("doctor")
@click.option("--vs", "vs", metavar="WHICH", help="Visual Studio to check for (as for every command).")
@click.option("--toolset", metavar="14.XX", help="MSVC toolset to check for.")
@click.option("--arch", default="x64", show_default=True, metavar="ARCH", help="Target architecture.")
@click.option("--cuda", metavar="X.Y|PATH", help="CUDA toolkit to check for (default: the newest).")
@click.option("--only", metavar="IDS", help="Only these checks, e.g. --only F04,F15 (catalog ids).")
@click.option(
    "--dll",
    "dll",
    metavar="PATH|llama_cpp",
    help="Show a DLL's (or .so's) dependency tree as the loader will resolve it; llama_cpp: the installed one.",
)
@click.option(
    "--loader",
    type=click.Choice(["llama_cpp", "ctypes", "winmode0"]),
    default=None,
    help="With --dll on a Windows DLL: whose search order (default llama_cpp; ctypes: ctypes.CDLL(path); "
    "winmode0: ctypes.CDLL(path, winmode=0)). See docs/doctor.md.",
)
@click.option(
    "--add-dll-dir",
    "dll_dirs",
    multiple=True,
    metavar="DIR",
    help="With --dll: a folder the program gives os.add_dll_directory (repeatable).",
)
@click.option("--log", "log", metavar="FILE", help="Scan a build log (pip install -v output) for known failures.")
@click.option(
    "--machine",
    "record",
    metavar="RECORD",
    help="A recorded machine (envmgr record), as `envmgr --machine RECORD doctor`; with --log, the "
    "log's candidates are judged against it (confirmed or ruled out).",
)
@click.option(
    "--recipe",
    default="llama-cpp-python",
    show_default=True,
    metavar="NAME",
    help="The build to check for: which CUDA libraries it links (F24).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (shape in docs/doctor.md).")
@click.option("-v", "--verbose", is_flag=True, help="Show the evidence of passing checks too.")
@click.option(
    "--python",
    "python",
    metavar="EXE",
    help="The Python whose installed packages the checks and "
    "--dll llama_cpp inspect (default: as install's: the active venv, a .venv here or above, ...).",
)
@gpu_option
@click.pass_obj
def command(
    obj: Ctx,
    vs: str | None,
    toolset: str | None,
    arch: str,
    cuda: str | None,
    only: str | None,
    dll: str | None,
    loader: str | None,
    dll_dirs: tuple[str, ...],
    log: str | None,
    recipe: str,
    as_json: bool,
    verbose: bool,
    python: str | None = None,
    record: str | None = None,
) -> None:
    """Diagnose why a CUDA build of llama-cpp-python fails (or would fail) here.

    \b
    Exit codes: 0 nothing failed (warnings allowed), 1 a check failed (or the DLL would
    not load, or the log shows a known failure), 2 bad usage or a log that cannot be
    scanned (missing, a folder, not a regular file, empty, binary; any size is read).
    \b
      envmgr doctor                      every check for this platform
      envmgr doctor --only F01,F04       just these
      envmgr doctor --cuda 12.4 --json   for a CUDA version, as JSON
      envmgr doctor --dll llama_cpp      why import llama_cpp cannot load its DLLs
      envmgr doctor --log build.log      what went wrong in a build or run log (any package)
      envmgr doctor --log build.log --machine rec.toml   ... judged against a recorded machine
    """

    ctx = click.get_current_context()
    _refuse_combinations(ctx, dll, log, only, bool(loader or dll_dirs))
    paint = Painter(sys.stdout)
    verbose = verbose or Talk.verbosity > 0  # envmgr -v doctor: the same as doctor -v
    # the project's defaults (envmgr.toml, [tool.envmgr], ENVMGR_CUDA...), as every command takes them
    vs, toolset, cuda = (
        value or project_default(ctx, key) for key, value in (("vs", vs), ("toolset", toolset), ("cuda", cuda))
    )
    obj = _with_record(obj, record)
    if log:
        ctx.exit(_scan_log(log, as_json, paint, obj.host if obj.machine else None, obj.machine or ""))
    target = None if log else _target(obj, python)
    exe = target.path if target is not None and target.why != "envmgr" else None
    if dll:
        ctx.exit(_dll(obj, dll, exe, loader, dll_dirs, as_json, paint))
    ctx.exit(_checks(obj, Selectors(vs, toolset, arch, cuda), exe, recipe, only, (as_json, verbose), paint, target))


def _checks(
    obj: Ctx,
    selectors: Selectors,
    exe: str | None,
    recipe: str,
    only: str | None,
    how: tuple[bool, bool],
    paint: Painter,
    target: TargetPython | None,
) -> int:
    """The machine checks (all for this platform, or --only's), printed as text or JSON (how: as_json, verbose);
    the exit code (`exit_code`)."""
    as_json, verbose = how
    ids = parse_only(only)
    with Spinner("checking"):
        facts = gather(obj.host, selectors, exe)
        facts.extra["recipe"] = recipe
        findings = run_checks(facts, ids)
    if as_json:
        emit_json(
            {
                **report_json(facts, findings, obj.machine),
                "target_python": target.as_json() if target is not None else None,
            }
        )
    else:
        click.echo(render(facts, findings, paint, verbose), nl=False)
    return exit_code(findings)


def _refuse_combinations(
    ctx: click.Context, dll: str | None, log: str | None, only: str | None, loader_given: bool
) -> None:
    """One of --dll, --log and --only; --loader and --add-dll-dir only with --dll; a log or a DLL is read as it is,
    so the machine's selectors and checks are refused beside them."""
    if sum(bool(x) for x in (dll, log, only)) > 1:
        raise UsageError("--dll, --log and --only do not combine", "use one of them per run")
    if loader_given and not dll:
        raise UsageError("--loader and --add-dll-dir go with --dll", "envmgr doctor --dll PATH --loader ctypes")
    if log or dll:
        refuse_inapplicable(
            ctx,
            ("vs", "toolset", "arch", "cuda", "recipe", "verbose", *(("python",) if log else ())),
            f"with {'--log' if log else '--dll'}",
            "drop {flag}",
        )


def _dll(
    obj: Ctx, dll: str, exe: str | None, loader: str | None, dll_dirs: tuple[str, ...], as_json: bool, paint: Painter
) -> int:
    """`doctor --dll`: the DLL's tree as the loader resolves it, from the target Python; 0 when it loads."""
    interp = obj.host.interpreter(exe) if exe else obj.host.interpreter()
    report = dll_report(obj.host, dll, interp, loader=loader, dll_dirs=tuple(dll_dirs))
    if as_json:
        emit_json(dll_json(report))
    else:
        click.echo(render_tree(report, paint), nl=False)
    return 0 if report.loads else 1


def _with_record(obj: Ctx, record: str | None) -> Ctx:
    """`doctor --machine RECORD` means what `envmgr --machine RECORD doctor` does: the same context, its host the
    record (read now: a bad path is one line, exit 2). Both given must name the same file."""
    if record is None:
        return obj
    if obj.machine and obj.machine != record:
        raise UsageError(
            f"two machine records: --machine {obj.machine} before doctor and --machine {record} after it",
            "give one --machine",
        )
    if obj.wine_prefix:
        raise UsageError("--machine and --wine-prefix describe two machines", "give one of them")
    ctx = Ctx(record)
    ctx.host  # noqa: B018 - read now, so a bad record is refused before the log is scanned
    return ctx


def _scan_log(log: str, as_json: bool, paint: Painter, host: Host | None = None, record: str = "") -> int:
    """doctor --log: the report, and 1 when the log shows a known failure (that a --machine record does not rule
    out: doctor/verdict.py)."""
    # start-up: the log engine's ~120 compiled patterns load only when a log is scanned (issue 33)
    from envmgr.buildlog.scan import render_scan, scan_json, scan_path

    scan = scan_path(log)  # streamed: any size; bad input is one line and exit 2
    if host is None or not scan.matches:
        if as_json:
            emit_json(scan_json(scan, log))
        else:
            click.echo(render_scan(scan, paint), nl=False)
        return 1 if scan.matches else 0
    return _judged(scan, log, host, record, as_json, paint)


def _judged(scan: LogScan, log: str, host: Host, record: str, as_json: bool, paint: Painter) -> int:
    from envmgr.buildlog.scan import scan_json
    from envmgr.doctor.machine import read_machine
    from envmgr.doctor.verdict import judge, kept, report_text, verdicts_json

    machine = read_machine(host, record)
    if machine is None:
        say(f"envmgr: {record}: the record's facts could not be read; the log is judged alone")
        return _scan_log(log, as_json, paint)
    verdicts = judge(scan.matches, machine)
    if as_json:
        emit_json(verdicts_json(scan_json(scan, log), verdicts, machine))
    else:
        click.echo(report_text(scan, verdicts, paint, record), nl=False)
    return 1 if kept(scan.matches, verdicts) else 0


def _target(obj: Ctx, python: str | None) -> TargetPython | None:
    """The Python whose packages doctor inspects: on this machine the user's (discover/target.py); a record
    or a Wine prefix answers with its own."""
    if not obj.here:
        if python is not None:
            raise UsageError(
                "doctor --python inspects a Python on this machine; --machine/--wine-prefix describes another",
                "drop --python (the record's own Python is inspected)",
            )
        return None
    if python is not None:
        check_pythons(obj.local, [python])
    target = choose_python(obj.local, os.getcwd(), sys.executable, python)
    say_target(target)
    return target
