"""A host seen with another environment: the same machine, files and programs, but `env` (what the loader
models read: PATH, CUDA_PATH) and the environment a child starts with are the given one.

`envmgr verify` and the install flow's DLL closure judge a *plain* new process of the target Python (the
environment envmgr was started in, less an active envmgr environment: verify/plain.py); this is how they
ask the one host for it without a second Host class being chosen anywhere but the command line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from envmgr.host.base import Completed, Host


class _EnvView:
    def __init__(self, inner: Host, env: Mapping[str, str]) -> None:
        self.inner = inner
        self.platform = inner.platform
        self._env = dict(env)

    @property
    def env(self) -> Mapping[str, str]:
        return self._env

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        encoding: str | None = "utf-8",
    ) -> Completed:
        return self.inner.run(argv, timeout=timeout, env=self._env if env is None else env, encoding=encoding)

    def __getattr__(self, name: str) -> Any:
        """Everything else (files, registry, which, interpreter, the capabilities) is the inner host's."""
        return getattr(self.inner, name)


def with_env(host: Host, env: Mapping[str, str]) -> Host:
    """`host` whose env is `env`, and whose children start with it unless given another."""
    return cast(Host, _EnvView(host, env))  # a Host by delegation: mypy does not count __getattr__ toward it
