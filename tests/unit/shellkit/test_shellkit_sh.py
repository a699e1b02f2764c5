"""sh and fish scripts, run by the real shells, give back exactly the values (property tests).

bash is required; dash, zsh and fish run when installed and must be installed under CI
(tests/setup/install-system.sh installs them; tests/conftest.py `need`).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from envmgr.snapshot.envdelta import APPEND, PREPEND, SET, UNSET, EnvDelta, VarOp
from envmgr.shellkit import UnrepresentableValue, expected_env, render
from tests.conftest import need

pytestmark = pytest.mark.posix

SPECIAL = list(" '\"&|^%!<>()$`=;:\\*?~#{}[],\t\n") + ["é", "中文", "😀", "\u2018", "\u2019", "'\\''", "${X}"]
VALUES = st.lists(
    st.one_of(st.sampled_from(SPECIAL), st.characters(codec="utf-8", exclude_characters="\0")), max_size=12
).map("".join)
POOL = ("PATH", "EMT_A", "EMT_B", "EMT_LIST", "EMT_XPATH")


@st.composite
def deltas(draw, values=VALUES, pool=POOL, platform="linux"):
    names = st.one_of(st.sampled_from(pool), st.from_regex(r"EMT_[A-Za-z0-9_]{1,6}", fullmatch=True))
    ops = []
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from((SET, PREPEND, APPEND, UNSET)))
        name = draw(names)
        if kind == SET:
            ops.append(VarOp(name, SET, draw(values)))
        elif kind == UNSET:
            ops.append(VarOp(name, UNSET))
        else:
            ops.append(VarOp(name, kind, tuple(draw(st.lists(values, max_size=3)))))
    return EnvDelta(platform, tuple(ops))


@st.composite
def start_envs(draw, values=VALUES, pool=POOL):
    env = {}
    for name in pool:
        choice = draw(st.sampled_from(("absent", "empty", "value")))
        if choice != "absent":
            env[name] = "" if choice == "empty" else draw(values)
    if not env.get("PATH"):  # zsh and fish put a default PATH in place of an empty or missing one
        env["PATH"] = "/usr/bin:/bin"
    return env


def _parse_env0(raw: bytes) -> dict[str, str]:
    out = {}
    for item in raw.split(b"\0"):
        if item:
            k, _, v = item.partition(b"=")
            out[k.decode()] = v.decode("utf-8")
    return out


def run_shell(argv_prefix: list[str], script: str, start: dict[str, str], tmp: Path) -> dict[str, str]:
    path = tmp / "env.script"
    path.write_bytes(script.encode("utf-8"))
    exe = shutil.which(argv_prefix[0])  # the script's PATH is not ours
    # A UTF-8 locale, as users have: fish in the C locale decodes non-ASCII bytes as Latin-1.
    proc = subprocess.run(
        [exe, *argv_prefix[1:], str(path)], env={**start, "LC_ALL": "C.UTF-8"}, capture_output=True, timeout=30
    )
    assert proc.returncode == 0 and not proc.stderr, (proc.returncode, proc.stderr.decode(errors="replace"), script)
    return _parse_env0(proc.stdout)


def check(delta: EnvDelta, start: dict[str, str], actual: dict[str, str]) -> None:
    want = expected_env(delta, start)
    for name in set(delta.names()) | set(start):
        assert actual.get(name) == want.get(name), (name, delta, start)


POSIX = {
    "bash": ["bash", "--norc", "--noprofile", "-c", '. "$1"; /usr/bin/env -0', "sh"],
    "dash": ["dash", "-c", '. "$1"; /usr/bin/env -0', "sh"],
    "zsh": ["zsh", "-f", "-c", '. "$1"; /usr/bin/env -0', "sh"],
}


def _need(shell: str, required: bool) -> None:
    need(
        shutil.which(shell) is not None,
        f"{shell} is not installed (run tests/setup/install-system.sh)",
        required=required,
    )


@pytest.mark.parametrize("shell", sorted(POSIX))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(delta=deltas(), start=start_envs())
def test_sh_round_trip(shell, delta, start, tmp_path):
    _need(shell, required=shell == "bash")
    check(delta, start, run_shell(POSIX[shell], render(delta, "sh"), start, tmp_path))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(delta=deltas(), start=start_envs())
def test_fish_round_trip(delta, start, tmp_path):
    _need("fish", required=False)
    # fish rewrites empty PATH entries to "." at start-up and refuses to write them (fish.py).
    assume("" not in start["PATH"].split(":"))
    try:
        script = render(delta, "fish")
    except UnrepresentableValue as err:
        assert err.name == "PATH" and err.char == ":"
        assume(False)
    argv = ["fish", "--no-config", "-c", "source $argv[1]; /usr/bin/env -0"]
    check(delta, start, run_shell(argv, script, start, tmp_path))


def test_sh_exact_text():
    d = EnvDelta(
        "linux",
        (
            VarOp("A", SET, "it's"),
            VarOp("PATH", PREPEND, ("/a b", "", "/c")),
            VarOp("L", APPEND, ("/l",)),
            VarOp("G", UNSET),
        ),
    )
    strip = (
        '__envmgr_l=":${{{n}-}}:"; for __envmgr_e in {drop}; do while :; do case "$__envmgr_l" in '
        '*":$__envmgr_e:"*) __envmgr_l="${{__envmgr_l%%":$__envmgr_e:"*}}:${{__envmgr_l#*":$__envmgr_e:"}}";; '
        '*) break;; esac; done; done; __envmgr_l="${{__envmgr_l#:}}"; __envmgr_l="${{__envmgr_l%:}}"; '
    )
    assert render(d, "sh") == (
        "export A='it'\\''s'\n"
        + strip.format(n="PATH", drop="'/a b' '/c'")
        + "export PATH='/a b:/c'\"${__envmgr_l:+:$__envmgr_l}\"; unset __envmgr_l __envmgr_e\n"
        + strip.format(n="L", drop="'/l'")
        + "export L=\"${__envmgr_l:+$__envmgr_l:}\"'/l'; unset __envmgr_l __envmgr_e\n"
        "unset G\n"
    )


def test_prepend_to_empty_and_unset_leaves_no_separator(tmp_path):
    d = EnvDelta("linux", (VarOp("EMT_E", PREPEND, ("/a",)), VarOp("EMT_U", APPEND, ("/b",))))
    got = run_shell(POSIX["bash"], render(d, "sh"), {"EMT_E": ""}, tmp_path)
    assert (got["EMT_E"], got["EMT_U"]) == ("/a", "/b")


@pytest.mark.parametrize("fmt", ["sh", "fish"])
@pytest.mark.parametrize("name", ["A B", "A=B", "1A", "ProgramFiles(x86)", "", "A-B"])
def test_names_refused(fmt, name):
    with pytest.raises(UnrepresentableValue) as err:
        render(EnvDelta("linux", (VarOp(name, SET, "x"),)), fmt)
    assert err.value.exit_code == 2 and fmt in err.value.message and err.value.remedy


@pytest.mark.parametrize("fmt", ["sh", "fish", "ps1", "cmd", "dotenv", "github"])
def test_nul_refused_everywhere(fmt):
    with pytest.raises(UnrepresentableValue, match="NUL"):
        render(EnvDelta("windows", (VarOp("A", SET, "a\0b"),)), fmt, {})
