"""stdout under output.guard_stdout (issue 34, N24) carries what it carried before, on every platform: a --json
document and a text report into a file and a pipe, with the platform's line ends. Its failures are
tests/unit/test_output_faults.py's (POSIX)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# this checkout's envmgr whatever the interpreter's own path holds (the Windows-CPython tier's ._pth lists another)
ENVMGR = [
    sys.executable,
    "-c",
    f"import sys; sys.path.insert(0, {str(ROOT)!r}); from envmgr.cli.main import main; main()",
]
FAILURE = "nvcc fatal   : Unsupported gpu architecture 'compute_120'"


def _env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ENVMGR_")}
    return {
        **base,
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "ENVMGR_DATA_DIR": str(tmp_path / "data"),
        "NO_COLOR": "1",
    }


def test_n24_guarded_stdout_writes_a_file_and_a_pipe_as_before(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    log.write_text("-- ünïcødé line\n" + FAILURE + "\n", encoding="utf-8")
    out = tmp_path / "out.json"
    with open(out, "wb") as fh:
        done = subprocess.run(
            [*ENVMGR, "doctor", "--log", str(log), "--json"],
            stdout=fh,
            stderr=subprocess.PIPE,
            env=_env(tmp_path),
            timeout=300,
        )
    assert done.returncode == 1 and done.stderr == b"", done.stderr
    doc = json.loads(out.read_bytes().decode("utf-8"))
    assert (doc["decisive"], doc["lines"]) == ("F13", 2)
    piped = subprocess.run([*ENVMGR, "doctor", "--log", str(log)], capture_output=True, env=_env(tmp_path), timeout=300)
    assert piped.returncode == 1 and piped.stderr == b"", piped.stderr
    text = piped.stdout.decode("utf-8")
    assert text.startswith("F13") and f"line 2: {FAILURE}" in text
    assert ("\r\n" in text) == (sys.platform == "win32")  # the platform's line ends, as Python's own stdout
