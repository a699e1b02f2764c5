"""What the verifier's child said: its stage records (stdout) and llama.cpp's own log (stderr), parsed.

Pure: `parse_run(stdout, stderr, returncode)` -> ChildRun. The regexes follow the log formats named in
facts/failures.md §9 (F14, F17, F18) and llama.cpp's load_tensors/ggml_cuda_init lines.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from envmgr.files.nested import loads_json

TAG = "ENVMGR-VERIFY "
_OFFLOAD = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")
_CUDA_FOUND = re.compile(r"ggml_cuda_init: found (\d+) CUDA devices?[^\n]*")
_CUDA_FAILED = re.compile(r"ggml_cuda_init: failed to initialize CUDA: ([^\n]*)")
_DEVICE = re.compile(r"Device (\d+): ([^\n]+?), compute capability (\d+)\.(\d+)")
_BUFFER = re.compile(r"(CUDA\d+) model buffer size\s*=\s*([\d.]+) MiB")
_ARCHS = re.compile(r"CUDA : ARCHS = ([\d,]+)")
_NO_KERNEL = re.compile(
    r"no kernel image is available for execution on the device|"
    r"the provided PTX was compiled with an unsupported toolchain"
)
_CUDA_ERROR = re.compile(r"CUDA error[^\n]*")
# Windows exceptions a crashing DLL ends python.exe with (NTSTATUS, as an unsigned exit code).
NTSTATUS = {
    0xC0000005: "access violation (0xC0000005)",
    0xC0000135: "a DLL was not found (0xC0000135)",
    0xC000007B: "a DLL of the wrong machine type (0xC000007B)",
    0xC0000409: "stack buffer overrun / abort (0xC0000409)",
    0xC000001D: "illegal instruction (0xC000001D)",
    0xC00000FD: "stack overflow (0xC00000FD)",
    0x80000003: "breakpoint / abort (0x80000003)",
}


@dataclass(frozen=True)
class ChildRun:
    stages: dict[str, Any]  # stage name -> its record (the last one for repeated stages)
    order: tuple[str, ...]  # stage names in the order they were reported
    log: str  # stderr: llama.cpp's own report
    returncode: int
    timed_out: bool = False
    offloaded: tuple[tuple[int, int], ...] = ()
    cuda_found: str = ""  # the `ggml_cuda_init: found N CUDA devices` line
    cuda_init_error: str = ""
    devices: tuple[tuple[int, str, str], ...] = ()  # (index, name, "9.0") from ggml_cuda_init's lines
    buffers: tuple[tuple[str, float], ...] = ()  # ("CUDA0", 1.23)
    archs: tuple[int, ...] = ()  # __CUDA_ARCH_LIST__: 900 for sm_90
    kernel_error: str = ""
    cuda_errors: tuple[str, ...] = field(default=())
    stdout: str = ""  # the raw stage records, for --save-output
    all_records: tuple[dict[str, Any], ...] = ()  # every record in order (a stage repeats: one import a module)

    def records(self, stage: str) -> list[dict[str, Any]]:
        return [r for r in self.all_records if r.get("stage") == stage]

    @property
    def last_stage(self) -> str:
        return self.order[-1] if self.order else ""

    def get(self, stage: str) -> dict[str, Any]:
        return self.stages.get(stage) or {}


def death(returncode: int, timed_out: bool = False) -> str:
    """How the child ended, in words, when it did not end normally ('' when it did)."""
    if timed_out:
        return "did not finish in time and was killed"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name} (signal {-returncode})"
    code = returncode & 0xFFFFFFFF
    if code in NTSTATUS:
        return f"crashed: {NTSTATUS[code]}"
    if code >= 0xC0000000:
        return f"crashed with exception 0x{code:08X}"
    if returncode in (128 + 6, 128 + 11, 128 + 4, 128 + 7):  # a shell reporting a signal
        return f"was killed by {signal.Signals(returncode - 128).name} (exit {returncode})"
    return ""


def parse_run(
    stdout: str,
    stderr: str,
    returncode: int,
    timed_out: bool = False,
    accept: Callable[[dict[str, Any]], bool] | None = None,
) -> ChildRun:
    """`accept`: a record's shape check (verify/anyschema.py); a record it rejects is skipped."""
    stages, order, records = {}, [], []
    for line in stdout.splitlines():
        if not line.startswith(TAG):
            continue
        try:
            rec = loads_json(line[len(TAG) :])
        except ValueError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("stage"), str) and (accept is None or accept(rec)):
            stages[rec["stage"]] = rec
            order.append(rec["stage"])
            records.append(rec)
    info = (stages.get("backend") or {}).get("system_info") or ""
    archs = _ARCHS.search(info) or _ARCHS.search(stderr)
    failed = _CUDA_FAILED.search(stderr)
    kernel = _NO_KERNEL.search(stderr)
    return ChildRun(
        stages=stages,
        order=tuple(order),
        log=stderr,
        returncode=returncode,
        timed_out=timed_out,
        offloaded=tuple((int(a), int(b)) for a, b in _OFFLOAD.findall(stderr)),
        cuda_found=(m.group(0).strip() if (m := _CUDA_FOUND.search(stderr)) else ""),
        cuda_init_error=failed.group(1).strip() if failed else "",
        devices=tuple((int(i), name.strip(), f"{a}.{b}") for i, name, a, b in _DEVICE.findall(stderr)),
        buffers=tuple((n, float(s)) for n, s in _BUFFER.findall(stderr)),
        archs=tuple(int(a) for a in archs.group(1).split(",") if a) if archs else (),
        kernel_error=kernel.group(0) if kernel else "",
        cuda_errors=tuple(dict.fromkeys(m.group(0).strip() for m in _CUDA_ERROR.finditer(stderr)))[:5],
        stdout=stdout,
        all_records=tuple(records),
    )


def log_tail(text: str, lines: int = 8) -> tuple[str, ...]:
    return tuple(line.rstrip() for line in text.strip().splitlines()[-lines:])
