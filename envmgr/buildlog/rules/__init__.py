"""The rules that decide catalog ids from a log's facts: one module per family, each with its fact patterns
(`FACTS`), its decision function(s) and the ids it can give (`IDS`), and one ordered registry, `REGISTRY`, whose
order is the order of decision (compare ruff's rule table and thefuck's rules/<name>.py with a priority).

How the registry decides (`decide`):
- Each entry runs in turn and names ids through `add`; an id is named once, by the first entry that names it (so an
  entry above another wins for an id both can give), and not where a later line of the log contradicts it
  (outcome.contradicted).
- An entry runs only where none of the ids in its `yields_to` was named by the entries above it (ANY: where nothing
  was named), and not where its `unless` says so of the facts. These two are the only ways one family keeps another
  from deciding: no family returns early over another's rules.
- A log that stops on a failure of its own kind outside the catalog (the fact `outside_stop`) decides nothing: the
  facts are then what it mentions on the way.
- The decisions come out in the order of their lines (ties: the registry's order).

The signatures (a tool's own sentence for an id) are the families' too: `SIGNATURES` is every family's, in catalog-id
order (an id's own in its family's order), the table the scan reads first; the facts decide only where no signature
matched. `PRECEDENCE` says which matched id explains which (the decisive one), `NEAR_WORDS` which words point at an
id that did not match.

The families: compiler (F03 F04 F05 F06 F21), toolkit (F01 F02 F08 F12 F13 F22; its search F07 F08 F22 F23 F24),
wheels (F18 F19), runtime (F14 F17 F18 F23), ggml (F18), loader (F15 F16 F23), environment (F09 F10 F11 F20), memory
(F25), and the weak ones after them: runtime's fallback (F18), ggml's weak (F18), clock (F20), wheels' weak (F19).
common.py holds the facts several families read; outcome.py how the log ends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from envmgr.buildlog.rules import (
    clock,
    common,
    compiler,
    environment,
    ggml,
    loader,
    memory,
    runtime,
    toolkit,
    wheels,
)
from envmgr.buildlog.rules.base import Add, Decision, Fact, FactRx, Facts
from envmgr.buildlog.rules.outcome import contradicted
from envmgr.buildlog.signatures import Signature
from envmgr.catalog import FailureId, ids


@dataclass(frozen=True)
class Rules:
    family: str  # the module, and which of its functions
    decide: Callable[[Facts, Add], None]
    ids: tuple[FailureId, ...]  # the ids it can give
    yields_to: frozenset[FailureId] = frozenset()  # runs only where none of these was named above it
    unless: Callable[[Facts], bool] | None = None  # ... and not where this is True of the facts


ANY: frozenset[FailureId] = frozenset(ids())  # yields to every id: runs only where nothing was named


def _cpu_explained_otherwise(fs: Facts) -> bool:
    """The log says there is no GPU, or a library outside the catalog (cuDNN's, TensorRT's) failed to load: the
    runtime's words that it went on with the CPU are then no F18."""
    return runtime.no_gpu_said(fs) or loader.separate_failed(fs)


REGISTRY: tuple[Rules, ...] = (
    Rules("compiler", compiler.decide, compiler.IDS),
    Rules("toolkit", toolkit.decide, toolkit.IDS),
    # a wrong toolkit prefix (WSL's Windows toolkit, an empty prefix, a .cu run by the shell) explains the missing
    # nvcc, headers and libraries the search would name
    Rules("toolkit.search", toolkit.search, toolkit.SEARCH_IDS, unless=toolkit.prefix_wrong),
    Rules("wheels", wheels.decide, wheels.IDS),
    Rules("runtime", runtime.decide, runtime.IDS),
    Rules("ggml", ggml.decide, ggml.IDS),
    Rules("loader", loader.decide, loader.IDS),
    Rules("environment", environment.decide, environment.IDS),
    Rules("memory", memory.decide, memory.IDS),
    # a runtime's word that it went on with the CPU: not where a named cause explains the CPU run, nor where the log
    # says there is no GPU (a CPU-only machine prints the same words)
    Rules(
        "runtime.fallback",
        runtime.fallback,
        runtime.FALLBACK_IDS,
        yields_to=runtime.EXPLAIN_CPU,
        unless=_cpu_explained_otherwise,
    ),
    # weak: only where the log names no cause at all, in this order
    Rules("ggml.weak", ggml.weak, ggml.WEAK_IDS, yields_to=ANY),
    Rules("clock", clock.decide, clock.IDS, yields_to=ANY),
    Rules("wheels.weak", wheels.weak, wheels.WEAK_IDS, yields_to=ANY),
)

# Every fact pattern the scanner looks for (facts.FactScanner): each kind once, kept by the family that reads it.
FACTS: tuple[FactRx, ...] = (
    *common.FACTS,
    *compiler.FACTS,
    *toolkit.FACTS,
    *wheels.FACTS,
    *runtime.FACTS,
    *ggml.FACTS,
    *loader.FACTS,
    *environment.FACTS,
    *memory.FACTS,
    *clock.FACTS,
)


# Every signature, by catalog id; an id's own signatures in the order their family lists them (the scan tries them
# in this order: where two of one id match on one line, the first names the signature).
SIGNATURES: tuple[Signature, ...] = tuple(
    sorted(
        (
            *compiler.SIGNATURES,
            *toolkit.SIGNATURES,
            *wheels.SIGNATURES,
            *runtime.SIGNATURES,
            *ggml.SIGNATURES,
            *loader.SIGNATURES,
            *environment.SIGNATURES,
            *memory.SIGNATURES,
            *clock.SIGNATURES,
        ),
        key=lambda s: s.id,
    )
)

# Words that point at an id although no signature matched: the near misses of a log we do not know.
NEAR_WORDS: tuple[tuple[FailureId, tuple[str, ...]], ...] = (
    ("F01", ("CUDA toolset", "BuildCustomizations")),
    ("F03", ("NMake", "build program")),
    ("F04", ("host_config.h",)),
    ("F05", ("STL1002",)),
    ("F06", ("cl.exe", "-ccbin")),
    ("F07", ("CMAKE_CUDA_COMPILER",)),
    ("F08", ("mismatches the version", "does not match the version")),
    ("F09", ("deprecated", "Manually-specified")),
    ("F10", ("CMAKE_ARGS",)),
    ("F11", ("too long", "CMAKE_OBJECT_PATH_MAX")),
    ("F12", ("native",)),
    ("F13", ("Unsupported gpu", "Unsupported GPU", "gpu architecture")),
    ("F14", ("kernel image",)),
    ("F15", ("WinError",)),
    ("F17", ("is insufficient",)),
    ("F18", ("offloaded 0/", "CUDA-capable")),
    ("F19", ("Building from source",)),
    ("F20", ("still running", "time limit")),
    ("F21", ("unsupported",)),
    ("F22", ("CUDA_HOME", "/usr/bin/nvcc")),
    ("F23", ("libcuda",)),
    ("F24", ("cublas", "CUDA::")),
    ("F25", ("Killed", "signal 9", "heap space")),
)

# (winner, loser, why): when both ids match, the first names the cause of the second.
PRECEDENCE: tuple[tuple[FailureId, FailureId, str], ...] = (
    ("F12", "F13", "'native' with no GPU visible leaves nvcc an architecture it may not know"),
    ("F12", "F14", "with no GPU visible at build time the build guessed its architectures, and missed this GPU's"),
    ("F02", "F13", "the targets of one CUDA passed their architecture list to another CUDA's nvcc"),
    ("F24", "F07", "the toolkit was found; it lacks the component the build needs"),
    ("F24", "F12", "a missing component stops the build whatever the architecture"),
    ("F09", "F07", "an old flag name often leaves CUDA half-configured"),
    ("F03", "F07", "with no usable Visual Studio CMake enables no language"),
    ("F04", "F06", "host_config.h refused the compiler nvcc found"),
    ("F22", "F13", "the distribution's old nvcc in /usr/bin ran, not the toolkit that knows this architecture"),
    ("F08", "F13", "the nvcc that ran is another CUDA than the one the build was set up for"),
    ("F22", "F24", "the toolkit's folder was not set: its headers and libraries were looked for elsewhere"),
)


# the loader's failure lines for a native library (a shared object or DLL that did not load)
_NATIVE_FAILED = ("cuda_so", "mod_missing", "dll_dep")


def _stops(fs: Facts) -> bool:
    """The log stops on a failure outside the catalog (`outside_stop`): not a Python module missing within a few lines
    after a native library failed to load, which is the import falling back and naming its module (sgl_kernel's
    "No module named 'common_ops'" after "libnvrtc.so.12: cannot open shared object file")."""
    stop = fs.first("outside_stop")
    if stop is None:
        return False
    if "No module named" not in stop.line:
        return True
    return not any(
        stop.line_no - 12 <= f.line_no < stop.line_no for kind in _NATIVE_FAILED for f in fs.facts.get(kind, ())
    )


def decide(fs: Facts) -> list[Decision]:
    """Catalog ids from the facts found together, first line first, by the registry's order (above)."""
    if _stops(fs):
        return []
    out: dict[FailureId, Decision] = {}

    def add(fid: FailureId, rule: str, fact: Fact | None, **details: object) -> None:
        if fact is not None and fid not in out and contradicted(fs, fid, rule, fact, details) is None:
            out[fid] = Decision(fid, rule, fact, {k: v for k, v in details.items() if v})

    for rules in REGISTRY:
        if out.keys() & rules.yields_to or (rules.unless is not None and rules.unless(fs)):
            continue
        rules.decide(fs, add)
    return sorted(out.values(), key=lambda d: d.fact.line_no)
