"""Windows-only twin of tests/linux/test_interactive.py: PowerShell and cmd started by `envmgr shell`,
driven through a real ConPTY with pywinpty. Runs in .github/workflows/windows.yml, and under Wine in
the Windows-CPython tier (tests/run-win32.sh, under Xvfb: Wine's ConPTY needs a display).

Keys are typed as a terminal types them: Enter is "\\r". A "\\r\\n" would be two keys, Enter then
Ctrl+J, and the console puts that LF at the start of the next line, where cmd stops reading: Wine's
cmd then shows `^J` and ignores the next command (`exit 4` never ran: the old hang)."""

from __future__ import annotations

import os
import queue
import re
import sys
import threading
import time

import pytest

from tests.conftest import UNDER_WINE

pytestmark = [pytest.mark.windows, pytest.mark.conpty]
if UNDER_WINE and sys.version_info < (3, 11):
    # Measured 2026-11-23: inside this test process pywinpty 2.0.13's cp310 build fails to create the
    # pseudo-console under Wine 8 ("Invalid handle" from ConPTY, "Unknown error" from WinPTY), alone or
    # late in a run, though the same spawn works from a plain script and on 3.11; cause not found.
    pytest.skip(
        "Wine 8: pywinpty 2.0.13 (cp310) cannot create a PTY in the test process (Invalid handle); "
        "the 3.11 run drives ConPTY",
        allow_module_level=True,
    )
if UNDER_WINE and sys.version_info >= (3, 13):
    # Measured 2026-11-23: pywinpty 2.0.13 (the last that loads on Wine 8) has no cp313 wheel, and 2.0.15
    # and 3.x fail to load there ("DLL load failed": bcryptprimitives.dll, which Wine 8 lacks).
    pytest.skip(
        "Wine 8 cannot load any pywinpty built for Python 3.13 (bcryptprimitives.dll missing); "
        "the 3.11 and 3.10 runs drive ConPTY",
        allow_module_level=True,
    )
winpty = pytest.importorskip("winpty") if sys.platform == "win32" else None

SNAPSHOT = """schema = 1
platform = "windows"

[summary]
cuda_short = "12.4"

[env]
CUDA_PATH = 'C:\\envmgr-test\\CUDA\\v12.4'
CMAKE_ARGS = "-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=89"
"""
STEP_SECONDS = 60  # each step: the prompt, a command's output, the exit
ENTER = "\r"

_CURSOR_RIGHT = re.compile(r"\x1b\[(\d*)C")
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")


def screen_text(raw: str) -> str:
    """The terminal output without its escape sequences; a cursor move right (ConPTY writes one for
    a run of blanks) counts as that many spaces."""
    spaced = _CURSOR_RIGHT.sub(lambda m: " " * int(m.group(1) or 1), raw)
    return _ESCAPES.sub("", spaced)


class Driven:
    """A child in a ConPTY whose output a thread collects, so that no wait can block for ever
    (PtyProcess.read blocks while the child is silent)."""

    def __init__(self, argv: list[str], env: dict):
        self.argv = argv
        self.proc = winpty.PtyProcess.spawn(argv, env=env, dimensions=(40, 200))
        self.raw = ""
        self.eof = False
        self._chunks: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                data = self.proc.read(4096)
            except (EOFError, OSError):
                self._chunks.put(None)
                return
            if data:  # pywinpty returns "" for its own keep-alive packets
                self._chunks.put(data)

    def _collect(self, wait: float) -> None:
        try:
            chunk = self._chunks.get(timeout=wait)
            while True:
                if chunk is None:
                    self.eof = True
                else:
                    self.raw += chunk
                chunk = self._chunks.get_nowait()
        except queue.Empty:
            pass

    @property
    def text(self) -> str:
        return screen_text(self.raw)

    def type(self, line: str) -> None:
        self.proc.write(line + ENTER)

    def wait_for(self, pattern: str, what: str) -> None:
        deadline = time.monotonic() + STEP_SECONDS
        while not re.search(pattern, self.text):
            if self.eof or not self.proc.isalive():
                self._collect(0.5)
                if not re.search(pattern, self.text):
                    self.fail(f"the shell ended (exit status {self.proc.exitstatus}) before {what}")
                return
            if time.monotonic() > deadline:
                self.fail(f"no {what} after {STEP_SECONDS}s")
            self._collect(0.2)

    def wait_exit(self, what: str) -> int:
        deadline = time.monotonic() + STEP_SECONDS
        while self.proc.isalive():
            if time.monotonic() > deadline:
                self.fail(f"the shell still runs {STEP_SECONDS}s after {what}")
            self._collect(0.2)
        self._collect(0.5)
        return self.proc.exitstatus

    def fail(self, message: str) -> None:
        pytest.fail(
            f"{message}\n  argv: {self.argv}\n  seen (escapes removed): {self.text[-2000:]!r}"
            f"\n  seen (raw, last 1000): {self.raw[-1000:]!r}",
            pytrace=False,
        )

    def close(self) -> None:
        if self.proc.isalive():
            self.proc.terminate(force=True)


def drive(argv: list[str], steps: list[tuple[str, str]], tmp_path, exit_line: str = "exit 4") -> tuple[str, int]:
    """Types each step's line (none for "") and waits for its pattern, then types `exit_line` and
    waits for the end: (the output without escapes, the exit status). Every wait has a deadline."""
    env = {**os.environ, "NO_COLOR": "1", "ENVMGR_CACHE_DIR": str(tmp_path / "cache")}
    child = Driven(argv, env)
    try:
        for send, expect in steps:
            if send:
                child.type(send)
            child.wait_for(expect, f"output matching {expect!r}" + (f" after typing {send!r}" if send else ""))
        child.type(exit_line)
        code = child.wait_exit(f"typing {exit_line!r}")
        return child.text, code
    finally:
        child.close()


POWERSHELL_STUB = pytest.mark.xfail(
    UNDER_WINE,
    strict=True,
    reason="Wine's powershell.exe is a stub: it prints nothing and exits 0, so no prompt ever shows",
)


@pytest.mark.parametrize(
    "shell,echo",
    [
        pytest.param("powershell", 'Write-Output "CP=$env:CUDA_PATH"', marks=POWERSHELL_STUB, id="powershell"),
        pytest.param("cmd", "echo CP=%CUDA_PATH%", id="cmd"),
    ],
)
def test_shell_on_windows_has_marker_values_and_exit_code(shell, echo, tmp_path):
    snap = tmp_path / "env.toml"
    snap.write_text(SNAPSHOT, encoding="utf-8")
    argv = [sys.executable, "-m", "envmgr", "shell", "--shell", shell, "--from", str(snap)]
    out, code = drive(argv, [("", r"\(envmgr cuda-12\.4\)"), (echo, r"CP=C:\\envmgr-test\\CUDA\\v12\.4")], tmp_path)
    assert "(envmgr cuda-12.4)" in out
    assert "CP=C:\\envmgr-test\\CUDA\\v12.4" in out
    assert code == 4
