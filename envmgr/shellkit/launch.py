"""`envmgr shell`: which shell to start and how, with the environment applied and a prompt marker.

Each shell gets an init file in a private temp folder (no profile is ever edited): bash an rcfile
that sources ~/.bashrc first, zsh a ZDOTDIR whose .zshrc sources the user's, fish an
--init-command, PowerShell -NoLogo -NoExit with a dot-sourced script, cmd /k with a .cmd file.
The environment itself is passed to the child directly, and the init file applies it once more
after the user's own rc files (which may reset PATH).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import psutil

from envmgr.errors import UsageError
from envmgr.shellkit import fish, ps1, render, sh, write_script
from envmgr.shellkit.sh import quote
from envmgr.snapshot.envdelta import EnvDelta

SHELLS = ("pwsh", "powershell", "cmd", "bash", "zsh", "fish", "sh")
_LAUNCHERS = {
    "python",
    "python3",
    "envmgr",
    "pipx",
    "py",
    "uv",
    "conhost",
    "windowsterminal",
    "openconsole",
    "sudo",
    "timeout",
    "env",
    "script",
}


@dataclass(frozen=True)
class Session:
    argv: tuple[str, ...]
    env: dict[str, str]
    folder: str


def _name(exe: str) -> str:
    base = os.path.basename(exe).lower()
    for suffix in (".exe",):
        base = base[: -len(suffix)] if base.endswith(suffix) else base
    return base.lstrip("-")


def detect_shell(explicit: str | None, env: Mapping[str, str]) -> str:
    if explicit:
        name = explicit.lower()
        if name not in SHELLS:
            raise UsageError(f"unknown shell {explicit!r}", f"use one of: {', '.join(SHELLS)}")
        return name
    try:
        proc = psutil.Process().parent()
        while proc is not None:
            name = _name(proc.name())
            if name in SHELLS or name == "dash":
                return "sh" if name == "dash" else name
            if name not in _LAUNCHERS and not name.startswith("python"):
                break
            proc = proc.parent()
    except Exception:  # broad on purpose; any psutil trouble just means "use the default"
        pass
    if sys.platform == "win32":
        return "powershell"
    return _name(env.get("SHELL", "/bin/sh")) if _name(env.get("SHELL", "sh")) in SHELLS else "sh"


def build_session(shell: str, delta: EnvDelta, env: Mapping[str, str], marker: str) -> Session:
    """The argv and environment that start `shell` with `delta` (an activation delta) applied."""

    child_env = delta.apply(env)
    folder = tempfile.mkdtemp(prefix="envmgr-shell-")
    prompt = f"(envmgr {marker}) "
    if shell in ("bash", "sh"):
        script = render(delta, "sh")
        rc = Path(folder, "rc.sh")
        user_rc = "[ -f ~/.bashrc ] && . ~/.bashrc" if shell == "bash" else _sh_user_env(child_env.get("ENV"))
        rc.write_text(f'{user_rc}\n{script}\nPS1="{sh.double_quoted_body(prompt)}${{PS1:-\\$ }}"\n', encoding="utf-8")
        argv = ("bash", "--rcfile", str(rc), "-i") if shell == "bash" else ("sh", "-i")
        if shell == "sh":
            child_env["ENV"] = str(rc)
        return Session(argv, child_env, folder)
    if shell == "zsh":
        user_dir = env.get("ZDOTDIR") or env.get("HOME", "~")
        Path(folder, ".zshrc").write_text(
            f'ZDOTDIR="{user_dir}"; [ -f "$ZDOTDIR/.zshrc" ] && . "$ZDOTDIR/.zshrc"\n{render(delta, "sh")}\n'
            f'PROMPT="{sh.double_quoted_body(prompt)}${{PROMPT}}"\n',
            encoding="utf-8",
        )
        child_env["ZDOTDIR"] = folder
        return Session(("zsh", "-i"), child_env, folder)
    if shell == "fish":
        init = Path(folder, "init.fish")
        init.write_text(
            render(delta, "fish") + "\nfunctions -c fish_prompt __envmgr_prompt\n"
            f"function fish_prompt; printf '%s' {fish.quote(prompt)}; __envmgr_prompt; end\n",
            encoding="utf-8",
        )
        return Session(("fish", "--init-command", f"source {fish.quote(str(init))}"), child_env, folder)
    if shell in ("pwsh", "powershell"):
        init = Path(folder, "init.ps1")
        body = render(delta, "ps1") + (
            "\r\n$global:__EnvmgrPrompt = $function:prompt\r\n"
            f"function global:prompt {{ {ps1.quote(prompt)} + (& $global:__EnvmgrPrompt) }}\r\n"
        )
        write_script(init, body, "ps1")
        return Session(
            (shell, "-NoLogo", "-NoExit", "-ExecutionPolicy", "Bypass", "-Command", f". {ps1.quote(str(init))}"),
            child_env,
            folder,
        )
    if shell == "cmd":
        init = Path(folder, "init.cmd")
        prompt_line = f'\r\n@set "PROMPT={prompt.replace("%", "%%")}$P$G"\r\n'
        write_script(init, "@echo off\r\n" + render(delta, "cmd") + prompt_line, "cmd")
        return Session(("cmd.exe", "/d", "/k", str(init)), child_env, folder)
    raise UsageError(f"unknown shell {shell!r}", f"use one of: {', '.join(SHELLS)}")


def _sh_user_env(user_env: str | None) -> str:
    """sh finds our rc through ENV, so the rc first gives ENV back (the user's value, or none: a nested
    `sh -i` must not find our rc, and sourcing "$ENV" here would recurse until dash overflows), then
    sources the user's file once, parameter-expanded as POSIX says sh does with ENV."""
    if user_env is None:
        return "unset ENV"
    return (
        f"ENV={quote(user_env)}; export ENV\n"
        'eval "__envmgr_rc=\\"$ENV\\"" && [ -f "$__envmgr_rc" ] && . "$__envmgr_rc"; unset __envmgr_rc'
    )
