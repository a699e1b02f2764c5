"""envmgr/wheels/downloads.py: the prebuilt plan's downloads under <cache>/prebuilt (the isolation fixture's
cache folder): listed, pruned by age and cleared, and nothing of anyone else's touched (audit N16)."""

from __future__ import annotations

import json
import os
import time

from envmgr.host import dirs
from envmgr.wheels import downloads

SLOT_A, SLOT_B = "a" * 24, "b" * 24


def _slot(name: str, facts: str | None, wheel_bytes: int = 10):
    folder = downloads.downloads_dir() / name
    folder.mkdir(parents=True)
    if facts is not None:
        (folder / downloads.FACTS).write_text(facts, encoding="utf-8")
    (folder / "w.whl").write_bytes(b"x" * wheel_bytes)
    return folder


def test_listed_reads_each_slot_and_skips_what_is_not_envmgrs():
    assert downloads.downloads_dir() == dirs.cache_dir() / "prebuilt"
    assert downloads.listed() == []  # no folder yet
    good = json.dumps({"wheel": "llama_cpp_python-0.3.16-cp312-cp312-linux_x86_64.whl"})
    a = _slot(SLOT_A, good)
    b = _slot(SLOT_B, "{not json")
    (downloads.downloads_dir() / "mine").mkdir()  # another name: not ours
    (downloads.downloads_dir() / ("c" * 24)).symlink_to(a)  # a link: not ours
    got = downloads.listed()
    assert [(d.folder, d.wheel) for d in got] == [(a, "llama_cpp_python-0.3.16-cp312-cp312-linux_x86_64.whl"), (b, "")]
    assert got[0].size == len(good) + 10 and got[1].size == len("{not json") + 10


def test_prune_removes_only_downloads_unused_for_the_age_and_used_renews_one():
    old, fresh = _slot(SLOT_A, "{}"), _slot(SLOT_B, "{}")
    month_ago = time.time() - 31 * 86400
    for folder in (old, fresh):
        os.utime(folder / downloads.FACTS, (month_ago, month_ago))
    downloads.used(fresh)
    assert downloads.prune() == 1 and not old.exists() and fresh.exists()
    assert downloads.prune(max_age_days=1, now=time.time() + 2 * 86400) == 1 and not fresh.exists()


def test_clear_removes_downloads_and_killed_leftovers_only():
    _slot(SLOT_A, "{}")
    root = downloads.downloads_dir()
    (root / ".download-1234").mkdir()
    (root / f".{SLOT_B}.3.tmp").mkdir()
    (root / "keep-me").mkdir()
    (root / "notes.txt").write_text("")
    assert downloads.clear() == 1
    assert sorted(os.listdir(root)) == ["keep-me", "notes.txt"]
