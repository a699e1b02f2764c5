"""Symbol versions on Linux: the versions an ELF object requires of each library (.gnu.version_r) checked
against the versions the library that ld.so loads defines (.gnu.version_d).

ld.so checks them when it loads the object, before any symbol is bound, and fails the whole load with
"version `GLIBCXX_3.4.32' not found (required by X)": a libstdc++.so.6 older than the compiler that built
a wheel (conda's, an application's bundled copy on LD_LIBRARY_PATH), a CUDA library older than the CUDA_*
symbol versions a build needs. Pure over bytes (pyelftools parses).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from envmgr.binaries.dllsyms import Candidate, MissingEntry

VER_FLG_BASE = 1


@dataclass(frozen=True)
class Versions:
    needs: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (library file name, versions required of it)
    defines: frozenset[str] = frozenset()  # the versions this object defines

    def needed_of(self, name: str) -> tuple[str, ...]:
        return next((v for f, v in self.needs if f == name), ())


def parse_versions(data: bytes) -> Versions:
    """An ELF object's required and defined symbol versions; empty for anything unreadable."""
    # start-up: pyelftools is imported only when an ELF file is read (issue 33)
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile
    from elftools.elf.gnuversions import GNUVerDefSection, GNUVerNeedSection

    try:
        elf = ELFFile(io.BytesIO(data))
        needs: list[tuple[str, tuple[str, ...]]] = []
        defines: set[str] = set()
        for section in elf.iter_sections():
            if isinstance(section, GNUVerNeedSection):
                needs += [(str(vn.name), tuple(str(a.name) for a in aux)) for vn, aux in section.iter_versions()]
            elif isinstance(section, GNUVerDefSection):
                for vd, aux in section.iter_versions():
                    names = [a.name for a in aux]
                    if names and not vd["vd_flags"] & VER_FLG_BASE:
                        defines.add(names[0])
        return Versions(tuple(needs), frozenset(defines))
    except (ELFError, ValueError, EOFError, IndexError, KeyError, AssertionError, OSError):
        return Versions()
    except Exception:  # construct's StreamError on a cut file: the module-level report says why
        return Versions()


def newest(defines: Iterable[str], like: str) -> str:
    """The newest version of `like`'s family (GLIBCXX_3.4.30 for GLIBCXX_3.4.32) the library defines."""
    family = like.split("_")[0] + "_"

    def key(v: str) -> tuple[int, ...]:
        return tuple(int(p) if p.isdigit() else -1 for p in v[len(family) :].split("."))

    same = sorted((v for v in defines if v.startswith(family)), key=key)
    return same[-1] if same else ""


def check_versions(
    edges: Iterable[tuple[str, str, str, str]],
    read: Callable[[str], Versions],
    copies: Callable[[str, str], list[tuple[str, str]]],
) -> tuple[MissingEntry, ...]:
    """edges: (importer path, library name, loaded path, search step); copies(importer, name): every
    (path, search step) of that name the importer's search order has."""
    out: list[MissingEntry] = []
    for importer, name, path, how in edges:
        loaded = read(path)
        for version in read(importer).needed_of(name):
            if version in loaded.defines:
                continue
            found = tuple(
                Candidate(p, where, newest(read(p).defines, version), version in read(p).defines)
                for p, where in copies(importer, name)
            )
            out.append(
                MissingEntry(
                    importer,
                    name,
                    path,
                    how,
                    newest(loaded.defines, version),
                    f"version {version}",
                    found,
                    fix_words(name, path, how, version, found),
                )
            )
    return tuple(out)


def fix_words(name: str, path: str, how: str, version: str, copies: tuple[Candidate, ...]) -> str:
    good = next((c for c in copies if c.has), None)
    if good is None:
        return (
            f"no {name} on the search path defines {version}: install a newer one (the compiler or "
            f"runtime the package was built with) or use a build made for {path}"
        )
    folder = good.path.rsplit("/", 1)[0]
    if how.startswith("RPATH"):
        return (
            f"{path} comes from the object's RPATH, which ld.so searches before LD_LIBRARY_PATH: "
            f"replace it with {good.path}, or use a build without that RPATH"
        )
    return (
        f"put {folder} first on LD_LIBRARY_PATH (LD_LIBRARY_PATH={folder}:$LD_LIBRARY_PATH) so that "
        f"{good.path} loads instead of {path}; nothing in system folders changes"
    )
