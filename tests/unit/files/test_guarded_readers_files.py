"""The guarded readers and the one JSON writer are the only route (issue 34, deliverable 2; audit
hostile-input-2026-12 N7, N11, N19): code outside envmgr/files/ never parses TOML or JSON, or writes JSON,
with the standard library directly, and never hands a file's unguarded text (read_text/read_bytes/open) to
a parser. A new call site then gets the size cap, the regular-file check, the depth cap, one error line
and the NaN refusal without thinking about them."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "envmgr"
GUARDED = "files/"  # read.py, nested.py, tomlread.py, tomlfast.py, jsondoc.py: the readers and the writer
# Each exception with its reason.
EXEMPT = {
    "verify/child.py": "run by the target Python, which may not have envmgr: standard library only",
    "verify/child_any.py": "run by the target Python, which may not have envmgr: standard library only",
}
PARSERS = {"tomllib", "tomli", "json", "tomlkit"}
CALLS = {
    "json": {"load", "loads", "dump", "dumps"},
    "tomllib": {"load", "loads"},
    "tomli": {"load", "loads"},
    "tomlkit": {"load", "loads", "parse"},
}
READERS = {"loads_json", "load_json", "load_toml", "loads"}  # parsers of text already in memory
UNGUARDED = {"read_text", "read_bytes", "open"}  # reads without the size and kind checks


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def direct_uses(tree: ast.AST) -> list[str]:
    """`where: what` for each direct parse or JSON write, each import of a TOML parser, and each parser fed
    a file's unguarded text."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if a.name in ("tomllib", "tomli")]
        elif isinstance(node, ast.ImportFrom) and node.module in CALLS:
            found += [
                f"{node.lineno}: from {node.module} import {a.name}"
                for a in node.names
                if a.name in CALLS[node.module] or node.module in ("tomllib", "tomli")
            ]
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            module, _, attr = name.rpartition(".")
            if module in CALLS and attr in CALLS[module]:
                found.append(f"{node.lineno}: {name}()")
            elif name.rpartition(".")[2] in READERS and any(
                isinstance(inner, ast.Call) and _dotted(inner.func).rpartition(".")[2] in UNGUARDED
                for arg in node.args
                for inner in ast.walk(arg)
            ):
                found.append(f"{node.lineno}: {name}() of a file read without read_regular's checks")
    return found


def test_no_module_outside_files_parses_or_writes_json_or_toml_directly():
    seen, offenders = 0, []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(GUARDED) or rel in EXEMPT:
            continue
        seen += 1
        offenders += [f"envmgr/{rel}:{use}" for use in direct_uses(ast.parse(path.read_text(encoding="utf-8"), rel))]
    assert seen > 100
    assert offenders == [], (
        "parse and write through envmgr/files (jsondoc.read_json_file/load_json/dumps, "
        "tomlread.read_toml_file/load_toml, nested.loads_json)",
        offenders,
    )


def test_the_exemptions_are_real():
    for rel in EXEMPT:
        assert (PACKAGE / rel).is_file(), rel
        assert direct_uses(ast.parse((PACKAGE / rel).read_text(encoding="utf-8"))), rel  # an exemption in use


def test_the_check_sees_each_kind_of_direct_use():
    bad = (
        "import tomllib\nimport json\nfrom json import loads\nimport tomlkit\n"
        "a = tomllib.loads(t)\nb = json.loads(t)\nc = json.dumps(x)\nd = tomlkit.parse(t)\n"
        "e = loads_json(path.read_text())\nf = load_toml(open(p).read(), o, w, r)\n"
        "import tomli as t2\n"
    )
    found = direct_uses(ast.parse(bad))
    assert sorted(int(f.split(": ", 1)[0]) for f in found) == [1, 3, 5, 6, 7, 8, 9, 10, 11], found
    good = (
        "from envmgr.files.jsondoc import dumps, read_json_file\nx = dumps(d)\ny = read_json_file(p, 'w', 'r')\n"
        "z = loads_json(os.environ['X'])\ns = 'print(json.dumps(x))'\nimport tomlkit\nt = tomlkit.dumps(doc)\n"
    )
    assert direct_uses(ast.parse(good)) == []
