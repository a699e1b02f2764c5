"""`envmgr cache list|clear`: the snapshot cache (under the user cache folder)."""

from __future__ import annotations

import click

from envmgr.cache import store as cache
from envmgr.cache.key import stat_token
from envmgr.output import emit_json
from envmgr.wheels import downloads


@click.group("cache")
def command() -> None:
    """The snapshot cache (under the user cache folder)."""


@command.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def cache_list(as_json: bool) -> None:
    """List cached snapshots and whether they are still valid."""

    rows = []
    for e in cache.entries():
        valid = bool(e.snapshot_toml) and all(stat_token(p) == t for p, t in e.validity.items())
        headline = next(
            (line[2:] for line in e.snapshot_toml.splitlines()[1:2] if line.startswith("# ")), "(unreadable)"
        )
        rows.append({"key": e.key, "path": str(e.path), "valid": valid, "summary": headline})
    if as_json:
        emit_json({"schema": 1, "cache_dir": str(cache.cache_dir()), "entries": rows})
        return
    click.echo(f"{len(rows)} cached snapshot(s) in {cache.cache_dir()}")
    for r in rows:
        click.echo(f"  {r['key']}  {'valid' if r['valid'] else 'stale'}  {r['summary']}")


@command.command("clear")
def cache_clear() -> None:
    """Delete every cached snapshot, and the prebuilt wheels the install plan downloaded."""

    click.echo(f"removed {cache.clear()} cached snapshot(s) and {downloads.clear()} downloaded prebuilt wheel(s)")
