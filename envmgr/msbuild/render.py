"""fix-msbuild's output: the plan as a table, as JSON (docs/fix-msbuild.md), and the no-admin routes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from envmgr.knowledge import generator
from envmgr.msbuild.plan import DONE, MISSING, ORPHAN, STALE, UNKNOWN, WORK, PairPlan, Plan
from envmgr.snapshot.envdelta import SET, EnvDelta, VarOp

if TYPE_CHECKING:
    from envmgr.msbuild.apply import Outcome

JSON_SCHEMA = 1


@dataclass(frozen=True)
class Route:
    vs_id: str
    vs_label: str
    cuda: str
    shell: str  # the Ninja route: a shell with vcvars + CUDA, no MSBuild
    env: tuple[tuple[str, str], ...]  # the VS-generator route: CMake picks the toolkit's own files


def routes(plan: Plan, statuses: tuple[str, ...] = (WORK,)) -> tuple[Route, ...]:
    out = []
    for p in plan.pairs:
        if p.status not in statuses:
            continue
        env: tuple[tuple[str, str], ...] = ()
        if gen := generator(p.vs_major):
            env = (
                ("CMAKE_GENERATOR", gen),
                ("CMAKE_GENERATOR_INSTANCE", p.vs_path),
                ("CMAKE_GENERATOR_PLATFORM", "x64"),
                ("CMAKE_GENERATOR_TOOLSET", f"cuda={p.cuda_path}"),
            )
        out.append(Route(p.vs_id, p.vs_label, p.cuda, f"envmgr shell --vs {p.vs_id} --cuda {p.cuda}", env))
    return tuple(out)


def route_delta(route: Route) -> EnvDelta:
    return EnvDelta("windows", tuple(VarOp(name, SET, value) for name, value in route.env))


def render_routes(found: tuple[Route, ...]) -> str:
    if not found:
        return ""
    lines = ["Routes that need no administrator rights:"]
    for r in found:
        lines += [
            f"  {r.vs_label} with CUDA {r.cuda}:",
            "    1. Ninja, which never reads BuildCustomizations:",
            f"         {r.shell}",
        ]
        if r.env:
            lines.append(
                "    2. the Visual Studio generator using the toolkit's own integration files "
                "(CMake 3.21+; set all four):"
            )
            lines += [f"         {name}={value}" for name, value in r.env]
            lines.append(
                f"       as a script: envmgr fix-msbuild --vs {r.vs_id} --cuda {r.cuda} "
                "--export-route ps1|cmd|sh|dotenv|github"
            )
    return "\n".join(lines) + "\n"


def _pair_line(p: PairPlan) -> str:
    if p.status == DONE:
        extra = f"; {p.reason}" if p.reason else ""
        return f"  CUDA {p.cuda:<6} ok: {len(p.files)} file(s) identical to the toolkit's{extra}"
    if p.status == WORK:
        n = len(p.copies)
        return f"  CUDA {p.cuda:<6} copy {n} file(s) from {p.extensions}"
    return f"  CUDA {p.cuda:<6} {p.status}, not copied: {p.reason}"


def render_plan(plan: Plan, paint: Callable[..., str]) -> str:
    out = []
    copies = plan.copies
    head = f"{len(copies)} file(s) to copy" if copies else "nothing to fix"
    out.append(paint(f"fix-msbuild plan: {head}", "bold"))
    for folder in dict.fromkeys(p.folder for p in plan.pairs):
        pairs = [p for p in plan.pairs if p.folder == folder]
        out.append("")
        out.append(paint(f"{pairs[0].vs_label} [{pairs[0].vs_id}]", "cyan"))
        out.append(f"  {folder}")
        for p in pairs:
            colour = {WORK: "yellow", DONE: "green"}.get(p.status, "red")
            out.append(paint(_pair_line(p), colour))
            shown = p.files if p.status == WORK else [f for f in p.files if f.status in (STALE, UNKNOWN)]
            for f in shown:
                note = f"  ({f.note})" if f.note else ""
                out.append(f"    {f.status:<8} {f.name}{note}")
        for o in (o for o in plan.orphans if o.dest.lower().startswith(folder.lower() + "\\")):
            out.append(f"    {ORPHAN:<8} {o.name}  ({o.note}; left in place)")
    for note in plan.notes:
        out.append(paint(f"! {note}", "yellow"))
    return "\n".join(out) + "\n"


def summary(plan: Plan) -> dict[str, int]:
    files = [f for p in plan.pairs if p.status in (WORK, DONE) for f in p.files]  # skipped pairs: not counted
    return {
        "copy": len(plan.copies),
        "missing": sum(f.status == MISSING for f in files),
        "stale": sum(f.status == STALE for f in files),
        "unknown": sum(f.status == UNKNOWN for f in files),
        "orphan": len(plan.orphans),
        "skipped_pairs": sum(p.status not in (WORK, DONE) for p in plan.pairs),
    }


def plan_json(plan: Plan) -> dict[str, Any]:
    pairs = [
        {
            "vs": {"instance_id": p.vs_id, "label": p.vs_label, "path": p.vs_path, "major": p.vs_major},
            "folder": p.folder,
            "cuda": {"version": p.cuda, "path": p.cuda_path, "extensions": p.extensions},
            "status": p.status,
            "reason": p.reason,
            "files": [asdict(f) for f in p.files],
        }
        for p in plan.pairs
    ]
    return {
        "schema": JSON_SCHEMA,
        "platform": plan.platform,
        "summary": summary(plan),
        "pairs": pairs,
        "orphans": [asdict(o) for o in plan.orphans],
        "notes": list(plan.notes),
        "routes": [{"vs": r.vs_id, "cuda": r.cuda, "shell": r.shell, "env": dict(r.env)} for r in routes(plan)],
    }


def outcome_json(outcome: Outcome | None) -> dict[str, Any] | None:
    if outcome is None:
        return None
    return {"run_id": outcome.run_id, "manifest": outcome.manifest, "changes": [asdict(c) for c in outcome.changes]}
