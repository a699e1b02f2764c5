"""cmd scripts applied twice by Wine's real cmd.exe give what applying once gives (issue 11 item 5).

Each example calls the rendered script twice in one cmd (then the `set` dump of test_cmd_quoting)
and compares with one call. Start values hold the delta's own entries, in other letter case too,
adjacent and repeated. Entries with '=' or '%' cannot be searched by %VAR:old=new%: they are not
removed first (shellkit/cmd.py UNSEARCHABLE) and are left out of the entries drawn here.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from envmgr.snapshot.envdelta import APPEND, PREPEND, SET, UNSET, EnvDelta, VarOp
from envmgr.shellkit import expected_env, render
from tests.wine.test_cmd_quoting import run_cmd, wine_env  # noqa: F401  (the session's Wine prefix)

pytestmark = pytest.mark.wine

ENTRY = st.sampled_from(
    [
        r"C:\CUDA\v12.4\bin",
        r"c:\cuda\V12.4\BIN",
        r"C:\Program Files (x86)\x",
        r"C:\R&D",
        "a^b",
        "wow!",
        r"C:\new (2)",
        "x;y",
        "",
        "C:",
    ]
)
LISTS = ("EMT_LIST", "EMT_INC")  # not PATH: Wine's cmd adds its own system folders to it at start


@st.composite
def cases(draw):
    ops = []
    for name in draw(st.lists(st.sampled_from(LISTS), min_size=1, max_size=3)):
        kind = draw(st.sampled_from((PREPEND, APPEND, PREPEND, SET, UNSET)))
        if kind == SET:
            ops.append(VarOp(name, SET, draw(ENTRY) or "x"))
        elif kind == UNSET:
            ops.append(VarOp(name, UNSET))
        else:
            ops.append(VarOp(name, kind, tuple(draw(st.lists(ENTRY, min_size=1, max_size=3)))))
    start = {}
    for name in LISTS:
        if draw(st.booleans()):
            start[name] = (
                ";".join(draw(st.lists(st.one_of(ENTRY, st.just(r"C:\windows\system32")), min_size=1, max_size=5)))
                or r"C:\windows"
            )
    return EnvDelta("windows", tuple(ops)), start


def _upper(env: dict) -> dict:
    return {k.upper(): v for k, v in env.items()}


# No shrinking: each example is two Wine calls.
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(case=cases())
def test_cmd_twice_equals_once(wine_env, case):  # noqa: F811
    delta, start = case
    script = render(delta, "cmd")
    body = script.split("\r\n", 1)[1]  # the second copy without its @rem line
    once = run_cmd(wine_env, script, start)
    twice = run_cmd(wine_env, script + body, start)
    want = _upper(expected_env(delta, start))
    for name in {n.upper() for n in delta.names()} | {n.upper() for n in start}:
        assert twice.get(name) == once.get(name) == want.get(name), (name, once.get(name), twice.get(name), script)
    assert "__ENVMGR_L" not in twice


def test_the_cuda_folders_do_not_stack_in_path(wine_env):  # noqa: F811
    delta = EnvDelta("windows", (VarOp("PATH", PREPEND, (r"C:\CUDA\v12.4\bin", r"C:\CUDA\v12.4\libnvvp")),))
    start = {"PATH": r"C:\windows\system32;c:\cuda\V12.4\BIN;C:\windows"}
    script = render(delta, "cmd")
    once = run_cmd(wine_env, script, start)["PATH"]
    twice = run_cmd(wine_env, script + script, start)["PATH"]
    assert twice == once
    assert once.startswith(r"C:\CUDA\v12.4\bin;C:\CUDA\v12.4\libnvvp;C:\windows\system32;C:\windows")
    assert once.lower().count(r"c:\cuda\v12.4\bin") == 1
