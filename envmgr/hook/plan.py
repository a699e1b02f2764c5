"""The start-up hook's files, as values (pure): what `hook install` writes into a Python's site folder,
where, and what an embeddable Python's `._pth` needs; the record that lets `hook remove` undo it.

Four files go into the site folder (the target's purelib; an embeddable Python's own folder, the first
of site.getsitepackages() there): `_envmgr_hook.pth` (one `import` line, run by site at start-up),
`_envmgr_hook.py` (site_module.py, standard library only), `_envmgr_hook.env` (the snapshot's operations,
resolved at install time, one a line) and `_envmgr_hook.json` (the record: selectors, snapshot identity,
every file created with its sha256, every file changed with its original bytes).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from envmgr.errors import UnrepresentableValue
from envmgr.snapshot.envdelta import EnvDelta

MODULE = "_envmgr_hook"
PTH, PY, ENV, RECORD = (f"{MODULE}.pth", f"{MODULE}.py", f"{MODULE}.env", f"{MODULE}.json")
HEADER = "envmgr-hook 1"
SCHEMA = 1
PTH_TEXT = f"import {MODULE}  # envmgr hook: the compiler environment at start-up; `envmgr hook remove` undoes it\n"
_BAD = re.compile(r"[\t\r\n\0]")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def env_text(delta: EnvDelta, comments: tuple[str, ...] = ()) -> str:
    """The env file site_module.py reads: a header, `# ` comments, then `op<TAB>NAME<TAB>value...` lines."""
    lines = [HEADER, *(f"# {c}" for c in comments)]
    for op in delta.ops:
        for what, text in (("name", op.name), *(("value", e) for e in op.entries)):
            bad = _BAD.search(text)
            if bad or (what == "name" and not text):
                raise UnrepresentableValue(
                    "hook",
                    op.name or "''",
                    "the hook's env file keeps one variable a line, fields split by tabs",
                    bad.group() if bad else None,
                    what=what,
                )
        lines.append("\t".join((op.op, op.name, *op.entries)) if op.op != "unset" else f"unset\t{op.name}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Probe:
    """What the target Python says about itself (site_probe's JSON): where .pth files are read."""

    executable: str
    version: str
    prefix: str
    base_prefix: str
    purelib: str
    sitepackages: tuple[str, ...]
    path: tuple[str, ...]
    pth_files: tuple[str, ...]  # `._pth` files beside the executable: an embeddable (portable) Python
    conda: bool = False  # the prefix has conda-meta/: a conda environment (or conda's base)

    @property
    def kind(self) -> str:
        if self.pth_files:
            return "embeddable"
        if self.prefix != self.base_prefix:
            return "venv"
        return "conda" if self.conda else "installation"


PROBE_SCRIPT = r"""
import glob, json, os, sys, sysconfig
try:
    import site
    sp = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
except Exception:
    sp = []
d = os.path.dirname(os.path.abspath(sys.executable))
print(json.dumps({"executable": sys.executable, "version": "%d.%d" % sys.version_info[:2],
                  "prefix": sys.prefix, "base_prefix": getattr(sys, "base_prefix", sys.prefix),
                  "purelib": sysconfig.get_paths()["purelib"], "sitepackages": sp, "path": sys.path,
                  "pth_files": sorted(glob.glob(os.path.join(d, "*._pth"))),
                  "conda": os.path.isdir(os.path.join(sys.prefix, "conda-meta"))}))
"""


def parse_probe(data: Any) -> Probe | None:
    if not isinstance(data, dict):
        return None
    try:
        s = [str(data[k]) for k in ("executable", "version", "prefix", "base_prefix", "purelib")]
        t = [tuple(str(x) for x in data[k]) for k in ("sitepackages", "path", "pth_files")]
    except (KeyError, TypeError):
        return None
    return Probe(s[0], s[1], s[2], s[3], s[4], t[0], t[1], t[2], data.get("conda") is True)


@dataclass(frozen=True)
class Placement:
    site: str  # the folder the four files go into
    pth_file: str | None  # the embeddable Python's ._pth, when `import site` must be added to it
    pth_before: bytes = b""
    pth_after: bytes = b""
    new_dirs: tuple[str, ...] = ()  # folders made for the site folder, deepest first (an embeddable Python's)


def enable_site(text: bytes) -> bytes | None:
    """An embeddable Python's `._pth` with `import site` in force (the commented line uncommented, else one
    appended in the file's own line ending), or None when it is already there."""
    lines = text.splitlines(keepends=True)
    if any(ln.strip() == b"import site" for ln in lines):
        return None
    for i, ln in enumerate(lines):
        if re.fullmatch(rb"#\s*import site", ln.strip()):
            ending = ln[len(ln.rstrip(b"\r\n")) :]
            return b"".join([*lines[:i], b"import site" + ending, *lines[i + 1 :]])
    newline = b"\r\n" if b"\r\n" in text else b"\n"
    return text + (newline if text and not text.endswith(b"\n") else b"") + b"import site" + newline


def _pth_for(probe: Probe) -> str:
    """The ._pth the interpreter reads: `<executable's stem>._pth` first, else `pythonXY._pth` (the DLL's)."""
    names = {p.replace("\\", "/").rsplit("/", 1)[-1].lower(): p for p in probe.pth_files}
    stem = probe.executable.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
    dll = "python" + probe.version.replace(".", "")
    return names.get(f"{stem}._pth") or names.get(f"{dll}._pth") or probe.pth_files[0]


def place(probe: Probe, is_dir: Callable[[str], bool], read: Callable[[str], bytes]) -> Placement | None:
    """Where the hook goes in this Python, or None when it has no site folder that its site module reads."""
    if probe.pth_files:
        pth = _pth_for(probe)
        site = next((s for s in probe.sitepackages if is_dir(s)), probe.sitepackages[0] if probe.sitepackages else None)
        if site is None:
            return None
        before = read(pth)
        after = enable_site(before)
        return Placement(
            site,
            pth if after is not None else None,
            before if after is not None else b"",
            after or b"",
            _missing(site, is_dir),
        )
    on_path = {_norm(p) for p in probe.path}
    for site in (probe.purelib, *probe.sitepackages):
        if is_dir(site) and _norm(site) in on_path:
            return Placement(site, None)
    return None


def _norm(path: str) -> str:
    """One folder however sys.path and sysconfig spell it (a Windows path: either slash, any case)."""
    if "\\" in path or path[1:3] in (":/", ":\\"):
        return path.replace("/", "\\").rstrip("\\").lower()
    return path.rstrip("/") or path


def _missing(folder: str, is_dir: Callable[[str], bool]) -> tuple[str, ...]:
    """`folder` and its parents that do not exist, deepest first (POSIX's site folder lib/pythonX.Y/site-packages
    under an embeddable layout; Windows' is the Python's own folder, which exists)."""
    out = []
    sep = "\\" if "\\" in folder else "/"
    while folder and not is_dir(folder):
        out.append(folder)
        parent = folder.rsplit(sep, 1)[0]
        if parent == folder:
            break
        folder = parent
    return tuple(out)


def record(
    *,
    probe: Probe,
    placement: Placement,
    created: Mapping[str, bytes],
    pycache_existed: bool,
    snapshot: Mapping[str, Any],
    selectors: Mapping[str, Any],
    envmgr: str,
    when: str,
) -> dict[str, Any]:
    """The record `hook remove` and `hook status` read (docs/hook.md): every created file with its hash,
    the changed ._pth with its original bytes."""
    changed = []
    if placement.pth_file:
        changed.append(
            {
                "path": placement.pth_file,
                "sha256_after": sha256(placement.pth_after),
                "original_base64": base64.b64encode(placement.pth_before).decode("ascii"),
            }
        )
    return {
        "schema": SCHEMA,
        "envmgr": envmgr,
        "installed": when,
        "python": probe.executable,
        "python_version": probe.version,
        "kind": probe.kind,
        "site": placement.site,
        "selectors": dict(selectors),
        "snapshot": dict(snapshot),
        "created": [{"name": name, "sha256": sha256(data)} for name, data in created.items()],
        "changed": changed,
        "new_dirs": list(placement.new_dirs),
        "pycache_existed": pycache_existed,
    }
