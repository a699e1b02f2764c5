"""GPUs from nvidia-smi's CSV query, with a name -> compute capability table for old drivers."""

from __future__ import annotations

import re

from envmgr.binaries.devicecode import DeviceCode
from envmgr.binaries.gpufit import Fit, fit
from envmgr.discover.model import Gpu
from envmgr.host import process
from envmgr.host.base import WINDOWS, Host
from envmgr.knowledge import cc_from_name

QUERY = "index,name,compute_cap,driver_version,memory.total"
QUERY_OLD = "index,name,driver_version,memory.total"  # drivers before compute_cap existed
SMI_TIMEOUT = 15.0
GPU_SETTING = "ENVMGR_GPU"  # `--gpu` gives it for one run (cli/options.py), as CONDA_OVERRIDE_CUDA does for pixi
_OVERRIDE = re.compile(r"(?:sm_|compute_)?(\d{1,2})(\d)[af]?|(\d{1,2})\.(\d)")


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
        gpus.append(
            Gpu(
                int(index) if index.isdigit() else len(gpus),
                name,
                cc,
                how,
                row.get("driver_version", ""),
                _mib(row.get("memory.total", "")),
            )
        )
    return tuple(gpus)


def smi_path(host: Host) -> str | None:
    found = host.which("nvidia-smi")
    if found or host.platform != WINDOWS:
        return found
    windir = host.env.get("SystemRoot") or "C:\\Windows"
    for candidate in (
        f"{windir}\\System32\\nvidia-smi.exe",
        "C:\\Program Files\\NVIDIA Corporation\\NVSMI\\nvidia-smi.exe",
    ):
        if host.exists(candidate):
            return candidate
    return None


def parse_gpu_override(text: str) -> str | None:
    """The compute capability ("8.9") of an override written sm_89, compute_89, 89, sm_120 or 8.9; None if not one."""
    m = _OVERRIDE.fullmatch(text.strip().lower())
    if m is None:
        return None
    major, minor = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    return f"{int(major)}.{minor}" if int(major) >= 1 else None


def gpu_override() -> tuple[str, str, str] | None:
    """(as written, compute capability, where from: --gpu or ENVMGR_GPU) when one is set (a bad one: cc "")."""
    text = process.setting(GPU_SETTING)
    if not text:
        return None
    return text, parse_gpu_override(text) or "", "--gpu" if process.given(GPU_SETTING) else GPU_SETTING


def discover_gpus(host: Host) -> tuple[tuple[Gpu, ...], tuple[str, ...]]:
    """GPUs and problems; an override (--gpu, ENVMGR_GPU) stands for them, keeping the driver seen."""
    gpus, problems = _detected(host)
    override = gpu_override()
    if override is None:
        return gpus, problems
    text, cc, source = override
    if not cc:
        return gpus, (*problems, f"{source}={text!r} is not a GPU architecture (e.g. sm_89 or 8.9): ignored")
    name = f"sm_{cc.replace('.', '')} (override: {source})"
    driver = next((g.driver_version for g in gpus if g.driver_version), "")
    return (Gpu(0, name, cc, f"override ({source})", driver, None),), problems


def _detected(host: Host) -> tuple[tuple[Gpu, ...], tuple[str, ...]]:
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


# Docker's and Podman's marks in a container's root: a GPU may be on the host and not passed in (`docker run` without
# `--gpus`, catalog F23), so a container without nvidia-smi says nothing of the machine's GPUs.
CONTAINER_MARKS = ("/.dockerenv", "/run/.containerenv")


def container_mark(host: Host) -> str:
    """The mark of a container envmgr runs in ("" where none; Linux only). `envmgr record` asks too, so a record
    made in a container keeps the mark."""
    if host.platform == WINDOWS:
        return ""
    return next((m for m in CONTAINER_MARKS if host.exists(m)), "")


def gpu_fits(code: DeviceCode | None, gpus: tuple[Gpu, ...], windows: bool = False) -> list[Fit]:
    """How each GPU here runs the device code (binaries/gpufit.py); [] without device code or GPUs."""
    if code is None or not (code.cubin or code.ptx):
        return []
    return [
        fit(
            code.cubin,
            code.ptx,
            g.compute_cap or "",
            f"GPU {g.index} {g.name} ({g.compute_cap or '?'})",
            code.ptx_isa,
            g.driver_version,
            windows,
        )
        for g in gpus
    ]
