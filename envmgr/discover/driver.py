"""The CUDA version the NVIDIA driver runs: the "CUDA Version: 12.9" of nvidia-smi's plain table.

The CSV query has no field for it, so the table's header is read; a driver too old to print it, or
no nvidia-smi, gives "" and callers fall back to the driver version against knowledge.py's table.
"""

from __future__ import annotations

import re

from envmgr.discover.gpu import SMI_TIMEOUT, smi_path
from envmgr.host.base import Host

_CUDA = re.compile(r"CUDA Version\s*:\s*(\d+\.\d+)")


def parse_driver_cuda(text: str) -> str:
    """ "12.9" from nvidia-smi's header line; "" when the text has none."""
    m = _CUDA.search(text[:65536])
    return m.group(1) if m else ""


def driver_cuda(host: Host) -> str:
    smi = smi_path(host)
    if smi is None:
        return ""
    done = host.run([smi], timeout=SMI_TIMEOUT)
    return parse_driver_cuda(done.stdout) if done.ok else ""
