"""The fast path's argv grammar: the few options it answers itself (selectors, export's --format and
--activate); anything else is None and goes to the full CLI. Imports nothing (start-up)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

_SELECTORS = ("--vs", "--toolset", "--arch", "--cuda")


_EXPORT_FORMATS = ("toml", "json", "ps1", "cmd", "sh", "fish")


def parse_options(args: list[str], *, with_format: bool) -> dict[str, Any] | None:
    """--vs/--toolset/--arch/--cuda VALUE (or =VALUE), and for export --format F and --activate."""
    names = _SELECTORS + (("--format",) if with_format else ())
    opts: dict[str, Any] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if with_format and arg == "--activate":
            if arg in opts:
                return None
            opts[arg] = True
            i += 1
            continue
        if name not in names or name in opts:
            return None
        if not eq:
            if i + 1 >= len(args):
                return None
            value = args[i + 1]
            i += 1
        i += 1
        if not value or value.startswith("-"):
            return None
        opts[name] = value
    if opts.get("--format", "toml") not in _EXPORT_FORMATS:
        return None
    # A --cuda that names a folder is resolved to its real path by the full CLI before keying.
    if any(c in opts.get("--cuda", "") for c in "\\/:"):
        return None
    return opts


def selectors(opts: dict[str, Any]) -> dict[str, Any]:
    """What cache/resolve.py keys on: Selectors(...)._asdict() plus the --python list."""
    return {
        "vs": opts.get("--vs"),
        "toolset": opts.get("--toolset"),
        "arch": opts.get("--arch", "x64"),
        "cuda": opts.get("--cuda"),
        "python": [],
    }
