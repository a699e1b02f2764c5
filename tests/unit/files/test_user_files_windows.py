"""The one writer (envmgr/files/atomic.py, issue 22 S2) on Windows: a device name (NUL, CON, COM1, ...
with any extension, in any folder) is a device there, so it is written in place and never renamed
over or backed up. On POSIX the same rule is tested through links in a temporary folder
(test_user_files.py): /dev/null itself is never written by a test.
"""

from __future__ import annotations

import sys

import pytest

from envmgr.files.atomic import write_user_file
from tests.conftest import MACHINES

pytestmark = pytest.mark.skipif(sys.platform != "win32", reason="Windows device names (the Windows-CPython tier)")


@pytest.mark.parametrize("name", ["NUL", "nul", "NUL.toml", "nul.txt"])
def test_a_windows_device_name_is_written_in_place(tmp_path, name):
    assert write_user_file(tmp_path / name, b"x" * 100, backup=True) is None
    assert list(tmp_path.iterdir()) == []  # no file named NUL, no .bak, no temporary file


def test_record_to_nul(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = cli(
        "--machine",
        str(MACHINES / "linux-two-toolkits.toml"),
        "record",
        "-o",
        "NUL",
        env={"ENVMGR_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert out.code == 0, out.stderr
    assert "previous file kept" not in out.stderr
    assert list(tmp_path.iterdir()) == []  # no NUL file, no NUL.bak
