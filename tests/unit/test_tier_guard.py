"""The CI tier guard (tests/tierguard.py): a tier that ran zero tests fails a CI run, loudly.

The experiments run pytest in a child process: on throwaway test files, and on this suite's own files
with a `-p` plugin that takes tree-sitter away or skips a whole tier, as a machine without them would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.tierguard import covers, mark_keeps, tiers_for

BLOCK_TREE_SITTER = """import sys
for name in ("tree_sitter", "tree_sitter_powershell", "tree_sitter_batch"):
    sys.modules[name] = None      # `import tree_sitter` now raises ImportError, as when it is not installed
"""
SKIP_ALL = """import pytest
def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.skip(reason="simulated: the tier's tool is missing"))
"""
IGNORE_ALL = """def pytest_ignore_collect(collection_path, config):
    return True if collection_path.name.startswith("test_") else None
"""


def pytest_run(where: Path, *args: str, ci: bool, plugins: Path | None = None) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (ROOT, plugins) if p)
    if ci:
        env["CI"] = "true"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.returncode, done.stdout + done.stderr


def plugin(tmp_path: Path, name: str, source: str) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(source)
    return folder


def test_which_tiers_each_platform_checks():
    assert tiers_for("linux") == ("wine", "linux", "winpy", "posix")
    assert tiers_for("win32") == ("windows",)  # there the POSIX tiers skip by design


def test_the_mark_expression_decides_which_tiers_are_expected():
    workflow = "not wine and not linux and not gpu"  # .github/workflows/windows.yml, run-win32.sh
    assert [t for t in ("wine", "linux", "winpy", "posix", "windows") if mark_keeps(workflow, t)] == [
        "posix",
        "windows",
    ]
    assert all(mark_keeps("not gpu and not windows", t) for t in ("wine", "linux", "winpy", "posix"))
    assert mark_keeps("", "wine") and not mark_keeps("not wine", "winpy")  # winpy tests are wine tests


def test_a_path_argument_covers_its_folder_and_the_ones_below():
    home = ROOT / "tests" / "wine"
    assert covers(["tests"], ROOT, home) and covers(["tests/wine/test_cmd_quoting.py::x"], ROOT, home) is False
    assert covers(["tests/wine"], ROOT, home) and covers([str(ROOT)], Path("/"), home)
    assert not covers(["tests/unit", "tests/machines"], ROOT, home)


@pytest.fixture
def throwaway(tmp_path) -> Path:
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    wine: w\n    posix: p\n")
    (tmp_path / "test_t.py").write_text(
        "import pytest\n\n"
        "def test_plain():\n    pass\n\n"
        "@pytest.mark.wine\ndef test_wine_skipped():\n    pytest.skip('wine64 is missing')\n\n"
        "@pytest.mark.posix\n@pytest.mark.xfail(strict=True)\ndef test_posix_xfail():\n    assert False\n"
    )
    return tmp_path


@pytest.mark.posix
def test_under_ci_a_tier_that_only_skipped_fails_the_run(throwaway):
    rc, out = pytest_run(throwaway, "-p", "tests.tierguard", ci=True)
    assert rc == 1, out
    assert "tier guard: a whole test tier ran zero tests" in out
    assert "tier 'wine': 1 selected, 0 ran; first reason: wine64 is missing" in out
    assert "tier 'posix'" not in out  # an xfailed test ran


@pytest.mark.posix
def test_without_ci_or_with_the_tier_deselected_the_run_passes(throwaway):
    rc, out = pytest_run(throwaway, "-p", "tests.tierguard", ci=False)
    assert rc == 0 and "tier guard" not in out, out
    rc, out = pytest_run(throwaway, "-p", "tests.tierguard", "-m", "not wine", ci=True)
    assert rc == 0 and "tier guard (CI): posix 1 ran of 1" in out, out


@pytest.mark.posix
def test_removing_tree_sitter_fails_ci_and_skips_only_the_parsing_tests_elsewhere(tmp_path):
    """The experiment of issue 12: tree-sitter uninstalled. Under CI the tests that parse fail and
    say what is missing; on a developer machine they skip, and the rest of the files still run."""
    blocker = plugin(tmp_path, "block_tree_sitter", BLOCK_TREE_SITTER)
    files = ("tests/unit/shellkit/test_shellkit_ps1.py", "tests/unit/shellkit/test_session_scripts.py")
    rc, out = pytest_run(ROOT, "-p", "block_tree_sitter", "-q", *files, ci=True, plugins=blocker)
    assert rc == 1, out
    assert "needs the Python package 'tree_sitter'" in out and "CI is set, so this is a failure" in out
    rc, out = pytest_run(ROOT, "-p", "block_tree_sitter", "-q", *files, ci=False, plugins=blocker)
    assert rc == 0, out
    summary = out.strip().splitlines()[-1]
    assert " passed" in summary and " skipped" in summary and "failed" not in summary, summary


@pytest.mark.posix
def test_a_whole_tier_skipped_or_not_collected_fails_ci(tmp_path):
    skipper = plugin(tmp_path, "skip_all", SKIP_ALL)
    rc, out = pytest_run(
        ROOT, "-p", "skip_all", "-q", "-m", "not gpu", "tests/wine/test_cmd_quoting.py", ci=True, plugins=skipper
    )
    assert rc == 1, out
    assert "tier 'wine': 8 selected, 0 ran; first reason: simulated: the tier's tool is missing" in out
    ignorer = plugin(tmp_path, "ignore_all", IGNORE_ALL)
    rc, out = pytest_run(ROOT, "-p", "ignore_all", "-q", "-m", "not gpu", "tests/winpy", ci=True, plugins=ignorer)
    assert rc == 1, out
    assert "tier 'winpy': 0 selected, 0 ran; first reason: its tests were not collected" in out
