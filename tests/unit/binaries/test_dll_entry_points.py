"""Symbol-level closure on real mingw-built DLLs (tests/pesyms_build.py) laid out in a recorded Windows
machine: the copy of libfoo.dll that the loader finds first lacks a function (by name, by ordinal, through
a forwarder) that an importer needs; doctor --dll names it, the copy that loads, the copy that has it, and
the fix. The real loader's verdict on the same files: tests/winpy/test_dll_entry_points_windows.py.
"""

from __future__ import annotations

import hashlib
import json

import pytest
import tomlkit

from envmgr.host.recorded import load_machine
from envmgr.wheels import closure
from tests import pesyms_build

pytestmark = pytest.mark.posix

PKG, OLD, NEW = "C:\\pkg", "C:\\old", "C:\\new"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return pesyms_build.built_or_skip(tmp_path_factory, "pesyms")


def machine(tmp_path, built, *, fixed: bool = False, pkg: str = PKG, name: str = "libfoo") -> str:
    doc = tomlkit.document()
    doc.add("schema", 1)
    doc.add("platform", "windows")
    doc.add("env", {"SystemRoot": "C:\\Windows", "PATH": f"{OLD};{NEW};C:\\Windows\\system32;C:\\Windows"})
    files = tomlkit.table()
    files.add("C:\\Python312\\python.exe", "")
    layout = {f"{pkg}\\{p.name}": p for p in (built / "pkg").glob("*.dll")}
    layout |= {f"{OLD}\\{name}.dll": built / "old" / f"{name}.dll", f"{NEW}\\{name}.dll": built / "new" / f"{name}.dll"}
    if fixed:
        layout[f"{pkg}\\{name}.dll"] = built / "new" / f"{name}.dll"
    for where, path in layout.items():
        item = tomlkit.inline_table()
        item.add("hex", path.read_bytes().hex())
        files.add(where, item)
    doc.add("files", files)
    doc.add("python", {"executable": "C:\\Python312\\python.exe", "version": "3.12.4", "site_packages": []})
    out = tmp_path / ("fixed.toml" if fixed else "machine.toml")
    out.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return str(out)


@pytest.mark.parametrize(
    ("importer", "function"),
    [
        ("imp_name", "foo_new"),
        ("imp_ord", "ordinal 7"),
        ("imp_fwd", "fwd_func (forwarded to libfoo.foo_new, not exported in C:\\old\\libfoo.dll)"),
    ],
)
def test_missing_entry_point_names_function_loaded_copy_and_good_copy(cli, tmp_path, built, importer, function):
    m = machine(tmp_path, built)
    result = cli("--machine", m, "doctor", "--dll", f"{PKG}\\{importer}.dll", "--json")
    assert result.code == 1, result.stderr
    data = result.json()
    assert data["loads"] is False and data["missing"] == []
    [entry] = data["missing_entry_points"]
    assert entry["function"] == function
    want_dll = "libfwd.dll" if importer == "imp_fwd" else "libfoo.dll"
    assert entry["dll"].lower() == want_dll
    if importer != "imp_fwd":
        assert entry["path"] == f"{OLD}\\libfoo.dll" and entry["version"] == "1.0.0.0"
        assert entry["found_by"] == "PATH entry 1"
        assert [(c["path"], c["version"], c["has_function"]) for c in entry["copies"]] == [
            (f"{OLD}\\libfoo.dll", "1.0.0.0", False),
            (f"{NEW}\\libfoo.dll", "1.2.0.0", True),
        ]
        assert entry["fix"].startswith(f"copy {NEW}\\libfoo.dll into {PKG} ")


def test_text_report_and_a_control_that_loads(cli, tmp_path, built):
    m = machine(tmp_path, built)
    text = cli("--machine", m, "doctor", "--dll", f"{PKG}\\imp_name.dll").stdout
    assert "ENTRY POINT NOT FOUND: libfoo.dll: foo_new not found: C:\\old\\libfoo.dll (version 1.0.0.0)" in text
    assert f"copy: {NEW}\\libfoo.dll (1.2.0.0) [PATH entry 2]: has it" in text
    assert "1 entry point(s) not found ([WinError 127]): foo_new in libfoo.dll" in text
    ok = cli("--machine", m, "doctor", "--dll", f"{PKG}\\imp_ok.dll", "--json")
    assert ok.code == 0 and ok.json()["missing_entry_points"] == [] and ok.json()["loads"] is True


@pytest.mark.parametrize("importer", ["imp_name", "imp_ord", "imp_fwd"])
def test_after_the_fix_the_package_copy_wins(cli, tmp_path, built, importer):
    m = machine(tmp_path, built, fixed=True)
    result = cli("--machine", m, "doctor", "--dll", f"{PKG}\\{importer}.dll", "--json")
    assert result.code == 0, result.stdout
    assert result.json()["missing_entry_points"] == [] and result.json()["loads"] is True


def test_when_the_stale_copy_is_searched_first_the_fix_says_copying_does_not_win(cli, tmp_path, built):
    m = machine(tmp_path, built)
    result = cli("--machine", m, "doctor", "--dll", f"{PKG}\\imp_name.dll", "--loader", "winmode0", "--json")
    [entry] = result.json()["missing_entry_points"]
    assert "does not win" in entry["fix"] and f'ctypes.WinDLL(r"{NEW}\\libfoo.dll")' in entry["fix"]


def test_pure_parsers_on_the_built_files(built):
    from envmgr.binaries.dllsyms import Imported, pe_exports, pe_import_functions, split_forwarder

    new = pe_exports((built / "new" / "libfoo.dll").read_bytes())
    assert {"foo_old", "foo_new"} <= new.names and 7 in new.ordinals and new.version == "1.2.0.0"
    fwd = pe_exports((built / "pkg" / "libfwd.dll").read_bytes())
    assert fwd.forwarder(Imported("fwd_func")) == "libfoo.foo_new"
    assert pe_import_functions((built / "pkg" / "imp_ord.dll").read_bytes())["libfoo.dll"] == (Imported(ordinal=7),)
    assert split_forwarder("libfoo.#12") == ("libfoo.dll", Imported(ordinal=12))


LIB = "C:\\Python312\\Lib\\site-packages\\llama_cpp\\lib"
OMP = "libomp140.x86_64"


@pytest.fixture(scope="module")
def omp(tmp_path_factory):
    return pesyms_build.built_or_skip(tmp_path_factory, "omp", OMP)


def test_install_closure_reports_the_entry_point_and_plans_the_runtime_copy(tmp_path, omp):
    """The 2026 case: an older libomp140.x86_64.dll (another application's, first on PATH) hides the one
    llama_cpp's DLL needs; the closure names it and --fix copies the good one into llama_cpp\\lib."""
    host = load_machine(machine(tmp_path, omp, pkg=LIB, name=OMP))
    found = closure.check(host, "C:\\Python312\\python.exe", LIB)
    assert found.missing == ()
    got = {
        (e.dll.lower(), e.function.split(" ")[0] if e.dll.lower() != "libfwd.dll" else e.function)
        for e in found.entries
    }
    assert got == {
        (f"{OMP}.dll", "foo_new"),
        (f"{OMP}.dll", "ordinal"),
        ("libfwd.dll", f"fwd_func (forwarded to {OMP}.foo_new, module {OMP} not found)"),
    }
    plan = closure.plan_fix(host, found, {}, ())
    assert [(c.name, c.source, c.dest) for c in plan.copies] == [
        (f"{OMP}.dll", f"{NEW}\\{OMP}.dll", f"{LIB}\\{OMP}.dll")
    ]
    fixed = load_machine(machine(tmp_path, omp, pkg=LIB, name=OMP, fixed=True))
    # A forwarder into a module whose name has a dot never binds: no ".dll" is added (as Wine measured).
    after = closure.check(fixed, "C:\\Python312\\python.exe", LIB).entries
    assert [(e.dll, e.function) for e in after] == [
        ("libfwd.dll", f"fwd_func (forwarded to {OMP}.foo_new, module {OMP} not found)")
    ]


def test_undo_removes_a_copied_runtime_but_never_the_package_dll(tmp_path):
    lib = tmp_path / "llama_cpp" / "lib"
    lib.mkdir(parents=True)
    added, own = lib / f"{OMP}.dll", lib / "llama.dll"
    added.write_bytes(b"MZ omp")
    own.write_bytes(b"MZ llama")
    manifest = tmp_path / "m.json"
    manifest.write_text(
        json.dumps(
            {
                "schema": 1,
                "added": [{"path": str(p), "sha256": hashlib.sha256(p.read_bytes()).hexdigest()} for p in (added, own)],
            }
        )
    )
    lines = closure.undo(manifest)
    assert lines == [f"removed {added}", f"{own}: skipped (not a file a DLL fix adds)"]
    assert own.exists() and not added.exists()
