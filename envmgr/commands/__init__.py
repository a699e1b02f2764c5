"""Commands that live in their own modules, loaded only when they are used.

A command's module is imported when click asks for that command (or lists them all for --help),
so `envmgr --version` and a cached `envmgr export` import none of them.
"""
from __future__ import annotations

import importlib

# command name -> (module in envmgr.commands, attribute)
LAZY = {
    "run": ("session", "run_command"),
    "shell": ("session", "shell_command"),
    "recipes": ("session", "recipes_command"),
    "deactivate": ("session", "deactivate_command"),
    "init": ("session", "init_command"),
    "fix-msbuild": ("fix_msbuild", "command"),
    "doctor": ("doctor", "command"),
    "complete-words": ("completion", "command"),
    "install": ("wheels", "install_command"),
    "wheels": ("wheels", "wheels_group"),
    "verify": ("verify", "command"),
}


def load(name: str):
    module, attribute = LAZY[name]
    return getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
