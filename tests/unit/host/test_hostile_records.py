"""A hostile machine record (issue 22; audit ../shared/audits/hostile-input-2026-11.md S5): `{ from = … }`
reads a file relative to the record's folder, and only there. A record someone sends must not make
`envmgr --machine FILE record -o out.toml` embed this machine's files (the audit embedded /etc/passwd).

Paths are refused in both flavours on every platform (a record travels between Linux and Windows), so
this module also runs in the Windows-CPython tier (tests/run-win32.sh): no POSIX-only tool is used but
in the one test marked posix (a symbolic link).
"""

from __future__ import annotations

import json
import os
import sys

import pytest

SECRET = "root:x:0:0:SECRET-LINE"


def record(folder, source: str) -> str:
    """A Linux record whose version.json comes `from` source (written by hand, as the audit's evil.toml)."""
    path = folder / "rec" / "evil.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = (
        'schema = 1\nplatform = "linux"\n[env]\nPATH = "/usr/local/cuda-13.0/bin:/usr/bin"\n[files]\n'
        '"/usr/local/cuda-13.0/bin/nvcc" = ""\n'
        f'"/usr/local/cuda-13.0/version.json" = {{ from = {json.dumps(source)} }}\n'
    )  # a TOML basic string
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.fixture
def secret(tmp_path):
    path = tmp_path / "secret.txt"
    path.write_text(SECRET + "\n")
    return path


@pytest.mark.parametrize(
    "source",
    [
        "ABS",
        "../secret.txt",
        "..\\secret.txt",
        "sub/../../secret.txt",
        "C:\\secret.txt",
        "c:secret.txt",
        "\\\\server\\share\\secret.txt",
        "/etc/passwd",
    ],
)
def test_s5_from_outside_the_records_folder_is_refused(cli, tmp_path, secret, source):
    if source == "ABS":
        source = str(secret)
    machine = record(tmp_path, source)
    out = tmp_path / "out.toml"
    result = cli("--machine", machine, "record", "-o", str(out), env={"ENVMGR_CACHE_DIR": str(tmp_path / "cache")})
    assert result.code == 2 and "leaves its folder" in result.stderr, result.stderr
    assert "keep referenced files in the record's folder" in result.stderr
    assert not out.exists() and SECRET not in result.stdout + result.stderr


def test_s5_from_inside_the_records_folder_still_works(cli, tmp_path):
    machine = record(tmp_path, "captured/version.json")
    captured = tmp_path / "rec" / "captured"
    captured.mkdir()
    (captured / "version.json").write_text('{"cuda": {"name": "CUDA SDK", "version": "13.0.88"}}')
    out = tmp_path / "out.toml"
    result = cli("--machine", machine, "record", "-o", str(out), env={"ENVMGR_CACHE_DIR": str(tmp_path / "cache")})
    assert result.code == 0, result.stderr
    assert "13.0.88" in out.read_text(encoding="utf-8")


@pytest.mark.posix
@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need a privilege on Windows")
def test_s5_a_link_inside_the_folder_to_a_file_outside_is_refused(cli, tmp_path, secret):
    machine = record(tmp_path, "innocent.json")
    os.symlink(secret, tmp_path / "rec" / "innocent.json")
    result = cli(
        "--machine",
        machine,
        "record",
        "-o",
        str(tmp_path / "out.toml"),
        env={"ENVMGR_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert result.code == 2 and "outside the record's folder" in result.stderr
    assert SECRET not in result.stdout + result.stderr and not (tmp_path / "out.toml").exists()
