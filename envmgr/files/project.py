"""Defaults a project carries: `envmgr.toml`, or `[tool.envmgr]` in pyproject.toml, found upward from the
working folder (the nearest folder holding either wins, as ruff and uv find their settings; in that folder
envmgr.toml's keys win over pyproject.toml's). Read through the guarded reader (tomlread.py: size and
depth caps, UTF-8/UTF-16), so a bad file is one line naming it, exit 2.

    # envmgr.toml                       # pyproject.toml
    cuda = "12.4"                       [tool.envmgr]
    vs = "community"                    cuda = "12.4"
    recipe = "llama-cpp-python"         python = ".venv/Scripts/python.exe"

A relative `python` path is relative to the file's folder, not to where envmgr runs; a bare name
(`python3.12`) is looked up on PATH as given.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from envmgr.errors import InputFileError
from envmgr.files.tomlread import load_toml, read_text_file

KEYS = ("cuda", "vs", "toolset", "recipe", "python")
ENVMGR_TOML, PYPROJECT = "envmgr.toml", "pyproject.toml"
_REMEDY = "fix or remove the file; its keys are " + ", ".join(KEYS) + " (docs/config.md)"
_MARK = "tool.envmgr"  # a pyproject.toml without it is not parsed: most never say a word of envmgr


@dataclass(frozen=True)
class ProjectFile:
    """One file's defaults: (key, value) in KEYS order; kind is envmgr.toml or pyproject.toml."""

    path: str
    kind: str
    values: tuple[tuple[str, str], ...]

    def get(self, key: str) -> str | None:
        return dict(self.values).get(key)


def find_project(start: str) -> tuple[ProjectFile, ...]:
    """The nearest folder's project files from `start` upward (envmgr.toml first); () when none."""
    folder = os.path.abspath(start)
    while True:
        found = tuple(f for f in (_read(folder, ENVMGR_TOML), _read(folder, PYPROJECT)) if f is not None)
        if found:
            return found
        parent = os.path.dirname(folder)
        if parent == folder:
            return ()
        folder = parent


def _read(folder: str, kind: str) -> ProjectFile | None:
    path = os.path.join(folder, kind)
    if not os.path.isfile(path):
        return None
    text = read_text_file(path, "project settings", "make it readable, or remove it", _REMEDY)
    if kind == PYPROJECT and _MARK not in text:
        return None
    return parse_project(text, path, kind)


def parse_project(text: str, path: str, kind: str) -> ProjectFile | None:
    """The file's defaults (None: a pyproject.toml with no [tool.envmgr] table); a bad one is InputFileError."""
    doc = load_toml(text, path, f"{kind} file", _REMEDY)
    where = "[tool.envmgr]" if kind == PYPROJECT else kind
    table = doc.get("tool", {}).get("envmgr") if kind == PYPROJECT and isinstance(doc.get("tool"), dict) else doc
    if table is None:
        return None
    if not isinstance(table, dict):
        raise InputFileError(f"{path}: {where} must be a table of settings", _REMEDY)
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise InputFileError(f"{path}: {where} has an unknown key {unknown[0]!r}", _REMEDY)
    values = []
    for key in KEYS:
        if key not in table:
            continue
        value = table[key]
        if not isinstance(value, str) or not value.strip():
            raise InputFileError(f"{path}: {where} key {key!r} must be a non-empty string", _REMEDY)
        if key == "python" and ("/" in value or "\\" in value):  # a path; a bare name is looked up on PATH
            value = os.path.normpath(os.path.join(os.path.dirname(path), os.path.expanduser(value)))
        values.append((key, value))
    return ProjectFile(path, kind, tuple(values))
