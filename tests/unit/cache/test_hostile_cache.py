"""A hostile or damaged local cache (issue 22; audit ../shared/audits/hostile-input-2026-11.md S3, S4,
C11): a cache folder shared with others, a tampered or merged wheel cache, a damaged `KEY.fast`.
Entries are made the way the audit's repros make them: hand-written entry.json files and marshal files."""

from __future__ import annotations

import hashlib
import io
import json
import sys
import zipfile
from pathlib import Path

import pytest

from envmgr.wheels import index as wheelindex
from envmgr.wheels import store as wheels


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVMGR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENVMGR_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "cache"


def tampered_entry(cache: Path, package: str, wheel: str) -> Path:
    """S4's repro: an entry whose key's package and wheel name come from whoever wrote entry.json."""
    key = {
        "package": package,
        "version": "1.0",
        "source": "index",
        "cuda": "13.0",
        "archs": "90",
        "generator": "Ninja",
        "cmake_args": "",
        "python_tag": "cp311",
        "platform": "linux_x86_64",
    }
    folder = cache / "wheels" / hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
    folder.mkdir(parents=True)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("x/lib/libx-cuda.so", "")
    real = folder / "escpkg-1.0-py3-none-any.whl"
    real.write_bytes(buf.getvalue())
    (folder / "entry.json").write_text(
        json.dumps({"schema": 1, "key": key, "wheel": wheel, "sha256": hashlib.sha256(buf.getvalue()).hexdigest()})
    )
    return folder


# --- S3: `wheels clear` removes only what envmgr made ----------------------------------------------


def test_s3_clear_keeps_folders_envmgr_did_not_make(cli, tmp_path, cache_dir):
    root = cache_dir / "wheels"
    (root / "my-precious-wheelhouse").mkdir(parents=True)
    (root / "my-precious-wheelhouse" / "numpy-1.0.whl").write_text("data")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("x")
    (root / "0123456789abcdef0123").mkdir()  # digest-named, but no entry.json: not an entry
    (root / "0123456789abcdef0123" / "notes.txt").write_text("mine")
    ours = tampered_entry(cache_dir, "escpkg", "escpkg-1.0-py3-none-any.whl")
    (root / ".download-abc123").mkdir()  # envmgr's own leftovers
    (root / ".build-xyz").mkdir()
    (root / f".{ours.name}.1234.tmp").mkdir()
    out = cli("wheels", "clear", env={"ENVMGR_CACHE_DIR": str(cache_dir)})
    assert out.code == 0 and "removed 1 cached wheel(s)" in out.stdout
    assert sorted(p.name for p in root.iterdir()) == [".git", "0123456789abcdef0123", "my-precious-wheelhouse"]
    assert (root / "my-precious-wheelhouse" / "numpy-1.0.whl").read_text() == "data"
    assert (root / ".git" / "config").read_text() == "x"


def test_s3_list_shows_only_envmgr_entries(cli, cache_dir):
    (cache_dir / "wheels" / "my-precious-wheelhouse").mkdir(parents=True)
    tampered_entry(cache_dir, "escpkg", "escpkg-1.0-py3-none-any.whl")
    out = cli("wheels", "list", env={"ENVMGR_CACHE_DIR": str(cache_dir)})
    assert out.code == 0 and "1 cached wheel(s)" in out.stdout and "my-precious-wheelhouse" not in out.stdout


# --- S4: names in a cache entry are names ---------------------------------------------------------


@pytest.mark.parametrize(
    "package, wheel",
    [
        ("../../../ESCAPE_PKG", "escpkg-1.0-py3-none-any.whl"),
        ("escpkg", "../../../../ESCAPE_WHEEL.whl"),
        ("escpkg", "/tmp/ESCAPE_ABS-1.0-py3-none-any.whl"),
        ("escpkg", "..\\..\\ESCAPE-1.0-py3-none-any.whl"),
        ("ESC/PKG", "escpkg-1.0-py3-none-any.whl"),
        ("nul", "escpkg-1.0-py3-none-any.whl"),
    ],
)
def test_s4_publish_skips_an_entry_whose_names_are_paths(cli, tmp_path, cache_dir, package, wheel):
    tampered_entry(cache_dir, package, wheel)
    good = tampered_entry(cache_dir, "goodpkg", "escpkg-1.0-py3-none-any.whl")
    dest = tmp_path / "a" / "b" / "dest"

    def outside():  # DEST's parents are made on purpose; nothing else may appear
        return {p for p in tmp_path.rglob("*") if not {"dest", "cache"} & set(p.parts) and p not in dest.parents}

    before = outside()
    out = cli("wheels", "publish", str(dest), env={"ENVMGR_CACHE_DIR": str(cache_dir)})
    after = outside()
    assert after == before, f"written outside DEST: {sorted(after - before)}"
    assert out.code == 0, out.stderr
    assert "not a name" in out.stderr and "published 1 new wheel(s)" in out.stdout
    assert (dest / "goodpkg" / good.name / "escpkg-1.0-py3-none-any.whl").is_file()
    assert sorted(p.name for p in dest.iterdir()) == ["goodpkg", "index.html"]


def test_s4_an_index_entry_with_a_path_for_a_wheel_is_not_read_as_an_entry(tmp_path):
    folder = tampered_entry(tmp_path / "idx", "escpkg", "../../outside.whl")
    assert wheels._read_entry(folder) is None
    assert wheelindex.render_project(folder.parent).count(b"<a ") == 0


# --- C11: the fast path trusts nothing in KEY.fast ---------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="the fast path runs on POSIX only")
@pytest.mark.parametrize(
    "args, damage",
    [
        (["export"], lambda d: d["out"].update(toml=5)),
        (["export", "--format", "sh"], lambda d: d["out"].update(sh=["x"])),
        (["run", "--", "true"], lambda d: d.update(ops=[("PATH", "prepend", 5)])),
        (["run", "--", "true"], lambda d: d.update(ops=[("PATH", "prepend", ["/x"])])),
        (["run", "--", "true"], lambda d: d.update(ops=[("PATH", "explode", "/x")])),
        (["run", "--", "true"], lambda d: d.update(ops=[("PATH", "set")])),
        (["run", "--", "true"], lambda d: d.update(marker=7)),
        (["export"], lambda d: d.update(validity={"/x": 5})),
        (["export"], lambda d: d.update(validity=[])),
        (["export"], lambda d: d.pop("entry")),
    ],
)
def test_c11_a_fast_file_of_the_wrong_types_is_no_answer(tmp_path, args, damage):
    import marshal

    from envmgr.fastpath import main as fast
    from tests.unit.fastpath.test_fast_path import PLAIN, store

    env = {"ENVMGR_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    watched = tmp_path / "w"
    watched.write_text("x")
    key = store(env, PLAIN, watched)
    assert fast.plan(args, env) is not None  # the intact file answers
    path = tmp_path / "cache" / "snapshots" / f"{key}.fast"
    data = marshal.loads(path.read_bytes())
    damage(data)
    path.write_bytes(marshal.dumps(data))
    assert fast.plan(args, env) is None  # the full CLI answers instead
