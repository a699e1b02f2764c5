"""envmgr/shellkit/fish.py: fish quoting and the `set -gx` script, run by the real fish where installed."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from envmgr.errors import UnrepresentableValue
from envmgr.shellkit import fish
from envmgr.snapshot.envdelta import PREPEND, SET, UNSET, EnvDelta, VarOp
from tests.conftest import need

NASTY = "it's $HOME (id) \"q\" \\ back\\' ; é"


def _fish(script: str, env: dict[str, str]) -> str:
    need(shutil.which("fish") is not None, "needs fish (tests/setup/install-system.sh installs it)")
    return subprocess.run(
        ["fish", "--no-config", "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", **env},
    ).stdout


def test_quote_escapes_only_backslash_and_quote():
    assert fish.quote("a'b\\c$d") == "'a\\'b\\\\c$d'"


@pytest.mark.posix
def test_render_round_trips_in_fish_and_applying_twice_equals_once():
    delta = EnvDelta(
        "linux", (VarOp("NASTY", SET, NASTY), VarOp("OLD", UNSET), VarOp("PATH", PREPEND, ("/opt/cuda/bin",)))
    )
    script = fish.render(delta)
    assert script.splitlines()[:3] == [
        "# envmgr environment for fish: source this file",
        f"set -gx NASTY {fish.quote(NASTY)}",
        "set -q OLD; and set -e OLD",
    ]
    show = 'printf "%s|%s|%s" "$NASTY" (set -q OLD; and echo set; or echo unset) "$PATH"'
    once = _fish(script + show, {"OLD": "1"})
    assert once == f"{NASTY}|unset|/opt/cuda/bin:/usr/bin:/bin"
    assert _fish(script + script + show, {"OLD": "1"}) == once


def test_read_only_variables_and_empty_path_entries_are_refused():
    with pytest.raises(UnrepresentableValue, match="fish does not let scripts set this variable"):
        fish.render(EnvDelta("linux", (VarOp("PWD", SET, "/tmp"),)))
    with pytest.raises(UnrepresentableValue, match="as '.'"):
        fish.render(EnvDelta("linux", (VarOp("PATH", SET, "/a::/b"),)))
