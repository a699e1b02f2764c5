"""`envmgr install --wheel-index URL|DIR`: find this build's key in a team's index before building.

The index is the PEP 503 layout that `envmgr wheels publish` writes (wheels/index.py), served by any
static file server or read as a folder. A hit is downloaded, its sha256 checked against the link's
`#sha256=` and its key file, its zip and CUDA backend checked as for a local build, then stored in
the local cache. Anything wrong ends in one line saying what and "building instead": an index is
an optimisation, never a reason for an install to fail. http and urllib are imported only here,
and only when an index is used.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit, urlunsplit

from envmgr.errors import InputFileError
from envmgr.files import names
from envmgr.files.nested import loads_json
from envmgr.files.read import read_regular
from envmgr.files.tomlread import read_toml_file
from envmgr.host import dirs
from envmgr.host.process import setting
from envmgr.progress import DownloadWatch, Ticker
from envmgr.wheels import pages
from envmgr.wheels import store as wheels
from envmgr.wheels.url import IndexUrl
from envmgr.wheels.url import redact as redact  # the one redaction (wheels/url.py), named here as before

if TYPE_CHECKING:  # urllib.request is imported only when an index is read
    import urllib.request

TIMEOUT_S = 20
_DIST = re.compile(r"\.(whl|tar\.gz|zip|tar\.bz2|tgz)$")
LABELS = {
    "package": "package",
    "version": "version",
    "source": "source",
    "cuda": "CUDA",
    "archs": "CUDA architectures",
    "generator": "generator",
    "cmake_args": "CMAKE_ARGS",
    "python_tag": "Python",
    "platform": "platform",
}


class _OneLine:
    """Mixed into an exception: its message is one line, whatever the server or the OS said (urllib's
    redirect-loop reason spans three: audit M7)."""

    def __init__(self, message: str) -> None:
        # self is the Exception subclass this is mixed into (Missing, Unreachable, Refused)
        Exception.__init__(self, " ".join(str(message).split()))  # type: ignore[arg-type]


class Missing(_OneLine, Exception):
    """404, or no such file in a folder index."""


class Unreachable(_OneLine, Exception):
    """The index cannot be read at all: connection refused, DNS, timeout, permission."""


class Refused(_OneLine, Exception):
    """A candidate that matched the key but cannot be used (hash, key file, zip, CPU-only)."""


@dataclass(frozen=True)
class Candidate:
    filename: str
    url: IndexUrl
    sha256: str | None
    key: wheels.WheelKey | None
    hashes: tuple[tuple[str, str], ...] = ()  # every hash the link states (pages.parse_hashes)
    problem: str = ""  # a malformed or unknown hash: refused


# --- configuration --------------------------------------------------------------------------------


def configured_index(flag: str | None) -> str | None:
    """--wheel-index, else ENVMGR_WHEEL_INDEX, else `[wheels] index` in <config dir>/config.toml.
    An empty value turns the index off."""
    if flag is not None:
        return flag or None
    given = setting("ENVMGR_WHEEL_INDEX")
    if given is not None:
        return given or None
    path = config_file()
    remedy = 'fix it: [wheels] index = "https://…/simple/" or a folder'
    data = read_toml_file(path, "TOML file", remedy)  # None for none, or for a name too long
    if data is None:
        return None
    value = data.get("wheels", {}).get("index") if isinstance(data.get("wheels"), dict) else None
    if value is not None and not isinstance(value, str):
        raise InputFileError(
            f"{path}: [wheels] index must be a string (a URL or a folder)",
            'e.g. [wheels] index = "https://example.org/wheels/"',
        )
    return value or None


def config_file() -> Path:
    return dirs.config_dir() / "config.toml"


# --- reading an index -----------------------------------------------------------------------------
# Everything an index sends is bounded: a page or key file by PAGE_LIMIT and DEADLINE_S for the whole
# answer (a server that drips a byte every few seconds, or streams forever, is given up on), a wheel
# by WHEEL_LIMIT and a rate it must keep after DEADLINE_S. A folder index is read from regular files
# only: a FIFO or /dev/zero in its place is refused at once.

PAGE_LIMIT = 16 * 1024 * 1024
WHEEL_LIMIT = 8 * 1024 * 1024 * 1024
DEADLINE_S = 60.0
MIN_RATE = 100 * 1024  # bytes/s a download must average once DEADLINE_S has passed


class Deadline:
    """One time budget over many reads (the prebuilt plan's pages and wheels, N12): each read stops when
    it is spent, whatever its own allowance."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def spent(self) -> bool:
        return time.monotonic() >= self.at

    def words(self) -> str:
        return f"gave up after {self.seconds:.0f} s (the time allowed for all prebuilt indexes)"


def read(
    url: IndexUrl | str,
    sink: Callable[[bytes], object] | None = None,
    *,
    limit: int | None = None,
    deadline: Deadline | None = None,
) -> bytes:
    """The bytes at url (or stream them to sink): Missing for 404, Unreachable for the rest (a
    message with the URL redacted). At most `limit` bytes; a page within DEADLINE_S, a stream (sink)
    at MIN_RATE after it, both within `deadline` when one is given. `limit` defaults to PAGE_LIMIT for
    a page, WHEEL_LIMIT for a stream (sink)."""
    url = IndexUrl.of(url)
    limit = (PAGE_LIMIT if sink is None else WHEEL_LIMIT) if limit is None else limit
    if deadline is not None and deadline.spent():
        raise Unreachable(f"{url}: not read: {deadline.words()}")
    if url.scheme == "file":
        path = url.local_path()
        if url.path().endswith("/"):  # what a static web server answers for a folder
            path = path / "index.html"
        try:
            return _read_local(path, sink, limit)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            raise Missing(f"{path}: no such file") from None
        except OSError as exc:
            raise Unreachable(f"{path}: {exc.strerror or exc}") from None
    return _read_http(url, sink, limit, deadline)


def _read_local(path: Path, sink: Callable[[bytes], object] | None, limit: int) -> bytes:
    if sink is None:
        return read_regular(path, limit)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "it is a folder", str(path))
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            raise OSError(
                errno.EINVAL,
                "not a regular file" if not stat.S_ISREG(st.st_mode) else f"larger than {limit >> 20} MiB",
                str(path),
            )
        for block in iter(lambda: fh.read(1 << 20), b""):
            sink(block)
    return b""


def _credentials(url: IndexUrl) -> tuple[str, tuple[str, str] | None]:
    """(url without user:password@, (user, password) or None): urllib does not read userinfo. The one
    place an index's secret is taken out of its IndexUrl: for the request itself."""
    parts = urlsplit(url.secret())
    if parts.username is None:
        return url.secret(), None
    host = parts.hostname or ""
    netloc = (f"[{host}]" if ":" in host else host) + (f":{parts.port}" if parts.port else "")
    clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return clean, (unquote(parts.username), unquote(parts.password or ""))


def _opener(url: str, auth: tuple[str, str] | None) -> urllib.request.OpenerDirector:
    """urllib's opener; with credentials, Basic auth sent up front to this server only (a redirect
    elsewhere does not carry it: the handler adds it as an unredirected header, per URL prefix)."""
    import urllib.request

    if auth is None:
        return urllib.request.build_opener()
    parts = urlsplit(url)
    manager = urllib.request.HTTPPasswordMgrWithPriorAuth()
    manager.add_password(None, f"{parts.scheme}://{parts.netloc}/", auth[0], auth[1], is_authenticated=True)
    return urllib.request.build_opener(urllib.request.HTTPBasicAuthHandler(manager))


def _read_http(url: IndexUrl, sink: Callable[[bytes], object] | None, limit: int, deadline: Deadline | None) -> bytes:
    shown = str(url)
    try:
        clean, auth = _credentials(url)
        import urllib.request

        request = urllib.request.Request(clean, headers={"User-Agent": "envmgr", "Accept": "text/html, */*"})
        opener = _opener(clean, auth)
    except ValueError as exc:  # `http://[::1`, a port that is no number
        raise Unreachable(f"{shown}: not a valid URL ({exc})") from None
    got: list[bytes] = []
    state = _Transfer(sink or got.append, limit)
    worker = threading.Thread(target=state.run, args=(opener, request), daemon=True)
    worker.start()
    started = time.monotonic()
    # a wheel (100-400 MB) shows its bytes, total and rate on stderr after 2 s (issue 33); a page shows nothing
    watch = DownloadWatch(_file_name(shown), Ticker(start=started)) if sink is not None else None
    try:
        _wait_transfer(worker, state, (started, deadline), shown, sink is None, watch)
    finally:
        if watch is not None:
            watch.ticker.done()
    if state.error is not None:
        error = _http_error(state.error, shown)
        if isinstance(error, (Missing, Unreachable)):  # urllib's words may quote a redirect's URL
            raise type(error)(url.scrub(str(error)))
        raise error
    return b"".join(got)


def _wait_transfer(
    worker: threading.Thread,
    state: _Transfer,
    when: tuple[float, Deadline | None],
    shown: str,
    page: bool,
    watch: DownloadWatch | None,
) -> None:
    started, deadline = when
    while worker.is_alive():
        worker.join(0.2)
        now = time.monotonic()
        if watch is not None:
            watch.tick(now, state.count, state.total)
        late = now - started - DEADLINE_S
        if worker.is_alive() and deadline is not None and deadline.spent():
            state.stop.set()
            raise Unreachable(f"{shown}: {deadline.words()}")
        if worker.is_alive() and late > 0 and (page or state.count < MIN_RATE * (DEADLINE_S + late)):
            state.stop.set()
            raise Unreachable(
                f"{shown}: no complete answer in {DEADLINE_S:.0f} s"
                if page
                else f"{shown}: slower than {MIN_RATE >> 10} KiB/s after {DEADLINE_S:.0f} s"
            )


def _file_name(url: str) -> str:
    return unquote(urlsplit(url).path.rstrip("/").rpartition("/")[2]) or url


class _Transfer:
    """One HTTP answer read in a worker thread, block by block, stopping at a limit or when told."""

    def __init__(self, sink: Callable[[bytes], object], limit: int) -> None:
        self.sink, self.limit, self.count = sink, limit, 0
        self.total: int | None = None  # Content-Length, when the server gives it
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self, opener: urllib.request.OpenerDirector, request: urllib.request.Request) -> None:
        try:
            with opener.open(request, timeout=TIMEOUT_S) as response:
                self.total = getattr(response, "length", None)
                while not self.stop.is_set():
                    block = response.read1(1 << 16)
                    if self.stop.is_set():
                        return
                    if not block:  # read1 says nothing when the server closes before Content-Length
                        if getattr(response, "length", None):
                            raise _Cut(
                                f"the connection closed after {self.count} bytes, {response.length} more announced"
                            )
                        return
                    self.count += len(block)
                    if self.count > self.limit:
                        raise _Cut(f"the answer is larger than {self.limit >> 20} MiB")
                    self.sink(block)
        except BaseException as exc:  # broad on purpose: handed to the waiting thread, which says it in one line
            self.error = exc


class _Cut(Exception):
    """An answer stopped short of the limits or of what the server announced (said as the reason)."""


def _http_error(exc: BaseException, shown: str) -> BaseException:
    import http.client
    import urllib.error

    if isinstance(exc, urllib.error.HTTPError):
        if exc.code in (404, 410):
            return Missing(f"{shown}: HTTP {exc.code}")
        return Unreachable(f"{shown}: HTTP {exc.code} {_one_line(exc.reason)}")
    if isinstance(exc, _Cut):
        return Unreachable(f"{shown}: {exc}")
    if isinstance(exc, (urllib.error.URLError, OSError, ValueError, http.client.HTTPException)):
        reason = getattr(exc, "reason", None) or exc
        text = getattr(reason, "strerror", None) or reason
        return Unreachable(f"{shown}: {_one_line(text) or type(exc).__name__}")
    return exc  # anything else is a bug of ours: not hidden


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def candidates(page: bytes, page_url: IndexUrl | str) -> tuple[list[Candidate], int]:
    """The envmgr wheels on a project page, and how many distribution links it has in all.
    A page with no distribution link at all is not an index page. A key that is not a table of
    strings (or nested beyond reason) is no key."""

    links = pages.links(page, IndexUrl.of(page_url), PAGE_LIMIT)
    dists = [link for link in links if _DIST.search(link.filename)]
    found = []
    for link in dists:
        raw = link.attr("data-envmgr-key")
        if raw is None:
            continue
        try:
            key = wheels.key_from(loads_json(raw))
        except (ValueError, TypeError):
            key = None
        found.append(
            Candidate(link.text or link.filename, link.url, link.hash("sha256"), key, link.hashes, link.problem)
        )
    return found, len(dists)


def differences(theirs: wheels.WheelKey, ours: wheels.WheelKey) -> list[str]:
    """Why a candidate's key is not this build's, in the key's own terms."""
    out = []
    for f in fields(ours):
        a, b = getattr(theirs, f.name), getattr(ours, f.name)
        if a == b:
            continue
        if f.name == "archs" and b:
            wanted = set(re.split(r"[;,\s]+", b)) - set(re.split(r"[;,\s]+", a))
            if wanted:
                out.append(
                    f"built for CUDA architectures {a or 'none'}, missing {';'.join(sorted(wanted))} wanted here"
                )
                continue
        out.append(f"{LABELS[f.name]} {a or 'none'} (here: {b or 'none'})")
    return out


# --- the lookup ---------------------------------------------------------------------------------


def fetch(
    given: IndexUrl | str, key: wheels.WheelKey, is_cuda: bool, say: Callable[[str], object]
) -> wheels.Entry | None:
    """The index's wheel for key, verified and stored in the local cache; None (said why) otherwise."""
    index = IndexUrl.of(given)  # a password or token in the URL is never printed
    if not index.fetched and not os.path.isdir(index.folder()):
        say(f"the wheel index folder {index} does not exist; building instead")
        return None
    shown = str(index)
    try:
        page_url = pages.page_url(index, names.project_name(key.package))
    except ValueError as exc:  # `http://[::1` (names.BadName is a ValueError too)
        say(f"the wheel index {shown} is not a usable URL ({_one_line(exc)}); building instead")
        return None
    try:
        page = read(page_url)
    except Missing:
        say(f"the wheel index {shown} has no page for {key.package} ({page_url}); building instead")
        return None
    except Unreachable as exc:
        say(f"the wheel index {shown} cannot be reached ({exc}); building instead")
        return None
    found, dists = candidates(page, page_url)
    if not dists:
        say(f"{page_url} is not a PEP 503 index page (no links to wheels or sdists); building instead")
        return None
    matching = [c for c in found if c.key == key]
    if not matching:
        _say_refused(found, key, say)
        say(f"the wheel index {shown} has no wheel for this key ({key.digest()}); building instead")
        return None
    for cand in matching:
        try:
            return _download(cand, key, is_cuda, say)
        except Refused as exc:
            say(f"refused {cand.url}: {exc}")
        except OSError as exc:
            say(f"could not store {cand.filename} in the local cache ({exc.strerror or exc})")
    say("no usable wheel for this key in the index; building instead")
    return None


def _say_refused(found: list[Candidate], key: wheels.WheelKey, say: Callable[[str], object]) -> None:
    same = [
        (c, c.key) for c in found if c.key is not None and (c.key.version, c.key.source) == (key.version, key.source)
    ]
    for cand, its in same[:5]:
        say(f"not using {cand.filename} ({its.digest()}): " + "; ".join(differences(its, key)))
    if len(same) > 5:
        say(f"… and {len(same) - 5} more wheel(s) of {key.package} {key.version} for other keys")
    if len(found) > len(same):
        say(f"{len(found) - len(same)} other wheel(s) in the index are for other versions or sources")


def _key_file(cand: Candidate, key: wheels.WheelKey) -> dict[str, Any]:
    url = cand.url.join(wheels.SIDECAR)
    shown = str(url)
    try:
        data: dict[str, Any] = loads_json(read(url).decode("utf-8"))
    except Missing:
        raise Refused(f"its key file {shown} is missing") from None
    except Unreachable as exc:
        raise Refused(f"its key file cannot be read ({exc})") from None
    except (UnicodeDecodeError, ValueError) as exc:  # loads_json: too deep is a ValueError too
        raise Refused(f"its key file {shown} is not valid JSON ({_one_line(exc)})") from None
    try:
        file_key = wheels.key_from(data["key"])
        if not isinstance(data.get("build_seconds", 0.0), (int, float)) or not isinstance(data.get("created", ""), str):
            raise TypeError("build_seconds is not a number or created not a string")
    except (KeyError, TypeError, ValueError) as exc:
        raise Refused(f"its key file {shown} is malformed (no usable 'key': {_one_line(exc)})") from None
    if file_key != key or data.get("sha256") != cand.sha256 or data.get("wheel") != cand.filename:
        raise Refused(f"its key file {shown} disagrees with the index page (key, sha256 or file name)")
    return data


def _download(cand: Candidate, key: wheels.WheelKey, is_cuda: bool, say: Callable[[str], object]) -> wheels.Entry:
    if cand.problem:
        raise Refused(cand.problem)
    if cand.sha256 is None:
        raise Refused("its link has no #sha256= hash")
    try:  # the link text becomes a file name: a name, never a path (S1: `/abs/x`, `../../x`)
        if names.wheel_project(cand.filename) != key.package:
            raise names.BadName(f"{cand.filename!r} is a wheel of another project")
    except names.BadName as exc:
        raise Refused(str(exc)) from None
    data = _key_file(cand, key)
    root = wheels.wheels_dir()
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".download-", dir=root))
    try:
        path = Path(names.under(tmp, cand.filename))
        digest = pages.Digests(cand.hashes)
        with open(path, "wb") as fh:

            def sink(block: bytes) -> None:
                digest.update(block)
                fh.write(block)

            try:
                read(cand.url, sink, limit=WHEEL_LIMIT)
            except (Missing, Unreachable) as exc:
                raise Refused(f"the wheel cannot be downloaded ({exc})") from None
        if digest.sha256() != cand.sha256:
            raise Refused(
                f"the downloaded wheel ({path.stat().st_size} bytes) does not match its sha256 "
                "(truncated or corrupted on the server)"
            )
        if digest.mismatch():
            raise Refused(
                f"the downloaded wheel does not match its {digest.mismatch()} (truncated or corrupted on the server)"
            )
        problems = wheels.check_wheel(path, key.package, is_cuda)
        if problems:
            raise Refused("; ".join(problems))
        from envmgr.errors import CheckFailed

        try:
            entry = wheels.store(
                key, path, float(data.get("build_seconds", 0.0)), is_cuda, str(data.get("created", ""))
            )
        except CheckFailed as exc:
            raise Refused(exc.message) from None
    finally:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    say(
        f"downloaded {cand.filename} from the wheel index (sha256 ok{', CUDA backend inside' if is_cuda else ''}); "
        f"cached as {entry.key.digest()}"
    )
    return entry
