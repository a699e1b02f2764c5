"""Reading the TOML files users hand us (snapshots, recipes, machine records): one error line
naming the file, line and column, never a traceback."""
from __future__ import annotations

import sys

from .errors import InputFileError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def load_toml(text: str, origin: str, what: str, remedy: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # The message carries "(at line L, column C)".
        raise InputFileError(f"{origin}: not a valid {what}: {exc}", remedy) from None
