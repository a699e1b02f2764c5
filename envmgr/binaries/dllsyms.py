"""Symbol-level DLL closure: every function a PE file imports, checked against the export table of the DLL
that the loader's search order actually loads (ordinals and forwarders included).

A DLL of the right name can load and still fail the import with [WinError 127] / 0xC0000139 "The specified
procedure could not be found": an older copy found first (an OpenMP runtime libomp140.x86_64.dll in
System32 or another application's folder, an msvcp140.dll older than the build's MSVC) lacks a function
the importer needs (../shared/ecosystem-2026-12.md, JamePeng/llama-cpp-python#138,
Tavris1/ComfyUI-Easy-Install#248). The loader binds every normal (not delay-load) import at load time,
so one missing entry point fails the whole load; a forwarder "OTHER.Func" is resolved in OTHER.dll.
Pure over bytes apart from `check_entries`, which reads the exporters through the Host.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from envmgr.host.base import Host, host_path, join

_API_SET = re.compile(r"^(api|ext)-ms-", re.I)
if TYPE_CHECKING:
    import pefile


@dataclass(frozen=True)
class Imported:
    name: str = ""  # the function's name; "" for an ordinal-only import
    ordinal: int | None = None  # set for an ordinal-only import

    @property
    def label(self) -> str:
        return self.name or f"ordinal {self.ordinal}"


@dataclass(frozen=True)
class Exports:
    names: frozenset[str] = frozenset()
    ordinals: frozenset[int] = frozenset()
    forwards: tuple[tuple[str, str], ...] = ()  # (name or "#ordinal", "OTHER.Func" or "OTHER.#n")
    version: str = ""  # VS_VERSIONINFO's file version; "" when it has none

    def forwarder(self, want: Imported) -> str:
        key = want.name or f"#{want.ordinal}"
        return next((target for k, target in self.forwards if k == key), "")

    def has(self, want: Imported) -> bool:
        return want.name in self.names if want.name else want.ordinal in self.ordinals


@dataclass(frozen=True)
class Candidate:
    path: str
    where: str  # its step in the search order
    version: str
    has: bool  # exports the function (through its forwarder where it forwards)


@dataclass(frozen=True)
class MissingEntry:
    importer: str  # the path of the DLL whose import fails
    dll: str  # the imported DLL's name
    path: str  # the copy the loader loads
    how: str  # its step in the search order
    version: str
    function: str  # "Func", "ordinal 7", or "Func (forwarded to OTHER.Func, missing there)"
    copies: tuple[Candidate, ...]  # every copy of that name on the search path, in search order
    fix: str
    fix_copy: str = ""  # the good copy to put into the package's folder, when that copy then wins


def pe_import_functions(data: bytes) -> dict[str, tuple[Imported, ...]]:
    """{dll name lower-cased: functions} of the normal imports (delay-loads bind on first call, not at load)."""
    import pefile  # start-up: paid only when a PE file is read (issue 33)

    pe = pefile.PE(data=data, fast_load=True)
    pe.parse_data_directories(directories=[pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_IMPORT"]])
    out: dict[str, tuple[Imported, ...]] = {}
    for entry in getattr(pe, "DIRECTORY_ENTRY_IMPORT", []):
        funcs = [
            Imported(ordinal=i.ordinal) if i.import_by_ordinal else Imported(i.name.decode("ascii", "replace"))
            for i in entry.imports
            if i.import_by_ordinal or i.name
        ]
        dll = entry.dll.decode("ascii", "replace").lower()
        out[dll] = out.get(dll, ()) + tuple(funcs)
    return out


def pe_exports(data: bytes) -> Exports:
    import pefile  # start-up: paid only when a PE file is read (issue 33)

    pe = pefile.PE(data=data, fast_load=True)
    pe.parse_data_directories(
        directories=[
            pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_EXPORT"],
            pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_RESOURCE"],
        ]
    )
    names: set[str] = set()
    ordinals: set[int] = set()
    forwards: list[tuple[str, str]] = []
    for sym in getattr(getattr(pe, "DIRECTORY_ENTRY_EXPORT", None), "symbols", []):
        ordinals.add(sym.ordinal)
        name = sym.name.decode("ascii", "replace") if sym.name else ""
        if name:
            names.add(name)
        if sym.forwarder:
            target = sym.forwarder.decode("ascii", "replace")
            forwards += [(name, target)] if name else []
            forwards.append((f"#{sym.ordinal}", target))
    return Exports(frozenset(names), frozenset(ordinals), tuple(forwards), file_version(pe))


def file_version(pe: pefile.PE) -> str:
    fixed = getattr(pe, "VS_FIXEDFILEINFO", None)
    if not fixed:
        return ""
    ms, ls = fixed[0].FileVersionMS, fixed[0].FileVersionLS
    return f"{ms >> 16}.{ms & 0xFFFF}.{ls >> 16}.{ls & 0xFFFF}"


def split_forwarder(target: str) -> tuple[str, Imported]:
    """ "OTHER.Func" -> ("OTHER.dll", Func); "OTHER.#12" -> ordinal 12. As LoadLibrary does, ".dll" is added
    only to a module name without a dot: "libomp140.x86_64.Func" names a file "libomp140.x86_64", which the
    loader does not find (measured under Wine 8: "module not found for forward", docs/doctor.md)."""
    module, _, func = target.rpartition(".")
    dll = module if "." in module else module + ".dll"
    if func.startswith("#") and func[1:].isdigit():
        return dll, Imported(ordinal=int(func[1:]))
    return dll, Imported(func)


Reader = Callable[[str], "Exports | None"]


def lacks(exports: Exports, want: Imported, find: Callable[[str], str | None], read: Reader, depth: int = 0) -> str:
    """Why `want` does not bind against `exports` ("" when it does); forwarders are followed."""
    if not exports.has(want):
        return "not exported"
    target = exports.forwarder(want)
    if not target or depth > 4:
        return ""
    dll, func = split_forwarder(target)
    path = find(dll)
    if path is None:  # API sets are virtual: no file, always resolved
        return "" if _API_SET.match(dll) else f"forwarded to {target}, module {dll} not found"
    other = read(path)
    if other is None:
        return ""
    why = lacks(other, func, find, read, depth + 1)
    return f"forwarded to {target}, {why} in {path}" if why else ""


def check_entries(
    host: Host,
    edges: Iterable[tuple[str, str, str, str]],
    imports: dict[str, dict[str, tuple[Imported, ...]]],
    dirs: tuple[tuple[str, str], ...],
    fix_dir: str,
    read: Reader,
) -> tuple[MissingEntry, ...]:
    """edges: (importer path, dll name, loaded path, search step). imports: the importers' functions by path.
    fix_dir: the package's own folder, where a good copy is put to win (when the search order lets it)."""

    def find(name: str) -> str | None:
        return next((join(host, d, name) for d, _ in dirs if host.exists(join(host, d, name))), None)

    out: list[MissingEntry] = []
    for importer, dll, path, how in edges:
        exports = read(path)
        if exports is None:
            continue
        for want in imports.get(importer, {}).get(dll.lower(), ()):
            why = lacks(exports, want, find, read)
            if not why:
                continue
            copies = _copies(host, dll, want, dirs, find, read)
            function = want.label if why == "not exported" else f"{want.label} ({why})"
            fix, source = fix_words(host, dll, path, how, copies, dirs, fix_dir)
            out.append(MissingEntry(importer, dll, path, how, exports.version, function, copies, fix, source))
    return tuple(out)


def _copies(
    host: Host,
    dll: str,
    want: Imported,
    dirs: tuple[tuple[str, str], ...],
    find: Callable[[str], str | None],
    read: Reader,
) -> tuple[Candidate, ...]:
    out, seen = [], set()
    for folder, label in dirs:
        path = join(host, folder, dll)
        if path.lower() in seen or not host.exists(path):
            continue
        seen.add(path.lower())
        exports = read(path)
        has = exports is not None and not lacks(exports, want, find, read)
        out.append(Candidate(path, label, exports.version if exports else "", has))
    return tuple(out)


def fix_words(
    host: Host,
    dll: str,
    path: str,
    how: str,
    copies: tuple[Candidate, ...],
    dirs: tuple[tuple[str, str], ...],
    fix_dir: str,
) -> tuple[str, str]:
    """The fix in words, and the copy to put into fix_dir ("" when that would not win or none has it)."""
    good = next((c for c in copies if c.has), None)
    if good is None:
        return (
            f"no copy of {dll} on the search path exports it: install the runtime the package was built "
            f"against (a newer {dll}) and put its folder on the search path, or use a build made for "
            f"{path}'s version",
            "",
        )

    folders = [d.lower().rstrip("\\/") for d, _ in dirs]
    wins_at = next((i for i, (_, label) in enumerate(dirs) if label == how), len(dirs))
    ours = folders.index(fix_dir.lower().rstrip("\\/")) if fix_dir.lower().rstrip("\\/") in folders else None
    dest = join(host, fix_dir, dll)
    if ours is not None and ours < wins_at:
        return (
            f"copy {good.path} into {fix_dir} (the package's own folder, searched before {how}): {dest} then "
            "loads first; nothing in system folders changes (install --fix does it, undoable)",
            good.path,
        )
    return (
        f"{path} ({how}) is searched before {fix_dir} under this loader, so a copy there does not win: "
        f'load {good.path} first in the process (ctypes.WinDLL(r"{good.path}") before the import: a DLL of '
        f"that name already loaded is used), or load the package with ctypes' default search (its own "
        f"folder first) and copy {host_path(host, good.path).name} into {fix_dir}",
        "",
    )


def entry_json(e: MissingEntry) -> dict[str, Any]:
    """docs/json.md, "missing_entry_points"."""
    return {
        "importer": e.importer,
        "dll": e.dll,
        "path": e.path,
        "found_by": e.how,
        "version": e.version or None,
        "function": e.function,
        "fix": e.fix,
        "copies": [
            {"path": c.path, "found_by": c.where, "version": c.version or None, "has_function": c.has} for c in e.copies
        ],
    }


def entry_lines(e: MissingEntry) -> list[str]:
    """A missing entry point in words: what loads, what it lacks, the other copies, the fix."""
    version = f" (version {e.version})" if e.version else ""
    out = [f"{e.dll}: {e.function} not found: {e.path}{version} loads [{e.how}], imported by {e.importer}"]
    for c in e.copies:
        mark = "has it" if c.has else "lacks it"
        out.append(f"  copy: {c.path} ({c.version or 'no version'}) [{c.where}]: {mark}")
    out.append(f"  fix: {e.fix}")
    return out


def entry_evidence(e: MissingEntry) -> str:
    """One line for a verify/closure report."""
    version = f" {e.version}" if e.version else ""
    return f"entry point not found: {e.function} in {e.dll}: {e.path}{version} loads [{e.how}]; fix: {e.fix}"
