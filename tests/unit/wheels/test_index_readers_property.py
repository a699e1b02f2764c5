"""Generated hostile input for the index readers (issue 34, deliverable 4): the URL value (wheels/url.py)
and the index-page reader (wheels/pages.py, and the team and prebuilt listings built on it).

Properties:
- a credential in a URL (password, user-as-token, query value, bare `?TOKEN`) never shows in str(),
  repr(), an f-string, --json (output.emit_json), a cache key (key()), a listing's problem or a plan's
  JSON; what the request gets (secret()) is the URL as given;
- no reader raises anything but envmgr's own error type (IndexUrl's base()/join() raise NotAUrl, an
  EnvmgrError; the listings and pick.plan raise nothing), whatever the page: nesting, huge or odd names,
  NUL, lying or malformed hashes, links that are no URL;
- each call stays within a time budget (BUDGET_S), and a page's links are capped by its size.

The pages are hand-made (no real hostile page exists to copy); the pieces are the audit's
(../shared/audits/hostile-input-2026-12.md, "Prebuilt page parsing" and N2-N5, N15). Not POSIX-only:
this module also runs in the Windows-CPython tier.
"""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envmgr.errors import EnvmgrError, NotAUrl
from envmgr.output import emit_json
from envmgr.wheels import pages, pick, prebuilt
from envmgr.wheels import remote as wheelremote
from envmgr.wheels.url import IndexUrl, redact

BUDGET_S = 5.0
SETTINGS = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)

# Secrets use letters no other piece has (Q W X Z), so finding one in an output is a leak, not a coincidence.
SECRET = st.text(alphabet="QWXZ0123456789", min_size=8, max_size=20).filter(lambda s: sum(c in "QWXZ" for c in s) > 2)
HOSTS = st.sampled_from(["127.0.0.1", "h", "example.org", "[::1]", "[::1", "h:8080", "h:99999", "h:x", "[fe80::1%25e]"])
PATHS = st.lists(
    st.sampled_from(["", "cu124", "simple", "..", ".", "%2F", "%00", "a b", "ü", "whl", "x;y"]), max_size=4
).map(lambda parts: "/" + "/".join(parts))


@st.composite
def secret_urls(draw) -> tuple[str, str]:
    """(a URL holding the secret somewhere a credential goes, the secret)."""
    secret = draw(SECRET)
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "file"]))
    where = draw(st.sampled_from(["password", "user", "query", "bare", "both", "password-with-at"]))
    user = {
        "password": f"alice:{secret}@",
        "user": f"{secret}@",
        "both": f"bob:{secret}@",
        "password-with-at": f"carol:a@{secret}@",
    }.get(where, "")
    query = {"query": f"?token={secret}", "bare": f"?{secret}", "both": f"?a=1&key={secret}&b"}.get(where, "")
    return f"{scheme}://{user}{draw(HOSTS)}{draw(PATHS)}{query}", secret


def _shown(url: IndexUrl) -> list[str]:
    out = io.StringIO()
    emit_json({"index": url, "nested": [url, {"u": url}]}, out)
    return [
        str(url),
        repr(url),
        f"{url}",
        f"{url:>30}",
        url.key(),
        out.getvalue(),
        url.__json__(),
        json.dumps({"u": url}, default=lambda v: v.__json__()),
    ]


@SETTINGS
@given(secret_urls())
def test_a_credential_never_shows_however_the_url_is_written(case):
    text, secret = case
    url = IndexUrl(text)
    assert url.secret() == text
    for shown in _shown(url):
        assert secret not in shown, shown
    assert secret not in redact(f"prebuilt:{text}")
    assert secret not in url.scrub(f"HTTP 302 Found - Redirection to url '{text}' is not allowed ({secret})")
    assert secret not in url.problem() and secret not in url.host


@SETTINGS
@given(secret_urls())
def test_a_url_value_is_never_serialised_in_clear(case):
    text, secret = case
    url = IndexUrl(text)
    for dump in (lambda: json.dumps(url), lambda: tomlkit.dumps({"index": url})):
        try:
            out = dump()
        except (TypeError, ValueError):  # refused is fine: only the secret in clear is not
            continue
        assert secret not in out


@SETTINGS
@given(
    secret_urls(),
    st.sampled_from(["llama-cpp-python", "x"]),
    st.text(st.characters(blacklist_characters="QWXZ"), max_size=40),
)
def test_joins_keep_the_query_and_fail_only_as_envmgr_errors(case, package, ref):
    text, secret = case
    url = IndexUrl(text)
    try:
        page = pages.page_url(url, package)
        joined = page.join(ref)
    except NotAUrl as exc:
        assert isinstance(exc, EnvmgrError) and secret not in exc.message
        return
    base_query = text.partition("?")[2].partition("#")[0]
    if base_query and "?" not in ref and "#" not in ref and not ref.startswith(("//", "http:", "https:", "file:")):
        assert page.secret().endswith("?" + base_query)
    for shown in _shown(page) + _shown(joined):
        assert secret not in shown


@SETTINGS
@given(st.text(max_size=300))
def test_any_text_is_an_index_url_that_answers_without_raising(text):
    url = IndexUrl(text)
    for answer in (
        str,
        repr,
        lambda u: u.key(),
        lambda u: u.problem(),
        lambda u: u.host,
        lambda u: u.fetched,
        lambda u: u.path(),
        lambda u: u.filename(),
        lambda u: u.scheme,
    ):
        answer(url)
    try:
        url.base().join("llama-cpp-python/")
    except EnvmgrError:
        pass


# ---- pages ---------------------------------------------------------------------------------------

HASH_NAMES = st.sampled_from(
    [
        "sha256",
        "sha512",
        "sha384",
        "sha1",
        "md5",
        "sha224",
        "SHA256",
        "sha3_256",
        "blake2b",
        "sha999",
        "shake_128",
        "egg",
        "md4",
        "",
    ]
)
HEX = st.text(alphabet="0123456789abcdefABCDEFxyz", max_size=130)
FRAGMENTS = st.builds(lambda n, v, sep: f"{n}{sep}{v}", HASH_NAMES, HEX, st.sampled_from(["=", "", "=="]))
NAMES = st.one_of(
    st.sampled_from(
        [
            "llama_cpp_python-0.3.36-py3-none-any.whl",
            "llama_cpp_python-0.3.38.dev1-py3-none-any.whl",
            f"llama_cpp_python-0.{'9' * 5000}-py3-none-any.whl",
            "x" * 10000 + ".whl",
            "../../evil.whl",
            "%2e%2e%2Fevil.whl",
            "a\x00b.whl",
            "llama_cpp_python-0.3.36-py3-none-any.whl?x=1",
            "javascript:alert(1)",
            "http://[::1/x.whl",
            "file:///etc/passwd",
            "//other/x.whl",
            "",
            "llama_cpp_python-0.3.36-cp3" + "1" * 300 + "-none-any.whl",
        ]
    ),
    st.text(max_size=60),
)
ATTRS = st.sampled_from(["", ' data-envmgr-key="{}"', ' data-envmgr-key="[[[[[[[[[[[["', " rel=x", " href=y"])


@st.composite
def hostile_pages(draw) -> bytes:
    links = []
    for _ in range(draw(st.integers(0, 12))):
        name = draw(NAMES)
        fragment = "&".join(draw(st.lists(FRAGMENTS, max_size=3)))
        href = name + (f"#{fragment}" if fragment or draw(st.booleans()) else "")
        text = draw(st.sampled_from(["w", name, "", "<b>x</b>", "&amp;&lt;"]))
        links.append(f'<a href="{href}"{draw(ATTRS)}>{text}</a>')
    depth = draw(st.integers(0, 3000))
    body = "<div>" * depth + "\n".join(links) + "</div>" * draw(st.integers(0, depth))
    tail = draw(st.sampled_from(["", "<a href='x.whl'", "<!--", "<script>", "\x00\xff", "<a>" * 500]))
    encoding = draw(st.sampled_from(["utf-8", "utf-16", "latin-1"]))
    return (body + tail).encode(encoding, "replace")


@SETTINGS
@given(hostile_pages(), secret_urls())
def test_the_page_reader_never_raises_and_never_shows_the_index_secret(page, case):
    text, secret = case
    try:
        page_url = pages.page_url(IndexUrl(text), "llama-cpp-python")
    except NotAUrl:
        page_url = IndexUrl("https://h/simple/llama-cpp-python/")
    t0 = time.monotonic()
    found = pages.links(page, page_url, prebuilt.MAX_PAGE)
    cands = prebuilt.parse_page(page, page_url, text)
    team, dists = wheelremote.candidates(page, page_url)
    assert time.monotonic() - t0 < BUDGET_S
    for link in found:
        assert link.url.scheme in ("http", "https", "file") and not link.url.problem()
        if not link.problem:
            assert all(len(v) == pages.HASHES[n] and v == v.lower() for n, v in link.hashes)
    machine = pick.Machine((("GPU", "9.0"),), "580.65", "13.0", False, ("py3-none-any",), "test")
    code = type("Code", (), {"cubin": ("sm_90",), "ptx": (), "cuda_imports": ()})()
    plan = pick.plan(cands, machine, "llama-cpp-python", "", lambda c: code)
    shown = json.dumps([j.to_json() for j in plan.judged]) + "".join(str(c.url) for c in team)
    assert secret not in shown
    assert len(team) <= dists <= len(found)


@SETTINGS
@given(st.text(max_size=200))
def test_any_fragment_is_hashes_or_a_reason(fragment):
    hashes, problem = pages.parse_hashes(fragment)
    assert not (hashes and problem)
    for name, value in hashes:
        assert name in pages.HASHES and len(value) == pages.HASHES[name]


@SETTINGS
@given(hostile_pages())
def test_a_folder_index_with_a_hostile_page_is_a_listing(tmp_path_factory, page):
    root: Path = tmp_path_factory.mktemp("idx")
    (root / "cu124" / "llama-cpp-python").mkdir(parents=True)
    (root / "cu124" / "llama-cpp-python" / "index.html").write_bytes(page)
    t0 = time.monotonic()
    listing = prebuilt.list_index(str(root / "cu124"), "llama-cpp-python")
    assert time.monotonic() - t0 < BUDGET_S
    assert isinstance(listing, prebuilt.Listing)
    for cand in listing.candidates:
        assert pages.WHEEL_NAME.match(cand.filename) and cand.cuda == "12.4"
