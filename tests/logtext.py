"""Helpers for the doctor --log tests that read TRAIN logs of tests/corpus/logs and scan text (issue 23)."""

from __future__ import annotations

import sys
from pathlib import Path

from envmgr.buildlog.facts import FactScanner
from envmgr.buildlog.scan import LogScan, scan_path
from tests.conftest import CORPUS

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from corpus_index import load_index, read_log

ROWS = {e.file: e for e in load_index()}


def train_text(name: str) -> str:
    """A train log's text, annotation lines blanked (a held-out name fails here: those are the bench's)."""
    e = ROWS[name]
    assert e.split == "train"
    return read_log(CORPUS / name, e.origin).decode("utf-8")


def scan(text: str, tmp_path: Path) -> LogScan:
    path = tmp_path / "build.log"
    path.write_bytes(text.encode("utf-8"))
    return scan_path(path)


def decisive(text: str, tmp_path: Path) -> tuple[str | None, str | None]:
    found = scan(text, tmp_path).decisive
    return (found.id, found.details.get("signature")) if found else (None, None)


def facts(text: str) -> FactScanner:
    lines = text.split("\n")
    fs = FactScanner()
    fs.feed(list(range(1, len(lines) + 1)), lines)
    return fs.finish()
