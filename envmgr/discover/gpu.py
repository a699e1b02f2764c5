"""GPUs from nvidia-smi's CSV query, with a name -> compute capability table for old drivers."""
from __future__ import annotations

import re

from envmgr.discover.model import Gpu
from envmgr.host.base import WINDOWS, Host
from envmgr.knowledge import cc_from_name

QUERY = "index,name,compute_cap,driver_version,memory.total"
QUERY_OLD = "index,name,driver_version,memory.total"   # drivers before compute_cap existed
SMI_TIMEOUT = 15.0


def _mib(text: str) -> int | None:
    m = re.match(r"\s*(\d+)\s*MiB", text)
    return int(m.group(1)) if m else None


def _is_gpu_row(row: dict[str, str]) -> bool:
    """An error line (`Field "compute_cap" is not a valid field to query.`) or a line of the default
    table has no comma, so it fits a one-field query; a real row has an index, a name or a CC."""
    index = row.get("index")
    if index is not None and not index.isdigit():
        return False
    return bool(index or row.get("name") or re.fullmatch(r"\d+\.\d+", row.get("compute_cap", "")))


def parse_query_csv(text: str, fields: tuple[str, ...]) -> tuple[Gpu, ...]:
    """`--format=csv,noheader` (or with a header, which is skipped). Names never contain commas."""
    gpus: list[Gpu] = []
    for raw in text.replace("\r", "").splitlines():
        line = raw.strip()
        if not line or line.startswith("$") or line.replace(" ", "").startswith(fields[0]):
            continue
        cols = [c.strip() for c in line.split(",")]
        if len(cols) != len(fields):
            continue
        row = dict(zip(fields, cols, strict=True))
        if not _is_gpu_row(row):
            continue
        name = row.get("name", "")
        cc = row.get("compute_cap")
        how = "nvidia-smi"
        if not cc or not re.fullmatch(r"\d+\.\d+", cc):
            cc, how = cc_from_name(name), "name table"
            if cc is None:
                how = "unknown"
        index = row.get("index", str(len(gpus)))
        gpus.append(Gpu(int(index) if index.isdigit() else len(gpus), name, cc, how,
                        row.get("driver_version", ""), _mib(row.get("memory.total", ""))))
    return tuple(gpus)


def smi_path(host: Host) -> str | None:
    found = host.which("nvidia-smi")
    if found or host.platform != WINDOWS:
        return found
    windir = host.env.get("SystemRoot") or "C:\\Windows"
    for candidate in (f"{windir}\\System32\\nvidia-smi.exe",
                      "C:\\Program Files\\NVIDIA Corporation\\NVSMI\\nvidia-smi.exe"):
        if host.exists(candidate):
            return candidate
    return None


def discover_gpus(host: Host) -> tuple[tuple[Gpu, ...], tuple[str, ...]]:
    """GPUs and problems; no nvidia-smi or no GPU is an empty answer, not an error."""
    smi = smi_path(host)
    if smi is None:
        return (), ()
    done = host.run([smi, f"--query-gpu={QUERY}", "--format=csv,noheader"], timeout=SMI_TIMEOUT)
    if done.ok:
        return parse_query_csv(done.stdout, tuple(QUERY.split(","))), ()
    if "not a valid field" in (done.stdout + done.stderr):
        old = host.run([smi, f"--query-gpu={QUERY_OLD}", "--format=csv,noheader"], timeout=SMI_TIMEOUT)
        if old.ok:
            return parse_query_csv(old.stdout, tuple(QUERY_OLD.split(","))), ()
        done = old
    text = (done.stdout + done.stderr).strip()
    if "No devices were found" in text:
        return (), ()
    return (), (f"nvidia-smi failed: {done.describe_failure()}",)
