"""The selectors every command takes; kept apart from select.py so a cached `export` imports nothing heavy."""
from __future__ import annotations

from typing import NamedTuple


class Selectors(NamedTuple):
    vs: str | None = None
    toolset: str | None = None
    arch: str = "x64"
    cuda: str | None = None
