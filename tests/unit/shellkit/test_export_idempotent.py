"""Applying an export twice gives the environment applying it once gives, in every format (issue 11
item 5: `eval "$(envmgr export --format sh)"` twice put the CUDA folders in PATH twice), and
`deactivate` after two activations restores the original environment exactly.

Real bash, dash, zsh and fish run the sh/fish scripts; ps1 is parsed with tree-sitter-powershell
and the parse tree evaluated by the small model below (no PowerShell here); dotenv and github are
static (rendered against the current environment). cmd under Wine: tests/wine/test_cmd_idempotent.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from envmgr.snapshot.envdelta import APPEND, PREPEND, SET, UNSET, EnvDelta, VarOp
from envmgr.shellkit import UnrepresentableValue, expected_env, render
from envmgr.shellkit.dotenv import final_values
from tests.conftest import need_module
from tests.unit.shellkit.test_shellkit_sh import POSIX, _need, _parse_env0, run_shell

try:
    from tests.unit.shellkit.test_shellkit_ps1 import decode_verbatim
except pytest.skip.Exception:  # tree-sitter not installed: the ps1 test skips
    decode_verbatim = None

ENTRY = st.sampled_from(
    [
        "/usr/local/cuda-13.0/bin",
        "/opt/x y",
        "/a'b",
        "/$HOME",
        "/*",
        "/[x]",
        "/é",
        "/a\nb",
        "C:\\CUDA\\v12.4\\bin",
        "C:\\Program Files (x86)\\x",
        "c:\\cuda\\V12.4\\BIN",
        "/c;d",
        "",
    ]
)
NAMES = ("PATH", "LD_LIBRARY_PATH", "EMT_LIST")


@st.composite
def cases(draw, platform="linux"):
    """A delta of list ops and a start environment that already holds some of its entries."""
    ops = []
    for name in draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3)):
        kind = draw(st.sampled_from((PREPEND, APPEND, PREPEND, SET, UNSET)))
        if kind == SET:
            ops.append(VarOp(name, SET, draw(ENTRY) or "x"))
        elif kind == UNSET:
            ops.append(VarOp(name, UNSET))
        else:
            ops.append(VarOp(name, kind, tuple(draw(st.lists(ENTRY, min_size=1, max_size=3)))))
    sep = ";" if platform == "windows" else ":"
    start = {}
    for name in NAMES:
        parts = draw(st.lists(st.one_of(ENTRY, st.sampled_from(["/usr/bin", "/bin"])), max_size=5))
        if draw(st.booleans()):
            start[name] = sep.join(parts)
    if start.get("PATH") in (None, "", "/bin:/usr/bin"):
        # zsh and fish put a default PATH in place of an empty or missing one, and Debian's
        # /etc/zsh/zshenv (read by every zsh, even `zsh -f`) replaces PATH="/bin:/usr/bin" too
        start["PATH"] = "/usr/bin:/bin"
    return EnvDelta(platform, tuple(ops)), start


def _twice(shell_argv, script: str, start: dict, tmp_path) -> tuple[dict, dict]:
    return run_shell(shell_argv, script, start, tmp_path), run_shell(shell_argv, script + script, start, tmp_path)


def _same(delta, start, once, twice):
    for name in set(delta.names()) | set(start):
        assert twice.get(name) == once.get(name), (name, once.get(name), twice.get(name))
        assert once.get(name) == expected_env(delta, start).get(name), name
    assert not [k for k in twice if "envmgr" in k.lower()], "helper variables left behind"


@pytest.mark.posix
@pytest.mark.parametrize("shell", sorted(POSIX))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases())
def test_sh_twice_equals_once(shell, case, tmp_path):
    _need(shell, required=shell == "bash")
    delta, start = case
    _same(delta, start, *_twice(POSIX[shell], render(delta, "sh"), start, tmp_path))


@pytest.mark.posix
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases())
def test_fish_twice_equals_once(case, tmp_path):
    _need("fish", required=False)
    delta, start = case
    assume("" not in start["PATH"].split(":"))  # fish rewrites empty PATH entries (test_shellkit_sh)
    try:
        script = render(delta, "fish")
    except UnrepresentableValue:
        assume(False)
    argv = ["fish", "--no-config", "-c", "source $argv[1]; /usr/bin/env -0"]
    _same(delta, start, *_twice(argv, script, start, tmp_path))


@pytest.mark.parametrize("platform", ["windows", "linux"], ids=["semicolon", "colon"])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_ps1_twice_equals_once_through_tree_sitter(platform, data):
    delta, start = data.draw(cases(platform))
    script = render(delta, "ps1")
    fold = platform == "windows"
    once = Ps1Model(start, fold).run(script)
    twice = Ps1Model(once, fold).run(script)
    want = expected_env(delta, start)
    norm = (lambda d: {k.upper(): v for k, v in d.items()}) if fold else dict
    assert norm(once) == norm(want), script
    assert norm(twice) == norm(once), script


@pytest.mark.parametrize("fmt", ["dotenv", "github"])
@settings(max_examples=100, deadline=None)
@given(case=cases())
def test_static_formats_rendered_again_after_applying_are_the_same(fmt, case):
    delta, start = case
    assume(not any(op.op == UNSET for op in delta.ops))  # dotenv/github cannot unset
    try:
        first = render(delta, fmt, start)
    except UnrepresentableValue:
        assume(False)
    applied = {**start, **final_values(fmt, delta, start)}
    assert render(delta, fmt, applied) == first
    assert {**applied, **final_values(fmt, delta, applied)} == applied


# ---- the real commands, in real shells ---------------------------------------------------------

ENVMGR = [sys.executable, "-m", "envmgr"]
SHELLS = {
    "bash": ["bash", "--norc", "--noprofile", "-c"],
    "dash": ["dash", "-c"],
    "zsh": ["zsh", "-f", "-c"],
    "fish": ["fish", "--no-config", "-c"],
}


def _in_shell(shell: str, body: str, tmp_path) -> list[dict]:
    """Run `body` in the shell; every `dump` in it records the whole environment."""
    _need(shell, required=shell == "bash")
    em = " ".join(f"'{a}'" for a in ENVMGR)
    dump = "/usr/bin/env -0; printf '\\0==ENVMGR-DUMP==\\0'"
    script = body.replace("EM", em).replace("dump", dump)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "LC_ALL": "C.UTF-8",
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": os.getcwd(),
        "NO_COLOR": "1",
    }
    proc = subprocess.run(
        [shutil.which(shell), *SHELLS[shell][1:], script], env=env, capture_output=True, timeout=120, cwd=os.getcwd()
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return [_parse_env0(chunk) for chunk in proc.stdout.split(b"\0==ENVMGR-DUMP==\0")[:-1]]


def _strip_shell_noise(env: dict) -> dict:
    return {k: v for k, v in env.items() if k not in ("_", "SHLVL", "OLDPWD", "PWD")}


@pytest.mark.posix
@pytest.mark.parametrize("shell", ["bash", "dash", "zsh", "fish"])
def test_real_export_applied_twice(shell, tmp_path):
    if shell == "fish":
        body = "EM export --format fish | source; dump; EM export --format fish | source; dump"
    else:
        body = 'eval "$(EM export --format sh)"; dump; eval "$(EM export --format sh)"; dump'
    once, twice = _in_shell(shell, body, tmp_path)
    assert _strip_shell_noise(once) == _strip_shell_noise(twice)
    assert once["PATH"].split(":").count(once["PATH"].split(":")[0]) == 1


@pytest.mark.posix
@pytest.mark.parametrize("shell", ["bash", "dash", "zsh", "fish"])
def test_deactivate_after_two_activations_restores_exactly(shell, tmp_path):
    if shell == "fish":
        act = "EM export --activate --format fish | source"
        body = f"dump; {act}; {act}; dump; EM deactivate --format fish | source; dump"
    else:
        act = 'eval "$(EM export --activate --format sh)"'
        body = f'dump; {act}; {act}; dump; eval "$(EM deactivate --format sh)"; dump'
    before, active, after = _in_shell(shell, body, tmp_path)
    assert "ENVMGR_ACTIVE" in active and "ENVMGR_ACTIVE" not in after
    assert _strip_shell_noise(after) == _strip_shell_noise(before)


# ---- a model of the PowerShell our ps1 scripts use, over tree-sitter's parse tree ------------------


class Ps1Model:
    """Evaluates exactly the statements shellkit/ps1.py writes (assignments to $env: and one local,
    [Environment]::Get/SetEnvironmentVariable, Remove-Item Env:, Remove-Variable, if/else, -split,
    -join, -notcontains/-cnotcontains, Where-Object, @(), +, verbatim strings). Anything else fails the test."""

    def __init__(self, env: dict, fold: bool) -> None:
        self.env, self.fold, self.vars = dict(env), fold, {}

    def run(self, source: str) -> dict:
        ts, ts_ps = need_module("tree_sitter"), need_module("tree_sitter_powershell")
        self.src = source.encode("utf-8")
        if source.count("\r\n") == 1 and source.startswith("# "):
            return self.env  # only the comment: tree-sitter-powershell 0.26 flags a comment-only file
        tree = ts.Parser(ts.Language(ts_ps.language())).parse(self.src)
        assert not tree.root_node.has_error, source
        self.statements(tree.root_node)
        return self.env

    def text(self, node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8")

    def key(self, name: str):
        return next((k for k in self.env if (k.upper() == name.upper() if self.fold else k == name)), None)

    def set_env(self, name: str, value) -> None:
        old = self.key(name)
        if old is not None:
            del self.env[old]
        if value not in (None, ""):  # PowerShell deletes a variable assigned '' or $null
            self.env[old if old is not None and self.fold else name] = value

    def statements(self, node) -> None:
        for child in node.children:
            if child.type in ("comment", "empty_statement", ";"):
                continue
            if child.type in ("statement_list", "program", "statement_block"):
                self.statements(child)
            elif child.type == "if_statement":
                cond = next(c for c in child.children if c.type == "pipeline")
                blocks = [c for c in child.children if c.type == "statement_block"]
                other = [c for c in child.children if c.type == "else_clause"]
                if self.value(cond):
                    self.statements(blocks[0])
                elif other:
                    self.statements(next(c for c in other[0].children if c.type == "statement_block"))
            elif child.type == "pipeline":
                self.pipeline(child)
            elif child.type in ("{", "}"):
                continue
            else:
                raise AssertionError(f"unmodelled statement {child.type}: {self.text(child)}")

    def pipeline(self, node) -> None:
        first = _unwrap(node)
        if first.type == "assignment_expression":
            target = _unwrap(first.children[0])
            value = self.value(first.children[2])
            name = self.text(target)
            if name.lower().startswith("$env:"):
                self.set_env(name[5:], value)
            else:
                self.vars[name[1:].lower()] = value
            return
        if first.type == "command":
            words = self.text(first).split()
            if words[0] == "Remove-Item" and words[1].startswith("Env:"):
                self.set_env(words[1][4:], None)
            elif words[0] == "Remove-Variable":
                self.vars.pop(words[1].lower(), None)
            else:
                raise AssertionError(f"unmodelled command {self.text(first)}")
            return
        self.value(node)

    def value(self, node):
        node = _unwrap(node)
        t = node.type
        if t == "string_literal":
            return decode_verbatim(self.text(node))
        if t == "variable":
            name = self.text(node)
            if name.lower().startswith("$env:"):
                k = self.key(name[5:])
                return self.env[k] if k is not None else None
            if name == "$_":
                return self.vars["_"]
            return self.vars.get(name[1:].lower())
        if t == "parenthesized_expression":
            return self.value(node.children[1])
        if t == "array_expression":
            inner = [c for c in node.children if c.type == "statement_list"]
            if not inner:
                return []
            v = self.value(inner[0].children[0])
            return v if isinstance(v, list) else [v]
        if t in ("array_literal_expression",):
            return [self.value(c) for c in node.children if c.type != ","]
        if t in ("additive_expression", "additive_argument_expression"):
            left, _, right = node.children
            return (self.value(left) or "") + (self.value(right) or "")
        if t in ("comparison_expression", "comparison_argument_expression"):
            left, op, right = node.children
            return self.compare(self.value(left), self.text(op).lower(), self.value(right))
        if t == "pipeline_chain" and any(c.type == "|" for c in node.children):
            items = self.value(node.children[0])
            items = items if isinstance(items, list) else [items]
            cmd = node.children[2]
            assert self.text(cmd).startswith("Where-Object"), self.text(cmd)
            block = _find(cmd, "script_block")
            kept = []
            for item in items:
                self.vars["_"] = item
                if self.value(_find(block, "pipeline")):
                    kept.append(item)
            return kept
        if t == "invokation_expression":
            member = self.text(_find(node, "member_name"))
            args = [self.value(a) for a in _find(node, "argument_expression_list").children if a.type != ","]
            if member == "GetEnvironmentVariable":
                k = self.key(args[0])
                return self.env[k] if k is not None else None
            if member == "SetEnvironmentVariable":
                self.set_env(args[0], args[1])
                return None
        raise AssertionError(f"unmodelled expression {t}: {self.text(node)}")

    def compare(self, left, op, right):
        if op == "-split":
            return ("" if left is None else left).split(right)
        if op == "-join":
            return right.join(x or "" for x in (left if isinstance(left, list) else [left]))
        if op in ("-notcontains", "-cnotcontains"):
            fold = op == "-notcontains"
            group = left if isinstance(left, list) else [left]
            return (right.lower() if fold else right) not in {g.lower() if fold else g for g in group}
        raise AssertionError(f"unmodelled operator {op}")


_WRAPPERS = {
    "pipeline",
    "pipeline_chain",
    "logical_expression",
    "bitwise_expression",
    "comparison_expression",
    "additive_expression",
    "multiplicative_expression",
    "format_expression",
    "range_expression",
    "array_literal_expression",
    "unary_expression",
    "left_assignment_expression",
    "argument_expression",
    "logical_argument_expression",
    "bitwise_argument_expression",
    "comparison_argument_expression",
    "additive_argument_expression",
    "multiplicative_argument_expression",
    "format_argument_expression",
    "range_argument_expression",
    "statement_list",
    "script_block_body",
}


def _unwrap(node):
    """Skip tree-sitter-powershell's one-child precedence levels."""
    while node.type in _WRAPPERS and len([c for c in node.children if c.type != "comment"]) == 1:
        node = node.children[0]
    return node


def _find(node, kind):
    stack = [node]
    while stack:
        n = stack.pop(0)
        if n.type == kind:
            return n
        stack.extend(n.children)
    raise AssertionError(f"no {kind} in {node.type}")
