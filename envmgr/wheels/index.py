"""A team's wheel index: cached wheels published into a PEP 503 "simple" layout in a folder.

    DEST/index.html                          root page: one link per project
    DEST/<project>/index.html                project page: one link per wheel, `#sha256=` in the href
    DEST/<project>/<digest>/<wheel>          the wheel, in a folder named by its envmgr key digest
    DEST/<project>/<digest>/entry.json       the key file: the cache's entry.json (schema, key, sha256)

Any static file server over DEST is an index pip understands (`pip install --index-url URL`);
each link also carries the key (`data-envmgr-digest`, `data-envmgr-key`), which pip ignores and
`envmgr install --wheel-index` reads (wheels/remote.py). The same file name can appear under several
digests (one wheel per CUDA version or architecture list): pip sees them as equal candidates.

Updates are transactions. An entry folder is staged under a dot name and renamed into place; pages
are written to a temporary file and renamed. The entry folders are the truth and pages are derived
from them: each publisher rewrites a page, reads it back and rewrites it until it equals what the
folders say, so concurrent publishers converge on a page that lists every entry (the last writer
always checks after its own write). Links that envmgr did not write are kept as they are.
"""

from __future__ import annotations

import errno
import html
import os
import shutil
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

from envmgr.errors import InputFileError
from envmgr.files import names
from envmgr.files.atomic import replace
from envmgr.files.jsondoc import dumps
from envmgr.files.read import read_regular
from envmgr.wheels import staging
from envmgr.wheels import store as wheels
from envmgr.wheels.pages import Link, parse_links
from envmgr.wheels.url import holds_secret, redact

PAGE = "index.html"
MAX_PAGE = 16 << 20  # a page of DEST (the same cap as a team index page read over HTTP)
KEY_FILE = wheels.SIDECAR
_SETTLE_TRIES = 50


@dataclass(frozen=True)
class Published:
    entry: wheels.Entry
    status: str  # "added", "present", "repaired"
    path: Path


def _anchor(link: Link) -> str:
    attrs = "".join(f' {k}="{html.escape(v)}"' for k, v in link.attrs)
    return f'<a href="{html.escape(link.href)}"{attrs}>{html.escape(link.text)}</a><br>'


def render_page(title: str, links: tuple[Link, ...] | list[Link]) -> bytes:
    body = "\n".join(_anchor(link) for link in links)
    return (
        f'<!DOCTYPE html>\n<html>\n<head>\n<meta name="pypi:repository-version" content="1.0">\n'
        f'<meta name="envmgr:index" content="1">\n<title>{html.escape(title)}</title>\n</head>\n<body>\n'
        f"<h1>{html.escape(title)}</h1>\n{body}\n</body>\n</html>\n"
    ).encode()


def entry_link(entry: wheels.Entry) -> Link:
    key = dumps(asdict(entry.key), sort_keys=True, separators=(",", ":"))
    return Link(
        f"{entry.folder.name}/{entry.wheel}#sha256={entry.sha256}",
        entry.wheel,
        (("data-envmgr-digest", entry.folder.name), ("data-envmgr-key", key)),
    )


def intact(entry: wheels.Entry | None) -> bool:
    return entry is not None and not wheels.wheel_problem(entry)


# --- pages ----------------------------------------------------------------------------------------


def _read(path: Path) -> bytes | None:
    """A page of DEST: None when there is none; a FIFO, a device, a folder or a page over MAX_PAGE is
    refused with one line (audit N10: read_bytes() waited forever on a FIFO and read /dev/zero)."""
    # On Windows a file another publisher is renaming onto cannot be opened for a moment (Access
    # denied; seen under Windows CPython with concurrent publishers): read again, as writes retry.

    for attempt in range(20):
        try:
            return read_regular(path, MAX_PAGE)
        except FileNotFoundError:
            return None
        except PermissionError:
            if sys.platform != "win32" or attempt == 19:
                raise
            time.sleep(0.0125 * (attempt + 1))
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.EFBIG, errno.EISDIR):
                raise
            raise InputFileError(
                f"{path}: {exc.strerror}; nothing was published",
                "move it away (a page of DEST must be a regular file) and publish again",
            ) from None
    return None


def _kept_links(page: Path) -> list[Link]:
    """Links on an existing page that envmgr did not write (a hand-made or pip-made index)."""
    raw = _read(page)
    if raw is None:
        return []
    return [link for link in parse_links(raw.decode("utf-8", "replace")) if link.attr("data-envmgr-digest") is None]


def _project_entries(project: Path) -> list[wheels.Entry]:
    found = []
    for folder in sorted(project.iterdir()):
        if folder.is_dir() and not folder.name.startswith("."):
            entry = wheels._read_entry(folder)
            if entry is not None and entry.path.is_file():
                found.append(entry)
    return sorted(found, key=lambda e: (e.wheel, e.created, e.folder.name))


def render_project(project: Path) -> bytes:
    ours = [entry_link(e) for e in _project_entries(project)]
    return render_page(f"Links for {project.name}", _kept_links(project / PAGE) + ours)


def render_root(dest: Path) -> bytes:
    kept = _kept_links(dest / PAGE)
    named = {link.href.rstrip("/") for link in kept}
    ours = [
        Link(f"{p.name}/", p.name, ())
        for p in sorted(dest.iterdir())
        if p.is_dir() and not p.name.startswith(".") and p.name not in named and (p / PAGE).is_file()
    ]
    return render_page("Simple index", kept + ours)


def write_file(path: Path, data: bytes) -> None:
    """Temporary file + rename, world-readable (a web server serves it; mkstemp makes 0600)."""

    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def settle(path: Path, render: Callable[[], bytes]) -> None:
    """Write render() to path until the file holds what render() says (see the module docstring)."""
    for _ in range(_SETTLE_TRIES):
        want = render()
        if _read(path) == want:
            return
        write_file(path, want)
    raise OSError(f"{path} kept changing under concurrent publishers")


# --- publishing -----------------------------------------------------------------------------------


def check_dest(dest: Path) -> None:
    """DEST must be a folder we can write: checked before anything is copied or built."""
    probe = dest / f".envmgr-probe-{uuid.uuid4().hex[:12]}"
    try:
        dest.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise unwritable(dest, exc) from None


def unwritable(dest: Path, exc: OSError) -> InputFileError:
    reason = _reason(exc)
    if isinstance(exc, (FileExistsError, NotADirectoryError)) or (os.path.exists(dest) and not os.path.isdir(dest)):
        reason = "it (or a folder above it) is a file, not a folder"
    return InputFileError(
        f"the wheel index folder {dest} cannot be written: {reason}; nothing was published",
        "give a folder you can write (it is created when missing)",
    )


def _copy_entry(entry: wheels.Entry, target: Path) -> str:
    """Stage the entry's wheel and key file next to target, then rename the folder into place (the
    staging names are locked while this runs: wheels/staging.py removes what a killed publisher left)."""
    with staging.held(target) as (stage, old):
        stage.mkdir()
        shutil.copyfile(entry.path, stage / entry.wheel)
        shutil.copyfile(entry.folder / KEY_FILE, stage / KEY_FILE)
        if not intact(wheels._read_entry(stage)):
            raise OSError(f"the copy of {entry.wheel} does not match its sha256")
        status = "added"
        if target.exists():
            os.replace(target, old)
            status = "repaired"
        try:
            os.replace(stage, target)
        except OSError:
            if not target.is_dir():  # another publisher put the same digest in place first
                raise
            status = "present"
        return status


def publish(entries: list[wheels.Entry], dest: Path, skipped: list[str] | None = None) -> list[Published]:
    """Copy intact cache entries into the index at dest and update its pages. An entry that cannot be
    copied while DEST can still be written is the entry's fault: it is added to `skipped` (a line) and
    the others are published (audit M4: one bad entry failed the whole publish, blaming DEST)."""
    check_dest(dest)
    done: list[Published] = []
    try:
        for project in {dest / e.key.package for e in entries}:
            staging.sweep(project)  # what a killed publisher left (M9)
        for entry in entries:
            # _read_entry checked both names; a path built from them must still stay in DEST
            target = Path(names.under(dest, names.project_name(entry.key.package), names.digest(entry.folder.name)))
            project = target.parent
            there = wheels._read_entry(target) if target.is_dir() else None
            if there is not None and there.key == entry.key and intact(there):
                status = "present"  # never rewritten: the first published build of a key stays
            else:
                try:
                    status = _copy_entry(entry, target)
                except OSError as exc:
                    check_dest(dest)  # DEST itself failing is still the whole publish's error
                    if skipped is None:
                        raise
                    skipped.append(f"{entry.folder}: {entry.wheel} cannot be copied: {_reason(exc)}")
                    continue
            done.append(Published(entry, status, target / entry.wheel))
        for project in sorted({dest / p.entry.key.package for p in done}):
            settle(project / PAGE, partial(render_project, project))
        if done:
            settle(dest / PAGE, lambda: render_root(dest))
    except OSError as exc:
        raise unwritable(dest, exc) from None
    except names.BadName as exc:  # entries come from _read_entry, which checked them: not reached
        raise InputFileError(f"{exc}; nothing more was published", "run `envmgr wheels clear`") from None
    return done


def _reason(exc: OSError) -> str:
    """An OSError in words, without Python's reprs (shutil.SameFileError's message holds two)."""
    if isinstance(exc, shutil.SameFileError):
        return "the wheel and its copy would be the same file"
    return exc.strerror or " ".join(str(exc).split())


def cached_entries(package: str | None = None) -> tuple[list[wheels.Entry], list[str]]:
    """Intact cache entries (optionally of one package), and a line for each one skipped."""
    good, skipped = [], []
    for e in wheels.entries():
        if not isinstance(e, wheels.Entry):
            skipped.append(f"{e}: unreadable entry.json (or its key's package or wheel is not a name)")
        elif package and e.key.package != wheels.normalize(package):
            continue
        elif why := wheels.wheel_problem(e):
            skipped.append(f"{e.folder}: {e.wheel} {why}")
        elif holds_secret(e.key.source):  # a prebuilt entry keyed before issue 34 (N2): never published
            skipped.append(
                f"{e.folder}: its key names its index with a password or token ({redact(e.key.source)}); "
                "run `envmgr wheels clear` and install again"
            )
        else:
            good.append(e)
    return good, skipped


def entry_for_path(path: Path) -> wheels.Entry | None:
    """The cache entry whose wheel is at path (what `install` just built or reused)."""
    entry = wheels._read_entry(Path(path).parent)
    return entry if entry is not None and entry.path == Path(path) else None
