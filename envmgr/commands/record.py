"""`envmgr record`: what discovery reads on this machine, written into a machine file."""

from __future__ import annotations

import click
import tomlkit

from envmgr import __version__
from envmgr.cache.resolve import resolve
from envmgr.cli.flags import check_output_file, check_pythons
from envmgr.cli.main import Ctx
from envmgr.discover import discover
from envmgr.discover.gpu import container_mark
from envmgr.errors import EnvmgrError, InputFileError, NoMatchError, UsageError
from envmgr.files.atomic import write_user_file
from envmgr.files.nested import loads_json
from envmgr.files.utf8 import shown
from envmgr.host.machinefile import machine_document
from envmgr.output import Spinner, say
from envmgr.snapshot.selectors import Selectors
from envmgr.wheels import cpucode


@click.command("record")
@click.option(
    "-o",
    "--output",
    "output",
    required=True,
    metavar="FILE",
    help="Machine file to write (TOML). An existing file is kept as FILE.bak; a device or FIFO is written in place.",
)
@click.option(
    "--pip-cuda-python",
    "pythons",
    multiple=True,
    metavar="EXE",
    help="Also record pip-installed CUDA of this Python (repeatable).",
)
@click.option("--description", default="", help="A line saying what this machine is.")
@click.option(
    "--capture",
    is_flag=True,
    help="Also record the vcvars capture of the selected environment, so `export` replays too.",
)
@click.option("--vs", "vs", metavar="WHICH", help="With --capture: the Visual Studio to capture.")
@click.option("--toolset", metavar="14.XX", help="With --capture: the MSVC toolset.")
@click.option("--arch", default="x64", show_default=True, metavar="ARCH", help="With --capture: the architecture.")
@click.option("--cuda", metavar="X.Y|PATH", help="With --capture: the CUDA toolkit.")
@click.pass_obj
def command(
    obj: Ctx,
    output: str,
    pythons: tuple[str, ...],
    description: str,
    capture: bool,
    vs: str | None,
    toolset: str | None,
    arch: str,
    cuda: str | None,
) -> None:
    """Record what discovery reads on this machine into a machine file.

    Attach the file to a bug report: `envmgr --machine FILE list` (and `doctor`) replays it anywhere;
    with --capture, `envmgr --machine FILE export` (same selectors) replays the vcvars capture too.
    Only the environment variables that discovery reads are recorded.
    """

    check_output_file(output, "-o")
    if not capture and (vs or toolset or cuda or arch != "x64"):
        raise UsageError(
            "--vs, --toolset, --arch and --cuda choose what --capture captures", "add --capture, or drop them"
        )
    check_pythons(obj.host, pythons, "--pip-cuda-python")
    rec = obj.recording()
    with Spinner("recording"):
        inv = discover(rec, (None, *pythons))
        container_mark(rec)  # read through the recording: a record made in a container says so (verdicts)
    if capture:
        try:
            resolve(rec, Selectors(vs, toolset, arch, cuda), pythons=pythons, use_cache=False, progress=Spinner)
        except (NoMatchError, UsageError):
            raise  # a selector that matches nothing is a mistake to fix, not a machine to record
        except EnvmgrError as exc:  # a failing capture is exactly what a bug report should hold
            say(f"envmgr: the capture failed ({exc.message}); recorded anyway")
    doc = machine_document(rec, version=__version__, description=description, cpu_flags=_cpu_flags(obj))
    data = _utf8(tomlkit.dumps(doc))
    try:
        saved = write_user_file(output, data, backup=True)
    except OSError as exc:
        raise InputFileError(
            f"{output}: cannot write: {exc.strerror or exc}", "choose a writable path for -o"
        ) from None
    say(
        f"recorded {len(inv.visual_studio)} Visual Studio instance(s), {len(inv.cuda)} CUDA toolkit(s), "
        f"{len(inv.gpus)} GPU(s) into {output}" + (f" (previous file kept as {saved})" if saved else "")
    )


def _cpu_flags(obj: Ctx) -> list[str] | None:
    """This CPU's flags as envmgr's own Python reads them (wheels/cpucode.py's CPU_SCRIPT); a record made
    under Wine runs on this CPU too; a record re-recorded (--machine) keeps its own, or none. None (left out
    of the record: unknown) when nothing answers."""
    if not obj.host.runs_programs:
        flags = obj.host.cpu_flags
        return None if flags is None else list(flags)
    me = obj.local.interpreter()
    if me is None:
        return None
    done = obj.local.run([me.executable, "-c", cpucode.CPU_SCRIPT], timeout=60)
    try:
        data = loads_json(done.stdout.strip().splitlines()[0]) if done.ok and done.stdout.strip() else None
    except ValueError:
        data = None
    return cpucode.record_flags(cpucode.parse_cpu(data, "this machine"))


def _utf8(text: str) -> bytes:
    """The record's bytes; a name on the machine that is not UTF-8 (a PATH entry, a folder) is one line."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        line = text.count("\n", 0, exc.start) + 1
        context = text[text.rfind("\n", 0, exc.start) + 1 : exc.end].strip()[-120:]
        raise UsageError(
            f"cannot record this machine: line {line} of the record holds bytes that are not UTF-8 "
            f"({shown(context)}); a record is UTF-8 text",
            "give that folder a UTF-8 name, or take it out of the environment (PATH) while recording",
        ) from None
