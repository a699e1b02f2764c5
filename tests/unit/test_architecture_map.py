"""docs/architecture.md's table names every package and module of envmgr/, one line each, and nothing else
(issue 35 item 5): a module added, moved or removed without its line fails here."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
_ROW = re.compile(r"^\| `([^`]+)` \| (.*) \|$")


def _tree() -> set[str]:
    pkg = ROOT / "envmgr"
    names = {p.name for p in pkg.glob("*.py")}
    for init in pkg.rglob("__init__.py"):
        folder = init.parent
        if folder == pkg:
            continue
        names.add(folder.relative_to(pkg).as_posix() + "/")
        names |= {p.relative_to(pkg).as_posix() for p in folder.glob("*.py") if p.name != "__init__.py"}
    return names


def _table(text: str) -> dict[str, str]:
    section = text.split("## Every module", 1)[1].split("\n## ", 1)[0]
    rows = [m.groups() for m in map(_ROW.match, section.splitlines()) if m]
    assert len(rows) == len({name for name, _ in rows}), "a module is listed twice"
    return dict(rows)


def test_the_map_and_the_tree_name_the_same_modules():
    table = _table(DOC.read_text(encoding="utf-8"))
    tree = _tree()
    assert sorted(tree - set(table)) == [], "in envmgr/ but not in docs/architecture.md's table"
    assert sorted(set(table) - tree) == [], "in docs/architecture.md's table but not in envmgr/"


def test_every_line_says_what_the_module_is():
    table = _table(DOC.read_text(encoding="utf-8"))
    assert [name for name, what in table.items() if len(what.strip()) < 12] == []


def test_the_check_sees_a_missing_and_an_extra_module():
    text = "## Every module\n\n| `a.py` | the first module here |\n| `b/` | a package of things |\n\n## Next\n"
    table = _table(text)
    assert set(table) == {"a.py", "b/"}
    assert set(table) - {"a.py"} == {"b/"}


def test_unit_tests_mirror_the_packages():
    """tests/unit/<package>/ for the tests of envmgr/<package>/; tests/unit/ itself holds the tests of the
    top-level modules and the whole-package checks (architecture, start-up, docs, workflows)."""
    packages = {p.parent.name for p in (ROOT / "envmgr").glob("*/__init__.py")}
    folders = {p.name for p in (ROOT / "tests" / "unit").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert sorted(folders - packages) == [], "a tests/unit folder that names no envmgr package"
    loose = [p.name for p in (ROOT / "tests" / "unit").rglob("*.py")
             if p.name != "__init__.py" and not p.name.startswith("test_")]
    assert loose == []
