"""docs/architecture.md's table names every package and module of envmgr/, one line each, and nothing else
(issue 35 item 5): a module added, moved or removed without its line fails here. And every module is imported
by at least one test (issue 35 item 4): a module exercised only through the CLI, or not at all, fails here.
"""

from __future__ import annotations

import ast
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
    loose = [
        p.name
        for p in (ROOT / "tests" / "unit").rglob("*.py")
        if p.name != "__init__.py" and not p.name.startswith("test_")
    ]
    assert loose == []


# ---- every module imported by a test (issue 35 item 4) -----------------------------------------------------


def _modules(root: Path) -> set[str]:
    """envmgr's modules and packages under root, by dotted name (a package by its folder's name)."""
    out = set()
    for path in (root / "envmgr").rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        out.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def _imported(tree: ast.AST) -> set[str]:
    """The envmgr names one file's import statements name, module-level and inside functions: `import envmgr.x`,
    `from envmgr.x import y` (envmgr.x, and envmgr.x.y for when y is a module), `from envmgr import x`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return {n for n in names if n == "envmgr" or n.startswith("envmgr.")}


def _not_imported(modules: set[str], imported: set[str]) -> list[str]:
    """The modules no import names; a package counts as imported when any of its modules is."""
    return sorted(m for m in modules if m not in imported and not any(i.startswith(m + ".") for i in imported))


def test_every_module_is_imported_by_a_test():
    imported: set[str] = set()
    for path in (ROOT / "tests").rglob("*.py"):
        imported |= _imported(ast.parse(path.read_bytes(), str(path)))
    assert _not_imported(_modules(ROOT), imported) == [], "imported by no test: give each a test that imports it"


def test_the_import_check_sees_a_module_no_test_imports(tmp_path):
    for rel in (
        "envmgr/__init__.py",
        "envmgr/a.py",
        "envmgr/b.py",
        "envmgr/pkg/__init__.py",
        "envmgr/pkg/c.py",
        "envmgr/pkg/d.py",
        "envmgr/other/__init__.py",
        "envmgr/other/e.py",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    modules = _modules(tmp_path)
    assert modules == {
        "envmgr",
        "envmgr.a",
        "envmgr.b",
        "envmgr.pkg",
        "envmgr.pkg.c",
        "envmgr.pkg.d",
        "envmgr.other",
        "envmgr.other.e",
    }
    test = (
        "import os\nfrom envmgr import a\nfrom envmgr.pkg.c import thing\n\n"
        "def test_x():\n    import envmgr.other.e as e\n    from . import helper\n"
    )
    found = _imported(ast.parse(test))
    assert found == {"envmgr", "envmgr.a", "envmgr.pkg.c", "envmgr.pkg.c.thing", "envmgr.other.e"}
    assert _not_imported(modules, found) == ["envmgr.b", "envmgr.pkg.d"]
    assert _not_imported(modules, found | {"envmgr.pkg.d.f", "envmgr.b"}) == []
