"""envmgr/binaries/winreuse.py: a DLL the package imports by name that the process already had loaded from the
app's folder. Real mingw-built DLLs (tests/pesyms_build.py: libfoo.dll 1.0.0.0 with foo_old alone, 1.2.0.0 with
foo_new and ordinal 7 too) laid out in a recorded Windows machine, with composed module lists as the child's
K32EnumProcessModules would give them. The real loader's verdict: tests/winpy/test_verify_reuse_windows.py."""

from __future__ import annotations

import pytest
import tomlkit

from envmgr.binaries.reuse import Reused
from envmgr.binaries.winreuse import importers, win_reused
from envmgr.host.recorded import load_machine
from tests import pesyms_build

pytestmark = pytest.mark.posix  # mingw builds the DLLs

LIB, APP, PY = "C:\\site\\pkg\\lib", "C:\\app\\bin", "C:\\Python311\\python.exe"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return pesyms_build.built_or_skip(tmp_path_factory, "winreuse")


@pytest.fixture
def host(tmp_path, built):
    doc = tomlkit.document()
    doc.add("schema", 1)
    doc.add("platform", "windows")
    doc.add("env", {"SystemRoot": "C:\\Windows", "PATH": "C:\\Windows\\system32;C:\\Windows"})
    files = tomlkit.table()
    files.add(PY, "")
    layout = {f"{LIB}\\{n}.dll": built / "pkg" / f"{n}.dll" for n in ("imp_name", "imp_ord", "imp_ok")}
    layout |= {f"{LIB}\\libfoo.dll": built / "new" / "libfoo.dll", f"{APP}\\libfoo.dll": built / "old" / "libfoo.dll"}
    for where, path in layout.items():
        item = tomlkit.inline_table()
        item.add("hex", path.read_bytes().hex())
        files.add(where, item)
    doc.add("files", files)
    out = tmp_path / "machine.toml"
    out.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return load_machine(str(out))


def test_a_mapped_importer_bound_to_the_apps_older_copy_names_the_missing_function_and_both_versions(host):
    modules = [PY, "C:\\Windows\\system32\\KERNEL32.DLL", f"{APP}\\LIBFOO.DLL", f"{LIB}\\imp_name.dll"]
    (found,) = win_reused(host, modules, [LIB], {f"{APP}\\libfoo.dll": "myapp"}, PY)
    assert isinstance(found, Reused)
    assert (found.soname, found.importer, found.mapped, found.by) == (
        "LIBFOO.DLL",
        f"{LIB}\\imp_name.dll",
        f"{APP}\\LIBFOO.DLL",
        "myapp",
    )
    assert (found.alone, found.how) == (f"{LIB}\\libfoo.dll", "the DLL's own folder")
    assert found.missing == ("foo_new",)
    assert found.mapped_version.endswith("file version 1.0.0.0") and "1.2.0.0" in found.alone_version
    assert found.line.startswith(f"imp_name.dll needs LIBFOO.DLL: reused the app's copy {APP}\\LIBFOO.DLL (")
    assert found.line.endswith("the app's copy lacks foo_new: the import fails ([WinError 127])")
    assert found.as_json()["missing_functions"] == ["foo_new"]


def test_when_the_import_failed_the_packages_dlls_on_disk_are_read_ordinals_included(host):
    """Windows unmaps what a failed load brought in: the child's list has the app's copy and none of the
    package's DLLs, so every DLL in the package's folder is an importer."""
    modules = [PY, f"{APP}\\libfoo.dll"]
    assert [i.rsplit("\\", 1)[-1] for i in importers(host, modules, [LIB])] == [
        "imp_name.dll",
        "imp_ok.dll",
        "imp_ord.dll",
        "libfoo.dll",
    ]
    found = {r.importer.rsplit("\\", 1)[-1]: r for r in win_reused(host, modules, [LIB], {modules[1]: "myapp"}, PY)}
    assert set(found) == {"imp_name.dll", "imp_ok.dll", "imp_ord.dll"}
    assert found["imp_name.dll"].missing == ("foo_new",) and found["imp_ord.dll"].missing == ("ordinal 7",)
    assert found["imp_ok.dll"].missing == ()  # foo_old: the app's copy has it, reused all the same


def test_nothing_without_the_app_or_when_the_loaded_copy_is_the_packages_own(host):
    modules = [PY, f"{APP}\\libfoo.dll", f"{LIB}\\imp_name.dll"]
    assert win_reused(host, modules, [LIB], {}, PY) == ()  # no --after module
    assert win_reused(host, modules, [LIB], {"C:\\elsewhere\\x.dll": "myapp"}, PY) == ()  # not loaded by the app
    assert win_reused(host, modules, ["C:\\nothing"], {modules[1]: "myapp"}, PY) == ()  # no package DLL
    own = [PY, f"{LIB}\\libfoo.dll", f"{APP}\\libfoo.dll", f"{LIB}\\imp_name.dll"]
    # the first module of a name is the one a load by name gets: the package's own, loaded by the app module
    assert win_reused(host, own, [LIB], {own[1]: "ownfirst", own[2]: "myapp"}, PY) == ()
