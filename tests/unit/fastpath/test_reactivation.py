"""Python-free re-activation (envmgr/fastpath/slot_sh.py + shells/envmgr.sh) in real bash and zsh.

The first `envmgr_activate` runs envmgr (its fast path writes the slot); the second must start no
process named envmgr and leave exactly the environment the first left. Then each input of the cache
key is changed in turn (a watched file's mtime, an absent path appearing, each key variable, a
CUDA_PATH_V*, the arguments, the cache entry, envmgr's version file, an active environment): the
slot must apply nothing and hand over to envmgr.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from envmgr import __file__ as VERSION_FILE
from envmgr.shellkit.init import shells_dir

from tests.unit.fastpath.test_fast_path import PLAIN, store

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="bash and zsh")
SHELLS = [s for s in ("bash", "zsh") if shutil.which(s)]
REAL = Path(sys.executable).with_name("envmgr")


@pytest.fixture
def setup(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls"
    # An envmgr that counts its starts; ENVMGR_TEST_REFUSE makes it fail without applying anything.
    (bin_dir / "envmgr").write_text(
        f'#!/bin/sh\necho "$*" >> "{log}"\n[ -n "$ENVMGR_TEST_REFUSE" ] && exit 3\nexec "{REAL}" "$@"\n'
    )
    (bin_dir / "envmgr").chmod(0o755)
    watched, absent = tmp_path / "vcvarsall.bat", tmp_path / "later"
    watched.write_text("x")
    env = {
        "HOME": str(tmp_path),
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "LANG": "C.UTF-8",
        "PATH": f"{bin_dir}:/usr/bin:/bin:/usr/bin/",
        "LD_LIBRARY_PATH": "/lib/a::/lib/b/:/lib/a",
        "QUOTED": 'was "quoted" \\ here',
        "GONE": "here",
    }
    store(env, PLAIN, watched, absent, cuda="13.0")  # a new install appearing there retires the slot
    return env, log, watched, absent


def activate(shell: str, env: dict, before: str = "", args: str = "--cuda 13.0") -> tuple[int, dict]:
    script = (
        f". '{shells_dir() / 'envmgr.sh'}'\n{before}\nenvmgr_activate {args}\nrc=$?\n"
        f"'{sys.executable}' -c 'import os, json; print(json.dumps(dict(os.environ)))'\nexit $rc\n"
    )
    out = subprocess.run([shell, "-c", script], env=env, capture_output=True, text=True)
    import json

    state = json.loads(out.stdout) if out.stdout.strip() else {}
    state.pop("_", None)
    return out.returncode, state


def calls(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.mark.parametrize("shell", SHELLS)
def test_reactivation_starts_no_python_and_matches_envmgr(shell, setup):
    env, log, _, _ = setup
    code, first = activate(shell, env)  # envmgr's fast path; writes the slot
    assert code == 0 and first["ENVMGR_ACTIVE"] == "cuda-13.0" and calls(log) == 1
    code, second = activate(shell, env)
    assert code == 0 and calls(log) == 1  # no envmgr this time
    assert second == first
    assert first["PATH"].startswith("/opt/cuda-13.0/bin:/opt/with space:")
    assert "GONE" not in second and second["QUOTED"] == PLAIN.ops[1].value


CHANGES = {
    "watched file changed": lambda s: Path(s[2]).write_text("changed"),
    "absent path appeared": lambda s: Path(s[3]).write_text("new"),
    "cache cleared": lambda s: [p.unlink() for p in (Path(s[0]["ENVMGR_CACHE_DIR"]) / "snapshots").glob("*.fast")],
}
KEY_VARS = [
    "CUDA_PATH",
    "CUDA_HOME",
    "CUDA_ROOT",
    "CUDAToolkit_ROOT",
    "CONDA_PREFIX",
    "ProgramFiles",
    "ProgramData",
    "SystemRoot",
    "CUDA_PATH_V12_4",
    "cuda_path_v13_0",
]


@contextmanager
def changed(change: str, setup):
    """One key input changed (undone afterwards where it is this machine's): the environment that
    envmgr's test hook refuses in (ENVMGR_TEST_REFUSE: exit 3 shows envmgr was asked) and the arguments."""
    env = setup[0]
    refused, args = {**env, "ENVMGR_TEST_REFUSE": "1"}, "--cuda 13.0"
    st = None
    if change in CHANGES:
        CHANGES[change](setup)
    elif change.startswith("variable "):
        refused[change.split()[1]] = "/elsewhere"
    elif change == "other arguments":
        args = "'--cuda 13.0'"  # the same slot name, other arguments
    elif change == "no arguments":
        args = "--cuda 13.0 ''"
    elif change == "an active environment":
        refused.update(ENVMGR_ACTIVE="x", ENVMGR_RESTORE="{}")
    elif change == "version file":
        st = os.stat(VERSION_FILE)
        os.utime(VERSION_FILE, ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
    try:
        yield refused, args
    finally:
        if st is not None:
            os.utime(VERSION_FILE, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize(
    "change",
    sorted(CHANGES)
    + [f"variable {v}" for v in KEY_VARS]
    + ["other arguments", "an active environment", "version file"],
)
def test_a_changed_key_input_hands_over_to_envmgr(shell, change, setup):
    env, log, _, _ = setup
    activate(shell, env)
    activate(shell, env)
    assert calls(log) == 1  # the slot works before the change
    with changed(change, setup) as (refused, args):
        code, state = activate(shell, refused, "", args)
    assert code == 3 and calls(log) == 2, change  # envmgr was asked
    assert "ENVMGR_ACTIVE" not in state or change == "an active environment"
    assert state["PATH"] == env["PATH"]  # and nothing was applied


# Shell states before activation that envmgr reads in its own way (issue 14 item 3, as fish's
# test_the_slot_reads_the_shell_as_envmgr_does). The first run has no slot (envmgr answers and writes
# it), the second must be the slot's with the same result (STATES), or the slot must apply nothing
# and leave it to envmgr (REFUSED). {unexport} is the shell's way to keep a variable from children.
UNEXPORT = {"bash": "export -n", "zsh": "typeset +x"}
STATES = {
    # winenv.path_key drops a trailing run of '/' and '\' (unless nothing is left).
    "a trailing backslash": r"export LD_LIBRARY_PATH='/opt/cuda-13.0/lib64\:/x'",
    "trailing slashes and backslashes": r"""export PATH='/opt/cuda-13.0/bin/\/:/:\:\\/:'"$PATH"':/opt/with space\/\'""",
    # A child is not given these; envmgr never sees them, neither may the slot.
    "a list variable not exported": "{unexport} LD_LIBRARY_PATH",
    "an unset variable not exported": "{unexport} GONE",
    "a saved variable not exported": "{unexport} QUOTED",
    "key variables not exported": "CUDA_HOME=/elsewhere; cuda_path_v9_0=/x",
    "non-ASCII": "export LD_LIBRARY_PATH='/opt/ü 中:/b:/opt/cuda-13.0/lib64/'",
}
REFUSED = {
    # str.strip() takes these for blank (split_list drops such an entry); the shell's [:space:] does not.
    "a no-break space entry": "export PATH=\"$PATH:\"$'\\u00a0'",
    "an ideographic space entry": "export LD_LIBRARY_PATH=\"$LD_LIBRARY_PATH:\"$'\\u3000'",
    "a next-line entry": "export LD_LIBRARY_PATH=\"$LD_LIBRARY_PATH:\"$'\\u0085'",
    "a no-break space inside an entry": "export PATH=\"$PATH:/a\"$'\\u00a0'b",  # any such character
    # Python reads such bytes as lone surrogates, which no script can hold: envmgr exits 2.
    "not UTF-8 in a list": "export LD_LIBRARY_PATH=$'/lib/\\xff:/lib/a'",
    "not UTF-8 in a saved value": "export QUOTED=$'a\\xffb'",
    "an incomplete UTF-8 sequence": "export GONE=$'here\\xc3'",
}


def slot_of(env: dict) -> Path:
    return Path(env["ENVMGR_CACHE_DIR"]) / "reactivate" / "sh---cuda_13.0"


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("state", sorted(STATES) + sorted(REFUSED))
def test_the_slot_reads_the_shell_as_envmgr_does(shell, state, setup):
    env, log, _, _ = setup
    before = (STATES.get(state) or REFUSED[state]).replace("{unexport}", UNEXPORT[shell])
    activate(shell, env)  # writes the slot
    slot_of(env).unlink()
    code, by_envmgr = activate(shell, env, before)  # no slot: envmgr answers (and writes it)
    if not slot_of(env).is_file():
        activate(shell, env)  # envmgr refused this state: write it now
    assert slot_of(env).is_file()
    n = calls(log)
    again, by_slot = activate(shell, env, before)
    assert calls(log) == (n if state in STATES else n + 1), state  # the slot answered / left it to envmgr
    assert (again, by_slot) == (code, by_envmgr), state
    if state.startswith("not UTF-8"):
        assert code == 2


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("before", ["{unexport} CUDA_HOME", "{unexport} CUDA_PATH_V12_4; export cuda_path_v9_0=/a"])
def test_a_key_variable_no_longer_exported_hands_over(shell, before, setup, tmp_path):
    # The slot was written while CUDA_HOME and CUDA_PATH_V12_4 were exported; a shell variable that a
    # child is not given is not part of envmgr's key, so the slot must not take it for one.
    env, log, watched, absent = setup
    env = {**env, "CUDA_HOME": "/elsewhere", "CUDA_PATH_V12_4": "/a"}
    store(env, PLAIN, watched, absent, cuda="13.0")
    activate(shell, env)
    code, _ = activate(shell, env)
    assert code == 0 and calls(log) == 1  # the slot answers while they are exported
    before = before.replace("{unexport}", UNEXPORT[shell])
    code, state = activate(shell, {**env, "ENVMGR_TEST_REFUSE": "1"}, before)
    assert code == 3 and calls(log) == 2, before  # envmgr was asked
    assert "ENVMGR_ACTIVE" not in state and state["PATH"] == env["PATH"]
