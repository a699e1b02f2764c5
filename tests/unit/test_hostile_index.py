"""A hostile wheel index (issue 22; audit ../shared/audits/hostile-input-2026-11.md, S1, S6, C2, C5).

Every case is an index a user may be pointed at: a folder, or a server on 127.0.0.1 (http.server in
a thread of this process) that answers what an attacker or a broken proxy would. What is asserted is
the README's promise: an index is an optimisation, never a reason for an install to fail (one line
said, then "building instead", no traceback, no hang), and nothing is written outside the cache's
`wheels/.download-*` folder, which is removed.
"""
from __future__ import annotations

import html
import http.server
import json
import os
import threading
import time
from pathlib import Path

import pytest

from envmgr.wheels import remote as wheelremote
from envmgr.wheels import store as wheels
from tests.unit.test_wheelindex import KEY, WHEEL, published, said

pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVMGR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENVMGR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("ENVMGR_WHEEL_INDEX", raising=False)
    return tmp_path / "cache"


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")} if root.exists() else set()


def rename_link(dest: Path, name: str) -> None:
    """The index names its wheel `name` on the page (link text) and in the key file, as S1's attacker."""
    page = dest / "fakecuda" / "index.html"
    page.write_text(page.read_text().replace(f">{WHEEL}</a>", f">{html.escape(name)}</a>"))
    key_file = dest / "fakecuda" / KEY.digest() / "entry.json"
    data = json.loads(key_file.read_text())
    data["wheel"] = name
    key_file.write_text(json.dumps(data))


# --- a server in this process ---------------------------------------------------------------------

@pytest.fixture
def server():
    """start(handler_class) -> the URL of a ThreadingHTTPServer on 127.0.0.1 running it in a thread."""
    running = []

    def start(handler) -> str:
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        srv.daemon_threads = True
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        running.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}/"

    yield start
    for srv in running:
        srv.shutdown()
        srv.server_close()


def folder_server(folder: Path, **extra):
    """A handler serving folder (as `python -m http.server` does), with class attributes `extra`."""
    import functools

    class Handler(http.server.SimpleHTTPRequestHandler):
        seen: list = []

        def log_message(self, *args):
            pass

    for name, value in extra.items():
        setattr(Handler, name, value)
    return functools.partial(Handler, directory=str(folder))


# --- S1: names from the index are names ------------------------------------------------------------

@pytest.mark.parametrize("where", ["folder", "http"])
@pytest.mark.parametrize("name", ["ABS", "../../../PWNED_REL", "..\\..\\PWNED_WIN", "PWNED.whl",
                                  "sub/fakecuda-1.2.3-py3-none-any.whl", "othercuda-1.2.3-py3-none-any.whl"])
def test_s1_a_link_text_that_is_a_path_is_refused_before_anything_is_written(tmp_path, server, where, name):
    victim = tmp_path / "victim_bashrc"
    victim.write_text("ORIGINAL USER CONTENT\n")
    if name == "ABS":
        name = str(victim)
    dest = published(tmp_path)
    rename_link(dest, name)
    before = files_under(tmp_path) - files_under(tmp_path / "cache")
    index = str(dest) if where == "folder" else server(folder_server(dest))
    lines, say = said()
    assert wheelremote.fetch(index, KEY, True, say) is None
    assert victim.read_text() == "ORIGINAL USER CONTENT\n"
    assert files_under(tmp_path) - files_under(tmp_path / "cache") == before, "a file was written outside the cache"
    assert not list(wheels.wheels_dir().glob(".download-*")) and wheels.entries() == []
    refused = [line for line in lines if line.startswith("refused")]
    assert len(refused) == 1 and ("not a wheel file name" in refused[0] or "another project" in refused[0]), lines
    assert lines[-1].endswith("building instead")
