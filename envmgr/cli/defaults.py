"""Where each default comes from: a flag, then the environment (ENVMGR_CUDA...), then the project's
envmgr.toml, then its pyproject.toml [tool.envmgr] (files/project.py), then envmgr's built-in choice.
`layered` is pure; `project_settings` reads the working folder once per command line."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import click

from envmgr.discover.gpu import GPU_SETTING, gpu_override, parse_gpu_override
from envmgr.errors import UsageError
from envmgr.files.project import KEYS, ProjectFile, find_project
from envmgr.host import process

ENV_NAMES = {key: f"ENVMGR_{key.upper()}" for key in KEYS}
BUILT_IN = {
    "cuda": "the newest toolkit found",
    "vs": "the newest instance that works with the CUDA chosen",
    "toolset": "the newest MSVC toolset nvcc accepts",
    "recipe": "none",
    "python": "the command's own choice (see its --python)",
}
FLAG, ENVIRONMENT, DEFAULT = "flag", "environment", "built-in default"


@dataclass(frozen=True)
class Setting:
    key: str
    value: str | None  # None: envmgr's built-in choice (BUILT_IN says which)
    source: str  # flag | environment | envmgr.toml | pyproject.toml | built-in default
    where: str = ""  # the flag, the variable or the file's path

    def to_json(self) -> dict[str, str | None]:
        return {"key": self.key, "value": self.value, "source": self.source, "where": self.where or None}


def layered(
    flags: Mapping[str, str | None], env: Mapping[str, str], files: tuple[ProjectFile, ...]
) -> tuple[Setting, ...]:
    """Each key's value and its source: flag > environment > envmgr.toml > pyproject.toml > built-in."""
    out = []
    for key in KEYS:
        if flags.get(key):
            out.append(Setting(key, flags[key], FLAG, f"--{key}"))
        elif env.get(ENV_NAMES[key], "").strip():
            out.append(Setting(key, env[ENV_NAMES[key]].strip(), ENVIRONMENT, ENV_NAMES[key]))
        else:
            found = next((f for f in files if f.get(key) is not None), None)
            out.append(
                Setting(key, found.get(key), found.kind, found.path)
                if found is not None
                else Setting(key, None, DEFAULT, BUILT_IN[key])
            )
    return tuple(out)


def project_files(ctx: click.Context) -> tuple[ProjectFile, ...]:
    """The working folder's project files, read once per command line (a bad one: exit 2, one line)."""
    meta = ctx.find_root().meta
    if "envmgr.project" not in meta:
        meta["envmgr.project"] = find_project(os.getcwd())
    files: tuple[ProjectFile, ...] = meta["envmgr.project"]
    return files


def project_setting(ctx: click.Context, key: str) -> Setting:
    """The value for `key` a command takes when its flag was not given (environment, then the project)."""
    env = ctx.find_root().obj.env if ctx.find_root().obj is not None else {}
    return layered({}, env, project_files(ctx))[KEYS.index(key)]


def project_default(ctx: click.Context, key: str) -> str | None:
    return project_setting(ctx, key).value


def gpu_setting() -> Setting:
    """The GPU override as `envmgr config` shows it (None: the GPUs nvidia-smi sees)."""
    override = gpu_override()
    if override is None:
        return Setting("gpu", None, DEFAULT, "the GPUs nvidia-smi sees")
    text, _, source = override
    return Setting("gpu", text, FLAG if source == "--gpu" else ENVIRONMENT, source)


def take_gpu(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    """--gpu's callback: checked (flag or ENVMGR_GPU; exit 2, one line), then given for this command only."""
    if value is not None:
        if parse_gpu_override(value) is None:
            raise UsageError(f"--gpu {value!r} is not a GPU architecture", "e.g. --gpu sm_89 (or 8.9, 89, sm_120)")
        process.give(GPU_SETTING, value)
        ctx.call_on_close(lambda: process.forget(GPU_SETTING))
        return
    text = process.setting(GPU_SETTING) or ""
    if text.strip() and parse_gpu_override(text) is None:
        raise UsageError(
            f"{GPU_SETTING}={text!r} is not a GPU architecture",
            f"set {GPU_SETTING}=sm_89 (or 8.9, 89, sm_120), or unset it",
        )


def gpu_option(func: click.decorators.FC) -> click.decorators.FC:
    """--gpu ARCH: stand for the GPUs nvidia-smi sees (a docker build, a CI runner); also ENVMGR_GPU."""
    return click.option(
        "--gpu",
        metavar="ARCH",
        expose_value=False,
        callback=take_gpu,
        is_eager=True,
        help=f"Build for this GPU instead of the ones nvidia-smi sees, e.g. sm_89 "
        f"(also {GPU_SETTING}); reported as an override.",
    )(func)
