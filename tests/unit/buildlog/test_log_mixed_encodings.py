"""A build log that changes encoding on the way (audit E2): one program starts it in UTF-8, Windows
PowerShell 5.1's `>>` appends UTF-16LE (its default for redirection), and perhaps a UTF-8 tool again.
The log is made here in exactly those bytes; the failure line is F13's verbatim nvcc error
(../shared/facts/failures.md). Pure: runs in the Windows-CPython tier too.
"""

from __future__ import annotations

import json

import pytest

from envmgr.buildlog.read import stream_text
from tests.conftest import run_cli

SIG = "nvcc fatal   : Unsupported gpu architecture 'compute_120'"
PIP = b"Collecting llama-cpp-python\r\n"


def _logs() -> dict[str, tuple[bytes, int]]:
    """name -> (bytes, the 1-based line of the failure)."""
    sig16 = (SIG + "\r\n").encode("utf-16-le")
    return {
        "utf16 appended to a short utf8 log": (PIP * 20 + sig16, 21),
        "utf16 appended to a long utf8 log": (PIP * 1000 + sig16, 1001),
        "utf16 in the middle": (
            PIP * 30 + "PS> pip install\r\n".encode("utf-16-le") * 5 + (SIG + "\n").encode() + b"done\n",
            36,
        ),
        "ten NULs in the first 8 KB": (b"ok line\n" * 1000 + b"\x00" * 10 + b"\n" + (SIG + "\n").encode(), 1002),
    }


@pytest.mark.parametrize("name", list(_logs()))
@pytest.mark.parametrize("block", [1, 3, 64, 1 << 20])
def test_the_text_is_decoded_whatever_the_block_edges(name, block, tmp_path):
    data, _ = _logs()[name]
    (tmp_path / "b.log").write_bytes(data)
    text = "".join(stream_text(tmp_path / "b.log", block))
    assert SIG in text
    assert "\x00" not in text.replace("\x00" * 10, "")  # no UTF-16 read as UTF-8


@pytest.mark.parametrize("name", list(_logs()))
def test_doctor_finds_the_failure_at_its_line(name, tmp_path):
    data, line = _logs()[name]
    (tmp_path / "b.log").write_bytes(data)
    res = run_cli("doctor", "--log", str(tmp_path / "b.log"))
    assert res.code == 1, res.stdout + res.stderr  # a known failure: exit 1, not 2 ("binary") or 0
    assert f"line {line}: {SIG}" in res.stdout


def test_a_binary_file_is_still_binary(tmp_path):
    (tmp_path / "b.log").write_bytes(bytes(range(256)) * 40)
    res = run_cli("doctor", "--log", str(tmp_path / "b.log"))
    assert res.code == 2 and "not a text log (binary data)" in res.stderr


@pytest.mark.parametrize(
    "body,lines", [(b"line\n" * 10, 10), (b"line\r\n" * 10, 10), (b"line\n" * 9 + b"last", 10), (b"line\r" * 10, 10)]
)
def test_the_line_count_is_the_files(body, lines, tmp_path):
    """A 10-line log that ends with its newline said '(11 lines)' (audit M1)."""
    (tmp_path / "b.log").write_bytes(body)
    res = run_cli("doctor", "--log", str(tmp_path / "b.log"))
    assert res.code == 0 and f"({lines} lines)" in res.stdout, res.stdout
    res = run_cli("doctor", "--log", str(tmp_path / "b.log"), "--json")
    assert json.loads(res.stdout)["lines"] == lines
