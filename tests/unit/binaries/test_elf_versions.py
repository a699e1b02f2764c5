"""Symbol versions on Linux: gcc-built (at test time) libbar.so.1 in two copies, good/ defining BAR_1.0 and
BAR_2.0 (version script), old/ defining BAR_1.0 only; libuse.so calls bar_new@BAR_2.0. With old/ first on
LD_LIBRARY_PATH, the real loader (ctypes.CDLL in a fresh Python) fails with "version `BAR_2.0' not found",
and doctor --dll names the version, the copy that loads, the copy that defines it and the fix; with good/
first, both load. The same check covers GLIBCXX_* (libstdc++) and CUDA_* versions."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import need

pytestmark = pytest.mark.posix

GOOD_MAP = "BAR_1.0 { global: bar_old; local: *; };\nBAR_2.0 { global: bar_new; } BAR_1.0;\n"
OLD_MAP = "BAR_1.0 { global: bar_old; local: *; };\n"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    need(shutil.which("gcc") is not None, "needs gcc")
    root = tmp_path_factory.mktemp("elfver")
    for tag, mapping, body in (
        ("good", GOOD_MAP, "int bar_old(void){return 1;} int bar_new(void){return 2;}"),
        ("old", OLD_MAP, "int bar_old(void){return 1;}"),
    ):
        (root / tag).mkdir()
        (root / f"{tag}.map").write_text(mapping)
        (root / f"{tag}.c").write_text(body + "\n")
        subprocess.run(
            [
                "gcc",
                "-shared",
                "-fPIC",
                "-o",
                str(root / tag / "libbar.so.1"),
                f"{tag}.c",
                f"-Wl,--version-script={tag}.map",
                "-Wl,-soname,libbar.so.1",
            ],
            cwd=root,
            check=True,
        )
    (root / "use").mkdir()
    (root / "use.c").write_text("int bar_new(void);\nint use(void) { return bar_new(); }\n")
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-o", str(root / "use" / "libuse.so"), "use.c", str(root / "good" / "libbar.so.1")],
        cwd=root,
        check=True,
    )
    return root


def real_loader(built, first: str, second: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "LD_LIBRARY_PATH": f"{built / first}:{built / second}"}
    code = f"import ctypes; print(ctypes.CDLL({str(built / 'use' / 'libuse.so')!r}).use())"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)


def test_a_missing_symbol_version_is_named_where_ld_so_fails(cli, built):
    real = real_loader(built, "old", "good")
    assert real.returncode != 0 and "version `BAR_2.0' not found" in real.stderr, real.stderr
    result = cli(
        "doctor",
        "--dll",
        str(built / "use" / "libuse.so"),
        "--json",
        env={"LD_LIBRARY_PATH": f"{built / 'old'}:{built / 'good'}"},
    )
    assert result.code == 1, result.stderr
    data = result.json()
    assert data["loads"] is False and data["missing"] == []
    [entry] = data["missing_entry_points"]
    assert (entry["dll"], entry["function"], entry["path"]) == (
        "libbar.so.1",
        "version BAR_2.0",
        str(built / "old" / "libbar.so.1"),
    )
    assert entry["found_by"] == f"LD_LIBRARY_PATH {built / 'old'}" and entry["version"] == "BAR_1.0"
    assert [(c["path"], c["has_function"]) for c in entry["copies"]] == [
        (str(built / "old" / "libbar.so.1"), False),
        (str(built / "good" / "libbar.so.1"), True),
    ]
    assert entry["fix"].startswith(f"put {built / 'good'} first on LD_LIBRARY_PATH")
    text = cli(
        "doctor",
        "--dll",
        str(built / "use" / "libuse.so"),
        env={"LD_LIBRARY_PATH": f"{built / 'old'}:{built / 'good'}"},
    ).stdout
    assert "VERSION NOT FOUND: libbar.so.1: version BAR_2.0 not found" in text
    assert "1 symbol version(s) not found: version BAR_2.0 in libbar.so.1" in text


def test_after_the_fix_both_the_loader_and_doctor_load_it(cli, built):
    real = real_loader(built, "good", "old")
    assert real.returncode == 0 and real.stdout.strip() == "2", real.stderr
    result = cli(
        "doctor",
        "--dll",
        str(built / "use" / "libuse.so"),
        "--json",
        env={"LD_LIBRARY_PATH": f"{built / 'good'}:{built / 'old'}"},
    )
    assert result.code == 0 and result.json()["missing_entry_points"] == [], result.stdout


def test_parse_versions_reads_needs_and_definitions(built):
    from envmgr.binaries.elfsyms import newest, parse_versions

    use = parse_versions((built / "use" / "libuse.so").read_bytes())
    assert "BAR_2.0" in use.needed_of("libbar.so.1")
    assert parse_versions((built / "good" / "libbar.so.1").read_bytes()).defines == {"BAR_1.0", "BAR_2.0"}
    assert newest({"GLIBCXX_3.4.9", "GLIBCXX_3.4.30", "CXXABI_1.3"}, "GLIBCXX_3.4.32") == "GLIBCXX_3.4.30"
    assert parse_versions(b"\x7fELF garbage").defines == frozenset()


def test_verify_names_the_missing_version_of_a_library_the_loader_refused(built, monkeypatch):
    """verify's diagnosis of a native library the real loader refused (verify/anyrun.py) carries the entry."""
    from envmgr.host.live import LiveHost
    from envmgr.verify.anyrun import _dll_diagnosis
    from envmgr.verify.report import ChildRun

    monkeypatch.setenv("LD_LIBRARY_PATH", f"{built / 'old'}:{built / 'good'}")
    lib = str(built / "use" / "libuse.so")
    run = ChildRun({"load": {"libraries": [{"path": lib, "ok": False}]}}, ("load",), "", 1)
    evidence, command = _dll_diagnosis(LiveHost(), run, sys.executable)
    assert any(
        e.startswith(
            f"entry point not found: version BAR_2.0 in libbar.so.1: {built / 'old' / 'libbar.so.1'} BAR_1.0 loads"
        )
        for e in evidence
    ), evidence
    assert command == f"envmgr doctor --dll {lib}"
