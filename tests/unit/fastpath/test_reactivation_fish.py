"""Python-free re-activation in real fish (envmgr/fastpath/slot_fish.py + shells/envmgr.fish).

As test_reactivation.py for bash and zsh: the first `envmgr_activate` runs envmgr (its fast path
writes the slot); the second must start no envmgr and leave exactly the environment the first left
(a child's view: os.environ as JSON). Then each input of the cache key is changed in turn: the slot
must apply nothing and hand over to envmgr. Fish's own rules are exercised too: a path variable
with an empty entry (LD_LIBRARY_PATH), PATH's '.', a variable set but not exported (a child does
not see it, so neither may the slot), and values the slot must leave to envmgr.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envmgr.shellkit.init import shells_dir

from tests.unit.fastpath.test_fast_path import PLAIN, store
from tests.unit.fastpath.test_reactivation import CHANGES, KEY_VARS, calls, changed, setup  # noqa: F401 - the fixture

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="fish on POSIX"),
    pytest.mark.skipif(shutil.which("fish") is None, reason="no fish"),
]


def activate(env: dict, before: str = "", args: str = "--cuda 13.0") -> tuple[int, dict]:
    script = (
        f"source '{shells_dir() / 'envmgr.fish'}'\n{before}\nenvmgr_activate {args}\nset -l rc $status\n"
        f"'{sys.executable}' -c 'import os, json; print(json.dumps(dict(os.environ)))'\nexit $rc\n"
    )
    out = subprocess.run(["fish", "--no-config", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    state = json.loads(out.stdout) if out.stdout.strip() else {}
    state.pop("_", None)
    return out.returncode, state


def slot_of(env: dict) -> Path:
    return Path(env["ENVMGR_CACHE_DIR"]) / "reactivate" / "fish---cuda_13.0"


def test_reactivation_starts_no_python_and_matches_envmgr(setup):
    env, log, _, _ = setup
    code, first = activate(env)  # envmgr's fast path; writes the slot
    assert code == 0 and first["ENVMGR_ACTIVE"] == "cuda-13.0" and calls(log) == 1
    assert slot_of(env).is_file()
    code, second = activate(env)
    assert code == 0 and calls(log) == 1  # no envmgr this time
    assert second == first
    assert first["PATH"].startswith("/opt/cuda-13.0/bin:/opt/with space:")
    assert "GONE" not in second and second["QUOTED"] == PLAIN.ops[1].value
    assert json.loads(second["ENVMGR_RESTORE"])["QUOTED"] == env["QUOTED"]


# Shell states before activation that fish holds in its own way. The first run has no slot
# (envmgr answers and writes it), the second must be the slot's, with the same result.
STATES = {
    "not exported": "set -e LD_LIBRARY_PATH; set -g LD_LIBRARY_PATH /not/exported",
    "a key variable not exported": "set -g CUDA_HOME /elsewhere; set -g cuda_path_v9_0 /x",
    "a list": "set -gx QUOTED one two",
    "trailing slashes, a blank entry": "set -gx PATH /opt/cuda-13.0/bin/ $PATH '/opt/with space//' ' '",
    "a dot in PATH": "set -gx PATH $PATH[1] '' /usr/bin",
    "a trailing backslash": "set -gx LD_LIBRARY_PATH '/opt/cuda-13.0/lib64\\\\' /x '' /x/",
    "GONE not set": "set -e GONE",
    "an empty list": "set -gx LD_LIBRARY_PATH",
    "non-ASCII": "set -gx LD_LIBRARY_PATH '/opt/ü 中' /b",
}
# States the slot must leave to envmgr (it answers them, and the slot stays unused).
REFUSED = {
    "a tab": "set -gx QUOTED (printf 'a\\tb')",
    "a no-break space entry": "set -gx PATH $PATH (printf '\\u00a0')",
    "not UTF-8": "set -gx QUOTED (printf 'a\\xffb')",
}


@pytest.mark.parametrize("state", sorted(STATES) + sorted(REFUSED))
def test_the_slot_reads_the_shell_as_envmgr_does(state, setup):
    env, log, _, _ = setup
    before = STATES.get(state) or REFUSED[state]
    activate(env)  # writes the slot
    slot_of(env).unlink()
    code, by_envmgr = activate(env, before)  # no slot: envmgr answers (and writes it)
    if not slot_of(env).is_file():
        activate(env)  # envmgr refused this state: write it now
    n = calls(log)
    again, by_slot = activate(env, before)
    assert calls(log) == (n if state in STATES else n + 1), state  # the slot answered / left it to envmgr
    assert (again, by_slot) == (code, by_envmgr), state


@pytest.mark.parametrize(
    "change",
    sorted(CHANGES)
    + [f"variable {v}" for v in KEY_VARS]
    + ["other arguments", "no arguments", "an active environment", "version file", "variable ProgramFiles(x86)"],
)
def test_a_changed_key_input_hands_over_to_envmgr(change, setup):
    env, log, _, _ = setup
    activate(env)
    activate(env)
    assert calls(log) == 1  # the slot works before the change
    with changed(change, setup) as (refused, args):
        code, state = activate(refused, "", args)
    assert code == 3 and calls(log) == 2, change  # envmgr was asked
    assert "ENVMGR_ACTIVE" not in state or change == "an active environment"
    assert state["PATH"] == env["PATH"]  # and nothing was applied


def test_a_stamp_one_nanosecond_off_hands_over(setup):
    # fish 3.6's `test -nt` compares nanoseconds: the slot sees a change no second-granular clock would.
    env, log, watched, _ = setup
    activate(env)
    st = os.stat(watched)
    os.utime(watched, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    code, _ = activate({**env, "ENVMGR_TEST_REFUSE": "1"})
    assert code == 3 and calls(log) == 2


def test_a_prepend_after_a_set_and_an_append_after_an_unset(tmp_path):
    # Snapshots keep one op kind per variable, but the slot follows any sequence as EnvDelta.apply.
    from envmgr.snapshot.activation import activation_delta
    from envmgr.snapshot.envdelta import EnvDelta, VarOp
    from envmgr.fastpath.slot_fish import fish_slot

    ops = [
        ("LIBRARY_PATH", "set", "/s1::/s2/: :/s1"),
        ("LIBRARY_PATH", "prepend", ("/s2", "/s0")),
        ("CPATH", "unset", ""),
        ("CPATH", "append", ("/c",)),
        ("CPATH", "append", ("/d", "/c/")),
    ]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CPATH": "/was", "LANG": "C.UTF-8"}
    text = fish_slot({"ops": ops, "validity": {}, "marker": "m"}, [], env, str(tmp_path / "stamps"), [])
    (tmp_path / "slot").write_text(text)
    script = (
        f"source '{shells_dir() / 'envmgr.fish'}'\nset -l __envmgr_ok\nsource '{tmp_path / 'slot'}'\n"
        f'test -n "$__envmgr_ok"; or exit 9\n'
        f"'{sys.executable}' -c 'import os, json; print(json.dumps(dict(os.environ)))'\n"
    )
    out = subprocess.run(["fish", "--no-config", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    want = activation_delta(EnvDelta("linux", tuple(VarOp(*op) for op in ops)), got | env, "m").apply(got | env)
    assert got["LIBRARY_PATH"] == "/s2:/s0:/s1" and got["CPATH"] == "/d:/c/"
    assert {k: got[k] for k in ("LIBRARY_PATH", "CPATH", "ENVMGR_ACTIVE", "ENVMGR_RESTORE")} == {
        k: want[k] for k in ("LIBRARY_PATH", "CPATH", "ENVMGR_ACTIVE", "ENVMGR_RESTORE")
    }
