"""Audit hostile-input-2026-12 N25, N7, N8, N11, N27: the files users hand us (config.toml, key files) and
the files and documents envmgr writes (record -o and its .bak, --json under any PYTHONIOENCODING)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envmgr.files import atomic
from tests.conftest import EXAMPLES, run_cli

MACHINE = str(EXAMPLES / "community-buildtools-cuda124.toml")


def _envmgr(
    tmp_path: Path, *args: str, extra: dict[str, str] | None = None, limit_bytes: int | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "ENVMGR_DATA_DIR": str(tmp_path / "data"),
        "ENVMGR_PREBUILT_INDEX": "",
        "ENVMGR_WHEEL_INDEX": "",
        "NO_COLOR": "1",
        **(extra or {}),
    }

    def fsize() -> None:
        import resource

        assert limit_bytes is not None
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run(
        [sys.executable, "-m", "envmgr", *args],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        cwd=tmp_path,
        preexec_fn=fsize if limit_bytes else None,
    )


@pytest.mark.posix
@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_n25_record_past_ulimit_keeps_the_file_and_its_previous_backup(tmp_path):
    rec = tmp_path / "r.toml"
    rec.write_text("ORIGINAL " * 2000)
    rec.with_name("r.toml.bak").write_text("PREVIOUS GOOD BACKUP")
    done = _envmgr(tmp_path, "--machine", MACHINE, "record", "-o", str(rec), limit_bytes=1024)
    assert done.returncode == 2 and "cannot write" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert rec.read_text() == "ORIGINAL " * 2000
    assert rec.with_name("r.toml.bak").read_text() == "PREVIOUS GOOD BACKUP"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary left


def test_n25_a_failed_write_never_touches_the_backup_function_level(tmp_path, monkeypatch):
    """The same through both writers where no ulimit exists (Windows): the write of the new data fails."""
    for write in (atomic.atomic_write, lambda p, d, backup: atomic.write_user_file(p, d, backup=backup)):
        target = tmp_path / "r.toml"
        target.write_text("ORIGINAL")
        target.with_name("r.toml.bak").write_text("PREVIOUS GOOD BACKUP")
        real = os.fsync

        def full(fd: int) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(atomic.os, "fsync", full)
        with pytest.raises(OSError):
            write(target, b"NEW" * 1000, backup=True)
        monkeypatch.setattr(atomic.os, "fsync", real)
        assert target.read_text() == "ORIGINAL"
        assert target.with_name("r.toml.bak").read_text() == "PREVIOUS GOOD BACKUP"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["r.toml", "r.toml.bak"]
        # A write that succeeds moves the old file to the backup, and never writes through a linked .bak.
        victim = tmp_path / "victim"
        victim.write_text("keep")
        if sys.platform != "win32":  # a link needs a privilege there
            target.with_name("r.toml.bak").unlink()
            target.with_name("r.toml.bak").symlink_to(victim)
        write(target, b"NEW", backup=True)
        assert target.read_bytes() == b"NEW" and target.with_name("r.toml.bak").read_text() == "ORIGINAL"
        assert victim.read_text() == "keep" and not target.with_name("r.toml.bak").is_symlink()
        for p in tmp_path.iterdir():
            p.unlink()


def test_n7_deep_prebuilt_in_config_toml_is_one_line(tmp_path):
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.toml").write_text("[wheels]\nprebuilt = " + "[" * 1000 + "]" * 1000 + "\n")
    result = run_cli(
        "install",
        "llama-cpp-python",
        "--dry-run",
        env={
            "ENVMGR_CONFIG_DIR": str(config),
            "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
            "ENVMGR_PREBUILT_INDEX": None,
            "ENVMGR_WHEEL_INDEX": None,
        },
    )
    assert result.code == 2 and "Traceback" not in result.stderr, result.stderr
    assert "config.toml: not a valid TOML file: nested too deeply" in result.stderr


def test_n7_long_dotted_keys_in_config_toml_are_refused_at_once(tmp_path):
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.toml").write_text("a" + ".a" * 20000 + " = 1\n")
    started = time.monotonic()
    result = run_cli(
        "install",
        "llama-cpp-python",
        "--dry-run",
        env={
            "ENVMGR_CONFIG_DIR": str(config),
            "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
            "ENVMGR_PREBUILT_INDEX": None,
            "ENVMGR_WHEEL_INDEX": None,
        },
    )
    assert time.monotonic() - started < 3
    assert result.code == 2 and "a key nested 100 or more levels deep (at line 1)" in result.stderr, result.stderr


def test_n7_config_toml_is_parsed_once_per_text(tmp_path, monkeypatch):
    from envmgr.files import tomlread
    from envmgr.wheels import prebuilt, remote

    monkeypatch.setenv("ENVMGR_CONFIG_DIR", str(tmp_path))
    monkeypatch.delenv("ENVMGR_WHEEL_INDEX", raising=False)
    (tmp_path / "config.toml").write_text('[wheels]\nprebuilt = ["http://mirror/whl/cu124/"]\nindex = "/srv/w"\n')
    parsed: list[str] = []
    real = tomlread.load_toml
    monkeypatch.setattr(tomlread, "load_toml", lambda text, *a, **k: (parsed.append(text), real(text, *a, **k))[1])
    for _ in range(3):
        assert prebuilt.configured((), False)[0] == ("http://mirror/whl/cu124/",)
        assert remote.configured_index(None) == "/srv/w"
    assert len(parsed) == 1
    (tmp_path / "config.toml").write_text('[wheels]\nprebuilt = ["http://other/"]\n')
    assert prebuilt.configured((), False)[0] == ("http://other/",) and len(parsed) == 2


def test_n8_a_config_folder_name_over_255_characters_is_no_config(tmp_path, monkeypatch):
    from envmgr.wheels import prebuilt, remote

    monkeypatch.setenv("ENVMGR_CONFIG_DIR", str(tmp_path / ("n" * 300)))
    monkeypatch.delenv("ENVMGR_WHEEL_INDEX", raising=False)
    assert prebuilt.configured((), False) == (prebuilt.default_indexes(), "llama-cpp-python's published cuXYZ indexes")
    assert remote.configured_index(None) is None


def _strict(text: str) -> object:
    def refuse(constant: str) -> object:
        raise AssertionError(f"not valid JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def _entry(cache: Path, extra: str) -> None:
    key = {
        "package": "llama-cpp-python",
        "version": "0.3.36",
        "source": "index",
        "cuda": "13.0",
        "archs": "89",
        "generator": "Ninja",
        "cmake_args": "",
        "python_tag": "cp311",
        "platform": "linux_x86_64",
    }
    folder = cache / "wheels" / hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
    folder.mkdir(parents=True)
    wheel = b"PK\x05\x06" + b"\0" * 18  # an empty zip: the listing reads the key file, not the wheel
    (folder / "llama_cpp_python-0.3.36-py3-none-any.whl").write_bytes(wheel)
    head = json.dumps(
        {
            "schema": 1,
            "key": key,
            "wheel": "llama_cpp_python-0.3.36-py3-none-any.whl",
            "sha256": hashlib.sha256(wheel).hexdigest(),
        }
    )
    (folder / "entry.json").write_text(head[:-1] + extra + "}")  # the audit's mkentry: extra text spliced in


@pytest.mark.parametrize("value", ["1e999", "-1e999", "NaN", "Infinity", "-1e308", "1e300", "true", '"5"'])
def test_n11_build_seconds_never_makes_wheels_list_json_invalid(tmp_path, value):
    cache = tmp_path / "cache"
    _entry(cache, f', "build_seconds": {value}')
    result = run_cli("wheels", "list", "--json", env={"ENVMGR_CACHE_DIR": str(cache)})
    assert result.code == 0, result.stderr
    [row] = _strict(result.stdout)["wheels"]
    assert row.get("broken") or row["build_seconds"] == 0.0, row  # unreadable, or read as "unknown"
    text = run_cli("wheels", "list", env={"ENVMGR_CACHE_DIR": str(cache)})
    assert text.code == 0 and (row.get("broken") or "built in 0 s" in text.stdout), text.stdout


def test_n11_the_json_writer_refuses_nan_and_infinity():
    from envmgr.files.jsondoc import dumps
    from envmgr.output import emit_json

    for bad in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(ValueError):
            dumps({"x": bad})
        with pytest.raises(ValueError):
            emit_json({"x": bad})
    assert dumps({"x": 1.5}) == '{"x": 1.5}'


def test_n27_json_is_utf8_under_any_pythonioencoding(tmp_path):
    snap = tmp_path / "u.toml"
    platform = "windows" if sys.platform == "win32" else "linux"
    snap.write_text(f'schema = 1\nplatform = "{platform}"\n[env]\nX = "ünïcødé ✓ 日本"\n', encoding="utf-8")
    for encoding in ("ascii", "latin-1", "cp1252", "utf-16"):
        env = {
            **os.environ,
            "PYTHONIOENCODING": encoding,
            "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
            "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        }
        done = subprocess.run(
            [sys.executable, "-m", "envmgr", "export", "--from", str(snap), "--format", "json"],
            env=env,
            capture_output=True,
            timeout=120,
        )
        assert done.returncode == 0 and b"Traceback" not in done.stderr, (encoding, done.stderr)
        assert _strict(done.stdout.decode("utf-8"))["env"]["X"] == {"set": "ünïcødé ✓ 日本"}
