"""envmgr/wheels/staging.py: `wheels publish`'s staging folders, locked while their publisher lives, swept
once it is gone (audit M9)."""

from __future__ import annotations

import os
import time

import pytest

from envmgr.wheels.staging import ORPHAN_AGE_S, held, sweep

DIGEST = "0123456789abcdef0123"


def test_held_names_two_folders_beside_the_target_and_removes_them_and_the_lock(tmp_path):
    target = tmp_path / "llama-cpp-python" / DIGEST
    with held(target) as (staging, old):
        assert staging.parent == old.parent == target.parent
        assert staging.name.startswith(f".{DIGEST}.") and staging.name.endswith(".tmp")
        assert old.name == staging.name[:-4] + ".old"
        assert (target.parent / (staging.name[:-4] + ".lock")).is_file()
        (staging / "sub").mkdir(parents=True)
        (staging / "sub" / "a.whl").write_bytes(b"PK")
    assert sorted(os.listdir(target.parent)) == []


@pytest.mark.posix  # flock: a second open of the lock file conflicts even in the same process
def test_sweep_leaves_a_live_publishers_folder_alone(tmp_path):
    project = tmp_path / "proj"
    with held(project / DIGEST) as (staging, _old):
        staging.mkdir()
        assert sweep(project) == [] and staging.is_dir()


def test_sweep_removes_a_killed_publishers_folder_and_its_free_lock(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / f".{DIGEST}.aaaaaaaaaaaa.tmp").mkdir()
    (project / f".{DIGEST}.aaaaaaaaaaaa.lock").write_text("")  # nobody holds it: the publisher died
    (project / f".{DIGEST}.bbbbbbbbbbbb.old").mkdir()  # no lock file, fresh: kept for now
    stale = project / f".{DIGEST}.cccccccccccc.tmp"  # no lock file, older than an hour: gone
    stale.mkdir()
    then = time.time() - ORPHAN_AGE_S - 60
    os.utime(stale, (then, then))
    (project / DIGEST).mkdir()  # a published entry: never touched
    (project / ".notes.tmp").mkdir()
    assert sorted(sweep(project)) == [f".{DIGEST}.aaaaaaaaaaaa.tmp", f".{DIGEST}.cccccccccccc.tmp"]
    assert sorted(os.listdir(project)) == sorted([".notes.tmp", f".{DIGEST}.bbbbbbbbbbbb.old", DIGEST])
    assert sweep(tmp_path / "missing") == []
