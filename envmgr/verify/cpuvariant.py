"""verify's `cpu` step (issue 37): which ggml CPU variant loaded, for a build that carries several.

A GGML_BACKEND_DL build loads one `ggml-cpu-<variant>` library at run time and says so on stderr:
`load_backend: loaded CPU backend from <path>` (GGML_LOG_INFO in ggml/src/ggml-backend-reg.cpp's
load_backend). Where that line is missing (a quieter log level, an older ggml), the step names the variants
the package carries and the one ggml's own rule takes on this CPU (wheels/cpucode.py's ggml_choice), read
from the target Python; where none of them runs on this CPU, it warns with what the lowest one needs.
A build without variants has no `cpu` step (the prebuilt plan judged its CPU code before install). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from envmgr.verify.analyze import OK, WARN, Step
from envmgr.wheels import cpucode

_LOADED = re.compile(r"load_backend: loaded CPU backend from (\S.*?)\s*$", re.M)


def carried(lib_files: Sequence[str]) -> tuple[str, ...]:
    return cpucode.variants_of(lib_files)


def loaded_variant(log: str) -> tuple[str, str]:
    """(the variant, the log line) ggml says it loaded; ("", "") when the log does not say."""
    found = list(_LOADED.finditer(log))
    if not found:
        return "", ""
    line = found[-1].group(0).strip()
    names = cpucode.variants_of([found[-1].group(1).replace("\\", "/")])
    return (names[0] if names else "the single CPU backend"), line


def cpu_step(log: str, lib_files: Sequence[str], cpu: cpucode.Cpu) -> Step | None:
    variants = carried(lib_files)
    variant, line = loaded_variant(log)
    have = f"carries ggml-cpu variants {' '.join(variants)}" if variants else ""
    if variant:
        return Step("cpu", OK, f"ggml loaded the CPU variant {variant}", tuple(x for x in (line, have) if x))
    if not variants:
        return None
    choice = cpucode.ggml_choice(variants, cpu)
    ev = (have, f"this CPU: {cpu.source}")
    if choice:
        return Step(
            "cpu",
            OK,
            f"this CPU would take ggml-cpu-{choice} by ggml's order (ggml's log did not say which loaded)",
            ev,
        )
    if cpu.flags is None:
        return Step("cpu", OK, f"{have}; this CPU's instruction sets are unknown", ev)
    lowest = cpucode.CpuCode("variants", cpucode.VARIANTS.get(variants[0], ()), True, variants)
    _, why = cpucode.runs(lowest, cpu)
    return Step(
        "cpu",
        WARN,
        f"none of the ggml-cpu variants runs on this CPU: the lowest, {variants[0]}, {why}",
        ev,
        fix="install a build with a variant this CPU supports (x64 or sse42), or build from source here",
    )
