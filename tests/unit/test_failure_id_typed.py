"""FailureId (issue 35 part 3): a catalog id is a type, so mypy (strict, as CI runs it) rejects an id outside the
catalog wherever one is written: a rule's decision, a check's finding, a verify step."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from envmgr.catalog import CATALOG, ids, is_failure_id

ROOT = Path(__file__).resolve().parents[2]


def test_the_ids_are_the_catalogs() -> None:
    assert ids() == tuple(f"F{n:02}" for n in range(1, 26)) == tuple(CATALOG)
    assert is_failure_id("F07") and not is_failure_id("F99") and not is_failure_id("f07")


@pytest.mark.slow
def test_mypy_rejects_an_id_outside_the_catalog(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    probe = tmp_path / "probe.py"
    probe.write_text(
        textwrap.dedent("""\
        from envmgr.buildlog.rules.base import Add, Facts
        from envmgr.doctor.checks import finding

        def decide(fs: Facts, add: Add) -> None:
            add("F07", "fine", fs.first("toolkit_missing"))
            add("F99", "not in the catalog", fs.first("toolkit_missing"))

        bad = finding("F26", "fail", "not in the catalog either")
        """),
        encoding="utf-8",
    )
    # in a child process: mypy raises the interpreter's recursion limit, which the suite's deep-input tests rely on
    argv = [
        sys.executable,
        "-m",
        "mypy",
        str(probe),
        "--strict",
        "--no-incremental",
        "--follow-imports=silent",
        "--python-version",
        "3.10",
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    done = subprocess.run(
        argv,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    out = done.stdout
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert done.returncode == 1, out + done.stderr
    assert [e.split(":")[1] for e in errors] == ["6", "8"], out
    assert "Literal['F99']" in errors[0] and "Literal['F26']" in errors[1], out
