"""fix-msbuild's steps without its prompts: may this process write, plan one pair, apply and verify.

`envmgr fix-msbuild` (commands/fix_msbuild_flow.py) asks, elevates and prints around these; `envmgr install --fix`
(commands/install_fix.py) calls them for the one Visual Studio + CUDA pair it builds with. Nothing
here prints or asks: the CLI edge does.
"""

from __future__ import annotations

from envmgr.discover.model import CudaToolkit, Inventory, VsInstance
from envmgr.errors import ApplyFailed, CannotWrite
from envmgr.host.base import Host
from envmgr.msbuild.apply import Outcome, apply_copies
from envmgr.msbuild.fileops import FileOps, ops_for_host
from envmgr.msbuild.plan import Plan, gather, make_plan
from envmgr.msbuild.store import Store


def writer(host: Host) -> tuple[FileOps | None, str]:
    """(the FileOps that may write this host's BuildCustomizations now, "") or (None, why not)."""
    try:
        ops = ops_for_host(host)
    except CannotWrite as exc:
        return None, str(exc)
    if host.needs_elevation():
        return None, "this process is not elevated, and writing under Program Files needs administrator rights"
    return ops, ""


def pair_plan(host: Host, inv: Inventory, vs: VsInstance, kit: CudaToolkit) -> Plan:
    """fix-msbuild's plan for one Visual Studio instance and one toolkit (`--vs ID --cuda PATH`)."""
    return make_plan(gather(host, inv), (vs.instance_id or vs.path,), (kit.path,))


def verify(
    host: Host, inv: Inventory, before: Plan, vs_queries: tuple[str, ...] = (), cuda_queries: tuple[str, ...] = ()
) -> None:
    """A fresh plan after the copy: none of the files just written may still be missing or stale."""
    after = make_plan(gather(host, inv), vs_queries, cuda_queries)
    left = {c.dest.lower() for c in after.copies} & {c.dest.lower() for c in before.copies}
    if left:
        raise ApplyFailed(
            "the files were written but do not compare equal afterwards", "run it again", details=tuple(sorted(left))
        )


def apply_and_verify(
    host: Host,
    inv: Inventory,
    plan: Plan,
    ops: FileOps,
    vs_queries: tuple[str, ...] = (),
    cuda_queries: tuple[str, ...] = (),
) -> Outcome:
    """The plan's copies as one transaction (backups, manifest, rollback: apply.py), then checked afresh."""
    outcome = apply_copies(ops, Store(), plan.copies)
    verify(host, inv, plan, vs_queries, cuda_queries)
    return outcome


def elevated_command(plan: Plan) -> str:
    """The fix-msbuild command that copies this plan's files (run where it may ask for administrator rights)."""
    pairs = [p for p in plan.pairs if p.copies]
    vs = " ".join(f"--vs {v}" for v in dict.fromkeys(p.vs_id for p in pairs))
    cuda = " ".join(f"--cuda {c}" for c in dict.fromkeys(p.cuda for p in pairs))
    return " ".join(x for x in ("envmgr fix-msbuild", vs, cuda) if x)
