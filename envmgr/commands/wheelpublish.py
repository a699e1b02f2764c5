"""`envmgr wheels publish DEST`, and the two steps `envmgr install` takes with an index:
look the key up there before building (--wheel-index), publish what it installed (--publish)."""
from __future__ import annotations

from pathlib import Path

import click


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
    from .. import wheelindex
    from ..errors import NoMatchError
    from ..output import emit_json, say

    target = Path(dest).expanduser()
    wheelindex.check_dest(target)
    entries, skipped = wheelindex.cached_entries(package)
    for line in skipped:
        say(f"envmgr: skipped {line}")
    if not entries:
        raise NoMatchError(f"the wheel cache holds no intact wheel{' of ' + package if package else ''} to publish",
                           "build one first: envmgr install --recipe NAME SPEC (see `envmgr wheels list`)")
    done = wheelindex.publish(entries, target)
    if as_json:
        emit_json({"schema": 1, "dest": str(target.resolve()), "skipped": skipped,
                   "wheels": [{"digest": p.entry.folder.name, "wheel": p.entry.wheel, "status": p.status,
                               "path": str(p.path), "sha256": p.entry.sha256} for p in done]})
        return
    for p in done:
        click.echo(f"  {p.status:8}  {p.entry.key.package}/{p.entry.folder.name}/{p.entry.wheel}")
    added = sum(p.status != "present" for p in done)
    click.echo(f"published {added} new wheel(s), {len(done) - added} already there, into {target}")


def from_index(index_flag: str | None, key, is_cuda: bool):
    """The index's wheel for key in the local cache, or None; every outcome is said on stderr."""
    from .. import wheelremote
    from ..output import say

    index = wheelremote.configured_index(index_flag)
    if not index:
        return None
    return wheelremote.fetch(index, key, is_cuda, lambda m: say(f"envmgr: {m}"))


def publish_installed(dest: str | None, wheel_path) -> None:
    """--publish DEST after install got its wheel from the cache (built, reused or downloaded)."""
    from .. import wheelindex
    from ..output import say

    if not dest:
        return
    entry = wheelindex.entry_for_path(Path(wheel_path))
    if entry is None:
        say(f"envmgr: not published to {dest}: {wheel_path} is not a cached wheel (a source folder or URL build)")
        return
    (done,) = wheelindex.publish([entry], Path(dest).expanduser())
    say(f"envmgr: published {entry.wheel} to {dest} ({done.status})")
