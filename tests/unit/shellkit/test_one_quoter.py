"""One quoter per shell (issue 20): every caller that puts a path into a PowerShell, sh or fish line goes
through shellkit's quote for that shell: export's scripts, `envmgr shell`'s init, `envmgr init`'s profile
line and fix-msbuild's elevation command. Each is fed a path holding PowerShell's typographic single
quotes (its tokenizer ends a verbatim string on any of them), `$`, backticks and `%`.

PowerShell has no interpreter here: its lines are parsed by the real grammar (tree-sitter-powershell) and
the verbatim literal decoded by PowerShell's rule. bash and fish run the lines for real.
"""

from __future__ import annotations

import subprocess
import tempfile

import pytest

from envmgr.msbuild.elevate import elevation_argv
from envmgr.shellkit import init, launch, render
from envmgr.snapshot.envdelta import SET, EnvDelta, VarOp
from tests.unit.shellkit.test_shellkit_ps1 import literals, parse, ts_ps

AWKWARD = "it\u2019s \u2018q\u2019 \u201aa\u201b 'x' $HOME `n %PATH%"


@pytest.fixture
def folder(tmp_path):
    path = tmp_path / AWKWARD
    path.mkdir()
    return path


def ps_literals(source: str) -> list[str]:
    tree = parse(source, ts_ps)
    assert not tree.root_node.has_error, source
    return literals(tree, source.encode("utf-8"))


def test_export_ps1_keeps_the_value(folder):
    script = render(EnvDelta("windows", (VarOp("CUDA_PATH", SET, str(folder)),)), "ps1")
    assert str(folder) in ps_literals(script)


def test_shell_init_for_powershell_dot_sources_the_real_path(folder, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    session = launch.build_session("pwsh", EnvDelta("windows", ()), {}, AWKWARD)
    command = session.argv[-1]
    (init_path,) = ps_literals(command)
    assert init_path.startswith(str(folder)) and init_path.endswith("init.ps1")
    body = open(init_path, encoding="utf-8-sig").read()
    assert f"(envmgr {AWKWARD}) " in ps_literals(body)


def test_init_line_for_powershell_imports_the_real_module(folder, monkeypatch):
    monkeypatch.setattr(init, "shells_dir", lambda: folder)
    assert ps_literals(init.profile_line("pwsh")) == [str(folder / "Envmgr.psd1")]


@pytest.mark.posix
@pytest.mark.parametrize(
    "shell, hook, run", [("bash", "envmgr.sh", ["bash", "-c"]), ("fish", "envmgr.fish", ["fish", "-c"])]
)
def test_init_line_for_posix_shells_sources_the_real_file(folder, monkeypatch, shell, hook, run):
    (folder / hook).write_text("echo sourced-from-the-awkward-folder\n", encoding="utf-8")
    monkeypatch.setattr(init, "shells_dir", lambda: folder)
    out = subprocess.run([*run, init.profile_line(shell)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout == "sourced-from-the-awkward-folder\n", out.stderr


@pytest.mark.posix
def test_shell_prompt_for_bash_keeps_the_marker(folder, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    session = launch.build_session("bash", EnvDelta("linux", ()), {"HOME": str(folder)}, AWKWARD)
    rc = session.argv[session.argv.index("--rcfile") + 1]
    out = subprocess.run(
        ["bash", "-c", f'. "$1"; printf %s "$PS1"', "-", rc],
        capture_output=True,
        text=True,
        env={"HOME": str(folder), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert out.stdout.startswith(f"(envmgr {AWKWARD}) "), out.stderr


def test_elevation_command_names_the_real_python(folder):
    python = str(folder / "python.exe")
    script = elevation_argv(python, ["fix-msbuild", "--apply-plan", str(folder / "plan.json")])[-1]
    found = ps_literals(script)
    assert python in found
    assert any(f'"{folder / "plan.json"}"' in literal for literal in found)
