"""Discovery: every probe runs concurrently (a record's one after another); a broken item becomes a
listed problem, never an exception.

Imports the vocabulary, files/ and host/ only; every layer above reads its facts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from envmgr.host.base import WINDOWS, Host

if TYPE_CHECKING:
    from envmgr.discover.model import Inventory, VsInstance


def discover(host: Host, pythons: tuple[str | None, ...] = (None,)) -> Inventory:
    # start-up (issue 33): the probes load when something is discovered, not when a submodule
    # (discover.model, discover.limits) is imported by `CMD --help` or a cache hit
    from envmgr.discover.compilers import discover_compilers
    from envmgr.discover.cuda import discover_cuda
    from envmgr.discover.gpu import discover_gpus
    from envmgr.discover.model import Inventory
    from envmgr.discover.sdk import discover_sdks
    from envmgr.discover.vs import discover_vs

    def windows_side() -> tuple[tuple[VsInstance, ...], tuple[str, ...], tuple[str, ...]]:
        if host.platform != WINDOWS:
            return (), (), ()
        sdks, sdk_problems = discover_sdks(host)
        instances, problems = discover_vs(host, sdks)
        return instances, sdks, tuple(problems) + tuple(sdk_problems)

    jobs: tuple[Callable[[], Any], ...] = (
        windows_side,
        lambda: discover_cuda(host, pythons),
        lambda: discover_gpus(host),
        lambda: discover_compilers(host),
    )
    if getattr(host, "runs_programs", True):
        from concurrent.futures import ThreadPoolExecutor  # lazily: a cached `export` never discovers

        with ThreadPoolExecutor(max_workers=4) as pool:
            futures = [pool.submit(job) for job in jobs]
            results = [f.result() for f in futures]
    else:  # a record answers from memory: nothing to wait for, and threads only took turns (issue 14)
        results = [job() for job in jobs]
    (instances, sdks, problems), cuda, (gpus, gpu_problems), compilers = results

    return Inventory(host.platform, instances, cuda, gpus, compilers, sdks, problems, gpu_problems)
