"""The verdict as text (for people) and as JSON (docs/json.md, `verify`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from envmgr.binaries.runtimes import duplicates
from envmgr.verify.analyze import FAIL, OK, SKIPPED, WARN

if TYPE_CHECKING:
    from envmgr.verify.anyrun import AnyVerdict
    from envmgr.verify.run import Verdict

SCHEMA = 1
_STYLE = {OK: ("green",), WARN: ("yellow",), FAIL: ("red", "bold"), SKIPPED: ("dim",)}


def verdict_json(v: Verdict | AnyVerdict) -> dict[str, Any]:
    fail = v.failure
    return {
        "schema": SCHEMA,
        "package": v.package,
        "python": v.python,
        "environment": v.environment,
        "ok": v.ok,
        "gpu_did_the_work": v.ok,
        "failure": fail.failure or None if fail else None,
        "steps": [
            {
                "name": s.name,
                "status": s.status,
                "summary": s.summary,
                "evidence": list(s.evidence),
                "failure": s.failure or None,
                "fix": s.fix or None,
                "fix_command": s.fix_command or None,
            }
            for s in v.steps
        ],
        "offloaded": [f"{a}/{b}" for a, b in v.run.offloaded],
        "cuda_archs": list(v.run.archs),
        "child": {"exit_code": v.run.returncode, "timed_out": v.run.timed_out, "stages": list(v.run.order)},
        "model_bytes": v.model_bytes,
        "seconds": round(v.seconds, 2),
        "proof": v.proof or None,
        "after": [
            {
                "module": r.get("module"),
                "ok": bool(r.get("ok")),
                "version": r.get("version"),
                "file": r.get("file"),
                "libraries": list(r.get("libraries") or []),
                "error": r.get("error"),
            }
            for r in v.run.records("after")
        ],
        "duplicate_runtimes": [
            {"family": d.family, "what": list(d.what), "paths": list(d.paths), "fix": d.fix}
            for d in duplicates(list(v.run.get("runtimes").get("modules") or []))
        ],
        "reused_libraries": [r.as_json() for r in v.reused],
    }


def render_verdict(v: Verdict | AnyVerdict, paint: Callable[..., str]) -> str:
    out = [
        paint(
            f"envmgr verify {v.package} ({v.python}"
            + (f", {v.environment_words}" if v.environment_words else "")
            + ")",
            "bold",
        )
    ]
    for s in v.steps:
        tag = paint(f"{s.status.upper():7}", *_STYLE[s.status])
        fid = f" [{s.failure}]" if s.failure else ""
        out.append(f"{tag} {s.name}{fid}: {s.summary}")
        show = s.evidence if s.status in (FAIL, WARN) else s.evidence[:3]
        out += [f"          - {line}" for line in show]
        if s.status in (FAIL, WARN):
            if s.fix:
                out.append(f"          {paint('fix:', 'yellow')} {s.fix}")
            if s.fix_command:
                out.append(f"          {paint('run:', 'cyan')} {s.fix_command}")
    if v.ok and v.proof_text:
        out.append(paint(f"verified ({v.proof}): {v.proof_text}", "green", "bold") + f" ({v.seconds:.1f} s)")
    elif v.ok:
        out.append(paint("the GPU did the work", "green", "bold") + f" ({v.seconds:.1f} s)")
    else:
        f = v.failure
        why = f"{f.failure}: " if f and f.failure else ""
        default = "the offload was not proven" if not hasattr(v, "proof") else "no proof reached"
        out.append(paint(f"NOT verified: {why}{f.summary if f else default}", "red", "bold"))
    return "\n".join(out) + "\n"
