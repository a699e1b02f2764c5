"""`envmgr init SHELL`: the one profile line (as conda and mise do), and the hook it loads.

The line sources a static file shipped in the package (functions and completion written out), so a
new shell pays no Python start; envmgr runs only when a function is called or Tab is pressed."""

from __future__ import annotations

from pathlib import Path

from envmgr.host import dirs
from envmgr.shellkit import fish, ps1, sh


def shells_dir() -> Path:
    return dirs.shipped("shells")


def profile_line(shell: str) -> str:
    folder = shells_dir()
    if shell in ("powershell", "pwsh"):
        return f"Import-Module {ps1.quote(str(folder / 'Envmgr.psd1'))}"
    if shell == "cmd":
        # cmd has no profile: AutoRun (or a shortcut's `cmd /k`) runs this file, which defines macros.
        return f'call "{folder / "envmgr-init.cmd"}"'
    if shell == "fish":
        return f"source {fish.quote(str(folder / 'envmgr.fish'))}"
    return f". {sh.quote(str(folder / 'envmgr.sh'))}"


def hook_script(shell: str) -> str:
    folder = shells_dir()
    if shell in ("bash", "zsh"):
        return (folder / "envmgr.sh").read_text(encoding="utf-8")
    if shell == "fish":
        return (folder / "envmgr.fish").read_text(encoding="utf-8")
    if shell in ("powershell", "pwsh"):
        return profile_line(shell)
    return (folder / "envmgr-init.cmd").read_text(encoding="utf-8")
