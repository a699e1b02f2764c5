"""What `envmgr fix-msbuild` does, step by step: discover -> plan -> show -> confirm -> (elevate) ->
apply -> verify; or undo; or, elevated, apply a plan file after checking it against a fresh plan.

The command's interactive edge (spinner, prompts, printing); envmgr/msbuild/ holds the pure plan and
the transactional apply/verify/undo it drives.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import click

from envmgr.discover import discover
from envmgr.discover.model import Inventory
from envmgr.errors import ApplyFailed, CannotWrite, CheckFailed, EnvmgrError, InputFileError, PlanRejected, UsageError
from envmgr.files.atomic import atomic_write, write_user_file
from envmgr.files.jsondoc import dumps, read_json_file
from envmgr.host.base import WINDOWS, Host
from envmgr.msbuild.apply import Outcome, apply_copies, undo_last
from envmgr.msbuild.elevate import ERROR_CANCELLED, run_elevated
from envmgr.msbuild.fileops import LocalFileOps, ops_for_host
from envmgr.msbuild.plan import DONE, Facts, Plan, gather, make_plan
from envmgr.msbuild.planfile import check_destination, load_plan_file, plan_document, validate
from envmgr.msbuild.render import outcome_json, plan_json, render_plan, render_routes, route_delta, routes
from envmgr.msbuild.repair import apply_and_verify, verify
from envmgr.msbuild.store import Change, Store, new_id
from envmgr.output import Painter, Spinner, emit_json
from envmgr.shellkit import render, stream_encoding
from envmgr.snapshot.selectors import real_cuda_query


@dataclass(frozen=True)
class Options:
    vs: tuple[str, ...] = ()
    cuda: tuple[str, ...] = ()
    mode: str = "apply"  # apply | dry-run | check
    undo: bool = False
    yes: bool = False
    as_json: bool = False
    export_route: str | None = None
    apply_plan: str | None = None


def say(text: str) -> None:
    click.echo(text, err=True)


def _facts(host: Host) -> tuple[Inventory, Facts]:
    if host.platform != WINDOWS:
        raise UsageError(
            f"fix-msbuild is a Windows repair (this machine is {host.platform})",
            "to plan from a Windows machine's record: envmgr --machine FILE fix-msbuild --dry-run "
            "(make FILE there with `envmgr record -o FILE`)",
        )
    with Spinner("looking for Visual Studio and CUDA"):
        inv = discover(host)
    return inv, gather(host, inv)


def _ops(host: Host) -> LocalFileOps:
    try:
        return ops_for_host(host)
    except CannotWrite as exc:
        raise UsageError(
            str(exc), "use --dry-run or --check with --machine; run fix-msbuild on the machine itself to repair it"
        ) from None


def confirm(question: str, opts: Options) -> bool:
    if opts.yes:
        return True
    try:
        return click.confirm(question, default=False, err=True)
    except click.Abort:  # no terminal to ask on
        return False


def emit(plan: Plan, opts: Options, outcome: Outcome | None = None) -> None:
    if opts.as_json:
        emit_json({**plan_json(plan), "applied": outcome_json(outcome)})
    elif outcome is None:
        click.echo(render_plan(plan, Painter(sys.stdout)), nl=False)


def run(host: Host, opts: Options) -> int:
    if opts.apply_plan:
        return run_plan_file(host, opts.apply_plan)
    if opts.undo:
        return run_undo(host, opts)

    opts = replace(opts, cuda=tuple(real_cuda_query(host, q) for q in opts.cuda))
    inv, facts = _facts(host)
    plan = make_plan(facts, opts.vs, opts.cuda)
    if opts.export_route:
        return export_route(plan, opts.export_route)
    if opts.mode != "apply" or not plan.copies:
        emit(plan, opts)
    if opts.mode == "check" and plan.copies:
        raise CheckFailed(
            f"{len(plan.copies)} CUDA integration file(s) missing or stale",
            "run `envmgr fix-msbuild` (without --check) to copy them",
        )
    if opts.mode != "apply":
        return 0
    if not plan.copies:
        say("envmgr: nothing to fix")
        return 0
    if not opts.as_json:
        emit(plan, Options())
    ops = _ops(host)
    folders = len({c.dest.rsplit("\\", 1)[0].lower() for c in plan.copies})
    if not confirm(f"Copy {len(plan.copies)} file(s) into {folders} BuildCustomizations folder(s)?", opts):
        say("envmgr: nothing was changed.")
        say(render_routes(routes(plan)))
        return 1
    if host.needs_elevation():
        outcome = apply_elevated(plan)
        verify(host, inv, plan, opts.vs, opts.cuda)
    else:
        outcome = apply_and_verify(host, inv, plan, ops, opts.vs, opts.cuda)
    emit(plan, opts, outcome)
    if outcome is not None:
        say(
            f"envmgr: copied {len(outcome.changes)} file(s); manifest {outcome.manifest}\n"
            "  undo with: envmgr fix-msbuild --undo"
        )
    return 0


def export_route(plan: Plan, fmt: str) -> int:
    found = routes(plan) or routes(plan, statuses=(DONE,))
    found = tuple(r for r in found if r.env)
    if not found:
        raise UsageError("no Visual Studio + CUDA pair to export a route for", "pick one with --vs and --cuda")
    if len(found) > 1:
        say(
            f"envmgr: {len(found)} pairs; exporting {found[0].vs_label} with CUDA {found[0].cuda} "
            "(pin one with --vs and --cuda)"
        )
    sys.stdout.flush()
    text = render(route_delta(found[0]), fmt)
    out = getattr(sys.stdout, "buffer", None)
    if out is None:
        sys.stdout.write(text)
    else:
        out.write(text.encode(stream_encoding(fmt)))
        out.flush()
    return 0


# ---- the elevated step -------------------------------------------------------------------------
def apply_elevated(plan: Plan) -> Outcome | None:  # pragma: no cover - Windows with UAC only

    store = Store()
    path = store.root / "plans" / f"{new_id()}.json"
    atomic_write(path, dumps(plan_document(plan), indent=2).encode("utf-8"), backup=False)
    say("envmgr: asking Windows for administrator rights to copy the files (UAC prompt)...")
    rc = run_elevated(["fix-msbuild", "--apply-plan", str(path)])
    result = _read_result(path)
    if rc == ERROR_CANCELLED or (rc != 0 and result is None):
        say(render_routes(routes(plan)))
        raise ApplyFailed(
            "administrator rights were not granted; nothing was changed",
            "use one of the routes above, or run fix-msbuild from an elevated prompt",
        )
    assert result is not None  # refused above when missing after a failure; the elevated step writes it
    if rc != 0:
        raise ApplyFailed(
            result.get("error", f"the elevated step failed ({rc})"),
            result.get("remedy", ""),
            details=tuple(result.get("details", ())),
        )
    changes = tuple(Change(**c) for c in result["outcome"]["changes"])
    return Outcome(result["outcome"]["run_id"], changes, result["outcome"]["manifest"])


def _read_result(plan_path: Path) -> dict[str, Any] | None:
    try:
        result = read_json_file(Path(str(plan_path) + ".result.json"), "result", "")
    except InputFileError:
        return None
    return result if isinstance(result, dict) else None


def run_plan_file(host: Host, path: str) -> int:
    """The elevated process: trust nothing in the file; check it against a plan made here and now."""

    result: dict[str, Any] = {"ok": False}
    doc: dict[str, Any] | None = None  # no result file beside a plan never read (C10: --apply-plan /dev/zero)
    try:
        ops = _ops(host)  # a recorded machine is refused before the plan is opened
        doc = load_plan_file(path)
        inv, facts = _facts(host)
        copies = validate(doc, make_plan(facts), ops)
        outcome = apply_copies(ops, Store(), copies)
        result = {"ok": True, "outcome": outcome_json(outcome)}
        click.echo(f"envmgr: copied {len(outcome.changes)} file(s); manifest {outcome.manifest}")
        return 0
    except EnvmgrError as exc:
        result = {
            "ok": False,
            "error": exc.message,
            "remedy": exc.remedy,
            "details": list(exc.details),
            "exit_code": exc.exit_code,
        }
        raise
    finally:
        try:
            if doc is not None:
                write_user_file(path + ".result.json", dumps(result, indent=2).encode("utf-8"), regular_only=True)
        except OSError:
            pass


def run_undo(host: Host, opts: Options) -> int:
    inv, facts = _facts(host)
    ops = _ops(host)
    allowed = tuple(v.build_customizations.dir for v in facts.instances if v.build_customizations)
    store = Store()
    last = store.last_applied()
    if last is None:
        say("envmgr: nothing to undo")
        return 0
    say(f"envmgr: run {last['id']} changed:")
    for c in last["changes"]:
        say(f"  {c['action']:<8} {c['path']}")
    if not confirm("Restore these files exactly as they were before that run?", opts):
        say("envmgr: nothing was changed.")
        return 1
    if host.needs_elevation():  # pragma: no cover - Windows with UAC only
        return run_elevated(["fix-msbuild", "--undo", "--yes"])

    def check(path: str) -> None:
        if problem := check_destination(path, allowed, ops):
            raise PlanRejected(
                f"refusing to undo: the manifest names {path}: {problem}",
                "the manifest was edited; restore the files by hand",
            )

    outcome = undo_last(ops, store, check)
    assert outcome is not None  # there is a run to undo: last_applied() was read above
    if opts.as_json:
        emit_json({"schema": 1, "undone": last["id"], "applied": outcome_json(outcome)})
    say(f"envmgr: restored {len(outcome.changes)} file(s) as they were before run {last['id']}")
    return 0
