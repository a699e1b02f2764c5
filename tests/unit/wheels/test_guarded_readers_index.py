"""The guarded readers of index URLs and index pages (issue 34, deliverable 2): one fetcher, one page
reader, one URL value, so a new route gets the guards (size caps, deadline, redaction, every hash) without
thinking. Read from the source with `ast`, as tests/unit/test_architecture.py does: a module added
tomorrow that fetches or parses an index by itself fails here the day it is written.

- wheels/remote.py is the only module that may speak HTTP: urllib.request, urllib.error, http.client,
  urlopen, and the only caller of IndexUrl.secret() (the request needs the credential).
- wheels/pages.py is the only module that may parse HTML or a link's hash fragment (html.parser,
  HTMLParser, a `sha256=` pattern); index.py calls its parse_links to read back the pages it publishes.
- wheels/url.py is the only module that takes a URL apart by hand (urlsplit/urljoin/urlunsplit) among
  the modules that handle index locations.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "envmgr"

FETCHER = {"wheels/remote.py": "the one fetcher: caps, deadline, credentials sent to their own server only"}
PAGE_READER = {"wheels/pages.py": "the one index-page reader (team and prebuilt, HTML and folder)"}
URL_VALUE = {"wheels/url.py": "the one URL value: redaction, cache-key form, join with the query kept"}
PARSE_LINKS_CALLERS = {
    **PAGE_READER,
    "wheels/index.py": "the publisher reads back the pages it writes (kept hand-made links)",
}
SECRET_CALLERS = {**FETCHER, **URL_VALUE}
URL_SURGERY_FREE = (
    "wheels/",
    "commands/install_prebuilt.py",
    "commands/install_build.py",
    "commands/install_flow.py",
    "commands/wheels.py",
)

HTTP_MODULES = {"urllib.request", "urllib.error", "http.client", "http", "requests", "urllib3", "httpx", "aiohttp"}
HTTP_NAMES = {"urlopen", "build_opener", "HTTPConnection", "HTTPSConnection", "Request"}
HTML_MODULES = {"html.parser"}
HTML_NAMES = {"HTMLParser"}
URL_SURGERY = {"urlsplit", "urlparse", "urljoin", "urlunsplit", "urlunparse"}
_HASH_PATTERN = re.compile(r"(sha(1|224|256|384|512)|md5)=[(\[]")  # a regex reading a hash fragment


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        yield rel, ast.parse(path.read_text(encoding="utf-8"), rel)


def _imports(tree: ast.AST) -> list[tuple[str, set[str]]]:
    """(module, names imported from it) for every import statement, function-level ones too."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, set()) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.module or "", {a.name for a in node.names}))
    return found


def _names_used(tree: ast.AST) -> set[str]:
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return used | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}


def http_uses(tree: ast.AST) -> list[str]:
    found = []
    for module, names in _imports(tree):
        if module in HTTP_MODULES or any(module.startswith(m + ".") for m in HTTP_MODULES):
            found.append(f"import {module}")
        if module in ("urllib", "http") and names & {"request", "error", "client"}:
            found.append(f"from {module} import {sorted(names)}")
    found += [
        f"{n}(...)"
        for n in sorted(_names_used(tree) & {"urlopen", "build_opener", "HTTPConnection", "HTTPSConnection"})
    ]
    return found


def html_uses(tree: ast.AST) -> list[str]:
    found = [f"import {m}" for m, names in _imports(tree) if m in HTML_MODULES or (m == "html" and "parser" in names)]
    found += [f"{n}" for n in sorted(_names_used(tree) & HTML_NAMES)]
    found += [
        f"hash pattern {c.value!r} (line {c.lineno})"
        for c in ast.walk(tree)
        if isinstance(c, ast.Constant) and isinstance(c.value, str) and _HASH_PATTERN.search(c.value)
    ]
    return found


def calls_of(tree: ast.AST, names: set[str]) -> list[str]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in names:
                out.append(f"{name}() (line {node.lineno})")
    return out


def test_only_the_fetcher_speaks_http():
    outside = {rel: hits for rel, tree in _modules() if rel not in FETCHER and (hits := http_uses(tree))}
    assert outside == {}


def test_only_the_page_reader_parses_html_or_a_hash_fragment():
    outside = {rel: hits for rel, tree in _modules() if rel not in PAGE_READER and (hits := html_uses(tree))}
    assert outside == {}


def test_index_pages_are_parsed_through_the_reader_only():
    outside = {
        rel: hits
        for rel, tree in _modules()
        if rel not in PARSE_LINKS_CALLERS and (hits := calls_of(tree, {"parse_links"}))
    }
    assert outside == {}


def test_the_secret_leaves_its_url_value_only_for_the_request():
    outside = {
        rel: hits for rel, tree in _modules() if rel not in SECRET_CALLERS and (hits := calls_of(tree, {"secret"}))
    }
    assert outside == {}


def test_index_locations_are_taken_apart_by_the_url_value_only():
    """In the modules that carry index locations, URL surgery is url.py's (its join keeps the query, its
    str() redacts); the fetcher keeps what it needs to split credentials from the request."""
    outside = {
        rel: hits
        for rel, tree in _modules()
        if rel.startswith(URL_SURGERY_FREE)
        and rel not in {**URL_VALUE, **FETCHER}
        and (hits := calls_of(tree, URL_SURGERY))
    }
    assert outside == {}


def test_the_rules_see_what_they_forbid():
    """Each rule finds each form it forbids in a snippet (else the tests above would pass on anything)."""
    code = (
        "import urllib.request\nfrom http.client import HTTPConnection\nfrom urllib import request\n"
        "import requests\nurllib.request.urlopen('http://x')\n"
    )
    assert len(http_uses(ast.parse(code))) == 5
    assert http_uses(ast.parse("from urllib.parse import quote\nimport json\n")) == []
    html = (
        "from html.parser import HTMLParser\nclass P(HTMLParser): pass\n"
        "import re\nSHA = re.compile(r'sha256=([0-9a-f]{64})')\n"
    )
    assert len(html_uses(ast.parse(html))) == 3
    assert html_uses(ast.parse("x = f'{a}#sha256={b}'\nimport html\nhtml.escape('x')\n")) == []
    calls = "from x import parse_links\nparse_links(t)\nurl.secret()\nurlsplit(u).netloc\nparts = urljoin(a, b)\n"
    tree = ast.parse(calls)
    assert calls_of(tree, {"parse_links"}) == ["parse_links() (line 2)"]
    assert calls_of(tree, {"secret"}) == ["secret() (line 3)"]
    assert len(calls_of(tree, URL_SURGERY)) == 2


def test_the_reader_modules_exist_where_the_rules_say():
    """A rename must carry the rules with it."""
    for rel in {**FETCHER, **PAGE_READER, **URL_VALUE, **PARSE_LINKS_CALLERS}:
        assert (PACKAGE / rel).is_file(), rel
