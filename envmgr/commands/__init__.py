"""Commands that live in their own modules; each module defines a click command named `command`.

Imports inside each command function stay lazy so `envmgr --help` stays instant.
"""
from __future__ import annotations

import importlib

MODULES = ("session", "fix_msbuild", "doctor", "completion", "wheels")


def register(group) -> None:
    for name in MODULES:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name}":  # not written yet on this branch
                continue
            raise
        for command in getattr(module, "commands", None) or (module.command,):
            group.add_command(command)
