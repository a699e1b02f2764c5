"""logfacts' needle pre-check skips a needle that holds a shorter needle found absent: the set it gives
must be the set a search of every needle gives, on real logs (ASCII and not) and on a text without any."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from envmgr.buildlog import facts as logfacts
from envmgr.buildlog.engine import Probe

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from corpus_index import CORPUS, load_index, read_log

EVERY = {n for fx in logfacts.FACTS for n in fx.needles}
TRAIN = [e for e in load_index() if e.split == "train"][::9]


def _naive(body: str) -> set[str]:
    return {n for n in EVERY if n in body}


def _check(body: str) -> None:
    assert logfacts._present(EVERY, Probe(body)) == _naive(body)


@pytest.mark.parametrize(("name", "origin"), [(e.file, e.origin) for e in TRAIN])
def test_present_needles_equal_a_search_of_each(name, origin):
    body = read_log(CORPUS / name, origin).decode("utf-8", "replace")
    _check(body)


def test_some_needles_hold_shorter_ones_and_a_table_has_none_of_many():
    assert sum(1 for n in EVERY if logfacts._INSIDE[n]) > 10
    table = "| 0  NVIDIA GeForce RTX 4090   Off | 00000000:01:00.0 Off |                  N/A |\n" * 50
    _check(table)
    assert logfacts._present(EVERY, Probe(table)) >= {"RTX"}
