"""envmgr/cache/fast.py: KEY.fast, what the console script's fast path prints on a cache hit, rendered by the
same code as the full path (snapshots exported from tests/machines/linux-two-toolkits.toml)."""

from __future__ import annotations

import marshal
import os
import sys

import pytest

from envmgr.cache import fast
from envmgr.cache.key import entry_token
from envmgr.fastpath.main import well_formed
from envmgr.shellkit import render
from envmgr.snapshot.form import from_toml
from tests.conftest import MACHINES


@pytest.fixture
def exported(cli) -> str:
    made = cli("--machine", str(MACHINES / "linux-two-toolkits.toml"), "export", "--format", "toml")
    assert made.code == 0, made.stderr
    assert 'remove = ["/usr/local/cuda-12.4/bin"]\n' in made.stdout
    return made.stdout


@pytest.mark.skipif(
    sys.platform == "win32", reason="the fast path and its files are POSIX's (Windows runs the full CLI)"
)
def test_a_snapshot_with_remove_keeps_only_toml_and_json(exported, cli, tmp_path):
    got = fast.answers(exported)
    assert set(got["out"]) == {"toml", "json"}  # remove resolves against the caller's environment
    assert got["out"]["toml"] == exported and got["platform"] == "linux"
    assert got["marker"] == from_toml(exported, "x").marker()
    assert ("PATH", "remove", ("/usr/local/cuda-12.4/bin",)) in got["ops"]
    (tmp_path / "s.toml").write_text(exported, encoding="utf-8")
    full = cli("export", "--from", str(tmp_path / "s.toml"), "--format", "json")
    assert full.code == 0 and full.stdout == got["out"]["json"]  # the full path prints the same bytes


def test_without_remove_every_script_format_is_rendered_once(exported):
    text = exported.replace('remove = ["/usr/local/cuda-12.4/bin"]\n', "")
    got = fast.answers(text)
    assert set(got["out"]) == {"toml", "json", *fast.SCRIPT_FORMATS}
    snap = from_toml(text, "x")
    assert got["out"]["sh"] == render(snap.delta, "sh", {}).encode()
    assert got["out"]["fish"].startswith(b"# envmgr environment for fish")


@pytest.mark.skipif(sys.platform == "win32", reason="remember() writes nothing on Windows (the fast path does not run)")
def test_remember_writes_a_file_the_fast_path_accepts_and_forget_removes_it(exported, tmp_path):
    entry = tmp_path / "snapshots" / "0123abcd.toml"
    entry.parent.mkdir()
    entry.write_text(exported, encoding="utf-8")
    fast.remember(entry, exported, {str(entry): "1:2:3"})
    side = tmp_path / "snapshots" / "0123abcd.fast"
    assert fast.fast_path_of(entry) == str(side)
    data = marshal.loads(side.read_bytes())
    assert data["v"] == fast.VERSION and data["entry"] == entry_token(str(entry)) and well_formed(data)
    assert data["validity"] == {str(entry): "1:2:3"}
    fast.forget(entry)
    assert not side.exists()
    fast.forget(entry)  # nothing there: no error


@pytest.mark.skipif(
    sys.platform == "win32", reason="the fast path and its files are POSIX's (Windows runs the full CLI)"
)
def test_a_snapshot_that_does_not_parse_leaves_no_fast_file(tmp_path):
    entry = tmp_path / "k.toml"
    (tmp_path / "k.fast").write_bytes(b"stale")
    fast.remember(entry, "schema = [", {})
    assert not os.path.exists(tmp_path / "k.fast")
