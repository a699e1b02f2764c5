"""envmgr/shellkit/sh.py: POSIX quoting and the export script, run by the real sh (dash where installed)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from envmgr.errors import UnrepresentableValue
from envmgr.shellkit import sh
from envmgr.snapshot.envdelta import APPEND, PREPEND, SET, UNSET, EnvDelta, VarOp

pytestmark = pytest.mark.posix
NASTY = 'it\'s $HOME `id` "q" \\ back\nnew line; é'


def _sh(script: str, env: dict[str, str] | None = None) -> str:
    shell = shutil.which("dash") or "/bin/sh"
    return subprocess.run(
        [shell, "-c", script], capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin", **(env or {})}
    ).stdout


def test_quote_and_double_quoted_body_keep_every_character():
    assert sh.quote("it's") == "'it'\\''s'"
    assert _sh(f"printf %s {sh.quote(NASTY)}") == NASTY
    assert _sh(f'printf %s "{sh.double_quoted_body(NASTY)}"') == NASTY


def test_render_sets_unsets_and_applying_twice_equals_once():
    delta = EnvDelta(
        "linux",
        (
            VarOp("CUDA_HOME", SET, "/opt/cuda 13"),
            VarOp("OLD", UNSET),
            VarOp("PATH", PREPEND, ("/opt/cuda 13/bin",)),
            VarOp("LD_LIBRARY_PATH", APPEND, ("/x",)),
        ),
    )
    script = sh.render(delta)
    assert script.startswith("export CUDA_HOME='/opt/cuda 13'\nunset OLD\n")
    assert not any(line.startswith("#") for line in script.splitlines())  # zsh would run a comment line
    show = 'printf "%s|%s|%s|%s" "$CUDA_HOME" "${OLD-unset}" "$PATH" "$LD_LIBRARY_PATH"'
    base = {"OLD": "1", "LD_LIBRARY_PATH": ""}
    once = _sh(script + show, base)
    assert once == "/opt/cuda 13|unset|/opt/cuda 13/bin:/usr/bin:/bin|/x"
    assert _sh(script + script + show, base) == once


def test_a_name_sh_cannot_hold_is_refused():
    with pytest.raises(UnrepresentableValue):
        sh.render(EnvDelta("linux", (VarOp("ProgramFiles(x86)", SET, "C:\\x"),)))
    with pytest.raises(UnrepresentableValue):
        sh.render(EnvDelta("linux", (VarOp("A", SET, "nul\0byte"),)))
