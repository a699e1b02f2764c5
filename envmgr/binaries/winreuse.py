"""Same DLL name, the app's copy (issue 37, Windows): a DLL the package imports by name that the loader did not
look for, because the process already had a module of that base name, one an app module loaded first.

When a DLL is imported (or loaded) by name, the Windows loader first looks among the loaded modules for one of
the same base name, case-insensitively, and uses it wherever it came from; only otherwise does it search
("If a DLL with the same module name is already loaded in memory, the system uses the loaded DLL, no matter
which directory it is in", https://learn.microsoft.com/windows/win32/dlls/dynamic-link-library-search-order).
So inside an app that loaded its own older libomp140.x86_64.dll, msvcp140.dll or cudart64_12.dll first, the
package's DLL binds to the app's copy: if that copy lacks a function the package imports, the import fails
with [WinError 127] / 0xC0000139; if not, the package runs on another release than its own.

Here, for each DLL or .pyd of the package that the process maps (or, when the package did not import, each
one in its folders), each imported DLL name is resolved as the loader would for the package alone
(binaries/winloader.py's order) and compared with the loaded module of that name an --after module loaded; a
difference is a binaries/reuse.py `Reused` with both paths, their file versions and every function the
importer needs that the app's copy does not export (binaries/dllsyms.py: names, ordinals, forwarders).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial

from envmgr.binaries.dll import MAX_READ
from envmgr.binaries.dllsyms import Exports, Imported, lacks, pe_exports, pe_import_functions
from envmgr.binaries.reuse import MAX_IMPORTERS, Reused, _same, host_name
from envmgr.binaries.winloader import loader_model
from envmgr.host.base import Host, host_path, join

_SUFFIXES = (".dll", ".pyd")


def win_reused(
    host: Host,
    modules: Sequence[str],
    roots: Sequence[str],
    app: Mapping[str, str],
    python_exe: str | None,
    loader: str = "ctypes",
) -> tuple[Reused, ...]:
    """modules: every module the process has loaded (K32EnumProcessModules, the child's `runtimes` record);
    roots: the package's folders; app: loaded path -> the --after module that loaded it. loader: how the
    package loads its DLLs alone (winloader.LOADERS; a .pyd imported by Python searches as `ctypes` does)."""
    by = {p.lower(): m for p, m in app.items()}
    if not by:
        return ()
    loaded: dict[str, str] = {}
    for path in modules:  # the first module of a base name is the one a load by that name gets
        loaded.setdefault(host_name(path).lower(), path)
    reader = ExportReader(host)
    out: list[Reused] = []
    for importer in importers(host, modules, roots):
        imports = reader.imports(importer)
        model = loader_model(host, loader, str(host_path(host, importer).parent), python_exe)
        for dll, wants in imports.items():
            mapped = loaded.get(dll.lower())
            if mapped is None or mapped.lower() not in by:
                continue
            alone = next(((join(host, d, dll), how) for d, how in model.dirs if host.exists(join(host, d, dll))), None)
            if alone is None or alone[0].lower() == mapped.lower() or _same(host, alone[0], mapped):
                continue
            missing = reader.missing(mapped, wants, partial(_find, host, loaded=loaded, dirs=model.dirs))
            out.append(
                Reused(
                    host_name(mapped),
                    importer,
                    mapped,
                    alone[0],
                    alone[1],
                    reader.version(mapped),
                    reader.version(alone[0]),
                    by[mapped.lower()],
                    missing,
                )
            )
    return tuple(out)


def importers(host: Host, modules: Sequence[str], roots: Sequence[str]) -> list[str]:
    """The package's DLLs and .pyd files the process maps; none mapped (its import failed, and Windows unmaps
    what a failed load brought in): those in its folders, as they lie on disk."""
    prefixes = tuple(r.rstrip("\\/").lower() + "\\" for r in roots if r)
    if not prefixes:
        return []
    mapped = [m for m in modules if m.lower().startswith(prefixes) and m.lower().endswith(_SUFFIXES)]
    if mapped:
        return mapped[:MAX_IMPORTERS]
    out: list[str] = []
    for root in dict.fromkeys(r for r in roots if r):
        try:
            names = sorted(host.listdir(root))
        except OSError:
            continue
        out += [join(host, root, n) for n in names if n.lower().endswith(_SUFFIXES)]
    return out[:MAX_IMPORTERS]


def _find(host: Host, name: str, loaded: Mapping[str, str], dirs: tuple[tuple[str, str], ...]) -> str | None:
    """A forwarder's module: the loaded one of that name (the loader uses it), else the first on the path."""
    if name.lower() in loaded:
        return loaded[name.lower()]
    return next((join(host, d, name) for d, _ in dirs if host.exists(join(host, d, name))), None)


class ExportReader:
    """Each file's imports, exports and file version, read once through the host (files over MAX_READ and
    unreadable ones count as having no imports and every export: nothing is claimed about them)."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self._exports: dict[str, Exports | None] = {}

    def _bytes(self, path: str) -> bytes | None:
        try:
            return self.host.read_bytes(path) if self.host.stat(path).size <= MAX_READ else None
        except OSError:
            return None

    def imports(self, path: str) -> dict[str, tuple[Imported, ...]]:
        import pefile  # start-up: paid only when a PE file is read (issue 33)

        data = self._bytes(path)
        try:
            return pe_import_functions(data) if data is not None else {}
        except (pefile.PEFormatError, ValueError, IndexError):  # not a PE file: a stray .dll name
            return {}

    def exports(self, path: str) -> Exports | None:
        import pefile  # start-up: paid only when a PE file is read (issue 33)

        key = path.lower()
        if key not in self._exports:
            data = self._bytes(path)
            try:
                self._exports[key] = pe_exports(data) if data is not None else None
            except (pefile.PEFormatError, ValueError, IndexError):
                self._exports[key] = None
        return self._exports[key]

    def missing(self, path: str, wants: tuple[Imported, ...], find: Callable[[str], str | None]) -> tuple[str, ...]:
        """The labels of the functions in `wants` that `path` does not provide (forwarders followed)."""
        exports = self.exports(path)
        if exports is None:
            return ()
        out = []
        for want in wants:
            why = lacks(exports, want, find, self.exports)
            if why:
                out.append(want.label if why == "not exported" else f"{want.label} ({why})")
        return tuple(dict.fromkeys(out))

    def version(self, path: str) -> str:
        """The file's name, size and VS_VERSIONINFO file version: what tells two copies of one DLL apart."""
        try:
            size = self.host.stat(path).size
        except OSError:
            return "unreadable"
        exports = self.exports(path)
        words = [host_name(path), f"{size:,} bytes"]
        words += [f"file version {exports.version}"] if exports and exports.version else ["no file version"]
        return ", ".join(words)
