"""`envmgr wheels list|clear|publish`: the wheel cache, and publishing it as a team's PEP 503 index."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from envmgr.binaries.devicecode import from_json
from envmgr.cli.main import Ctx
from envmgr.discover.gpu import discover_gpus, gpu_fits
from envmgr.errors import CheckFailed, NoMatchError
from envmgr.host.base import WINDOWS
from envmgr.output import emit_json, say
from envmgr.wheels import downloads
from envmgr.wheels import index as wheelindex
from envmgr.wheels import store as wheels
from envmgr.wheels.downloads import downloads_dir
from envmgr.wheels.url import redact


@click.group("wheels")
def command() -> None:
    """The wheel cache of `envmgr install` (under the user cache folder)."""


@command.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (docs/wheels.md).")
@click.pass_obj
def wheels_list(obj: Ctx, as_json: bool) -> None:
    """List cached wheels with their keys, their device code (cubin and PTX architectures) and how this
    machine's GPUs would run it (native cubin, PTX JIT, or not at all)."""
    gpus, _problems = discover_gpus(obj.host)
    windows = obj.host.platform == WINDOWS
    rows: list[dict[str, Any]] = []
    for e in wheels.entries():
        if isinstance(e, wheels.Entry):
            rows.append(
                {
                    "digest": e.folder.name,
                    "wheel": e.wheel,
                    "path": str(e.path),
                    "sha256": e.sha256,
                    "build_seconds": e.build_seconds,
                    "created": e.created,
                    "key": {**asdict(e.key), "source": redact(e.key.source)},  # an entry from before N2's fix
                    "device_code": e.device_code.to_json() if e.device_code else None,
                    "runs_here": [f.to_json() for f in gpu_fits(e.device_code, gpus, windows)],
                }
            )
        else:
            rows.append({"digest": e.name, "wheel": None, "path": str(e), "broken": True})
    got = downloads.listed()
    if as_json:
        emit_json(
            {
                "schema": 1,
                "wheels_dir": str(wheels.wheels_dir()),
                "wheels": rows,
                "downloads_dir": str(downloads_dir()),
                "downloads": [{"path": str(d.folder), "wheel": d.wheel or None, "bytes": d.size} for d in got],
            }
        )
        return
    click.echo(f"{len(rows)} cached wheel(s) in {wheels.wheels_dir()}")
    if got:
        total = sum(d.size for d in got) >> 20
        click.echo(
            f"{len(got)} downloaded prebuilt wheel(s) ({total} MiB) in {downloads_dir()} "
            "(`envmgr wheels clear` removes them)"
        )
        for d in got:
            click.echo(f"  {d.folder.name}  {d.wheel or '(unreadable facts.json)'}  {d.size >> 20} MiB")
    for r in rows:
        if r.get("broken"):
            click.echo(f"  {r['digest']}  (broken entry: discarded at the next install with its key)")
            continue
        k = r["key"]
        cuda = f"CUDA {k['cuda']} archs {k['archs'] or '?'}" if k["cuda"] else "CPU"
        click.echo(
            f"  {r['digest']}  {k['package']} {k['version']}  {cuda}  {k['generator']}  "
            f"{k['python_tag']} {k['platform']}  built in {r['build_seconds']:.0f} s"
        )
        code = from_json(r["device_code"])
        click.echo(f"      device code: {code.summary() if code else '(not recorded: cached by an older envmgr)'}")
        for how in r["runs_here"]:
            click.echo(f"      {how['gpu']}: {how['detail']}")


@command.command("clear")
def wheels_clear() -> None:
    """Delete every cached wheel, and the prebuilt wheels the install plan downloaded."""

    click.echo(f"removed {wheels.clear()} cached wheel(s) and {downloads.clear()} downloaded prebuilt wheel(s)")


@click.command("publish")
@click.argument("dest", metavar="DEST")
@click.option("--package", metavar="NAME", help="Publish only this package's wheels.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (docs/wheels.md).")
def publish_command(dest: str, package: str | None, as_json: bool) -> None:
    """Copy the cached wheels into a PEP 503 index in the folder DEST (created or updated in place).

    \b
      envmgr wheels publish /srv/wheels          then serve /srv/wheels with any static file server
      pip install --index-url https://host/wheels/ llama-cpp-python==0.3.36     plain pip
      envmgr install --wheel-index https://host/wheels/ --recipe ... SPEC       with the key check
    Each wheel goes to DEST/<project>/<key digest>/ beside its key file entry.json; the pages link it
    with #sha256=. Entries already there are kept; pages are updated, never rewritten from scratch.
    """

    target = Path(dest).expanduser()
    wheelindex.check_dest(target)
    entries, skipped = wheelindex.cached_entries(package)
    for line in skipped:
        say(f"envmgr: skipped {line}")
    if not entries:
        raise NoMatchError(
            f"the wheel cache holds no intact wheel{' of ' + package if package else ''} to publish",
            "build one first: envmgr install --recipe NAME SPEC (see `envmgr wheels list`)",
        )
    failed: list[str] = []
    done = wheelindex.publish(entries, target, failed)
    for line in failed:
        say(f"envmgr: skipped {line}")
    skipped += failed
    if not done:
        raise CheckFailed(
            f"none of the {len(entries)} cached wheel(s) could be published into {target}",
            "see the lines above; `envmgr wheels list` shows the cache",
        )
    if as_json:
        emit_json(
            {
                "schema": 1,
                "dest": str(target.resolve()),
                "skipped": skipped,
                "wheels": [
                    {
                        "digest": p.entry.folder.name,
                        "wheel": p.entry.wheel,
                        "status": p.status,
                        "path": str(p.path),
                        "sha256": p.entry.sha256,
                    }
                    for p in done
                ],
            }
        )
        return
    for p in done:
        click.echo(f"  {p.status:8}  {p.entry.key.package}/{p.entry.folder.name}/{p.entry.wheel}")
    added = sum(p.status != "present" for p in done)
    click.echo(f"published {added} new wheel(s), {len(done) - added} already there, into {target}")


command.add_command(publish_command)
