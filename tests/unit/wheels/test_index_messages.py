"""What `wheels publish` and reading an index say and leave behind when something goes wrong (audit M4,
M7, M9). The index server is a loopback http.server in this process (127.0.0.1 only)."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import os
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

from envmgr.wheels import remote
from tests.conftest import CUDA_SO, ROOT, sample_bytes


@pytest.fixture
def redirect_loop():
    """A server that answers every path with a 302 to itself: urllib gives up with a three-line reason."""

    class Loop(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(302)
            self.send_header("Location", self.path)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Loop)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_a_redirect_loop_is_one_line(redirect_loop):
    with pytest.raises(remote.Unreachable) as err:
        remote.read(redirect_loop + "pkg/")
    message = str(err.value)
    assert "\n" not in message and "redirect" in message and "HTTP 302" in message


# ---- wheels publish with one entry that cannot be copied (M4) -----------------------------------------
def _entry(cache: Path, package: str, wheel_name: str | None = None) -> Path:
    """A cache entry (entry.json beside a zip with a CUDA library), as wheels.store writes it; with
    `wheel_name`, entry.json names the wheel by that string instead (a damaged or merged cache)."""
    key = {
        "package": package,
        "version": "1.0",
        "source": "index",
        "cuda": "13.0",
        "archs": "90",
        "generator": "Ninja",
        "cmake_args": "",
        "python_tag": "cp311",
        "platform": "linux_x86_64",
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
    folder = cache / "wheels" / digest
    folder.mkdir(parents=True)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(f"{package}/lib/lib{package}-cuda.so", sample_bytes(CUDA_SO))
    wheel = folder / f"{package}-1.0-py3-none-any.whl"
    wheel.write_bytes(buf.getvalue())
    (folder / "entry.json").write_text(
        json.dumps(
            {
                "schema": 1,
                "key": key,
                "wheel": wheel_name or wheel.name,
                "sha256": hashlib.sha256(buf.getvalue()).hexdigest(),
            }
        )
    )
    return folder


def test_one_entry_that_cannot_be_copied_does_not_stop_the_others(tmp_path, cli):
    cache = tmp_path / "cache"
    _entry(cache, "goodpkg")
    bad = _entry(cache, "badpkg")
    # entry.json names its wheel by its absolute path: the copy would land on the wheel itself
    (bad / "entry.json").write_text(
        (bad / "entry.json")
        .read_text()
        .replace('"badpkg-1.0-py3-none-any.whl"', json.dumps(str(bad / "badpkg-1.0-py3-none-any.whl")))
    )
    res = cli("wheels", "publish", str(tmp_path / "dest"), env={"ENVMGR_CACHE_DIR": str(cache)})
    assert "PosixPath(" not in res.stderr and "WindowsPath(" not in res.stderr
    assert res.code == 0, res.stderr
    assert (tmp_path / "dest" / "goodpkg" / "index.html").is_file()  # the good entry is published
    assert "skipped" in res.stderr and str(bad) in res.stderr  # the bad one is named, DEST is not blamed
    assert "cannot be written" not in res.stderr


# ---- staging folders a killed publisher left (M9) -------------------------------------------------------
_HOLDER = """
import sys, time
from pathlib import Path
from envmgr.wheels import staging
with staging.held(Path(sys.argv[1])) as (stage, old):
    stage.mkdir()
    (stage / "part.whl").write_bytes(b"x" * 1000)
    print(stage.name, flush=True)
    time.sleep(600)
"""


def _holder(target: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(target)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return proc, proc.stdout.readline().strip()


@pytest.mark.posix
def test_a_killed_publishers_staging_folder_goes_a_live_ones_stays(tmp_path, cli):
    cache = tmp_path / "cache"
    folder = _entry(cache, "goodpkg")
    project = tmp_path / "dest" / "goodpkg"
    killed, killed_name = _holder(project / folder.name)
    live, live_name = _holder(project / ("f" * 20))
    try:
        killed.kill()  # SIGKILL: no finally, no cleanup of its own
        killed.wait()
        orphan = project / f".{'e' * 20}.{'0' * 12}.tmp"  # no lock file (an older envmgr): goes when an hour old
        orphan.mkdir()
        young = project / f".{'d' * 20}.{'0' * 12}.tmp"
        young.mkdir()
        os.utime(orphan, (time.time() - 7200, time.time() - 7200))
        res = cli("wheels", "publish", str(tmp_path / "dest"), env={"ENVMGR_CACHE_DIR": str(cache)})
        assert res.code == 0, res.stderr
        left = sorted(p.name for p in project.iterdir())
        assert killed_name not in left and orphan.name not in left
        assert live_name in left and young.name in left  # a live publisher's work is never touched
        assert folder.name in left
    finally:
        live.kill()
        live.wait()


def test_a_leftover_staging_folder_an_hour_old_goes(tmp_path, cli):
    """What `kill -9` during a publish by any envmgr left behind: a staging folder with a part of a wheel."""
    cache = tmp_path / "cache"
    folder = _entry(cache, "goodpkg")
    leftover = tmp_path / "dest" / "goodpkg" / f".{folder.name}.{'0' * 12}.tmp"
    leftover.mkdir(parents=True)
    (leftover / "goodpkg-1.0-py3-none-any.whl").write_bytes(b"x" * 1000)
    os.utime(leftover, (time.time() - 7200, time.time() - 7200))
    res = cli("wheels", "publish", str(tmp_path / "dest"), env={"ENVMGR_CACHE_DIR": str(cache)})
    assert res.code == 0, res.stderr
    assert not leftover.exists()
