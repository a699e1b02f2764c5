"""An index location (a URL or a folder) as one value that never shows its secret (issue 34, N2).

A user may put a password (`https://user:pw@host/`) or a token (`https://host/simple/?token=…`) in any
index they hand us: `--prebuilt-index`, `--wheel-index`, `[wheels] prebuilt` / `[wheels] index` in
config.toml, ENVMGR_PREBUILT_INDEX / ENVMGR_WHEEL_INDEX. Every route keeps the location as an
IndexUrl, which redacts itself wherever it goes by accident: str(), repr(), an f-string, `--json`
(output.emit_json's default), a cache key (`key()`: no userinfo, no query values). The secret comes
out through `secret()` only, and only the HTTP request (wheels/remote.py) calls it. It cannot be
pickled or hashed into bytes by mistake (it is no str).

Redaction follows pip's: a password and every query value become `****`; a user name without a
password (a token used as the user) becomes `****` too.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

from envmgr.errors import NotAUrl

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_TAGGED = re.compile(r"^([a-z]+:)[A-Za-z][A-Za-z0-9+.-]*://")
_FETCHED = re.compile(r"^(https?|file)://", re.IGNORECASE)
HIDDEN = "****"


def _split(text: str) -> Any:
    try:
        parts = urlsplit(text)
        _ = parts.port  # a port that is no number raises here
    except ValueError as exc:
        raise NotAUrl(_reason(exc), "give an http(s):// or file:// URL, or a folder") from None
    return parts


def _reason(exc: Exception) -> str:
    """urllib's words for why a URL does not parse ("Invalid IPv6 URL"), on one line: the message of
    NotAUrl, which the caller puts after the (redacted) URL."""
    return " ".join(str(exc).split())


def redact(text: str) -> str:
    """text fit for a message, a file or a key: a password and query values become ****, as pip shows
    them. A folder (`C:\\wheels` is no URL with scheme 'c') is returned as given."""
    if not _SCHEME.match(text):
        tagged = _TAGGED.match(text)  # a cache key's source: `prebuilt:https://…`
        return tagged.group(1) + redact(text[tagged.end(1) :]) if tagged else text
    try:
        parts = urlsplit(text)
    except ValueError:  # `http://[::1`: no parse, so hide whatever could be a secret
        head, _, query = text.partition("?")
        head = re.sub(r"^([^:]+://)[^/?#]*@", rf"\1{HIDDEN}@", head)
        return head + (("?" + _hide_query(query.partition("#")[0])) if "?" in text else "")
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}:{HIDDEN}@{host}" if ":" in user else f"{HIDDEN}@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, _hide_query(parts.query), parts.fragment))


def _hide_query(query: str) -> str:
    if not query:
        return ""
    # a bare `?TOKEN` is a value too: only an empty part stays as it is
    return "&".join(
        f"{k}={HIDDEN}" if sep else (HIDDEN if k else k) for k, sep, _ in (q.partition("=") for q in query.split("&"))
    )


def holds_secret(text: str) -> bool:
    """True when text shows something redact() would hide (a key written before issue 34, say)."""
    return redact(text) != text


class IndexUrl:
    """An index, a page or a wheel location; see the module docstring. Equal when the full text is."""

    __slots__ = ("_text",)
    _text: str

    def __init__(self, text: str) -> None:
        object.__setattr__(self, "_text", str(text) if not isinstance(text, IndexUrl) else text._text)

    @classmethod
    def of(cls, value: str | IndexUrl) -> IndexUrl:
        return value if isinstance(value, IndexUrl) else cls(value)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError("an IndexUrl is immutable")

    def __str__(self) -> str:
        return redact(self._text)

    def __repr__(self) -> str:
        return f"IndexUrl({redact(self._text)!r})"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IndexUrl) and other._text == self._text

    def __hash__(self) -> int:
        return hash(("IndexUrl", self._text))

    def __reduce__(self) -> NoReturn:  # pickle: the secret would travel in clear
        raise TypeError("an IndexUrl is not pickled (it may hold a credential)")

    def __copy__(self) -> IndexUrl:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> IndexUrl:
        return self

    def __bool__(self) -> bool:
        return bool(self._text)

    def scrub(self, text: str) -> str:
        """text (a server's or urllib's words, which may quote a URL: "Redirection to url '…?token=…'")
        with every credential of this URL, and any URL in it, shown as redact() shows them."""
        text = re.sub(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+", lambda m: redact(m.group()), text)
        for piece in sorted(self._pieces(), key=len, reverse=True):
            text = text.replace(piece, HIDDEN)
        return text

    def _pieces(self) -> set[str]:
        """The secret parts of this URL as written and percent-decoded (3 characters or more): read by
        hand, so a URL that does not parse (`http://u:pw@[::1`) gives them too."""
        authority = re.split(r"[/?#]", self._text.partition("://")[2], maxsplit=1)[0] if "://" in self._text else ""
        userinfo = authority.rpartition("@")[0]
        user, colon, password = userinfo.partition(":")
        found = {password} if colon else {user}
        found |= {part for f in set(found) for part in unquote(f).split("@")}  # `user:a@b@host`: each part
        query = self._text.partition("?")[2].partition("#")[0]
        found |= {q.partition("=")[2] if "=" in q else q for q in query.split("&")}
        return {p for f in found for p in (f, unquote(f)) if len(p) >= 3}

    def __json__(self) -> str:
        """How --json writes it (output.emit_json's default): redacted."""
        return str(self)

    def secret(self) -> str:
        """The full text with its credentials: for the HTTP request only (wheels/remote.py)."""
        return self._text

    def key(self) -> str:
        """The location as a cache key or a file records it: no user, no password, no query values
        (rotating a token keeps the key). A folder as given; a URL that does not parse, redacted."""
        if not _SCHEME.match(self._text):
            return self._text
        try:
            parts = urlsplit(self._text)
            host = parts.hostname or ""
            port = parts.port
        except ValueError:
            return redact(self._text)
        netloc = (f"[{host}]" if ":" in host else host) + (f":{port}" if port else "")
        query = "&".join(q.partition("=")[0] + "=" for q in parts.query.split("&") if "=" in q)  # `?TOKEN`: gone
        return urlunsplit((parts.scheme, netloc, parts.path, query, ""))

    # ---- what a reader asks ---------------------------------------------------------------------

    @property
    def fetched(self) -> bool:
        """An http(s) or file URL (else a folder)."""
        return bool(_FETCHED.match(self._text))

    @property
    def scheme(self) -> str:
        return self._text.split(":", 1)[0].lower() if _SCHEME.match(self._text) else ""

    def problem(self) -> str:
        """ "" for a usable URL or a folder, else why not ("not a URL (Invalid IPv6 URL)")."""
        if not self.fetched:
            return ""
        try:
            parts = _split(self._text)
        except NotAUrl as exc:
            return f"not a URL ({exc.message})"
        return "" if parts.scheme.lower() == "file" or parts.hostname else "not a URL (no host)"

    @property
    def host(self) -> str:
        """The server (host:port, no credentials) of a URL; "" for a folder or a URL that does not parse."""
        if not self.fetched or self.problem():
            return ""
        parts = urlsplit(self._text)
        return (parts.hostname or "") + (f":{parts.port}" if parts.port else "")

    def path(self) -> str:
        """The URL's path (percent-decoded); "" when it does not parse."""
        try:
            return unquote(urlsplit(self._text).path)
        except ValueError:
            return ""

    def filename(self) -> str:
        """The last path segment, percent-decoded (a wheel's file name)."""
        return self.path().rsplit("/", 1)[-1]

    def base(self) -> IndexUrl:
        """The index root as a URL whose path ends in '/': http(s) and file URLs as given (credentials and
        query kept), a folder as file:. NotAUrl (a ValueError) for a URL that does not parse."""
        if self.fetched:
            parts = _split(self._text)
            path = parts.path if parts.path.endswith("/") else parts.path + "/"
            return IndexUrl(urlunsplit((parts.scheme, parts.netloc, path, parts.query, "")))
        try:
            return IndexUrl(self.folder().resolve().as_uri() + "/")
        except (OSError, ValueError) as exc:  # NUL in the name, a symlink loop
            raise NotAUrl(f"not a usable folder ({_reason(exc)})", "give an existing folder") from None

    def join(self, ref: str) -> IndexUrl:
        """urljoin, keeping this URL's query on a URL of the same server that has none of its own (an
        index whose token is a query value: every page, key file and wheel under it needs it; N3).
        NotAUrl (a ValueError) for a reference that does not parse."""
        b = _split(self._text)
        try:
            out = urljoin(self._text, ref)
        except ValueError as exc:
            raise NotAUrl(_reason(exc), "give an http(s):// or file:// URL, or a folder") from None
        o = _split(out)
        if b.query and not o.query and (b.scheme, b.netloc) == (o.scheme, o.netloc):
            out = urlunsplit((o.scheme, o.netloc, o.path, b.query, o.fragment))
        return IndexUrl(out)

    def folder(self) -> Path:
        """The folder a location that is no URL names (`~` expanded where there is such a home)."""
        try:
            return Path(self._text).expanduser()
        except RuntimeError:  # `~nobody-here`: no such user, so no home to expand
            return Path(self._text)

    def local_path(self) -> Path:
        """The file a file: URL names (file:///C:/x on Windows too)."""
        path = self.path()
        if re.match(r"^/[A-Za-z]:", path):
            path = path[1:]
        return Path(path)


def json_default(value: Any) -> Any:
    """json.dumps(default=…) for any writer: an IndexUrl is written redacted (output.emit_json does the same
    through `__json__`); anything else unknown stays json's TypeError."""
    if isinstance(value, IndexUrl):
        return value.__json__()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
