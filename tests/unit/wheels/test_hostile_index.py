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
import sys
import threading
import time
from pathlib import Path

import pytest

from envmgr.wheels import remote as wheelremote
from envmgr.wheels import store as wheels
from tests.unit.wheels.test_wheelindex import KEY, WHEEL, published, said

pytestmark = pytest.mark.usefixtures("envmgr_dirs")


def files_under(root: Path) -> set[Path]:
    return set(root.rglob("*")) if root.exists() else set()


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
@pytest.mark.parametrize(
    "name",
    [
        "ABS",
        "../../../PWNED_REL",
        "..\\..\\PWNED_WIN",
        "PWNED.whl",
        "sub/fakecuda-1.2.3-py3-none-any.whl",
        "othercuda-1.2.3-py3-none-any.whl",
    ],
)
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


# --- C2: a deadline and a size cap; a folder index reads regular files only -------------------------


def bounded(fn, seconds: float):
    """fn() in a thread; fails the test (rather than hanging it) when it takes longer than seconds."""
    out: list = []
    worker = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still reading after {seconds} s"
    return out[0]


def raw_server(answer):
    """A handler that answers every GET with answer(handler): what a hostile or broken server sends."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            answer(self)

        def log_message(self, *args):
            pass

    return Handler


def drip(h):
    h.send_response(200)
    h.send_header("Content-Length", "100000")
    h.end_headers()
    try:
        for _ in range(200):
            h.wfile.write(b"<")
            h.wfile.flush()
            time.sleep(0.3)
    except OSError:  # the client gave up: what is tested
        pass


def endless(h):
    h.send_response(200)
    h.end_headers()
    block = b"A" * 65536
    try:
        while True:
            h.wfile.write(block)
    except OSError:
        pass


def test_c2_a_server_that_drips_is_given_up_on_at_the_deadline(server, monkeypatch):
    monkeypatch.setattr(wheelremote, "DEADLINE_S", 2.0)
    url = server(raw_server(drip))
    lines, say = said()
    started = time.monotonic()
    assert bounded(lambda: wheelremote.fetch(url, KEY, True, say), 20) is None
    assert time.monotonic() - started < 6
    assert lines == [
        f"the wheel index {url} cannot be reached ({url}fakecuda/: no complete answer in 2 s); building instead"
    ]


def test_c2_a_page_that_never_ends_is_cut_at_the_size_cap(server, monkeypatch):
    monkeypatch.setattr(wheelremote, "PAGE_LIMIT", 1 << 20)
    url = server(raw_server(endless))
    lines, say = said()
    assert bounded(lambda: wheelremote.fetch(url, KEY, True, say), 30) is None
    assert len(lines) == 1 and "larger than 1 MiB" in lines[0] and lines[0].endswith("building instead")


@pytest.mark.posix
@pytest.mark.parametrize("what", ["page-fifo", "page-zero", "key-fifo", "wheel-fifo", "wheel-zero"])
def test_c2_a_folder_index_reads_regular_files_only(tmp_path, what):
    dest = published(tmp_path)
    folder = dest / "fakecuda" / KEY.digest()
    target = {"page": dest / "fakecuda" / "index.html", "key": folder / "entry.json", "wheel": folder / WHEEL}[
        what.split("-")[0]
    ]
    target.unlink()
    if what.endswith("fifo"):
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero")
    lines, say = said()
    try:
        assert bounded(lambda: wheelremote.fetch(str(dest), KEY, True, say), 20) is None
    finally:
        if what.endswith("fifo"):  # let a reader the old code left blocked in open() go
            try:
                os.close(os.open(target, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
    assert any("not a regular file" in line for line in lines), lines
    assert lines[-1].endswith("building instead") and not list(wheels.wheels_dir().glob(".download-*"))


# --- C5: malformed answers are one line and "building instead" ----------------------------------------


def garbage(h):
    h.wfile.write(b"\x00\xff garbage\r\n\r\n")


def short(h):
    h.send_response(200)
    h.send_header("Content-Length", "100000")
    h.end_headers()
    h.wfile.write(b"<html><a href")


@pytest.mark.parametrize("answer, words", [(garbage, "BadStatusLine"), (short, "closed after 13 bytes")])
def test_c5_an_answer_that_is_not_http_or_is_cut_short(server, answer, words):
    url = server(raw_server(answer))
    lines, say = said()
    assert bounded(lambda: wheelremote.fetch(url, KEY, True, say), 30) is None
    assert len(lines) == 1 and "cannot be reached" in lines[0] and lines[0].endswith("building instead"), lines


def page_key(dest: Path, raw: str) -> None:
    """The page's data-envmgr-key attribute replaced by raw (the key file keeps the true key)."""
    page = dest / "fakecuda" / "index.html"
    text = page.read_text()
    start = text.index('data-envmgr-key="') + len('data-envmgr-key="')
    page.write_text(text[:start] + html.escape(raw) + text[text.index('"', start) :])


@pytest.mark.parametrize("where", ["folder", "http"])
@pytest.mark.parametrize("damage", ["archs-int", "key-deep", "key-list", "entry-deep", "entry-seconds"])
def test_c5_keys_and_key_files_of_the_wrong_shape(tmp_path, server, where, damage):
    dest = published(tmp_path)
    key_file = dest / "fakecuda" / KEY.digest() / "entry.json"
    if damage == "archs-int":
        page_key(dest, json.dumps({**KEY.__dict__, "archs": 5}))
    elif damage == "key-deep":
        page_key(dest, "[" * 100000 + "]" * 100000)
    elif damage == "key-list":
        page_key(dest, json.dumps(list(KEY.__dict__.values())))
    elif damage == "entry-deep":
        key_file.write_text("[" * 100000 + "]" * 100000)
    else:
        key_file.write_text(json.dumps({**json.loads(key_file.read_text()), "build_seconds": "soon"}))
    index = str(dest) if where == "folder" else server(folder_server(dest))
    lines, say = said()
    assert wheelremote.fetch(index, KEY, True, say) is None
    assert lines[-1].endswith("building instead") and all("\n" not in line for line in lines)
    if damage.startswith("entry"):
        assert any(line.startswith("refused") and "key file" in line for line in lines), lines


def test_c5_a_url_that_does_not_parse(tmp_path):
    lines, say = said()
    assert wheelremote.fetch("http://[::1", KEY, True, say) is None
    assert len(lines) == 1 and "not a usable URL" in lines[0] and lines[0].endswith("building instead")


# --- S6: credentials work and are never printed; a query string is kept ------------------------------


def test_s6_basic_auth_in_the_url_works_and_is_never_printed(tmp_path, server):
    import base64

    dest = published(tmp_path)
    want = "Basic " + base64.b64encode(b"__token__:s3cr3t").decode()
    seen: list = []

    def guard(self):
        seen.append((self.path, self.headers.get("Authorization")))
        if self.headers.get("Authorization") != want:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="wheels"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return False
        return True

    def do_GET(self):
        if guard(self):
            http.server.SimpleHTTPRequestHandler.do_GET(self)

    url = server(folder_server(dest, do_GET=do_GET))
    index = url.replace("http://", "http://__token__:s3cr3t@")
    lines, say = said()
    assert wheelremote.fetch(index, KEY, True, say) is not None, lines
    assert not any("s3cr3t" in line for line in lines)
    assert {path.split("/")[-1] for path, auth in seen if auth == want} >= {"", "entry.json", WHEEL}
    wheels.clear()
    lines, say = said()  # a wrong password: 401, said without it
    assert wheelremote.fetch(index.replace("s3cr3t", "wr0ng"), KEY, True, say) is None
    assert "HTTP 401" in lines[0] and "wr0ng" not in "".join(lines) and "__token__:****@" in lines[0]


def test_s6_a_query_string_is_kept_on_every_url_and_never_printed(tmp_path, server):
    dest = published(tmp_path)
    seen: list = []

    def do_GET(self):
        seen.append(self.path)
        if not self.path.endswith("?token=s3cr3t"):
            self.send_error(403)
            return
        self.path = self.path.split("?")[0]
        http.server.SimpleHTTPRequestHandler.do_GET(self)

    url = server(folder_server(dest, do_GET=do_GET))
    lines, say = said()
    assert wheelremote.fetch(url + "?token=s3cr3t", KEY, True, say) is not None, (lines, seen)
    assert seen[0] == "/fakecuda/?token=s3cr3t" and all(p.endswith("?token=s3cr3t") for p in seen)
    assert not any("s3cr3t" in line for line in lines)
    lines, say = said()
    assert wheelremote.fetch(url + "nothing/?token=s3cr3t", KEY, True, say) is None
    assert "token=****" in lines[0] and "s3cr3t" not in lines[0]


def test_s6_redact():
    assert wheelremote.redact("http://u:p@h:1/a/?t=x&y=z#f") == "http://u:****@h:1/a/?t=****&y=****#f"
    assert wheelremote.redact("https://tok@h/") == "https://****@h/"
    assert wheelremote.redact("http://h/simple/") == "http://h/simple/"
    assert "s3cr3t" not in wheelremote.redact("http://[::1:s3cr3t@x")
    for folder in ("C:\\Users\\me\\wheels", "/srv/wheels", "D:/x?y=1", "\\\\srv\\share"):
        assert wheelremote.redact(folder) == folder  # a folder index is shown as given


def test_s6_install_reports_the_index_without_its_token(tmp_path, server, monkeypatch):
    """What `install` prints and puts in --json about where a wheel came from (Installed.index)."""
    from envmgr.commands import install_build

    dest = published(tmp_path)

    def do_GET(self):
        if not self.path.endswith("?token=s3cr3t"):
            self.send_error(403)
            return
        self.path = self.path.split("?")[0]
        http.server.SimpleHTTPRequestHandler.do_GET(self)

    url = server(folder_server(dest, do_GET=do_GET)) + "?token=s3cr3t"
    monkeypatch.setattr(install_build, "_pip_install", lambda *a: 0)  # no pip: what is tested is the report
    done = install_build._reuse(KEY, True, url, None, sys.executable, [], True, {})
    assert done is not None and done.origin == "index" and done.index == url.replace("s3cr3t", "****")


def test_c2_read_caps_a_page_at_page_limit_and_a_stream_at_wheel_limit(tmp_path, monkeypatch):
    """read(url) is a page; read(url, sink) streams a wheel (wheels/prebuilt.py reuses it): each its cap."""
    page = tmp_path / "big"
    page.write_bytes(b"x" * 3000)
    monkeypatch.setattr(wheelremote, "PAGE_LIMIT", 1000)
    monkeypatch.setattr(wheelremote, "WHEEL_LIMIT", 5000)
    with pytest.raises(wheelremote.Unreachable, match="too large|larger than"):
        wheelremote.read(page.as_uri())
    got: list[bytes] = []
    wheelremote.read(page.as_uri(), got.append)
    assert b"".join(got) == b"x" * 3000
    with pytest.raises(wheelremote.Unreachable):
        wheelremote.read(page.as_uri(), got.append, limit=100)
