"""Names that come from outside (an index page, a key file, a cache entry) are names, never paths.

Each is checked to be a basename of the form it claims before a path is built from it, and each
path built from one is checked to stay under its root. The forms are the standards' own:

* a wheel file name: `{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl` (the binary
  distribution format; each part escaped to letters, digits, `_` and `.`, the build tag starting
  with a digit);
* a project name as PEP 503 normalizes it: lower-case letters and digits, single `-` between runs;
* an envmgr key digest: 20 lower-case hex digits.

A name that also names a Windows device (`nul`, `con`, `com1`, ... with or without an extension) is
refused on every platform: an index written on Linux is read on Windows too.
"""

from __future__ import annotations

import os
import re

MAX_NAME = 255  # one path component, on every file system envmgr writes to

_PART = r"[A-Za-z0-9_.!+]+"
_WHEEL = re.compile(
    rf"^(?P<name>[A-Za-z0-9](?:[A-Za-z0-9_.]*[A-Za-z0-9])?)-(?P<version>{_PART})"
    r"(?:-(?P<build>\d[A-Za-z0-9_.]*))?-(?P<python>[A-Za-z0-9_.]+)-(?P<abi>[A-Za-z0-9_.]+)"
    r"-(?P<platform>[A-Za-z0-9_.]+)\.whl$"
)
_PROJECT = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_DIGEST = re.compile(r"^[0-9a-f]{20}$")
WINDOWS_DEVICE = re.compile(r"^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?$", re.IGNORECASE)


class BadName(ValueError):
    """A name from outside that is not a basename of the expected form."""


def _plain(name: object, what: str) -> str:
    if not isinstance(name, str) or not name:
        raise BadName(f"the {what} is not a name ({name!r})")
    if len(name) > MAX_NAME:
        raise BadName(f"the {what} is longer than {MAX_NAME} characters")
    if WINDOWS_DEVICE.match(name):
        raise BadName(f"the {what} {name!r} names a Windows device")
    return name


def wheel_filename(name: object) -> str:
    """`name` when it is a wheel file name (a basename); BadName otherwise."""
    name = _plain(name, "wheel file name")
    if not _WHEEL.match(name):  # no '/', '\\', ':', '..' or control character can pass
        raise BadName(f"{name!r} is not a wheel file name (name-version-python-abi-platform.whl)")
    return name


def wheel_project(name: str) -> str:
    """The PEP 503 normalized project of a checked wheel file name."""
    match = _WHEEL.match(wheel_filename(name))
    assert match is not None  # wheel_filename matched it
    return re.sub(r"[-_.]+", "-", match["name"]).lower()


def project_name(name: object) -> str:
    """`name` when it is a PEP 503 normalized project name; BadName otherwise."""
    name = _plain(name, "project name")
    if not _PROJECT.match(name):
        raise BadName(f"{name!r} is not a normalized project name (lower-case letters, digits and '-')")
    return name


def digest(name: object) -> str:
    """`name` when it is an envmgr key digest (20 hex digits); BadName otherwise."""
    name = _plain(name, "key digest")
    if not _DIGEST.match(name):
        raise BadName(f"{name!r} is not an envmgr key digest (20 hex digits)")
    return name


def is_digest(name: str) -> bool:
    return bool(_DIGEST.match(name))


def relative_inside(text: object) -> str:
    """`text` when it is a relative path that stays in its folder on Windows and POSIX alike (no
    drive, no leading / or \\, no `..` part after either separator, no NUL); BadName otherwise."""
    if not isinstance(text, str) or not text or "\0" in text:
        raise BadName(f"{text!r} is not a relative path")
    parts = re.split(r"[\\/]", text)
    if text[0] in "/\\" or re.match(r"^[A-Za-z]:", text) or ".." in parts:
        raise BadName(f"{text!r} leaves its folder (an absolute path, a drive or '..')")
    return text


def under(root: str | os.PathLike[str], *names: str) -> str:
    """root joined with names; BadName unless the result is inside root (compared as written, after
    `..` and `.` are folded away and case is folded where the platform folds it: a link the owner of
    root made inside it is the owner's choice)."""
    joined = os.path.join(os.fspath(root), *names)
    base, path = os.path.abspath(root), os.path.abspath(joined)
    fold = os.path.normcase
    try:
        inside = os.path.commonpath([fold(base), fold(path)]) == fold(base) and fold(path) != fold(base)
    except ValueError:  # another drive on Windows
        inside = False
    if not inside:
        raise BadName(f"{os.path.join(*names)!r} leads outside {os.fspath(root)}")
    return joined
