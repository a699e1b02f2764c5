"""tests/isolation.py: each test has its own envmgr folders, and a run that reaches envmgr's default
(real) folders fails (issue 34, deliverable 4)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import platformdirs

from tests import isolation
from tests.conftest import ROOT


def test_every_test_has_its_own_folders_inherited_by_subprocesses(isolated_user_folders):
    for name, sub in (("ENVMGR_CACHE_DIR", "cache"), ("ENVMGR_CONFIG_DIR", "config"), ("ENVMGR_DATA_DIR", "data")):
        assert os.environ[name] == str(isolated_user_folders / sub)
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.environ['ENVMGR_CACHE_DIR'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert child.stdout.strip() == str(isolated_user_folders / "cache")


def test_platformdirs_defaults_point_at_the_trap_for_the_whole_session(request):
    guard = request.config.pluginmanager.get_plugin("envmgr-isolation")
    cache = Path(platformdirs.user_cache_dir("envmgr", appauthor=False))
    assert cache.is_relative_to(guard.trap), cache
    assert len(guard.real) == 3 and not any(f.is_relative_to(guard.trap) for f in guard.real), guard.real


def _run(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    test = tmp_path / "test_generated.py"
    test.write_text("import os\nfrom pathlib import Path\n\n\ndef test_x(tmp_path):\n" + body)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    # sys.path by hand: the Windows-CPython tier's embeddable Python ignores PYTHONPATH (its ._pth file)
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r}); import pytest; sys.exit(pytest.main(['-q', '-p', "
        f"'tests.isolation', '-p', 'no:cacheprovider', '--rootdir', {str(tmp_path)!r}, {str(test)!r}]))"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_a_run_that_writes_to_the_default_cache_fails(tmp_path):
    done = _run(
        tmp_path,
        "    os.environ.pop('ENVMGR_CACHE_DIR', None)\n"
        "    from envmgr.cache import store\n"
        "    store.store('k', 'schema = 1\\n', [])\n",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed" in done.stdout and "ISOLATION: tests wrote to envmgr's default folders" in done.stdout


def test_the_suites_own_download_cache_beside_envmgrs_is_not_envmgrs(tmp_path):
    """tests/linux/test_devicecode_oracle.py keeps NVIDIA's wheels in $XDG_CACHE_HOME/envmgr-test-downloads:
    a folder of the suite's, not envmgr's (platformdirs names envmgr's "envmgr" exactly)."""
    done = _run(
        tmp_path,
        "    d = Path(os.environ['XDG_CACHE_HOME']) / 'envmgr-test-downloads'\n"
        "    d.mkdir(parents=True)\n"
        "    (d / 'x.whl').write_bytes(b'x')\n",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ISOLATION" not in done.stdout


def test_a_run_that_writes_to_its_own_folders_passes(tmp_path):
    done = _run(
        tmp_path,
        "    os.environ['ENVMGR_CACHE_DIR'] = str(tmp_path / 'c')\n"
        "    from envmgr.cache import store\n"
        "    store.store('k', 'schema = 1\\n', [])\n"
        "    assert (tmp_path / 'c').is_dir()\n",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ISOLATION" not in done.stdout


def test_changes_names_what_was_added_changed_and_removed():
    before = {"a": (1, 10), "b": (2, 20), "c": (3, 30)}
    after = {"a": (1, 10), "b": (2, 21), "d": (4, 40)}
    assert isolation.changes(before, after) == ["changed b", "new d", "removed c"]
    assert isolation.changes(before, dict(before)) == []


def test_listing_sees_files_and_folders(tmp_path):
    (tmp_path / "snapshots").mkdir()
    (tmp_path / "snapshots" / "x.toml").write_text("abc")
    found = isolation.listing(tmp_path)
    assert set(found) == {"snapshots", "snapshots/x.toml"} and found["snapshots/x.toml"][0] == 3
    assert isolation.listing(tmp_path / "absent") == {}
