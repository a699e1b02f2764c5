"""The one version type: VS 17.14.36310.24, MSVC 14.44.35207, CUDA 12.4 / 12.4.99, SDK 10.0.22621.0,
driver 580.65.06, compute capability 8.9 are all dotted integers, compared as tuples.

Lenient on purpose (discovery meets "v12.4", "13.0.Version", "12.4.r12.4"): the first run of
dotted digits is the version; text without digits has none.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Iterable

_DOTTED = re.compile(r"\d+(?:\.\d+)*")


class Version(tuple[int, ...]):
    """A tuple of ints, so `Version.of("12.4") >= (12, 4)` and sorting just work."""

    __slots__ = ()

    def __new__(cls, parts: Iterable[str | int] = ()) -> Version:
        return super().__new__(cls, (int(p) for p in parts))

    @classmethod
    def parse(cls, text: str | None) -> Version | None:
        m = _DOTTED.search(text or "")
        return cls(m.group(0).split(".")) if m else None

    @classmethod
    def of(cls, text: str | None) -> Version:
        """Like parse, but no digits give the empty version (sorts before every real one)."""
        return cls.parse(text) or cls()

    @property
    def major(self) -> int:
        return self[0] if self else 0

    @property
    def minor(self) -> int:
        return self[1] if len(self) > 1 else 0

    @property
    def mm(self) -> Version:
        """(major, minor): how CUDA and MSVC rules are keyed."""
        return Version((self.major, self.minor))

    def __str__(self) -> str:
        return ".".join(str(p) for p in self)

    def __repr__(self) -> str:
        return f"Version('{self}')"


def mm(text: str | None) -> Version:
    """The (major, minor) of a version string, (0, 0) when it has none."""
    return Version.of(text).mm
