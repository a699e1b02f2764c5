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
    """One of envmgr's own settings; None when unset (an empty value is returned as ""). A flag given for it
    (give) comes first."""
    return _given[name] if name in _given else os.environ.get(name)


# Flags that stand for a setting for this run (`--gpu sm_89` for ENVMGR_GPU): given here, read by setting().
_given: dict[str, str] = {}


def give(name: str, value: str) -> None:
    """A flag's value for one of envmgr's settings, for the rest of this process (the flag beats the variable)."""
    _given[name] = value


def forget(name: str) -> None:
    """The flag's value no longer holds (its command ended)."""
    _given.pop(name, None)


def given(name: str) -> bool:
    """Whether the setting came from a flag (give) rather than the environment."""
    return name in _given
