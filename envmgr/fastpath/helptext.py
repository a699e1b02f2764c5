"""`envmgr --help` and `envmgr CMD --help` from the text click printed last time (issue 33, start-up).

Importing click alone costs about twice `envmgr --version` (bench/startup.py), so no help rendered by
click can be within 2x of it. The first `--help` of a command goes through click as before; the fast
path keeps what it printed under the cache folder, keyed by the arguments, the width click wraps to, the
version and the size and time of every file of envmgr and click, and prints that text next time. An
edited or upgraded envmgr or click is a new key: the old text is never read again.
Standard library's built-in modules only on a hit; the store, on a miss, may import more.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Mapping

HELP = ("--help", "-h")
_MAX_WIDTH = 100  # cli.main's CONTEXT max_content_width


def help_form(argv: list[str]) -> bool:
    """`--help` alone, or one command word then `--help`: the forms whose text depends on nothing else."""
    if len(argv) == 1:
        return argv[0] in HELP
    return len(argv) == 2 and argv[1] in HELP and argv[0][:1].isalpha() and argv[0].replace("-", "").isalnum()


def wrap_width(env: Mapping[str, str]) -> int:
    """The width click's HelpFormatter wraps to: shutil.get_terminal_size's rule (COLUMNS, else stdout's
    terminal, else 80), capped at max_content_width, less 2, at least 50."""
    try:
        columns = int(env.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return max(min(columns or 80, _MAX_WIDTH) - 2, 50)


def sources_token() -> str:
    """Size and mtime of every .py file of envmgr and of click: what the help text is made from."""
    parts = []
    for top in (os.path.dirname(os.path.dirname(os.path.abspath(__file__))), _click_dir()):
        if top is None:
            return ""
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    st = os.stat(os.path.join(folder, name))
                    parts.append(f"{folder}/{name}:{st.st_size}:{st.st_mtime_ns}")
    return "\n".join(parts)


def _click_dir() -> str | None:
    for entry in sys.path:
        folder = os.path.join(entry or ".", "click")
        if os.path.isfile(os.path.join(folder, "__init__.py")):
            return folder
    return None


def help_file(argv: list[str], env: Mapping[str, str], folder: str) -> str | None:
    """Where the text for `argv` lives in the cache folder, or None when the sources cannot be read."""
    from envmgr import __version__
    from envmgr.cache.key import _sha256_hex  # the builtin sha256, without hashlib's OpenSSL

    token = sources_token()
    if not token:
        return None
    key = "\0".join([__version__, str(wrap_width(env)), *argv, token])
    return os.path.join(folder, "help", _sha256_hex(key.encode("utf-8", "surrogateescape"))[:32] + ".txt")


def read_help(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read() or None
    except OSError:
        return None


def store_help(path: str, text: str) -> None:
    """Keep what click printed; a folder that cannot be written only means no fast answer next time."""
    from envmgr.files.atomic import atomic_write

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write(path, text.encode("utf-8"), backup=False)
    except OSError:
        pass
