"""`envmgr install --wheel-index URL|DIR`: find this build's key in a team's index before building.

The index is the PEP 503 layout that `envmgr wheels publish` writes (wheels/index.py), served by any
static file server or read as a folder. A hit is downloaded, its sha256 checked against the link's
`#sha256=` and its key file, its zip and CUDA backend checked as for a local build, then stored in
the local cache. Anything wrong ends in one line saying what and "building instead": an index is
an optimisation, never a reason for an install to fail. http and urllib are imported only here,
and only when an index is used.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from envmgr.errors import InputFileError
from envmgr.files import names
from envmgr.files.tomlread import load_toml, read_text_file
from envmgr.host import dirs
from envmgr.host.process import setting
from envmgr.wheels import store as wheels
from envmgr.wheels.index import parse_links

TIMEOUT_S = 20
_SHA = re.compile(r"sha256=([0-9a-fA-F]{64})")
_DIST = re.compile(r"\.(whl|tar\.gz|zip|tar\.bz2|tgz)$")
LABELS = {"package": "package", "version": "version", "source": "source", "cuda": "CUDA",
          "archs": "CUDA architectures", "generator": "generator", "cmake_args": "CMAKE_ARGS",
          "python_tag": "Python", "platform": "platform"}


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
    url: str
    sha256: str | None
    key: wheels.WheelKey | None


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
    if not os.path.isfile(path):   # False, not OSError, for a name too long (pathlib raises it on 3.11)
        return None

    remedy = 'fix it: [wheels] index = "https://…/simple/" or a folder'
    data = load_toml(read_text_file(path, "configuration", remedy, remedy), str(path), "TOML file", remedy)
    value = data.get("wheels", {}).get("index") if isinstance(data.get("wheels"), dict) else None
    if value is not None and not isinstance(value, str):
        raise InputFileError(f"{path}: [wheels] index must be a string (a URL or a folder)",
                             'e.g. [wheels] index = "https://example.org/wheels/"')
    return value or None


def config_file() -> Path:
    return dirs.config_dir() / "config.toml"


# --- reading an index -----------------------------------------------------------------------------

def base_url(index: str) -> str:
    """The index root as a URL ending in '/': http(s) and file URLs as given, a folder as file:."""
    if re.match(r"^(https?|file)://", index, re.I):
        return index if index.endswith("/") else index + "/"
    return Path(index).expanduser().resolve().as_uri() + "/"


def _local_path(url: str) -> Path:
    path = unquote(urlsplit(url).path)
    if re.match(r"^/[A-Za-z]:", path):       # file:///C:/x on Windows
        path = path[1:]
    return Path(path)


def read(url: str, sink: Callable[[bytes], object] | None = None) -> bytes:
    """The bytes at url (or stream them to sink): Missing for 404, Unreachable for the rest."""
    if url.lower().startswith("file:"):
        path = _local_path(url)
        if url.endswith("/"):              # what a static web server answers for a folder
            path = path / "index.html"
        try:
            data = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            raise Missing(f"{path}: no such file") from None
        except OSError as exc:
            raise Unreachable(f"{path}: {exc.strerror or exc}") from None
        if sink is None:
            return data
        sink(data)
        return b""
    return _read_http(url, sink)


def _read_http(url: str, sink: Callable[[bytes], object] | None) -> bytes:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"User-Agent": "envmgr", "Accept": "text/html, */*"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            if sink is None:
                data: bytes = response.read()
                return data
            for block in iter(lambda: response.read(1 << 20), b""):
                sink(block)
            return b""
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 410):
            raise Missing(f"{url}: HTTP {exc.code}") from None
        raise Unreachable(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise Unreachable(f"{url}: {getattr(reason, 'strerror', None) or reason}") from None


def candidates(page: bytes, page_url: str) -> tuple[list[Candidate], int]:
    """The envmgr wheels on a project page, and how many distribution links it has in all.
    A page with no distribution link at all is not an index page."""

    links = parse_links(page.decode("utf-8", "replace"))
    dists = [link for link in links if _DIST.search(link.href.split("#")[0])]
    found = []
    for link in dists:
        raw = link.attr("data-envmgr-key")
        if raw is None:
            continue
        try:
            key = wheels.WheelKey(**json.loads(raw))
        except (ValueError, TypeError):
            key = None
        sha = _SHA.search(link.href.partition("#")[2])
        found.append(Candidate(link.text or link.href.split("#")[0].rsplit("/", 1)[-1],
                               urljoin(page_url, link.href.split("#")[0]), sha.group(1).lower() if sha else None, key))
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
                out.append(f"built for CUDA architectures {a or 'none'}, "
                           f"missing {';'.join(sorted(wanted))} wanted here")
                continue
        out.append(f"{LABELS[f.name]} {a or 'none'} (here: {b or 'none'})")
    return out


# --- the lookup ---------------------------------------------------------------------------------

def fetch(index: str, key: wheels.WheelKey, is_cuda: bool, say: Callable[[str], object]) -> wheels.Entry | None:
    """The index's wheel for key, verified and stored in the local cache; None (said why) otherwise."""
    if not re.match(r"^(https?|file)://", index, re.I) and not os.path.isdir(os.path.expanduser(index)):
        say(f"the wheel index folder {index} does not exist; building instead")
        return None
    page_url = f"{base_url(index)}{key.package}/"
    try:
        page = read(page_url)
    except Missing:
        say(f"the wheel index {index} has no page for {key.package} ({page_url}); building instead")
        return None
    except Unreachable as exc:
        say(f"the wheel index {index} cannot be reached ({exc}); building instead")
        return None
    found, dists = candidates(page, page_url)
    if not dists:
        say(f"{page_url} is not a PEP 503 index page (no links to wheels or sdists); building instead")
        return None
    matching = [c for c in found if c.key == key]
    if not matching:
        _say_refused(found, key, say)
        say(f"the wheel index {index} has no wheel for this key ({key.digest()}); building instead")
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
    same = [(c, c.key) for c in found
            if c.key is not None and (c.key.version, c.key.source) == (key.version, key.source)]
    for cand, its in same[:5]:
        say(f"not using {cand.filename} ({its.digest()}): " + "; ".join(differences(its, key)))
    if len(same) > 5:
        say(f"… and {len(same) - 5} more wheel(s) of {key.package} {key.version} for other keys")
    if len(found) > len(same):
        say(f"{len(found) - len(same)} other wheel(s) in the index are for other versions or sources")


def _key_file(cand: Candidate, key: wheels.WheelKey) -> dict[str, Any]:
    url = urljoin(cand.url, wheels.SIDECAR)
    try:
        data: dict[str, Any] = json.loads(read(url).decode("utf-8"))
    except Missing:
        raise Refused(f"its key file {url} is missing") from None
    except Unreachable as exc:
        raise Refused(f"its key file cannot be read ({exc})") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise Refused(f"its key file {url} is not valid JSON ({exc})") from None
    try:
        file_key = wheels.WheelKey(**data["key"])
    except (KeyError, TypeError) as exc:
        raise Refused(f"its key file {url} is malformed (no usable 'key': {exc})") from None
    if file_key != key or data.get("sha256") != cand.sha256 or data.get("wheel") != cand.filename:
        raise Refused(f"its key file {url} disagrees with the index page (key, sha256 or file name)")
    return data


def _download(cand: Candidate, key: wheels.WheelKey, is_cuda: bool, say: Callable[[str], object]) -> wheels.Entry:
    if cand.sha256 is None:
        raise Refused("its link has no #sha256= hash")
    try:   # the link text becomes a file name: a name, never a path (S1: `/abs/x`, `../../x`)
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
        digest = hashlib.sha256()
        with open(path, "wb") as fh:
            def sink(block: bytes) -> None:
                digest.update(block)
                fh.write(block)
            try:
                read(cand.url, sink)
            except (Missing, Unreachable) as exc:
                raise Refused(f"the wheel cannot be downloaded ({exc})") from None
        if digest.hexdigest() != cand.sha256:
            raise Refused(f"the downloaded wheel ({path.stat().st_size} bytes) does not match its sha256 "
                          "(truncated or corrupted on the server)")
        problems = wheels.check_wheel(path, key.package, is_cuda)
        if problems:
            raise Refused("; ".join(problems))
        from envmgr.errors import CheckFailed

        try:
            entry = wheels.store(key, path, float(data.get("build_seconds", 0.0)), is_cuda,
                                 str(data.get("created", "")))
        except CheckFailed as exc:
            raise Refused(exc.message) from None
    finally:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    say(f"downloaded {cand.filename} from the wheel index (sha256 ok{', CUDA backend inside' if is_cuda else ''}); "
        f"cached as {entry.key.digest()}")
    return entry
