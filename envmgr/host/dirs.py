"""envmgr's own folders, worked out in one place: the data shipped with the package (shells,
templates) and the cache, config and data folders (an ENVMGR_*_DIR setting, else platformdirs).

The console script's fast path keeps its own platformdirs-free copy of the cache rule
(fastpath/main.py `cache_dir`, Linux only); tests/unit/fastpath/test_fast_path.py holds the two equal.
"""

from __future__ import annotations

from pathlib import Path

import platformdirs

from envmgr.host.process import setting

_PACKAGE = Path(__file__).resolve().parent.parent


def shipped(*parts: str) -> Path:
    """A folder shipped with envmgr: `_data/...` in an installed wheel, the repository's own in a checkout."""
    installed = _PACKAGE.joinpath("_data", *parts)
    return installed if installed.is_dir() else _PACKAGE.parent.joinpath(*parts)


def cache_dir() -> Path:
    return Path(setting("ENVMGR_CACHE_DIR") or platformdirs.user_cache_dir("envmgr", appauthor=False))


def config_dir() -> Path:
    return Path(setting("ENVMGR_CONFIG_DIR") or platformdirs.user_config_dir("envmgr", appauthor=False))


def data_dir() -> Path:
    return Path(setting("ENVMGR_DATA_DIR") or platformdirs.user_data_dir("envmgr", appauthor=False))
