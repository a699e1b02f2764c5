"""`envmgr init SHELL`: the one profile line (as conda and mise do), and the hook it loads."""
from __future__ import annotations

from pathlib import Path


def shells_dir() -> Path:
    here = Path(__file__).resolve().parent
    installed = here / "_data" / "shells"
    return installed if installed.is_dir() else here.parent / "shells"


def profile_line(shell: str) -> str:
    folder = shells_dir()
    if shell in ("powershell", "pwsh"):
        return f"Import-Module '{str(folder / 'Envmgr.psd1').replace(chr(39), chr(39) * 2)}'"
    if shell == "cmd":
        # cmd has no profile: AutoRun (or a shortcut's `cmd /k`) runs this file, which defines macros.
        return f'call "{folder / "envmgr-init.cmd"}"'
    if shell == "fish":
        return "envmgr init fish --script | source"
    return f'eval "$(envmgr init {shell} --script)"'


def hook_script(shell: str) -> str:
    folder = shells_dir()
    if shell in ("bash", "zsh"):
        body = (folder / "envmgr.sh").read_text(encoding="utf-8")
        return body + f'eval "$(_ENVMGR_COMPLETE={shell}_source command envmgr)"\n'
    if shell == "fish":
        body = (folder / "envmgr.fish").read_text(encoding="utf-8")
        return body + "_ENVMGR_COMPLETE=fish_source command envmgr | source\n"
    if shell in ("powershell", "pwsh"):
        return profile_line(shell)
    return (folder / "envmgr-init.cmd").read_text(encoding="utf-8")
