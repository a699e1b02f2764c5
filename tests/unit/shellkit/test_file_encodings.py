"""Every file envmgr reads (--from snapshots, --machine files, recipes) is UTF-8 with or without a
BOM, or UTF-16 with a BOM: what Windows PowerShell 5.1 writes with `>` / Out-File (UTF-16 LE + BOM)
and with `Set-Content -Encoding UTF8` (UTF-8 + BOM). Script output on stdout carries no BOM.

The UTF-16 and BOM files are made here by re-encoding real files (the example machine record, and a
snapshot exported from the recorded Linux machine): no real PowerShell 5.1 output is in the corpus.
"""

from __future__ import annotations

import codecs

import pytest

from tests.conftest import EXAMPLES, MACHINES, run_cli

MACHINE = EXAMPLES / "community-buildtools-cuda124.toml"
LINUX = MACHINES / "linux-two-toolkits.toml"  # a record that exports (no vcvars capture needed)
RECIPE = """schema = 1
name = "bom-recipe"
description = "a recipe saved by Notepad / PowerShell 5.1 (é)"
kind = "cmake"
cmake_args = ["-DX=on"]
"""

ENCODINGS = {
    "utf-8": lambda t: t.encode("utf-8"),
    "utf-8-bom": lambda t: codecs.BOM_UTF8 + t.encode("utf-8"),
    # PowerShell 5.1 `envmgr export > env.toml`: UTF-16 LE with a BOM, CRLF line ends.
    "utf-16-le-bom": lambda t: codecs.BOM_UTF16_LE + t.replace("\n", "\r\n").encode("utf-16-le"),
    "utf-16-be-bom": lambda t: codecs.BOM_UTF16_BE + t.encode("utf-16-be"),
}


def _snapshot_text() -> str:
    """A snapshot exported from the recorded Linux machine (TOML)."""
    res = run_cli("--machine", str(LINUX), "export", "--cuda", "13.0")
    assert res.code == 0, res.stderr
    return res.stdout


@pytest.mark.parametrize("enc", sorted(ENCODINGS))
def test_machine_file_in_any_windows_encoding(enc, tmp_path):
    want = run_cli("--machine", str(MACHINE), "list", "--json")
    assert want.code == 0
    path = tmp_path / "machine.toml"
    path.write_bytes(ENCODINGS[enc](MACHINE.read_text(encoding="utf-8")))
    got = run_cli("--machine", str(path), "list", "--json")
    assert got.code == 0, got.stderr
    assert got.json()["cuda"] == want.json()["cuda"]
    assert got.json()["visual_studio"] == want.json()["visual_studio"]


@pytest.mark.parametrize("enc", sorted(ENCODINGS))
def test_snapshot_from_file_in_any_windows_encoding(enc, tmp_path):
    text = _snapshot_text()
    want = run_cli(
        "--machine", str(LINUX), "export", "--from", str(_write(tmp_path / "a.toml", text.encode())), "--format", "json"
    )
    assert want.code == 0, want.stderr
    path = _write(tmp_path / "env.toml", ENCODINGS[enc](text))
    got = run_cli("--machine", str(LINUX), "export", "--from", str(path), "--format", "json")
    assert got.code == 0, got.stderr
    assert got.json()["env"] == want.json()["env"]


@pytest.mark.parametrize("enc", sorted(ENCODINGS))
def test_user_recipe_in_any_windows_encoding(enc, tmp_path):
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "bom-recipe.toml").write_bytes(ENCODINGS[enc](RECIPE))
    got = run_cli("recipes", "--json", env={"ENVMGR_CONFIG_DIR": str(tmp_path)})
    assert got.code == 0, got.stderr
    assert "a recipe saved by Notepad / PowerShell 5.1 (é)" in got.stdout


@pytest.mark.parametrize(
    "what,args",
    [
        ("machine file", ("--machine", "{p}", "list")),
        ("snapshot", ("--machine", str(LINUX), "export", "--from", "{p}")),
    ],
)
def test_undecodable_file_is_one_line_and_exit_2(what, args, tmp_path):
    path = _write(tmp_path / "bad.toml", b"schema = 1\n# \xff\xfe\xfd latin-1 junk \xe9\n")
    got = run_cli(*(a.format(p=path) for a in args))
    assert got.code == 2
    assert "Traceback" not in got.stderr and f"the {what} is not UTF-8 or UTF-16 text" in got.stderr


def test_export_ps1_on_stdout_has_no_bom_but_a_written_script_has_one(tmp_path):
    from envmgr.snapshot.envdelta import SET, EnvDelta, VarOp
    from envmgr.shellkit import render, write_script

    res = run_cli("--machine", str(LINUX), "export", "--cuda", "13.0", "--format", "ps1")
    assert res.code == 0, res.stderr
    assert not res.stdout.startswith("\ufeff") and res.stdout.startswith("# envmgr")
    script = tmp_path / "env.ps1"
    write_script(script, render(EnvDelta("windows", (VarOp("A", SET, "é"),)), "ps1"), "ps1")
    assert script.read_bytes().startswith(codecs.BOM_UTF8)  # Windows PowerShell 5.1 reads BOM-less files as ANSI


def _write(path, data: bytes):
    path.write_bytes(data)
    return path
