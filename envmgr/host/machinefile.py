"""Writing machine files (docs/machine-record.md) from what a RecordingHost saw."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping

import tomlkit

from envmgr.host.base import RegValue
from envmgr.host.recorded import SCHEMA_VERSIONS
from envmgr.host.recording import RecordingHost


def _reg_table(values: Mapping[str, RegValue]) -> tomlkit.items.Table:
    table = tomlkit.table()
    for name, v in sorted(values.items()):
        data: object = v.data
        if isinstance(data, bytes):
            data = data.hex()
        elif isinstance(data, tuple):
            data = list(data)
        item = tomlkit.inline_table()
        item.update({"type": v.type, "value": data})
        table.add(name or "(Default)", item)
    return table


def _meta(rec: RecordingHost, version: str, description: str, cpu_flags: list[str] | None) -> tomlkit.items.Table:
    meta = tomlkit.table()
    meta.add("recorded_by", f"envmgr {version}")
    meta.add("recorded_at", _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat())
    meta.add("cpu_count", rec.cpu_count)  # the recipes' build parallelism on that machine
    if rec.memory_mib:
        meta.add("memory_mib", rec.memory_mib)  # the torch-extension recipe's MAX_JOBS
    system = rec.system
    if system is not None:  # what the machine is beyond the path flavour (a Mac says linux)
        meta.add("os", system[0])
        meta.add("machine", system[1])
    if cpu_flags is not None:
        meta.add("cpu_flags", cpu_flags)  # the prebuilt plan's CPU judgement (wheels/cpucode.py)
    if description:
        meta.add("description", description)
    return meta


def machine_document(
    rec: RecordingHost, *, version: str, description: str = "", cpu_flags: list[str] | None = None
) -> tomlkit.TOMLDocument:
    doc = tomlkit.document()
    doc.add(tomlkit.comment("envmgr machine record: what discovery read on this machine."))
    doc.add(tomlkit.comment("Replay it anywhere with: envmgr --machine THIS_FILE list"))
    doc.add("schema", SCHEMA_VERSIONS[-1])
    doc.add("platform", rec.platform)
    doc.add("meta", _meta(rec, version, description, cpu_flags))
    if rec.python is not None:
        py = tomlkit.table()
        py.add("executable", rec.python.executable)
        py.add("version", rec.python.version)
        py.add("site_packages", list(rec.python.site_packages))
        doc.add("python", py)
    doc.add("env", _sorted_table(rec.env_seen))
    doc.add("dirs", sorted(rec.dirs))
    if rec.links:
        doc.add("links", _sorted_table(rec.links))
    doc.add("files", _files_table(rec))
    registry = tomlkit.table(is_super_table=True)
    for key in sorted(rec.registry):
        registry.add(key, _reg_table(rec.registry[key]))
    doc.add("registry", registry)
    # An empty array of tables would be written as `commands = []` above the header comments; a plain
    # empty array goes with the other top-level keys and reads back the same.
    doc.add("commands", _commands(rec) if rec.commands else [])
    return doc


def _sorted_table(values: Mapping[str, str]) -> tomlkit.items.Table:
    """A table of strings, its keys in sorted order."""
    table = tomlkit.table()
    for k in sorted(values):
        table.add(k, values[k])
    return table


def _files_table(rec: RecordingHost) -> tomlkit.items.Table:
    """The files read: text, hex for what is not UTF-8, or only the size where the content was not read."""
    files = tomlkit.table()
    for path in sorted(rec.files):
        entry = rec.files[path]
        if "content" in entry:
            try:
                files.add(path, entry["content"].decode("utf-8"))
            except UnicodeDecodeError:
                files.add(path, {"hex": entry["content"].hex()})
        else:
            files.add(path, {"size": entry["size"]})
    return files


def _commands(rec: RecordingHost) -> tomlkit.items.AoT:
    """The [[commands]] the host ran, in the order it ran them."""
    commands = tomlkit.aot()
    for done in rec.commands:
        t = tomlkit.table()
        t.add("argv", list(done.argv))
        t.add("returncode", done.returncode)
        if done.stdout_bytes:  # raw output (cmd /u's UTF-16): kept byte for byte
            t.add("stdout", {"hex": done.stdout_bytes.hex()})
        else:
            t.add(
                "stdout",
                tomlkit.string(done.stdout, multiline="\n" in done.stdout and "\r" not in done.stdout)
                if done.stdout
                else "",
            )
        if done.stderr:
            t.add("stderr", done.stderr)
        if done.timed_out:
            t.add("timed_out", True)
        if done.start_error:
            t.add("start_error", done.start_error)
        commands.append(t)
    return commands
