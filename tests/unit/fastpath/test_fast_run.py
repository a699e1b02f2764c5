"""`envmgr run -- CMD` on a cache hit (envmgr/fastpath/run.py) behaves as the full path does.

The child's environment is activation_delta(...).apply(os.environ) item for item (order included)
for every kind of operation, from a clean and from an active environment; exit codes (the child's,
128 + N for a signal), the errors of a missing or unrunnable program, the descriptors the child
inherits and the signals that reach envmgr are compared between the console script and the full
CLI. tests/linux/test_fast_run_signals.py drives Ctrl+C through a real terminal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envmgr.fastpath import main as _fast
from envmgr.fastpath import run as _fastrun
from envmgr.snapshot.activation import activation_delta
from envmgr.snapshot.envdelta import APPEND, PREPEND, REMOVE, SET, UNSET, EnvDelta, VarOp
from tests.unit.fastpath.test_fast_path import CASES, PLAIN, both, env, same, store  # noqa: F401 - env: a fixture

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the fast path runs on POSIX only")

EDGES = EnvDelta(
    "linux",
    (
        VarOp("PATH", PREPEND, ("/usr/bin/", "/new", "/new/")),  # trailing '/' and duplicates
        VarOp("PATH", APPEND, ("/bin", "/tail")),
        VarOp("LD_LIBRARY_PATH", REMOVE, ("/lib/a/",)),
        VarOp("UNSET_ME", UNSET),
        VarOp("NEW", SET, ""),
        VarOp("CPATH", APPEND, ("/inc",)),
        VarOp("NOT_THERE", REMOVE, ("/x",)),
    ),
)
BASES = {
    "clean": {"PATH": "/usr/bin:/bin::/usr/bin/", "LD_LIBRARY_PATH": "/lib/a::/lib/b", "UNSET_ME": "1", "HOME": "/h"},
    "no PATH": {"HOME": "/h", "CPATH": " "},
    "active": {
        "PATH": "/old/bin:/usr/bin",
        "ENVMGR_ACTIVE": "cuda-12.4",
        "OLD": "1",
        "HOME": "/h",
        "ENVMGR_RESTORE": json.dumps(
            {"OLD": None, "PATH": "/usr/bin", "GONE": "was ü", "CUDA_PATH": None}, ensure_ascii=False
        ),
    },
    "active, empty restore": {"PATH": "/usr/bin", "ENVMGR_ACTIVE": "x", "ENVMGR_RESTORE": "{}"},
    "empty restore value": {"PATH": "/usr/bin", "ENVMGR_RESTORE": ""},
}


@pytest.mark.parametrize("base", sorted(BASES))
@pytest.mark.parametrize("case", sorted([*CASES, "edges"]))
def test_child_env_is_the_full_paths_item_for_item(case, base):
    delta = EDGES if case == "edges" else CASES[case]
    env = BASES[base]
    ops = [(op.name, op.op, op.value) for op in delta.ops]  # as KEY.fast holds them
    want = activation_delta(delta, env, "cuda-13.0").apply(env)
    got = _fastrun.child_env(ops, "cuda-13.0", env)
    assert list(got.items()) == list(want.items())


@pytest.mark.parametrize("restore", ["not json", "[1, 2]", '{"A": 1}', '"text"'])
def test_an_unusual_restore_goes_to_the_full_code(restore):
    ops = [(op.name, op.op, op.value) for op in PLAIN.ops]
    assert _fastrun.child_env(ops, "m", {"PATH": "/usr/bin", "ENVMGR_RESTORE": restore}) is None


def test_which_is_shutils(tmp_path):
    import shutil

    exe, plain, folder = tmp_path / "exe", tmp_path / "plain", tmp_path / "dir"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    plain.write_text("")
    folder.mkdir()
    (folder / "exe").mkdir()
    path = f"{folder}::{tmp_path}:/usr/bin"
    for name in ("exe", "plain", "dir", "sh", str(exe), str(plain), "no-such", "./exe"):
        fast = _fastrun.which(name, {"PATH": path})
        assert fast == shutil.which(name, path=path) or fast is None and name == "./exe", name


def script(tmp_path: Path, env: dict) -> dict:
    watched = tmp_path / "w"
    watched.write_text("x")
    store(env, PLAIN, watched, cuda="13.0")
    return env


def test_exit_codes_and_errors_are_the_full_paths(env, tmp_path):
    script(tmp_path, env)
    noexec = tmp_path / "noexec"
    noexec.write_text("echo hi\n")
    binary = tmp_path / "binary"
    binary.write_bytes(b"\x7fELF garbage")
    binary.chmod(0o755)
    for cmd in (
        ["true"],
        ["false"],
        ["sh", "-c", "exit 7"],
        ["sh", "-c", "kill -TERM $$"],
        ["sh", "-c", "kill -KILL $$"],
        ["sh", "-c", "echo out; echo err >&2"],
        ["no-such-program-envmgr"],
        [str(noexec)],
        [str(binary)],
        [str(tmp_path)],
        ["./noexec"],
    ):
        assert _fast.plan(["run", "--cuda", "13.0", "--", *cmd], env) is not None
        done = same(["run", "--cuda", "13.0", "--", *cmd], {**env, "PATH": f"{env['PATH']}:"})
        if cmd[-1] == "kill -TERM $$":
            assert done.returncode == 143


def test_the_child_inherits_only_the_standard_descriptors(env, tmp_path):
    script(tmp_path, env)
    read, write = os.pipe()
    os.set_inheritable(write, True)
    try:
        cmd = ["run", "--cuda", "13.0", "--", "sh", "-c", f"ls /proc/$$/fd; echo 2>/dev/null >&{write} && echo open"]
        fast = subprocess.run(
            [str(Path(sys.executable).with_name("envmgr")), *cmd],
            env=env,
            capture_output=True,
            close_fds=False,
            text=True,
        )
        full = subprocess.run(
            [sys.executable, "-c", "from envmgr.cli.main import main; main()", *cmd],
            env=env,
            capture_output=True,
            close_fds=False,
            text=True,
        )
    finally:
        os.close(read)
        os.close(write)
    assert fast.stdout == full.stdout and "open" not in fast.stdout
    assert (fast.returncode, fast.stderr) == (full.returncode, full.stderr)


def test_sigpipe_is_the_childs_default_again(env, tmp_path):
    script(tmp_path, env)
    grep = ["sh", "-c", "grep -E '^Sig(Ign|Cgt)' /proc/self/status"]
    fast, full = both(["run", "--cuda", "13.0", "--", *grep], env)
    assert fast.stdout == full.stdout and fast.returncode == full.returncode == 0


def test_sigterm_to_envmgr_reaches_the_command(env, tmp_path):
    import signal
    import time

    script(tmp_path, env)
    out = tmp_path / "out.txt"
    cmd = [
        "run",
        "--cuda",
        "13.0",
        "--",
        "sh",
        "-c",
        "trap 'echo GOT; kill $!; exit 7' TERM HUP; echo READY; sleep 30 & wait; echo DONE",
    ]
    assert _fast.plan(cmd, env) is not None
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with open(out, "wb") as sink:
            proc = subprocess.Popen(
                [str(Path(sys.executable).with_name("envmgr")), *cmd], env=env, stdin=subprocess.DEVNULL, stdout=sink
            )
            deadline = time.monotonic() + 20
            while "READY" not in out.read_text() and time.monotonic() < deadline:
                time.sleep(0.05)
            proc.send_signal(sig)
            assert proc.wait(timeout=10) == 7
        assert "GOT" in out.read_text() and "DONE" not in out.read_text()
