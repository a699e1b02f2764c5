"""doctor --log on very long lines (issue 34, audit N20): time linear in a line's length whatever it holds.

On 5725032 a line holding a needle such as `nvcc` cost time quadratic in its length (128 KB: 25 s, 1 MB: over
11 minutes): the fact and signature regexes ran over the whole line, restarting a lazy repetition at every
character. The scans here run in a child process with a timeout, so the old engine fails them in seconds
instead of hanging the suite. The lines are hand-made (the audit's repro): no real log has a line this long
with a known failure at its end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envmgr.buildlog import engine as logengine
from envmgr.buildlog.engine import physical_lines
from envmgr.buildlog.facts import FACTS
from envmgr.buildlog.rules import NEAR_WORDS, SIGNATURES
from envmgr.buildlog.scan import _ANSI, scan_path

FAILURE = "nvcc fatal   : Unsupported gpu architecture 'compute_120'"
# The Windows-CPython tier runs under Wine on a shared machine: process start and I/O cost several times more there.
SLOW = 5 if sys.platform == "win32" else 1


# The child runs this checkout's envmgr whatever the interpreter's own path holds (the Windows-CPython tier's
# embeddable Python lists one checkout in its ._pth file, and ignores PYTHONPATH and the working folder).
ROOT = Path(__file__).resolve().parents[3]
ENVMGR = [
    sys.executable,
    "-c",
    f"import sys; sys.path.insert(0, {str(ROOT)!r}); from envmgr.cli.main import main; main()",
]


def _doctor(path: Path, env: dict[str, str], timeout: float) -> dict:
    proc = subprocess.run(
        [*ENVMGR, "doctor", "--log", str(path), "--json"],
        capture_output=True,
        timeout=timeout * SLOW,
        env=env,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr.decode(errors="replace")[-2000:]
    return json.loads(proc.stdout)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "ENVMGR_DATA_DIR": str(tmp_path / "data"),
        "NO_COLOR": "1",
    }


def test_n20_failure_at_the_end_of_a_128_kib_line_is_named_at_once(tmp_path: Path) -> None:
    log = tmp_path / "one-line.log"
    log.write_text("x" * (128 << 10) + " " + FAILURE + "\n", encoding="utf-8")
    start = time.perf_counter()
    scan = scan_path(log)  # 5725032: 25 s (audit); here well under a second, Wine included
    assert time.perf_counter() - start < 5 * SLOW
    assert [(m.id, m.line_no, m.details["arch"]) for m in scan.matches] == [("F13", 1, "compute_120")]


def test_n20_failure_at_the_end_of_a_1_mib_line_is_named_in_seconds(tmp_path: Path, env: dict[str, str]) -> None:
    log = tmp_path / "one-line.log"
    log.write_text("x" * (1 << 20) + " " + FAILURE + "\n", encoding="utf-8")
    doc = _doctor(log, env, timeout=60)  # 5725032: still running after 11 minutes (audit)
    top = doc["matches"][0]
    assert (top["id"], top["line_no"], top["details"]["arch"]) == ("F13", 1, "compute_120")


def _needle_line(size: int) -> str:
    """Every needle of the signatures, facts and near words, each after a long run of word characters (what made
    the lazy repetitions restart at every character), up to `size` characters, and the failure at the end."""
    needles = sorted(
        {n for s in SIGNATURES for n in s.needle}
        | {n for f in FACTS for n in f.needles}
        | {w for _, words in NEAR_WORDS for w in words}
    )
    unit = "".join(f"{n} {'a' * 300}_{n.replace(' ', '_')}-" for n in needles)
    return (unit * (size // len(unit) + 1))[:size] + " " + FAILURE


def test_n20_a_line_made_of_every_needle_costs_linear_time(tmp_path: Path, env: dict[str, str]) -> None:
    log = tmp_path / "needles.log"
    log.write_text(_needle_line(2 << 20) + "\n", encoding="utf-8")
    doc = _doctor(log, env, timeout=30)  # 5725032: 58 s (under a load average of 7)
    assert "F13" in [m["id"] for m in doc["matches"]]


def test_n20_a_needle_early_in_a_long_line_does_not_hide_the_failure_later_in_it(tmp_path: Path) -> None:
    # the region around the first `nvcc` stops LONG characters on; the next place of the needle is looked at after it
    log = tmp_path / "early.log"
    log.write_text("-- nvcc " + "y" * (3 * 16384) + " " + FAILURE + "\nnext line\n", encoding="utf-8")  # 3 * LONG
    scan = scan_path(log)
    assert [(m.id, m.line_no, m.details["arch"]) for m in scan.matches] == [("F13", 1, "compute_120")]
    assert scan.lines == 2


def test_n20_a_line_longer_than_line_max_is_read_as_its_two_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logengine, "LINE_MAX", 16, raising=False)
    line = "0123456789abcdef" * 40
    chunks = ["short\n", *(line[k : k + 7] for k in range(0, len(line), 7)), "\nafter\r\n", "end"]
    got = [text for batch in physical_lines(chunks, _ANSI) for text in batch]
    assert got == [
        "short",
        f"01234567 [... {len(line) - 16} characters of this line not read ...] 89abcdef",
        "after",
        "end",
    ]


def test_n20_lines_after_a_shortened_line_keep_their_numbers(tmp_path: Path) -> None:
    log = tmp_path / "long-then-failure.log"
    log.write_text("first\n" + "z" * ((4 << 20) + 12345) + "\n" + FAILURE + "\n", encoding="utf-8")  # > LINE_MAX
    scan = scan_path(log)
    assert [(m.id, m.line_no) for m in scan.matches] == [("F13", 3)]
    assert scan.lines == 3
