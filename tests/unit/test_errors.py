"""The error tree (envmgr/errors.py): every expected failure is an EnvmgrError defined there, its exit
code comes from its class, and one function prints it."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from envmgr import errors
from tests.conftest import ROOT

PACKAGE = ROOT / "envmgr"
# Exceptions that never leave their module: each is caught there and becomes a listed problem or a
# result (wheelremote: which candidate of an index to try next; vswhere: an installer record that
# discovery lists as broken, habit 2; tomlfast: a document its fast parse does not fit, parsed by tomllib;
# names: a name from outside that is no name, which its callers refuse or skip in their own terms).
INTERNAL = {
    ("wheels/remote.py", "Missing"),
    ("wheels/remote.py", "Unreachable"),
    ("wheels/remote.py", "Refused"),
    ("wheels/remote.py", "_Cut"),
    ("wheels/pick.py", "Unusable"),
    ("files/names.py", "BadName"),
    ("discover/vswhere.py", "VswhereError"),
    ("files/tomlfast.py", "_Mismatch"),
}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def test_every_exception_class_is_in_the_error_tree():
    exceptions = {
        name
        for name in dir(errors)
        if isinstance(getattr(errors, name), type) and issubclass(getattr(errors, name), BaseException)
    }
    outside = []
    for rel, tree in _modules():
        if rel == "errors.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                if bases & (exceptions | {"Exception", "ValueError", "RuntimeError", "OSError"}):
                    outside.append((rel, node.name))
    assert set(outside) == INTERNAL
    for name in exceptions - {"EnvmgrError"}:
        assert issubclass(getattr(errors, name), errors.EnvmgrError), name


def test_no_exit_code_is_set_on_an_instance():
    found = [
        (rel, node.lineno)
        for rel, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, (ast.Assign, ast.AugAssign))
        and any(
            isinstance(t, ast.Attribute) and t.attr == "exit_code"
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
    ]
    assert found == []


def test_exit_codes_come_from_the_class():
    assert errors.CommandNotFound("x: not found").exit_code == 127
    assert errors.CannotStart("x: not executable").exit_code == 126
    assert isinstance(errors.CommandNotFound("x"), errors.CannotStart)
    assert errors.Interrupted("the build stopped", 15).exit_code == 143
    assert errors.ChildFailed("pip failed", "see above", 3).exit_code == 3
    assert errors.ChildFailed("pip failed", "see above", -2).exit_code == 1
    assert errors.LogInputError("cannot read", "pass a log").exit_code == 2
    assert isinstance(errors.LogInputError("x"), errors.InputFileError)
    assert (errors.CaptureError.exit_code, errors.ApplyFailed.exit_code, errors.NoMatchError.exit_code) == (1, 1, 3)


def test_the_old_homes_still_name_the_same_classes():
    from envmgr import spawn
    from envmgr.snapshot import capture
    from envmgr.buildlog import read as logread
    from envmgr.msbuild import apply, fileops, planfile
    from envmgr.shellkit import UnrepresentableValue

    assert (spawn.CannotStart, spawn.Interrupted, capture.CaptureError) == (
        errors.CannotStart,
        errors.Interrupted,
        errors.CaptureError,
    )
    assert (
        apply.ApplyFailed,
        apply.UndoRefused,
        planfile.PlanRejected,
        fileops.CannotWrite,
        logread.LogInputError,
    ) == (errors.ApplyFailed, errors.UndoRefused, errors.PlanRejected, errors.CannotWrite, errors.LogInputError)
    assert UnrepresentableValue is errors.UnrepresentableValue


def test_one_printer(capsys, monkeypatch):
    from envmgr.output import show_error

    monkeypatch.setenv("NO_COLOR", "1")
    code = show_error(errors.NoMatchError("no VS matches 'x'", "pick one of them", details=("a", "b")))
    assert code == 3
    assert capsys.readouterr().err == "envmgr: error: no VS matches 'x'\n  a\n  b\n  fix: pick one of them\n"
    printers = [
        rel
        for rel, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "envmgr: error:" in node.value
    ]
    assert printers == ["output.py"]


def test_spawn_raises_the_class_that_carries_127_or_126(tmp_path):
    from envmgr import spawn

    with pytest.raises(errors.CommandNotFound) as err:
        spawn.resolve_program("envmgr-no-such-command-12", {"PATH": str(tmp_path)})
    assert err.value.exit_code == 127
    if sys.platform == "win32":
        return  # there an existing file counts as executable (os.access X_OK): no 126 from resolving
    script = tmp_path / "not-executable"
    script.write_text("echo\n")
    script.chmod(0o644)
    with pytest.raises(errors.CannotStart) as err:
        spawn.resolve_program(str(script), {"PATH": str(tmp_path)})
    assert err.value.exit_code == 126 and not isinstance(err.value, errors.CommandNotFound)


# The CLI edge: click, the spinner and prompts live here (fix-msbuild's prompts: commands/fix_msbuild_flow.py).
EDGE = ("cli/", "output.py", "fastpath/main.py", "commands/")


def test_the_ui_lives_at_the_cli_edge():
    ui = []
    for rel, tree in _modules():
        if rel.startswith(EDGE):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "click" for a in node.names):
                ui.append((rel, "click"))
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "click":
                ui.append((rel, "click"))
            elif (
                isinstance(node, ast.ImportFrom)
                and (node.module or "").endswith("output")
                and any(a.name in ("Spinner", "say", "show_error") for a in node.names)
            ):
                ui.append((rel, node.module))
    assert ui == []


def test_compose_shows_progress_only_through_what_the_caller_passes():
    from contextlib import contextmanager

    from envmgr.host.recorded import load_machine
    from envmgr.cache.resolve import resolve
    from envmgr.snapshot.selectors import Selectors
    from tests.conftest import EXAMPLES

    shown = []

    @contextmanager
    def progress(message):
        shown.append(message)
        yield

    host = load_machine(str(EXAMPLES / "community-buildtools-cuda124.toml"))
    with pytest.raises(errors.InputFileError, match="holds no vcvars capture"):  # records hold no vcvars runs
        resolve(host, Selectors(), use_cache=False, progress=progress)
    assert len(shown) == 1 and shown[0].startswith("running vcvarsall.bat x64"), shown
