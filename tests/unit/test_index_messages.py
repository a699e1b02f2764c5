"""What `wheels publish` and reading an index say and leave behind when something goes wrong (audit M4,
M7, M9). The index server is a loopback http.server in this process (127.0.0.1 only)."""
from __future__ import annotations

import http.server
import threading

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
