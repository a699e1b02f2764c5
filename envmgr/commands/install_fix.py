"""`envmgr install llama-cpp-python --fix`: the safe way past each doctor finding the flow can get past.

Most routable findings are avoided by the recipe environment itself (RECIPE_ROUTES in install_flow.py).
F01/F02 (CUDA's MSBuild integration missing or stale in the Visual Studio the build uses) depend on
the generator the build will use:
  - Ninja (the recipe's `generator = "auto"` with ninja on PATH) never reads BuildCustomizations:
    nothing is written;
  - the Visual Studio generator reads them: fix-msbuild's own plan for the chosen instance and toolkit
    is applied (msbuild/repair.py: the transaction with backups, the undo manifest, the fresh check,
    exactly as `envmgr fix-msbuild`), when this process may write there (an elevated prompt on
    Windows, a Wine prefix); otherwise the recipe's no-admin route (CMAKE_GENERATOR_TOOLSET
    cuda=<toolkit>) when it has one, and when it has none the flow stops with the fix-msbuild command
    to run elevated.
Deciding only reads; the copy happens after every other finding has been found not to block, so a
flow that stops anyway changes nothing. Nothing here prints: install_flow.py reports.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from envmgr.catalog import FailureId
from envmgr.doctor.checks import FAIL, WARN, Facts, Finding
from envmgr.errors import EnvmgrError
from envmgr.host.base import WINDOWS, which_in
from envmgr.msbuild.fileops import FileOps
from envmgr.msbuild.plan import DONE, Plan
from envmgr.msbuild.render import outcome_json
from envmgr.msbuild.repair import apply_and_verify, elevated_command, pair_plan, writer
from envmgr.recipes.recipe import Recipe, get_recipe
from envmgr.winenv import env_get

MSBUILD_IDS: tuple[FailureId, ...] = ("F01", "F02")
NINJA, COPY, RECIPE_ROUTE, STOP = "ninja", "copy", "recipe-route", "stop"


@dataclass(frozen=True)
class MsbuildFix:
    """What --fix does about F01/F02 for this build, decided before anything is written."""

    ids: tuple[FailureId, ...]  # the findings it answers
    action: str  # ninja | copy | recipe-route | stop
    why: str  # one line: the route, or why fix-msbuild's plan is not applied
    plan: Plan | None = None  # fix-msbuild's Plan for the chosen pair (copy, stop)
    ops: FileOps | None = None  # the FileOps that write it (copy)
    command: str = ""  # the fix-msbuild command to run elevated (stop)


@dataclass
class FixReport:
    """What --fix did, for the text report and the JSON document's `fixes` (docs/json.md)."""

    items: list[dict[str, Any]] = field(default_factory=list)

    def add(self, fid: FailureId, action: str, text: str, **extra: Any) -> str:
        self.items.append({"id": fid, "action": action, "text": text, **extra})
        return f"fixed {fid}: {text}"


def msbuild_findings(findings: Iterable[Finding]) -> list[Finding]:
    """F01 failing, or F02 failing or warning: the findings fix-msbuild's copy can answer."""
    return [f for f in findings if f.id in MSBUILD_IDS and (f.status == FAIL or (f.id == "F02" and f.status == WARN))]


def recipe_generator_route(recipe: Recipe | None) -> bool:
    """The recipe chooses the generator itself (Ninja, or the VS generator pinned with cuda=<toolkit>)."""
    return recipe is not None and recipe.kind == "cmake" and recipe.generator == "auto"


def ninja_on_path(facts: Facts) -> str | None:
    """ninja as the recipe looks for it (recipes/context.py), on this shell's PATH. The recipe looks again on
    the vcvars environment, which can only add folders: a ninja seen here is the one the build uses."""

    env = facts.env
    path = env_get(env, "PATH", facts.host.platform == WINDOWS, "")
    return which_in(facts.host.platform, "ninja", path, env.get("PATHEXT", ""), facts.host.exists) if path else None


def sort_msbuild(
    facts: Facts, findings: Sequence[Finding], blocking: list[Finding], routed: list[Finding], recipe_name: str
) -> tuple[MsbuildFix | None, list[Finding], list[Finding]]:
    """(the decision or None, blocking, routed): F01/F02 leave RECIPE_ROUTES' list for the decision's,
    and F01 joins the blocking findings when the decision is to stop."""
    if not msbuild_findings(findings):
        return None, blocking, routed
    fix = decide(facts, findings, _recipe(recipe_name))
    if fix is None:
        return None, blocking, routed
    stopped = [f for f in routed if f.id in fix.ids] if fix.action == STOP else []
    return fix, [f for f in findings if f in blocking or f in stopped], [f for f in routed if f.id not in fix.ids]


def _recipe(name: str) -> Recipe | None:
    """The recipe the build will use (None when it cannot be loaded: the build step says why)."""

    try:
        return get_recipe(name)
    except EnvmgrError:
        return None


def decide(facts: Facts, findings: Iterable[Finding], recipe: Recipe | None) -> MsbuildFix | None:
    """None when there is no F01/F02 to answer (or F02 alone, which copying cannot change)."""
    found = msbuild_findings(findings)
    failing = tuple(f.id for f in found if f.status == FAIL)
    if not found:
        return None
    routed = recipe_generator_route(recipe)
    if routed and (ninja := ninja_on_path(facts)):
        return MsbuildFix(
            failing,
            NINJA,
            f"the recipe builds with Ninja ({ninja}), which never reads BuildCustomizations; nothing was copied",
        )
    plan, why = _plan(facts)
    if plan is not None and plan.copies:
        ops, why = writer(facts.host)
        if ops is not None:
            return MsbuildFix(tuple(f.id for f in found), COPY, "", plan, ops)
        command = elevated_command(plan)
    else:
        command = ""
    if not failing:
        return None  # F02 warns, and there is nothing to copy: it does not block
    if routed and plan is not None and plan.pairs and plan.pairs[0].status == DONE:
        pair = plan.pairs[0]  # CMake alone would pick another instance; the recipe pins this one
        return MsbuildFix(
            failing,
            RECIPE_ROUTE,
            f"the recipe pins the Visual Studio generator to {pair.vs_label} "
            f"(CMAKE_GENERATOR_INSTANCE), which has CUDA {pair.cuda}'s files; nothing was copied",
            plan,
        )
    if routed:
        return MsbuildFix(
            failing,
            RECIPE_ROUTE,
            "the recipe pins the Visual Studio generator to the chosen "
            f"instance with CMAKE_GENERATOR_TOOLSET cuda=<toolkit> (no admin); fix-msbuild's plan "
            f"was not applied: {why}",
            plan,
        )
    return MsbuildFix(failing, STOP, why, plan, command=command)


def _plan(facts: Facts) -> tuple[Plan | None, str]:
    """(fix-msbuild's plan for the instance and toolkit the build uses, why it copies nothing)."""

    if facts.vs is None or facts.cuda is None:
        return None, "no Visual Studio instance or CUDA toolkit chosen"
    try:
        plan = pair_plan(facts.host, facts.inv, facts.vs, facts.cuda)
    except EnvmgrError as exc:
        return None, exc.message
    pair = plan.pairs[0] if plan.pairs else None
    if pair is None:
        return plan, f"{facts.vs.label} has no BuildCustomizations folder envmgr knows"
    if plan.copies:
        return plan, ""
    return plan, pair.reason or f"{pair.vs_label} already has CUDA {pair.cuda}'s files ({pair.status})"


def stop_error(fix: MsbuildFix) -> tuple[str, ...]:
    """The blocking error's lines for F01 when the recipe has no route and the files cannot be written."""
    lines = [f"  fix-msbuild's plan was not applied: {fix.why}"]
    if fix.plan is not None:
        lines += [f"    copy {c.name} -> {c.dest.rsplit(chr(92), 1)[0]}" for c in fix.plan.copies]
    if fix.command:
        lines.append(
            f"  run elevated: {fix.command} (it asks Windows for administrator rights), then this command again"
        )
    return tuple(lines)


def apply(fix: MsbuildFix, facts: Facts, report: FixReport) -> list[str]:
    """Carry out the decision; the report's lines. COPY writes (fix-msbuild's transaction and check)."""
    if fix.action in (NINJA, RECIPE_ROUTE):
        return [report.add(i, fix.action, fix.why) for i in fix.ids]
    if fix.action != COPY:
        return []
    assert fix.plan is not None and fix.ops is not None  # decide() gives COPY both

    pair = next(p for p in fix.plan.pairs if p.copies)
    outcome = apply_and_verify(facts.host, facts.inv, fix.plan, fix.ops, (pair.vs_id,), (pair.cuda_path,))
    text = (
        f"copied {len(outcome.changes)} file(s) of CUDA {pair.cuda}'s MSBuild integration into "
        f"{pair.vs_label}'s {pair.folder} (fix-msbuild's plan; manifest {outcome.manifest}; "
        "undo with: envmgr fix-msbuild --undo)"
    )
    extra = {"applied": outcome_json(outcome), "undo": "envmgr fix-msbuild --undo"}
    return [report.add(i, "copied", text, **extra) for i in fix.ids]
