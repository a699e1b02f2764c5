"""The package's shape (issue 12): one seam to the machine, no kind-of-host questions, no import cycles.

Read from the source with `ast`, so a new module is held to the same rules the day it is added.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "envmgr"

# Modules that may touch the machine directly, each with the reason.
SEAM = {
    "host/": "the Host classes and this process's settings (host/process.py)",
    "spawn.py": "the interactive edge: runs the user's command or shell in the foreground",
    "msbuild/elevate.py": "the elevation edge: PowerShell's Start-Process -Verb RunAs",
    "verify/child.py": "not envmgr's process: a script the TARGET Python runs (standard library only)",
    "hook/site_module.py": "not envmgr's process: the module the TARGET Python imports at start-up (standard library only)",
}
MACHINE_MODULES = {"subprocess", "winreg", "_winreg"}
ENV_CALLS = {"environ", "environb", "getenv", "putenv", "unsetenv"}
HOST_CLASSES = {"LiveHost", "WineHost", "RecordedHost", "RecordingHost"}
KIND_ATTRIBUTES = {"origin", "unix_path", "windows_path", "prefix"}  # what only one kind of host has


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        yield rel, ast.parse(path.read_text(encoding="utf-8"), rel)


def _in_seam(rel: str) -> bool:
    return any(rel == s or (s.endswith("/") and rel.startswith(s)) for s in SEAM)


def _machine_touches(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.split(".")[0] in MACHINE_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in MACHINE_MODULES:
            found.append(f"from {node.module} import")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [f"from os import {a.name}" for a in node.names if a.name in ENV_CALLS]
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in ENV_CALLS
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
        ):
            found.append(f"os.{node.attr} (line {node.lineno})")
    return found


def test_only_the_seam_touches_subprocess_winreg_and_the_environment():
    outside = {rel: hits for rel, tree in _modules() if not _in_seam(rel) and (hits := _machine_touches(tree))}
    assert outside == {}


def test_the_rule_sees_what_it_forbids():
    """The scan itself finds each form it forbids (else the test above would pass on anything)."""
    code = (
        "import subprocess\nfrom winreg import HKEY_LOCAL_MACHINE\nimport os\nx = os.environ['A']\n"
        "from os import getenv\ny = os.getenv('B')\n"
    )
    assert len(_machine_touches(ast.parse(code))) == 5
    assert _machine_touches(ast.parse("import os\nos.path.join('a', 'b')\nos.stat('.')\n")) == []


def _kind_questions(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
            names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)} if len(node.args) > 1 else set()
            found += [f"isinstance(..., {n}) (line {node.lineno})" for n in sorted(names & HOST_CLASSES)]
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in KIND_ATTRIBUTES | {"interactive"}
        ):
            found.append(f"{node.func.id}(host, {node.args[1].value!r}) (line {node.lineno})")
        if (
            isinstance(node, ast.Attribute)
            and node.attr in KIND_ATTRIBUTES
            and isinstance(node.value, ast.Name)
            and node.value.id == "host"
        ):
            found.append(f"host.{node.attr} (line {node.lineno})")
    return found


def test_no_module_outside_the_seam_asks_which_kind_of_host_it_has():
    """Code asks capabilities (runs_programs, writes_files, local_path, interactive, cpu_count, ...)."""
    outside = {rel: hits for rel, tree in _modules() if not rel.startswith("host/") and (hits := _kind_questions(tree))}
    assert outside == {}
    assert (
        len(_kind_questions(ast.parse("isinstance(host, LiveHost)\ngetattr(host, 'origin', None)\nhost.unix_path(p)")))
        == 3
    )


def test_hosts_are_made_only_where_the_command_line_chooses_one():
    """cli.Ctx builds the host (and `local`, this machine); nothing else constructs a Host class."""
    makers = {}
    for rel, tree in _modules():
        if rel.startswith("host/") or rel == "cli/main.py":
            continue
        calls = [
            n.func.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in HOST_CLASSES
        ]
        if calls:
            makers[rel] = calls
    assert makers == {}


def _module_name(rel: str) -> str:
    return rel[:-3].replace("/", ".").removesuffix(".__init__")


def _import_targets(node: ast.AST, package: str, names: set[str]) -> list[str]:
    """The envmgr modules one import statement names (a `from X import y` names X.y when it is a module)."""
    targets = []
    if isinstance(node, ast.Import):
        targets = [a.name.removeprefix("envmgr.") for a in node.names if a.name.startswith("envmgr.")]
    elif isinstance(node, ast.ImportFrom) and node.level:
        base = package.split(".") if package else []
        base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
        stem = ".".join([*base, node.module] if node.module else base)
        targets = [f"{stem}.{a.name}".lstrip(".") for a in node.names] + [stem]
    elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("envmgr"):
        stem = node.module.removeprefix("envmgr").lstrip(".")
        targets = [f"{stem}.{a.name}".lstrip(".") for a in node.names] + [stem]
    return [t for t in targets if t in names]


def _module_graph(everywhere: bool = False) -> dict[str, set[str]]:
    """Module -> the envmgr modules it imports: at import time (top level), or `everywhere` (function-level
    imports too: they form the same dependency, only later)."""
    modules = list(_modules())
    names = {_module_name(rel) for rel, _ in modules}
    graph: dict[str, set[str]] = {}
    for rel, tree in modules:
        mod = _module_name(rel)
        package = mod if rel.endswith("__init__.py") else mod.rpartition(".")[0]
        nodes = ast.walk(tree) if everywhere else tree.body
        graph[mod] = {t for node in nodes for t in _import_targets(node, package, names) if t != mod}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found, state, stack = [], {}, []

    def visit(node: str) -> None:
        state[node] = "open"
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == "open":
                found.append(stack[stack.index(dep) :] + [dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def test_no_import_cycles():
    graph = _module_graph()
    assert len(graph) > 50 and graph["cli.main"]  # the scan sees the package
    assert _cycles(graph) == []
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]


# ---------------------------------------------------------------- the layer rule (issue 20)
# Lowest first. A module may import its own layer and the layers below it, never one above, counting every
# import statement (function-level ones too). Within a package, modules import one another freely.
LAYERS = (
    ("__init__", "errors", "version", "winenv", "knowledge", "catalog"),  # vocabulary: imports nothing of envmgr's
    ("files",),  # reading and atomic writing of what users hand us
    ("buildlog",),  # a log's text in, catalog ids with evidence out (files/ for its JSON reader)
    ("host", "output", "progress", "spawn"),  # the seams: machine, terminal (and its progress line), child
    ("binaries",),  # PE, ELF, device code, the Windows loader, GPU fit: bytes and paths in, facts out
    ("discover",),  # facts from a host
    ("snapshot",),  # selection, capture, composition, the snapshot's forms
    ("recipes", "shellkit"),  # what a build adds; one module per shell
    ("cache",),  # the snapshot cache and resolve (cache first, then compose)
    ("wheels", "msbuild"),  # the wheel store and index; BuildCustomizations
    ("verify", "hook"),  # proof in the target Python; the target Python's start-up hook
    ("doctor",),  # the machine checks F01-F25
    ("fastpath",),  # the console script's cached answers
    ("cli",),  # click machinery
    ("commands", "__main__"),  # one module per command; `python -m envmgr`
)
# The deliberate exceptions, each with its reason.
UPWARD = {
    ("fastpath.main", "cli.main"): "the fast path's fall-back: whatever it cannot answer goes to the full CLI",
}


def _layer(module: str) -> int:
    top = module.split(".")[0]
    return next(i for i, names in enumerate(LAYERS) if top in names)


def _upward(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{mod} -> {dep}"
        for mod, deps in graph.items()
        for dep in deps
        if mod.split(".")[0] != dep.split(".")[0] and _layer(dep) > _layer(mod) and (mod, dep) not in UPWARD
    )


def test_every_module_has_a_layer():
    assert [m for m in _module_graph() if not any(m.split(".")[0] in names for names in LAYERS)] == []


def test_no_import_reaches_a_higher_layer():
    """Over every import, function-level ones included."""
    assert _upward(_module_graph(everywhere=True)) == []
    assert _upward({"discover.vs": {"cache.store"}, "cache.store": {"discover.vs"}}) == ["discover.vs -> cache.store"]


def test_no_import_cycles_over_all_imports():
    graph = _module_graph(everywhere=True)
    assert _cycles({m: deps - {d for (a, d) in UPWARD if a == m} for m, deps in graph.items()}) == []


def _function_level_imports() -> tuple[int, int, list[str]]:
    """(inside functions, all) import statements outside the fast path, and where the inside ones are."""
    inside, total, where = 0, 0, []
    for rel, tree in _modules():
        if rel.startswith("fastpath/"):
            continue
        top = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                total += 1
                if id(node) not in top and not _guarded(tree, node):
                    inside += 1
                    where.append(f"{rel}:{node.lineno}")
    return inside, total, where


def _guarded(tree: ast.Module, node: ast.AST) -> bool:
    """A module-level `try: import X except ImportError` or `if sys.platform ...: import X`: top level."""
    return any(node in ast.walk(block) for block in tree.body if isinstance(block, (ast.Try, ast.If)))


def test_imports_sit_at_the_top_of_their_module():
    """Outside the fast path (whose deferrals tests/unit/fastpath/test_fast_path.py guards), at most 10% of the
    imports are made inside functions: the platform-only modules (winreg, termios, winpy, ctypes) and the
    few that keep a heavy dependency off a light path."""
    inside, total, where = _function_level_imports()
    assert total > 500
    assert inside <= total // 10, where


def test_no_function_over_60_lines():
    """From `def` to the last line (decorators aside): a longer one is split into named steps."""
    long = [
        f"{rel}:{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for rel, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 60
    ]
    assert long == []
