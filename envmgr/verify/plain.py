"""The process verify judges: a plain new process of the target Python, so that a pass means the user's own
`python` works, in a new terminal, without envmgr.

Plain is the environment envmgr was started in, less the envmgr environment active in it (the one
`envmgr shell`, `Enter-Envmgr` or an activation script applied: ENVMGR_RESTORE holds what every variable
it touched was before, snapshot/activation.py). Nothing of a recipe's environment (vcvars, CUDA's bin on
PATH, CMAKE_ARGS) reaches it: the install flow builds with that environment, and verifies without it.
`--inherit-env` opts back into the environment envmgr runs in, as it is.
"""

from __future__ import annotations

from envmgr.host.base import Host
from envmgr.host.envview import with_env
from envmgr.snapshot.activation import ACTIVE, RESTORE, base_of
from envmgr.winenv import env_get

PLAIN, INHERITED = "plain", "inherited"


def plain_host(host: Host, inherit: bool = False) -> tuple[Host, str, str]:
    """(the host as a plain new process there sees it, PLAIN or INHERITED, that in words)."""
    if inherit:
        return with_env(host, dict(host.env)), INHERITED, "envmgr's own environment (--inherit-env)"
    fold = host.platform == "windows"
    active = env_get(host.env, ACTIVE, fold) or ("an envmgr environment" if env_get(host.env, RESTORE, fold) else "")
    words = "a plain process" + (f" (the active envmgr environment {active} left out)" if active else "")
    return with_env(host, base_of(host.env, host.platform)), PLAIN, words
