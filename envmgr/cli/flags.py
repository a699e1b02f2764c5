"""Checks on flag values that click's types cannot express: each bad value is exit 2 with one line
naming the flag, the value and what it should be, before anything slow runs."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from envmgr.errors import InputFileError, UsageError
from envmgr.host.base import Host

# 86, 8.6, 90a, 100f, 120, 86-real, 90-virtual: what CMAKE_CUDA_ARCHITECTURES (after 8.6 -> 86) and
# TORCH_CUDA_ARCH_LIST take for one GPU generation.
_ARCH = re.compile(r"^(\d{1,2}\.\d|\d{2,3})[af]?(-real|-virtual)?$")


def check_arch_list(value: str) -> None:
    entries = [a.strip() for a in value.replace(",", ";").split(";")]
    bad = [a for a in entries if not _ARCH.match(a)]
    if not value.strip() or bad:
        shown = f"{bad[0]!r} is not" if value.strip() else "an empty list is not"
        raise UsageError(
            f"--cuda-arch {value!r}: {shown} a CUDA architecture",
            "give compute capabilities separated by ';' or ',', e.g. --cuda-arch '86;89' or '8.6,8.9'",
        )


def check_recipe_flags(
    recipe: str | None, arch_list: str | None, allow_unsupported: bool, recipe_params: Sequence[str]
) -> None:
    if recipe is not None and not recipe.strip():
        raise UsageError("--recipe needs a name", "see `envmgr recipes` for the names")
    if recipe is None:
        given = [
            f
            for f, v in (
                ("--cuda-arch", arch_list),
                ("--recipe-param", recipe_params),
                ("--allow-unsupported-compiler", allow_unsupported),
            )
            if v
        ]
        if given:
            raise UsageError(
                f"{given[0]} only applies with --recipe",
                f"add --recipe NAME (see `envmgr recipes`), or drop {given[0]}",
            )
    if arch_list is not None:
        check_arch_list(arch_list)


def check_selector_flags(from_file: str | None, strict: bool) -> None:
    if from_file is not None and not from_file.strip():
        raise UsageError("--from needs a file name", "give the path of a snapshot (envmgr export > FILE)")
    if strict and from_file is None:
        raise UsageError("--strict only applies with --from", "add --from FILE, or drop --strict")


def check_pythons(host: Host, pythons: Sequence[str], flag: str = "--python") -> None:
    """Every --python (or --pip-cuda-python) must be a Python envmgr can run (on the machine described,
    for --machine)."""
    for python in pythons:
        if not python.strip():
            raise UsageError(f"{flag} needs a path", f"give a Python executable, e.g. {flag} .venv/bin/python")
        if host.interpreter(python) is None:
            why = (
                "no such file" if not host.exists(python) and host.which(python) is None else "it did not run as Python"
            )
            raise UsageError(
                f"{flag} {python}: not a Python envmgr can run ({why})",
                f"give a Python executable, e.g. {flag} .venv/bin/python or C:\\Python312\\python.exe",
            )


def check_output_file(path: str, flag: str) -> None:
    if not path.strip():
        raise UsageError(f"{flag} needs a file name", f"e.g. {flag} machine.toml")
    if os.path.isdir(path):
        raise InputFileError(
            f"{flag} {path}: is a folder", f"give a file name, e.g. {flag} {os.path.join(path, 'machine.toml')}"
        )


def check_wine_prefix(prefix: str) -> None:
    """Only an existing prefix: Wine would otherwise create a new one (hundreds of MB) at a mistyped path."""
    if not prefix.strip():
        raise UsageError("--wine-prefix needs a folder", "give a Wine prefix, e.g. --wine-prefix ~/.wine")
    full = os.path.abspath(os.path.expanduser(prefix))
    if not os.path.exists(full):
        raise InputFileError(
            f"--wine-prefix {prefix}: no such folder",
            "check the path; to make a new prefix there: WINEPREFIX=DIR wineboot -i",
        )
    if not os.path.isdir(full):
        raise InputFileError(f"--wine-prefix {prefix}: not a folder", "give the prefix folder (it holds system.reg)")
    # A prefix that a running wineserver has just created may not have written system.reg yet (Wine
    # flushes the registry lazily; seen in the Wine tests): drive_c marks a prefix as well.
    if not any(os.path.exists(os.path.join(full, name)) for name in ("system.reg", "drive_c")):
        raise InputFileError(
            f"--wine-prefix {prefix}: not a Wine prefix (no system.reg)",
            "check the path; to make a new prefix there: WINEPREFIX=DIR wineboot -i",
        )
