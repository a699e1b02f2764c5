"""The one JSON reader and writer for documents from outside (manifests, key files, plans, records) and
for every document envmgr writes.

Reading: `read_json_file` takes only a regular file below a size cap (read.py), and `load_json` turns
every way a document can be bad (syntax, not UTF-8, nested too deeply, NaN/Infinity/1e999) into one
InputFileError line (exit 2). Writing: `dumps` refuses NaN and Infinity (allow_nan=False), because RFC
8259 has neither and strict parsers (Go, serde, JavaScript) reject a document holding them (audit N11).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from envmgr.errors import InputFileError
from envmgr.files.nested import loads_json
from envmgr.files.read import read_regular

JSON_LIMIT = 16 * 1024 * 1024  # manifests, key files, plans: kilobytes


def load_json(text: str | bytes, origin: str, what: str, remedy: str) -> Any:
    """The parsed document; one InputFileError line naming origin for anything that is not strict JSON."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8-sig")
        return loads_json(text)
    except UnicodeDecodeError as exc:
        raise InputFileError(
            f"{origin}: the {what} is not UTF-8 (undecodable byte at offset {exc.start})", remedy
        ) from None
    except ValueError as exc:  # json.JSONDecodeError: syntax, too deep, NaN or Infinity
        raise InputFileError(f"{origin}: not a valid {what}: {exc}", remedy) from None


def read_json_file(path: str | os.PathLike[str], what: str, remedy: str, limit: int = JSON_LIMIT) -> Any:
    """A regular file's JSON document (never a FIFO, /dev/zero or a folder); one InputFileError line otherwise."""
    try:
        raw = read_regular(path, limit)
    except FileNotFoundError:
        raise InputFileError(f"{path}: no such file", remedy) from None
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read the {what}: {exc.strerror or exc}", remedy) from None
    return load_json(raw, str(path), what, remedy)


def dumps(
    data: Any,
    *,
    indent: int | None = None,
    sort_keys: bool = False,
    ensure_ascii: bool = True,
    separators: tuple[str, str] | None = None,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """json.dumps that refuses NaN and Infinity (ValueError): what envmgr writes is always strict JSON."""
    return json.dumps(
        data,
        indent=indent,
        sort_keys=sort_keys,
        ensure_ascii=ensure_ascii,
        separators=separators,
        allow_nan=False,
        default=default,
    )
