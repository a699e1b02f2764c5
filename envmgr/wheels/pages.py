"""The one reader of index pages (issue 34): a team's index (`--wheel-index`, wheels/remote.py) and the
prebuilt indexes (wheels/prebuilt.py), a PEP 503 project page over HTTP or in a folder, or a plain
folder of wheels. Pure: the bytes come from remote.read, the one fetcher (http and urllib live there
only). Every caller gets the same guards: the page URL built with the index's query kept
(N3), links joined to it as IndexUrl values (never printed with their secret, N2), every PEP 503 hash
of a link read and checked (N4), and a read that stops at the size cap and the caller's deadline (N12).

PEP 503 (https://peps.python.org/pep-0503/): a link MAY carry `#<hashname>=<hashvalue>`, hashname being
a hashlib.algorithms_guaranteed name; pip checks whichever it finds. Here every such name is checked;
a value that is not the algorithm's hex digest, or a hash-like name hashlib does not know, refuses the
file rather than treating it as unhashed. Other fragment keys (`egg=`, `subdirectory=`) are ignored.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from envmgr.wheels.url import IndexUrl

WHEEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*\.whl$")
MAX_FOLDER_WHEELS = 20000
# shake_* have no fixed digest length, so no hex value can be checked against them.
HASHES = {
    name: hashlib.new(name).digest_size * 2
    for name in sorted(hashlib.algorithms_guaranteed)
    if not name.startswith("shake_")
}
_HASH_LIKE = re.compile(r"^(sha|md5|md4|blake|shake|sm3|ripemd|whirlpool)", re.IGNORECASE)
_HEX = re.compile(r"^[0-9a-fA-F]+$")


@dataclass(frozen=True)
class Link:
    href: str
    text: str
    attrs: tuple[tuple[str, str], ...]

    def attr(self, name: str) -> str | None:
        return dict(self.attrs).get(name)


def parse_links(text: str) -> tuple[Link, ...]:
    """The <a> elements of an HTML page, with their attributes (PEP 503 pages are just links)."""

    found: list[Link] = []

    class Parser(HTMLParser):
        current: tuple[dict[str, str], list[str]] | None = None

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "a":
                self.current = ({k: v or "" for k, v in attrs}, [])

        def handle_data(self, data: str) -> None:
            if self.current is not None:
                self.current[1].append(data)

        def handle_endtag(self, tag: str) -> None:
            if tag == "a" and self.current is not None:
                attrs, text = self.current
                href = attrs.pop("href", "")
                found.append(Link(href, "".join(text).strip(), tuple(sorted(attrs.items()))))
                self.current = None

    parser = Parser(convert_charrefs=True)
    parser.feed(text)
    parser.close()
    return tuple(found)


# ---- hashes ---------------------------------------------------------------------------------------


def parse_hashes(fragment: str) -> tuple[tuple[tuple[str, str], ...], str]:
    """((name, lower-case hex), ...) of a link's fragment, and why it cannot be trusted ("" when it can)."""
    found: list[tuple[str, str]] = []
    for part in fragment.split("&") if fragment else ():
        name, sep, value = part.partition("=")
        name = name.strip().lower()
        if not sep or not _HASH_LIKE.match(name):
            continue
        if name not in HASHES:
            return (), f"its link's #{name[:40]}= hash names an algorithm envmgr does not know"
        if len(value) != HASHES[name] or not _HEX.match(value):
            return (), f"its link's #{name}= hash is malformed (not {HASHES[name]} hex digits)"
        found.append((name, value.lower()))
    return tuple(found), ""


class Digests:
    """Every hash a link states (and sha256 always), fed block by block while a file is read."""

    def __init__(self, hashes: tuple[tuple[str, str], ...] = ()) -> None:
        self.hashes = hashes
        self._h = {name: hashlib.new(name) for name in {"sha256", *(n for n, _ in hashes)}}

    def update(self, block: bytes) -> None:
        for h in self._h.values():
            h.update(block)

    def sha256(self) -> str:
        return self._h["sha256"].hexdigest()

    def hexdigest(self, name: str) -> str:
        return self._h[name].hexdigest()

    def mismatch(self) -> str:
        """ "" when every stated hash matches, else the name of the first that does not."""
        return next((name for name, want in self.hashes if self._h[name].hexdigest() != want), "")


# ---- pages ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PageLink:
    url: IndexUrl  # joined to the page's URL, the index's query kept on its own server
    filename: str  # the URL's last path segment, percent-decoded
    text: str
    hashes: tuple[tuple[str, str], ...]
    problem: str  # a malformed or unknown hash: the file is refused
    attrs: tuple[tuple[str, str], ...] = ()

    def attr(self, name: str) -> str | None:
        return dict(self.attrs).get(name)

    def hash(self, name: str) -> str | None:
        return dict(self.hashes).get(name)


def page_url(index: IndexUrl, package: str) -> IndexUrl:
    """The project page of package under index (`…/simple/` + `pkg/`, the query kept); NotAUrl (a
    ValueError) for an index that is not a URL (`http://[::1`)."""
    return index.base().join(package + "/")


def links(page: bytes, url: IndexUrl, limit: int) -> tuple[PageLink, ...]:
    """The http(s) and file links of a page, in page order (at most `limit` bytes of it are read)."""
    found = []
    for link in parse_links(page[:limit].decode("utf-8", "replace")):
        target, _, fragment = link.href.partition("#")
        try:
            joined = url.join(target.strip())
        except ValueError:  # `http://[::1/x.whl` on a page: no link
            continue
        if joined.scheme not in ("http", "https", "file") or joined.problem():
            continue
        hashes, problem = parse_hashes(fragment)
        found.append(PageLink(joined, joined.filename(), link.text, hashes, problem, link.attrs))
    return tuple(found)


def folder_wheels(folder: Path) -> tuple[PageLink, ...]:
    """A plain folder of wheels as links (sorted, at most MAX_FOLDER_WHEELS)."""
    names = sorted(p.name for p in folder.iterdir() if WHEEL_NAME.match(p.name))[:MAX_FOLDER_WHEELS]
    return tuple(PageLink(IndexUrl((folder / n).resolve().as_uri()), n, n, (), "") for n in names)
