"""This process: the environment envmgr was started in, and envmgr's own settings read from it.

With the Host classes, the only place that reads os.environ: a host gives its machine's environment
(LiveHost.env is this one), and this module gives envmgr's switches (ENVMGR_CACHE_DIR, ENVMGR_DATA_DIR,
ENVMGR_CONFIG_DIR, ENVMGR_WHEEL_INDEX, NO_COLOR, FORCE_COLOR, TERM, CI) to the modules that honour them.
Tiny on purpose: the console script's fast path (fastpath/main.py, fastpath/run.py) imports it.
"""
from __future__ import annotations

import os

# No `typing` import: it costs ~20 ms here, and the console script's fast path imports this module
# (annotations are strings under `from __future__ import annotations`).


def environ() -> os._Environ[str]:
    """The live environment of this process (changes made to it are seen)."""
    return os.environ


def setting(name: str) -> str | None:
    """One of envmgr's own settings; None when unset (an empty value is returned as "")."""
    return os.environ.get(name)
