"""Faults end cleanly (issue 34, deliverable 3; audit N24 and N26): a full disk, `ulimit -f`, a closed stdout and
SIGTERM mid-write give one line and the documented exit code, never a traceback or Python's exit 120; `run --log`
keeps its child's exit code when the log cannot be written on.

A full disk is /dev/full (every write fails with ENOSPC; no tmpfs can be mounted in CI), `ulimit -f` is
RLIMIT_FSIZE set in the child before it starts (Python ignores SIGXFSZ, so a write past it fails with EFBIG).
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="/dev/full, RLIMIT_FSIZE and SIGTERM are POSIX's")

if sys.platform != "win32":  # POSIX only: collected, then skipped, by the Windows-CPython tier
    import resource

ENVMGR = [sys.executable, "-m", "envmgr"]
FULL_DISK = "/dev/full"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ENVMGR_")}
    return {
        **base,
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "ENVMGR_DATA_DIR": str(tmp_path / "data"),
        "NO_COLOR": "1",
        "ENVMGR_PREBUILT_INDEX": "",
        "ENVMGR_WHEEL_INDEX": "",
    }


def _one_clean_error(stderr: bytes, words: str) -> None:
    text = stderr.decode(errors="replace")
    assert "Traceback" not in text and "Exception ignored" not in text, text
    errors = [line for line in text.splitlines() if line.startswith("envmgr: error:")]
    assert errors == [f"envmgr: error: cannot write the output: {words}"], text


def _file_size_limit(limit: int):
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limited


@pytest.mark.parametrize(
    "args",
    [
        ["list"],
        ["list", "--json"],
        ["doctor", "--json"],
        ["recipes", "--json"],
        ["install", "llama-cpp-python", "--dry-run", "--json"],
    ],
)  # it leaves by sys.exit
def test_n24_a_full_disk_under_stdout_is_one_line_and_exit_2(args: list[str], env: dict[str, str]) -> None:
    with open(FULL_DISK, "wb") as full:
        done = subprocess.run([*ENVMGR, *args], stdout=full, stderr=subprocess.PIPE, env=env, timeout=120)
    _one_clean_error(done.stderr, "No space left on device")
    assert done.returncode == 2


def test_n24_stdout_past_ulimit_f_is_one_line_and_exit_2(tmp_path: Path, env: dict[str, str]) -> None:
    log = tmp_path / "build.log"  # its --json document (the long line, twice) is far past the limit
    log.write_text("x" * 200_000 + " nvcc fatal   : Unsupported gpu architecture 'compute_120'\n", encoding="utf-8")
    out = tmp_path / "out.json"
    with open(out, "wb") as fh:
        done = subprocess.run(
            [*ENVMGR, "doctor", "--log", str(log), "--json"],
            stdout=fh,
            stderr=subprocess.PIPE,
            env=env,
            timeout=120,
            preexec_fn=_file_size_limit(4096),
        )
    _one_clean_error(done.stderr, "File too large")
    assert done.returncode == 2
    assert out.stat().st_size <= 4096


def test_n24_a_closed_stdout_is_one_line_and_exit_2(env: dict[str, str]) -> None:
    done = subprocess.run(
        [*ENVMGR, "list"], stderr=subprocess.PIPE, env=env, timeout=120, preexec_fn=lambda: os.close(1)
    )
    _one_clean_error(done.stderr, "stdout is closed")
    assert done.returncode == 2


def test_n24_a_closed_stdout_is_not_taken_by_a_file_envmgr_opens(tmp_path: Path, env: dict[str, str]) -> None:
    # fd 1 closed: the --log file would have been opened as fd 1 and the child's output copied into it twice
    log = tmp_path / "run.log"
    done = subprocess.run(
        [*ENVMGR, "run", "--log", str(log), "--", "sh", "-c", "echo one-line; exit 3"],
        stderr=subprocess.PIPE,
        env=env,
        timeout=120,
        preexec_fn=lambda: os.close(1),
    )
    assert done.returncode == 3, done.stderr
    assert log.read_bytes().replace(b"\r\n", b"\n") == b"one-line\n"


def test_n24_the_fast_path_on_a_full_disk_and_a_closed_stdout(tmp_path: Path, env: dict[str, str]) -> None:
    from tests.unit.fastpath.test_fast_path import PLAIN, SCRIPT, store

    watched = tmp_path / "watched"
    watched.write_text("x")
    store(env, PLAIN, watched)
    hit = subprocess.run([str(SCRIPT), "export", "--format", "sh"], capture_output=True, env=env, timeout=60)
    assert hit.returncode == 0 and b"CUDA_PATH" in hit.stdout, hit.stderr
    with open(FULL_DISK, "wb") as full:
        done = subprocess.run(
            [str(SCRIPT), "export", "--format", "sh"], stdout=full, stderr=subprocess.PIPE, env=env, timeout=60
        )
    _one_clean_error(done.stderr, "No space left on device")
    assert done.returncode == 2
    done = subprocess.run(
        [str(SCRIPT), "export", "--format", "toml"],
        stderr=subprocess.PIPE,
        env=env,
        timeout=60,
        preexec_fn=lambda: os.close(1),
    )
    _one_clean_error(done.stderr, "stdout is closed")
    assert done.returncode == 2


def test_n24_sigterm_while_stdout_blocks_is_one_line_and_exit_143(tmp_path: Path, env: dict[str, str]) -> None:
    log = tmp_path / "build.log"  # a --json document of about 400 KB: far more than a pipe holds
    log.write_text("y" * 200_000 + " nvcc fatal   : Unsupported gpu architecture 'compute_120'\n", encoding="utf-8")
    proc = subprocess.Popen(
        [*ENVMGR, "doctor", "--log", str(log), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert proc.stdout is not None and proc.stderr is not None
    if not select.select([proc.stdout], [], [], 120)[0]:
        proc.kill()
        pytest.fail("no output in 120 s")
    assert proc.stdout.read(1) == b"{"  # it is writing; nobody reads on, so the write blocks
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    stderr = proc.stderr.read().decode(errors="replace")
    assert stderr.splitlines() == ["envmgr: stopped by SIGTERM"], stderr
    proc.stdout.close()
    proc.stderr.close()


CHILD = ["sh", "-c", "yes | head -c 100000; exit 4"]


def test_n26_run_log_past_ulimit_f_keeps_the_child_and_its_exit_code(tmp_path: Path, env: dict[str, str]) -> None:
    log = tmp_path / "l.txt"
    done = subprocess.run(
        [*ENVMGR, "run", "--log", str(log), "--", *CHILD],
        capture_output=True,
        env=env,
        timeout=120,
        preexec_fn=_file_size_limit(1024),
    )
    stderr = done.stderr.decode(errors="replace")
    assert done.returncode == 4, stderr  # 5725032: a traceback and exit 1
    assert "Traceback" not in stderr
    assert [line for line in stderr.splitlines() if "warning" in line] == [
        f"envmgr: warning: the log {log} stopped at 1 KB: File too large; the command runs on and its exit code is kept"
    ]
    assert done.stdout.replace(b"\r\n", b"\n") == b"y\n" * 50000  # the child ran to its end
    kept = log.read_bytes()  # what fitted is kept: the first 1 KB
    assert len(kept) == 1024 and ((b"y\r\n" * 400).startswith(kept) or (b"y\n" * 600).startswith(kept)), kept


def test_n26_run_log_on_a_full_disk_keeps_the_child_and_its_exit_code(env: dict[str, str]) -> None:
    done = subprocess.run(
        [*ENVMGR, "run", "--log", FULL_DISK, "--", "sh", "-c", "echo built; exit 5"],
        capture_output=True,
        env=env,
        timeout=120,
    )
    stderr = done.stderr.decode(errors="replace")
    assert done.returncode == 5, stderr
    assert "Traceback" not in stderr
    assert f"envmgr: warning: the log {FULL_DISK} stopped at 0 bytes: No space left on device" in stderr
    assert done.stdout.replace(b"\r\n", b"\n") == b"built\n"
