"""`hook status`: which snapshot a Python's hook applies, whether the cache (or the file) still holds that
snapshot, the state of the hook's files, and the variables of this environment that would override it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envmgr.errors import EnvmgrError
from envmgr.files.read import read_regular
from envmgr.hook import apply, plan
from envmgr.snapshot.envdelta import EnvDelta, VarOp
from envmgr.snapshot.overrides import compiler_overrides, override_lines

STATES = {
    "current": "current",
    "stale": "stale: the cache no longer holds it (a toolchain changed, or the cache "
    "was cleared); `envmgr hook install` again",
    "changed": "changed: the selectors now give another environment; `envmgr hook install` again",
    "missing": "missing: the snapshot file is gone",
    "unknown": "unknown",
}


def snapshot_digest(text: str) -> str:
    """The sha256 of a snapshot's operations as its TOML holds them (grouped per variable, in the TOML's order):
    the same for the snapshot just captured and for the cache's copy of it, whatever the order of capture."""
    from envmgr.snapshot import form  # start-up: tomlkit only when a hook is installed or asked about

    return plan.sha256(plan.env_text(form.from_toml(text, "<snapshot>").delta).encode())


def snapshot_state(info: Mapping[str, Any]) -> str:
    """current / stale / changed / missing / unknown, for the snapshot a hook was installed from."""
    try:
        if info.get("file"):
            try:
                text = read_regular(str(info["file"]), 64 * 1024 * 1024).decode("utf-8")
            except FileNotFoundError:
                return "missing"
        elif info.get("key"):
            from envmgr.cache import store

            cached = store.lookup(str(info["key"]))
            if cached is None:
                return "stale"
            text = cached
        else:
            return "unknown"
        digest = snapshot_digest(text)
    except (OSError, UnicodeDecodeError, EnvmgrError):
        return "changed"
    return "current" if digest == info.get("sha256") else "changed"


def hook_delta(target: apply.Target, platform: str) -> EnvDelta:
    """The names the hook's env file sets (for the overrides check); empty when it cannot be read."""
    try:
        text = read_regular(target.site / plan.ENV, 1024 * 1024).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return EnvDelta(platform, ())
    ops = [line.split("\t") for line in text.splitlines()[1:] if "\t" in line and not line.startswith("#")]
    return EnvDelta(platform, tuple(VarOp(f[1], f[0]) for f in ops))


def hook_status(target: apply.Target, env: Mapping[str, str]) -> dict[str, Any]:
    record = apply.read_record(target)
    base = {"schema": 1, "python": target.probe.executable, "kind": target.probe.kind, "site": str(target.site)}
    if record is None:
        return {**base, "installed": False, "ok": False}
    snapshot = dict(record.get("snapshot") or {})
    platform = str(snapshot.get("platform", "windows" if "\\" in str(target.site) else "linux"))
    state = snapshot_state(snapshot)
    files = apply.file_states(target, record)
    overrides = compiler_overrides(env, platform, hook_delta(target, platform))
    ok = state in ("current", "unknown") and all(f["state"] == "ok" for f in files) and not overrides
    return {
        **base,
        "installed": True,
        "ok": ok,
        "installed_at": record.get("installed"),
        "envmgr": record.get("envmgr"),
        "selectors": record.get("selectors"),
        "snapshot": {**snapshot, "state": state},
        "files": files,
        "overrides": [{"name": n, "value": v, "why": w} for n, v, w in overrides],
    }


def render_status(report: Mapping[str, Any]) -> str:
    if not report["installed"]:
        return f"envmgr hook: none in {report['site']} ({report['python']})\n"
    snap = report["snapshot"]
    source = f"file {snap['file']}" if snap.get("file") else f"the cache ({snap.get('origin')})"
    chosen = ", ".join(f"{k}={v}" for k, v in (report.get("selectors") or {}).items() if v) or "defaults"
    out = [
        f"envmgr hook: installed in {report['site']} ({report['kind']}) at {report['installed_at']}",
        f"  snapshot: {snap.get('headline', '?')} from {source}: {STATES.get(snap['state'], snap['state'])}",
        f"  selectors: {chosen}",
    ]
    out += [f"  file {f['path']}: {f['state']}" for f in report["files"] if f["state"] != "ok"]
    out += [
        f"  override: {line}"
        for line in override_lines(tuple((o["name"], o["value"], o["why"]) for o in report["overrides"]))
    ]
    out.append("  ok" if report["ok"] else "  not ok")
    return "\n".join(out) + "\n"
