"""Discovery: every probe runs concurrently; a broken item becomes a listed problem, never an exception."""
from __future__ import annotations

from ..host.base import WINDOWS, Host


def discover(host: Host, pythons: tuple[str | None, ...] = (None,)):
    from concurrent.futures import ThreadPoolExecutor  # lazily: a cached `export` never discovers

    from .compilers import discover_compilers
    from .cuda import discover_cuda
    from .gpu import discover_gpus
    from .sdk import discover_sdks
    from .vs import discover_vs

    def windows_side():
        if host.platform != WINDOWS:
            return (), (), ()
        sdks, sdk_problems = discover_sdks(host)
        instances, problems = discover_vs(host, sdks)
        return instances, sdks, tuple(problems) + tuple(sdk_problems)

    with ThreadPoolExecutor(max_workers=4) as pool:
        vs_f = pool.submit(windows_side)
        cuda_f = pool.submit(discover_cuda, host, pythons)
        gpu_f = pool.submit(discover_gpus, host)
        cc_f = pool.submit(discover_compilers, host)
        instances, sdks, problems = vs_f.result()
        gpus, gpu_problems = gpu_f.result()
        from .model import Inventory

        return Inventory(host.platform, instances, cuda_f.result(), gpus, cc_f.result(), sdks, problems,
                         gpu_problems)
