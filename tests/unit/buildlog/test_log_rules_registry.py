"""The rule registry (issue 35 part 2): one module per family under buildlog/rules/, each with its fact patterns,
its decision functions and the ids they can give; one ordered REGISTRY decides, and the only ways one family keeps
another from deciding are the registry's `yields_to` and `unless`."""

from __future__ import annotations

import ast
import inspect
from collections import deque
from pathlib import Path

import pytest

from envmgr.buildlog import rules
from envmgr.buildlog.clock import Clock
from envmgr.buildlog.rules import (
    REGISTRY,
    base,
    clock,
    common,
    compiler,
    decide,
    environment,
    ggml,
    loader,
    memory,
    outcome,
    runtime,
    toolkit,
    wheels,
)
from envmgr.buildlog.signatures import Signature, sig
from envmgr.catalog import CATALOG

FAMILIES = [compiler, toolkit, wheels, runtime, ggml, loader, environment, memory, clock]


def test_the_families_are_every_module_with_patterns() -> None:
    found = {m for m in vars(rules).values() if inspect.ismodule(m) and hasattr(m, "FACTS")}
    assert found == {*FAMILIES, common} and not hasattr(outcome, "FACTS")


def _source(module: object) -> ast.Module:
    return ast.parse(Path(inspect.getfile(module)).read_text(encoding="utf-8"))  # type: ignore[arg-type]


def test_each_entry_gives_catalog_ids_and_runs_a_function_of_its_family() -> None:
    assert [r.family.split(".")[0] for r in REGISTRY][:3] == ["compiler", "toolkit", "toolkit"]
    for entry in REGISTRY:
        assert entry.ids and set(entry.ids) <= set(CATALOG)
        assert entry.decide.__module__ == f"envmgr.buildlog.rules.{entry.family.split('.')[0]}"


def test_a_family_names_only_the_ids_its_entries_declare() -> None:
    for module in FAMILIES:
        declared = {i for entry in REGISTRY if entry.decide.__module__ == module.__name__ for i in entry.ids}
        named = (
            {
                arg.value
                for node in ast.walk(_source(module))
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "add"
                for arg in ast.walk(node.args[0])
                if isinstance(arg, ast.Constant) and str(arg.value) in CATALOG
            }
            if declared
            else set()
        )
        assert named and named <= declared, module.__name__


def test_a_family_signs_only_its_own_ids_and_the_table_is_in_catalog_order() -> None:
    for module in FAMILIES:
        declared = {i for entry in REGISTRY if entry.decide.__module__ == module.__name__ for i in entry.ids}
        assert {s.id for s in module.SIGNATURES} <= declared, module.__name__
    assert [s.id for s in rules.SIGNATURES] == sorted(s.id for s in rules.SIGNATURES)
    names = [s.name for s in rules.SIGNATURES]
    assert len(names) == len(set(names))


def test_a_signature_names_its_needle() -> None:
    made = sig("F07", "probe", r"No CUDA here", needle="CUDA here")
    assert isinstance(made, Signature) and made.needle == ("CUDA here",)
    with pytest.raises(ValueError):
        sig("F07", "probe", r"No CUDA here")


def test_no_family_returns_early_over_its_rules() -> None:
    """A decision function has no bare `return` (what skipped the rules after it before the registry)."""
    for module in FAMILIES:
        for node in ast.walk(_source(module)):
            if isinstance(node, ast.FunctionDef) and node.returns is not None and ast.unparse(node.returns) == "None":
                assert not _returns(node), f"{module.__name__}.{node.name}"


def test_each_fact_kind_has_one_pattern_kept_by_the_family_that_reads_it() -> None:
    kinds = [fx.kind for fx in rules.FACTS]
    assert len(kinds) == len(set(kinds))
    shared = {fx.kind for fx in common.FACTS}
    for module in FAMILIES:
        own = {fx.kind for fx in module.FACTS}
        read = {
            node.args[0].value
            for node in ast.walk(_source(module))
            if isinstance(node, ast.Call)
            and getattr(node.func, "attr", "") in ("first", "values", "get")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in kinds
        }
        assert read <= own | shared, (module.__name__, sorted(read - own - shared))


def _returns(fn: ast.FunctionDef) -> list[ast.Return]:
    """The function's own return statements (not those of a function defined inside it)."""
    found: list[ast.Return] = []
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return found


class _Facts:
    """Facts as the rules read them, made by hand (the registry's order on a minimal case)."""

    def __init__(self, **found: str) -> None:
        self.facts = {k: [base.Fact(k, v, n, v)] for n, (k, v) in enumerate(found.items(), 1)}
        self.last: deque[tuple[int, str]] = deque()
        self.clock: Clock | None = None

    def first(self, kind: str) -> base.Fact | None:
        found = self.facts.get(kind)
        return found[0] if found else None

    def values(self, kind: str) -> list[str]:
        return [f.value for f in self.facts.get(kind, ())]


def test_the_fallback_yields_to_a_cause_that_explains_the_cpu_run() -> None:
    alone = decide(_Facts(no_device="no CUDA-capable device is detected"))
    assert [(d.id, d.rule) for d in alone] == [("F18", "no-cuda-device")]
    explained = decide(
        _Facts(
            no_device="no CUDA-capable device is detected",
            no_kernel="no kernel image is available for execution on the device",
        )
    )
    assert [(d.id, d.rule) for d in explained] == [("F14", "no-kernel-image")]
    said = decide(_Facts(no_device="no CUDA-capable device is detected", no_gpu_said="I have no GPU"))
    assert said == []


def test_a_weak_family_runs_only_where_nothing_was_named() -> None:
    slow = decide(_Facts(slow_build="the build takes 5 hours"))
    assert [(d.id, d.rule) for d in slow] == [("F20", "build-said-slow")]
    named = decide(_Facts(slow_build="the build takes 5 hours", no_kernel="no kernel image is available"))
    assert [d.id for d in named] == ["F14"]
