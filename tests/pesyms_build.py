"""Build, with mingw-w64 at test time, DLLs whose load fails at the entry point, not the module.

Two copies of libfoo.dll: new/ (file version 1.2.0.0) exports foo_old, foo_new and, by ordinal only, 7;
old/ (1.0.0.0) exports foo_old alone. In pkg/, importers that need what only the new copy has:
imp_name.dll (foo_new by name), imp_ord.dll (ordinal 7, no name), imp_fwd.dll (fwd_func of pkg/libfwd.dll,
which forwards to libfoo.foo_new), and imp_ok.dll (foo_old only: loads with either copy). Used by the
unit tier (tests/unit/binaries/test_dll_entry_points.py) and the real loader under Wine (tests/winpy).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

GCC, DLLTOOL, WINDRES = "x86_64-w64-mingw32-gcc", "x86_64-w64-mingw32-dlltool", "x86_64-w64-mingw32-windres"
TOOLS = (GCC, DLLTOOL, WINDRES)
NEW_DEF = "LIBRARY {0}.dll\nEXPORTS\n foo_old\n foo_new\n foo_ord @7 NONAME\n"
OLD_DEF = "LIBRARY {0}.dll\nEXPORTS\n foo_old @1\n"
FWD_DEF = "LIBRARY libfwd.dll\nEXPORTS\n fwd_func = {0}.foo_new\n"
IMPORTERS = {
    "imp_name": ("int foo_new(void);", "foo_new()", "-lfoo"),
    "imp_ord": ("int foo_ord(void);", "foo_ord()", "-lfoo"),
    "imp_fwd": ("int fwd_func(void);", "fwd_func()", "-lfwd"),
    "imp_ok": ("int foo_old(void);", "foo_old()", "-lfoo"),
}


def missing_tools() -> list[str]:
    return [t for t in TOOLS if shutil.which(t) is None]


def built_or_skip(tmp_path_factory, stem: str, name: str = "libfoo") -> Path:
    """The pairs built under a fresh temporary folder, or the test skipped with the packages to install."""
    from tests.conftest import need

    missing = missing_tools()
    need(not missing, f"needs {', '.join(missing)} (apt install gcc-mingw-w64-x86-64 binutils-mingw-w64)")
    return build(tmp_path_factory.mktemp(stem), name)


def build(root: Path, name: str = "libfoo") -> Path:
    """root/{new,old,pkg,src}; returns root. `name`: the runtime's module name (libomp140.x86_64 is the
    OpenMP runtime of the 2026 reports)."""
    src = root / "src"
    for d in ("new", "old", "pkg", "src"):
        (root / d).mkdir(parents=True, exist_ok=True)

    def run(*argv: str) -> None:
        subprocess.run(argv, cwd=src, check=True, capture_output=True)

    (src / "foo.c").write_text(
        "int foo_old(void) { return 1; }\nint foo_new(void) { return 2; }\nint foo_ord(void) { return 3; }\n"
    )
    (src / "old.c").write_text("int foo_old(void) { return 1; }\n")
    (src / "fwd.c").write_text("int fwd_dummy(void) { return 0; }\n")
    module = name
    for file, text in (("new.def", NEW_DEF), ("old.def", OLD_DEF), ("fwd.def", FWD_DEF)):
        (src / file).write_text(text.format(module))
    for tag, version in (("new", "1,2,0,0"), ("old", "1,0,0,0")):
        (src / f"{tag}.rc").write_text(f"1 VERSIONINFO\nFILEVERSION {version}\nPRODUCTVERSION {version}\nBEGIN\nEND\n")
        run(WINDRES, f"{tag}.rc", "-O", "coff", "-o", f"{tag}-rc.o")
    run(GCC, "-shared", "-s", "-o", str(root / "new" / f"{module}.dll"), "foo.c", "new.def", "new-rc.o")
    run(GCC, "-shared", "-s", "-o", str(root / "old" / f"{module}.dll"), "old.c", "old.def", "old-rc.o")
    run(GCC, "-shared", "-s", "-o", str(root / "pkg" / "libfwd.dll"), "fwd.c", "fwd.def")
    run(DLLTOOL, "-d", "new.def", "-l", "libfoo.a", "-D", f"{module}.dll")
    run(DLLTOOL, "-d", "fwd.def", "-l", "libfwd.a", "-D", "libfwd.dll")
    for name, (decl, call, lib) in IMPORTERS.items():
        (src / f"{name}.c").write_text(f"{decl}\n__declspec(dllexport) int use(void) {{ return {call}; }}\n")
        run(GCC, "-shared", "-s", "-o", str(root / "pkg" / f"{name}.dll"), f"{name}.c", "-L.", lib)
    return root
