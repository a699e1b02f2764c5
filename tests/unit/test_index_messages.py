"""What `wheels publish` and reading an index say and leave behind when something goes wrong (audit M4,
M7, M9). The index server is a loopback http.server in this process (127.0.0.1 only)."""
from __future__ import annotations

import hashlib
import http.server
import io
import json
import threading
import zipfile
from pathlib import Path

import pytest

from envmgr.wheels import remote


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
    key = {"package": package, "version": "1.0", "source": "index", "cuda": "13.0", "archs": "90",
           "generator": "Ninja", "cmake_args": "", "python_tag": "cp311", "platform": "linux_x86_64"}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
    folder = cache / "wheels" / digest
    folder.mkdir(parents=True)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(f"{package}/lib/lib{package}-cuda.so", b"\x7fELF")
    wheel = folder / f"{package}-1.0-py3-none-any.whl"
    wheel.write_bytes(buf.getvalue())
    (folder / "entry.json").write_text(json.dumps({
        "schema": 1, "key": key, "wheel": wheel_name or wheel.name, "sha256": hashlib.sha256(buf.getvalue()).hexdigest()}))
    return folder


def test_one_entry_that_cannot_be_copied_does_not_stop_the_others(tmp_path, cli):
    cache = tmp_path / "cache"
    _entry(cache, "goodpkg")
    bad = _entry(cache, "badpkg")
    # entry.json names its wheel by its absolute path: the copy would land on the wheel itself
    (bad / "entry.json").write_text((bad / "entry.json").read_text().replace(
        '"badpkg-1.0-py3-none-any.whl"', json.dumps(str(bad / "badpkg-1.0-py3-none-any.whl"))))
    res = cli("wheels", "publish", str(tmp_path / "dest"), env={"ENVMGR_CACHE_DIR": str(cache)})
    assert "PosixPath(" not in res.stderr and "WindowsPath(" not in res.stderr
    assert res.code == 0, res.stderr
    assert (tmp_path / "dest" / "goodpkg" / "index.html").is_file()       # the good entry is published
    assert "skipped" in res.stderr and str(bad) in res.stderr              # the bad one is named, DEST is not blamed
    assert "cannot be written" not in res.stderr
