"""Interrupted commands end cleanly: Ctrl+C through a real pty, EOF on stdin, signals → 128 + N.

`run`, `run --log`, `shell` and `install`: the child ends, envmgr returns (130 for Ctrl+C), and
nothing half-written stays behind (the shell's temp folder, the wheel cache's build folder).
The environment comes from a tiny snapshot (--from), so no toolkit is needed.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, Lazy

pexpect = Lazy("pexpect")  # imported by the tests that drive a terminal, when they do
pytestmark = [pytest.mark.linux, pytest.mark.posix]

# READY only once the process that Ctrl+C must stop runs (with `sh -c '...; sleep'` a Ctrl+C between
# the echo and the fork reached only sh, which catches SIGINT under -c, and the test hung)
SLOW = (
    "import os, time; open('child.pid', 'w').write(str(os.getpid())); print('READY', flush=True); "
    "time.sleep(30); print('DONE')"
)


def snapshot(where: Path) -> Path:
    snap = where / "env.toml"
    snap.write_text(
        f'schema = 1\nplatform = "linux"\n[summary]\ncuda_short = "9.9"\n[env]\nCUDA_HOME = "{where}"\n',
        encoding="utf-8",
    )
    return snap


def environ(where: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA", "ENVMGR_"))}
    (where / "tmp").mkdir(exist_ok=True)  # TMPDIR: where `shell` keeps its rc files
    env.update(
        PYTHONPATH=str(ROOT),
        ENVMGR_CACHE_DIR=str(where / "cache"),
        NO_COLOR="1",
        HOME=str(where),
        TERM="dumb",
        PATH="/usr/local/bin:/usr/bin:/bin",
        TMPDIR=str(where / "tmp"),
        **extra,
    )
    env.pop("ENV", None)
    return env


def envmgr_argv(where: Path, *args: str) -> list[str]:
    return ["-m", "envmgr", *args[:1], "--from", str(snapshot(where)), *args[1:]]


def in_pty(where: Path, *args: str, timeout: int = 20):
    return pexpect.spawn(
        sys.executable,
        envmgr_argv(where, *args),
        env=environ(where),
        encoding="utf-8",
        timeout=timeout,
        cwd=str(where),
        dimensions=(40, 200),
    )


def alive(pid_file: Path, grace: float = 3) -> bool:
    """Whether the process is still there after `grace` seconds (an ended one may wait to be reaped)."""
    deadline = time.monotonic() + grace
    while True:
        try:
            state = Path(f"/proc/{int(pid_file.read_text())}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, ValueError):
            return False
        if state in ("Z", "X"):
            return False
        if time.monotonic() > deadline:
            return True
        time.sleep(0.05)


def ended(child) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus if child.exitstatus is not None else 128 + child.signalstatus


@pytest.mark.parametrize("log", [False, True], ids=["run", "run-log"])
def test_ctrl_c_typed_in_the_terminal_stops_the_command_and_envmgr_exits_130(tmp_path, log):
    # --log once ran the child with SIGINT ignored: the build went on to its end and envmgr said 0
    extra = ["--log", str(tmp_path / "build.log")] if log else []
    child = in_pty(tmp_path, "run", *extra, "--", sys.executable, "-c", SLOW, timeout=15)
    child.expect("READY")
    start = time.monotonic()
    child.sendintr()
    assert ended(child) == 130
    assert time.monotonic() - start < 10 and "DONE" not in child.before
    assert not alive(tmp_path / "child.pid")
    if log:
        text = (tmp_path / "build.log").read_text()
        assert "READY" in text and "DONE" not in text
        assert "no known failure signature" not in child.before  # a stop, not a failure to diagnose


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_envmgr_under_log_reaches_the_command(tmp_path, sig):
    """Under --log the command has a session of its own: envmgr passes Ctrl+C (from a terminal whose
    input is not its stdin), SIGTERM and SIGHUP on, and returns 128 + N once the command has ended."""
    proc = subprocess.Popen(
        [
            sys.executable,
            *envmgr_argv(tmp_path, "run", "--log", str(tmp_path / "x.log"), "--", sys.executable, "-c", SLOW),
        ],
        env=environ(tmp_path),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait_for(tmp_path / "x.log", "READY")
    proc.send_signal(sig)
    assert proc.wait(timeout=10) == 128 + sig
    assert not alive(tmp_path / "child.pid")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT])
def test_a_signal_to_envmgr_run_is_passed_to_the_command(tmp_path, sig):
    # envmgr used to die at once and leave the command running (SIGTERM, SIGHUP); SIGINT and SIGQUIT
    # sent to envmgr alone, with no terminal (a new session: as under CI or a supervisor), were
    # swallowed and the command ran to its end (issue 11's open point)
    out = tmp_path / "out.txt"
    with open(out, "wb") as sink:
        proc = subprocess.Popen(
            [
                sys.executable,
                *envmgr_argv(
                    tmp_path,
                    "run",
                    "--",
                    "sh",
                    "-c",
                    "trap 'echo GOT; kill $!; exit 7' TERM HUP INT QUIT; echo READY; sleep 30 & wait; echo DONE",
                ),
            ],
            env=environ(tmp_path),
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            start_new_session=True,
        )
        _wait_for(out, "READY")
        proc.send_signal(sig)
        assert proc.wait(timeout=10) == 7  # the command's own answer to the signal
    assert "GOT" in out.read_text() and "DONE" not in out.read_text()


@pytest.mark.parametrize("log", [False, True], ids=["run", "run-log"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_command_killed_by_a_signal_gives_128_plus_n(tmp_path, log, sig):
    # --log gave 241 and 247 (the negative status through sys.exit)
    extra = ["--log", str(tmp_path / "x.log")] if log else []
    done = subprocess.run(
        [sys.executable, *envmgr_argv(tmp_path, "run", *extra, "--", "sh", "-c", f"kill -{sig.name[3:]} $$")],
        env=environ(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 128 + sig, done.stderr


@pytest.mark.parametrize("log", [False, True], ids=["run", "run-log"])
def test_eof_on_stdin_reaches_the_command(tmp_path, log):
    # `run --log x -- cat </dev/null` waited for ever: the pty never passed the end of input on
    extra = ["--log", str(tmp_path / "x.log")] if log else []
    argv = [sys.executable, *envmgr_argv(tmp_path, "run", *extra, "--", "cat")]
    kw = dict(env=environ(tmp_path), cwd=tmp_path, capture_output=True, timeout=30)
    assert subprocess.run(argv, stdin=subprocess.DEVNULL, **kw).returncode == 0
    piped = subprocess.run(argv, input=b"one\ntwo", **kw)
    assert piped.returncode == 0 and piped.stdout.replace(b"\r\n", b"\n") == b"one\ntwo"
    if log:
        assert (tmp_path / "x.log").read_bytes().replace(b"\r\n", b"\n") == b"one\ntwo"


def test_ctrl_d_typed_in_the_terminal_ends_input_under_log(tmp_path):
    child = in_pty(tmp_path, "run", "--log", str(tmp_path / "x.log"), "--", "sh", "-c", "echo READY; cat")
    child.expect("READY")
    child.sendline("typed")
    child.expect("typed\r\n.*typed")  # the pty's echo, then cat's copy
    child.sendeof()
    assert ended(child) == 0


@pytest.mark.parametrize("shell", ["bash", "sh"])
def test_ctrl_c_in_shell_stops_the_command_not_the_shell_and_exit_returns_130(tmp_path, shell):
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    (tmp_path / ".bashrc").write_text("PS1='$ '\n")
    child = in_pty(tmp_path, "shell", "--shell", shell)
    child.expect_exact("(envmgr cuda-9.9)")
    assert list((tmp_path / "tmp").glob("envmgr-shell-*"))
    child.sendline(f'{sys.executable} -c "{SLOW}"')
    child.expect("\nREADY")  # the output, not the echo of the line typed
    child.sendintr()
    child.expect_exact("(envmgr cuda-9.9)")  # the shell is still there, with its prompt
    assert not alive(tmp_path / "child.pid")
    child.sendline("exit")  # exit's status is the last one: 130
    assert ended(child) == 130
    assert not list((tmp_path / "tmp").glob("envmgr-shell-*"))


@pytest.mark.parametrize("shell", ["bash", "sh"])
def test_eof_in_shell_ends_it_and_envmgr_cleans_up(tmp_path, shell):
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    child = in_pty(tmp_path, "shell", "--shell", shell)
    child.expect_exact("(envmgr cuda-9.9)")
    child.sendline('echo "RC=$ENVMGR_ACTIVE"')
    child.expect("RC=cuda-9.9")
    child.sendeof()
    assert ended(child) == 0
    assert not list((tmp_path / "tmp").glob("envmgr-shell-*"))


def _wait_for(path: Path, text: str, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.05)
    raise AssertionError(f"{text!r} never appeared in {path}")


SLOW_BACKEND = """
import os, time

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    with open(os.path.join(wheel_directory, "slowpkg-1.0-py3-none-any.whl"), "wb") as half:
        half.write(b"PK half a wheel")               # what a build leaves when it is stopped (pip's own temp)
    with open(os.environ["SLOW_PID_FILE"], "w") as f:
        f.write(str(os.getpid()))
    time.sleep(60)
    raise SystemExit("the test should have stopped this build")
"""


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_install_stopped_during_the_build_ends_it_and_caches_nothing(tmp_path, how):
    """pip catches Ctrl+C and exits 1: envmgr itself saw the Ctrl+C and exits 130, the build's
    folder in the wheel cache is gone, no entry was written; SIGTERM to envmgr reaches pip and the
    build it started (pip dies of SIGTERM at once, leaving its backend): 143."""
    import tarfile

    from tests.linux.test_wheels_e2e import MACHINE, PYPROJECT, RECIPE

    src = tmp_path / "slowpkg-1.0"
    src.mkdir()
    (src / "pyproject.toml").write_text(PYPROJECT)
    (src / "backend.py").write_text(SLOW_BACKEND)
    sdist = tmp_path / "slowpkg-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tf:
        tf.add(src, arcname="slowpkg-1.0")
    (tmp_path / "config" / "recipes").mkdir(parents=True)
    (tmp_path / "config" / "recipes" / "slow.toml").write_text(RECIPE.format(name="slow", args='"-DGGML_CUDA=on"'))
    pid_file = tmp_path / "build.pid"
    env = environ(
        tmp_path,
        ENVMGR_CONFIG_DIR=str(tmp_path / "config"),
        SLOW_PID_FILE=str(pid_file),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INPUT="1",
    )
    argv = [
        "-m",
        "envmgr",
        "--machine",
        str(MACHINE),
        "install",
        "--recipe",
        "slow",
        "--arch-list",
        "90",
        "--no-index",
        str(sdist),
    ]
    if how == "ctrl-c":  # typed in a terminal
        child = pexpect.spawn(sys.executable, argv, env=env, encoding="utf-8", timeout=60, cwd=str(tmp_path))
    else:  # no terminal (CI, a service): its hangup would end the build anyway
        out = open(tmp_path / "out.txt", "w+")
        proc = subprocess.Popen(
            [sys.executable, *argv],
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    _wait_for(pid_file, "", seconds=60)
    while not pid_file.read_text():
        time.sleep(0.05)
    assert list((tmp_path / "cache" / "wheels").glob(".build-*"))  # pip wheel -w goes there
    if how == "ctrl-c":
        child.sendintr()
        code, text = ended(child), child.before
    else:
        proc.send_signal(signal.SIGTERM)
        code, text = proc.wait(timeout=30), (out.seek(0), out.read())[1]
    assert code == (130 if how == "ctrl-c" else 143), text[-600:]
    assert "interrupted by" in text and "Traceback" not in text
    assert not alive(pid_file)  # the build backend, pip's child, ended too
    left = sorted(p.relative_to(tmp_path / "cache" / "wheels") for p in (tmp_path / "cache" / "wheels").rglob("*"))
    assert left == []
