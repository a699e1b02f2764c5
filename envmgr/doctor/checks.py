"""doctor's checks: the model (Finding), the registry (`@check("F01", ...)`) and the facts every check reads.

Each check is one small function named after its catalog id (envmgr/catalog.py) that reads
`Facts` and returns a Finding. Facts are gathered once, through the Host only (so a recorded machine
is diagnosed exactly like a live one); checks that need more (a file, a command) read it through
`facts.host` themselves, and the runner (run.py) runs them concurrently.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from envmgr.catalog import FailureId
from envmgr.discover.model import CudaToolkit, Inventory, VsInstance
from envmgr.host.base import LINUX, WINDOWS, Host, Interpreter, host_path, same_path
from envmgr.knowledge import Limits
from envmgr.snapshot.select import Choice
from envmgr.snapshot.selectors import Selectors

_CheckFn = TypeVar("_CheckFn", bound="Callable[[Facts], Finding]")  # a check, its type kept

OK, WARN, FAIL, SKIPPED = "ok", "warn", "fail", "skipped"
SEVERITY = {SKIPPED: 0, OK: 1, WARN: 2, FAIL: 3}


@dataclass(frozen=True)
class Finding:
    id: FailureId
    status: str  # ok | warn | fail | skipped
    summary: str  # one line: what is wrong (or right), or why it was skipped
    evidence: tuple[str, ...] = ()  # the facts used, one per line
    fix: str = ""  # what to do (filled from the catalog when the check has none)
    fix_command: str = ""  # an envmgr (or pip) command that does it, where one exists
    title: str = ""  # from the catalog


def finding(
    id_: FailureId, status: str, summary: str, evidence: Iterable[str] = (), fix: str = "", fix_command: str = ""
) -> Finding:
    return Finding(id_, status, summary, tuple(evidence), fix, fix_command)


def worst(statuses: Iterable[str]) -> str:
    return max(statuses, key=SEVERITY.__getitem__, default=OK)


@dataclass(frozen=True)
class Check:
    id: FailureId
    platforms: tuple[str, ...]
    func: Callable[[Facts], Finding]


CHECKS: dict[FailureId, Check] = {}


def check(id_: FailureId, *platforms: str) -> Callable[[_CheckFn], _CheckFn]:
    """Register `func(facts) -> Finding` as the check for catalog id `id_` (all platforms if none given)."""

    def register(func: _CheckFn) -> _CheckFn:
        CHECKS[id_] = Check(id_, platforms or (WINDOWS, LINUX), func)
        return func

    return register


@dataclass(frozen=True)
class Facts:
    """What the checks share: the host, discovery's inventory, the selection and the limits."""

    host: Host
    inv: Inventory
    limits: Limits
    choice: Choice | None  # None when selection failed
    choice_error: str = ""  # why there is no choice
    selectors: Selectors | None = None
    vs: VsInstance | None = None  # the VS instance envmgr would use (even when no toolset fits)
    cuda: CudaToolkit | None = None  # the CUDA toolkit envmgr would use
    python: Interpreter | None = None  # host.interpreter()
    cmake_version: str | None = None  # from `cmake --version`, when cmake is on PATH
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def env(self) -> Mapping[str, str]:
        return self.host.env

    @property
    def windows(self) -> bool:
        return self.host.platform == WINDOWS

    def kit_at(self, path: str | None) -> CudaToolkit | None:
        """The discovered toolkit that holds `path` (a toolkit root, its bin folder or its nvcc)."""
        if not path:
            return None
        p = host_path(self.host, path.strip().strip('"'))
        for kit in self.inv.cuda:
            root = host_path(self.host, kit.path)
            for cand in (p, *p.parents):
                if same_path(self.host.platform, str(cand), str(root)):
                    return kit
        return None


def cmake_args(env: Mapping[str, str]) -> str:
    return env.get("CMAKE_ARGS", "") or ""


def vs_generator(env: Mapping[str, str]) -> str | None:
    """The generator CMake will use when it is named in the environment (None: CMake's default)."""
    return (env.get("CMAKE_GENERATOR") or "").strip() or None


def uses_vs_generator(env: Mapping[str, str]) -> bool:
    gen = vs_generator(env)
    if gen is None:
        # CMAKE_ARGS may pick it too (-G Ninja / -GNinja)
        m = re.search(r"-G\s*\"?([^\"]+?)\"?(?:\s+-|$)", cmake_args(env))
        gen = m.group(1) if m else None
    return gen is None or gen.lower().startswith("visual studio")


def cuda_label(kit: CudaToolkit | None) -> str:
    return f"CUDA {kit.short} ({kit.path})" if kit is not None else "no CUDA"


def quote(value: str) -> str:
    return f'"{value}"' if any(c in value for c in " ;&()") else value
