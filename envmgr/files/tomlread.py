"""Reading the TOML files users hand us (snapshots, recipes, machine records): one error line
naming the file, line and column, never a traceback.

Every such file is read through `read_text_file`: UTF-8 with or without a BOM, or UTF-16 with a
BOM, because Windows PowerShell 5.1's `>` (Out-File) writes UTF-16 LE with a BOM and its
`Set-Content -Encoding UTF8` writes UTF-8 with one.
https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_character_encoding"""

from __future__ import annotations

import codecs
import os
import sys

from envmgr.errors import InputFileError
from envmgr.files.nested import MAX_DEPTH, too_deep_toml
from envmgr.files.read import TEXT_LIMIT, read_regular

__all__ = ["decode_text", "load_toml", "read_text_file", "tomllib"]  # tomllib: for tomlfast.py, wheels/remote.py

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (no new start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def decode_text(raw: bytes, origin: str, what: str, remedy: str) -> str:
    """UTF-16 when the bytes start with its BOM, else UTF-8 (a UTF-8 BOM is dropped)."""
    codec = "utf-16" if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else "utf-8-sig"
    try:
        return raw.decode(codec)
    except UnicodeDecodeError as exc:
        raise InputFileError(
            f"{origin}: the {what} is not UTF-8 or UTF-16 text (undecodable byte at offset {exc.start})", remedy
        ) from None


def read_text_file(path: str | os.PathLike[str], what: str, read_remedy: str, decode_remedy: str) -> str:
    """The file's text; an unreadable or undecodable file is one InputFileError line (exit 2)."""

    try:
        raw = read_regular(path, TEXT_LIMIT)  # never /dev/zero, a FIFO or a 10 GB file
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read the {what}: {exc.strerror or exc}", read_remedy) from None
    return decode_text(raw, str(path), what, decode_remedy)


def load_toml(
    text: str, origin: str, what: str, remedy: str, loads: Callable[[str], dict[str, Any]] | None = None
) -> dict[str, Any]:
    """`loads`: a stand-in for tomllib.loads that raises what it raises (tomlfast.loads)."""
    deep = too_deep_toml(text)  # before tomllib: its dotted keys cost quadratic time
    if deep is not None:
        raise InputFileError(
            f"{origin}: not a valid {what}: a key nested {MAX_DEPTH} or more levels deep (at line {deep})", remedy
        )
    try:
        doc: dict[str, Any] = (loads or tomllib.loads)(text)
        return doc
    except tomllib.TOMLDecodeError as exc:
        # The message carries "(at line L, column C)".
        raise InputFileError(f"{origin}: not a valid {what}: {exc}", remedy) from None
    except (RecursionError, MemoryError):
        raise InputFileError(
            f"{origin}: not a valid {what}: nested too deeply (or too large) to read", remedy
        ) from None


_READ: dict[str, tuple[str, dict[str, Any]]] = {}  # path -> (text, document)


def read_toml_file(path: str | os.PathLike[str], what: str, remedy: str) -> dict[str, Any] | None:
    """A TOML file read whole through read_text_file and load_toml (size, depth, one error line), or None
    when there is none (a name too long for the file system is none, not an OSError: audit N8). The same
    text is parsed once per process: config.toml is asked for by several steps of one install (N7)."""
    try:
        os.stat(path)
    except (OSError, ValueError):  # absent, a name too long, NUL in the name
        return None
    text = read_text_file(path, what, remedy, remedy)
    seen = _READ.get(os.fspath(path))
    if seen is not None and seen[0] == text:
        return seen[1]
    doc = load_toml(text, str(path), what, remedy)
    _READ[os.fspath(path)] = (text, doc)
    return doc
