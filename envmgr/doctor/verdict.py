"""Machine-aware verdicts (issue 36, part 2): a log's candidates judged against the facts of the machine it came
from. Pure: a `MachineFacts` (doctor/machine.py reads it from a Host: this machine in `run --log` and `install`,
a record in `doctor --log FILE --machine RECORD`) and the scan's matches in, one `Verdict` per match out:

- `confirmed`: the machine shows the same cause (both pieces of evidence are kept);
- `contradicted`: the machine rules it out (the candidate is dropped, with the reason);
- `unjudged`: the machine holds no fact that bears on it (nothing is assumed).

Rules by what the facts are, never by a log's words: a machine with no NVIDIA GPU (macOS; no nvidia-smi and no
toolkit, as on an ARM board or a laptop without one) expects a CPU run, so the "runs on the CPU / CPU-only package
/ CUDA library missing" family (F18, F19, F23) is contradicted there; "no kernel image" (F14) is confirmed or
contradicted by the installed device code against the GPUs; the driver ids (F17) by the driver against the CUDA's
minimum; the ids whose doctor check failed in this run by that check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from envmgr import knowledge
from envmgr.binaries.gpufit import NONE, Fit
from envmgr.buildlog.report import render_matches
from envmgr.catalog import FailureId

CONFIRMED, CONTRADICTED, UNJUDGED = "confirmed", "contradicted", "unjudged"
FAIL = "fail"  # doctor/checks.py's status
THIS = "this machine"
# "it ran on the CPU" / "a CPU-only package" / "a CUDA library did not load"
CPU_FAMILY: tuple[FailureId, ...] = ("F18", "F19", "F23")


@dataclass(frozen=True)
class Check:
    """One doctor check of this run that found something (fail or warn)."""

    id: FailureId
    status: str
    summary: str


@dataclass(frozen=True)
class MachineFacts:
    source: str  # "this machine" or the record's path
    os: str = ""  # sys.platform: linux, darwin, win32; "" unknown
    arch: str = ""  # platform.machine(): x86_64, aarch64, arm64, AMD64; "" unknown
    gpus: tuple[tuple[str, str], ...] = ()  # NVIDIA GPUs: (label, compute capability)
    gpu_probe: str = ""  # how the GPU list was read, in words
    gpu_known: bool = False  # the list can be trusted to be complete (nvidia-smi answered, or absent)
    driver: str = ""  # the NVIDIA driver's version; "" none seen
    toolkits: tuple[str, ...] = ()  # installed CUDA toolkits (X.Y)
    cuda: str = ""  # the toolkit envmgr chose (X.Y); "" none
    msvc: str = ""  # the MSVC toolset envmgr chose (14.44.35207); "" none (Linux)
    windows: bool = False  # the driver minimums differ on Windows
    device: str = ""  # the installed package's device code in words ("" unknown)
    fits: tuple[Fit, ...] = ()  # how each GPU runs it (binaries/gpufit.py)
    checks: tuple[Check, ...] = ()  # doctor's failing/warning checks of this run
    container: str = ""  # the mark of a container (/.dockerenv): the host's GPUs are not seen

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "os": self.os or None,
            "arch": self.arch or None,
            "gpus": [{"name": n, "compute_capability": c} for n, c in self.gpus],
            "gpu_probe": self.gpu_probe,
            "driver": self.driver or None,
            "toolkits": list(self.toolkits),
            "cuda": self.cuda or None,
            "msvc": self.msvc or None,
            "device_code": self.device or None,
            "fits": [f.to_json() for f in self.fits],
            "checks": [{"id": c.id, "status": c.status, "summary": c.summary} for c in self.checks],
            "container": self.container or None,
        }


@dataclass(frozen=True)
class Verdict:
    id: FailureId
    verdict: str  # confirmed | contradicted | unjudged
    log: str  # the log's evidence ("line 12: ...")
    machine: str  # the machine's evidence (confirmed) or reason (contradicted); "" unjudged

    def to_json(self) -> dict[str, str | None]:
        return {"verdict": self.verdict, "log": self.log, "machine": self.machine or None}


def no_nvidia(m: MachineFacts) -> str:
    """Why this machine has no NVIDIA GPU, or "" when it may have one (or nothing is known)."""
    if m.os == "darwin":
        return (
            f"macOS ({m.arch or 'unknown processor'}): NVIDIA's CUDA does not run on macOS "
            "(its last toolkit, 10.2, dropped it)"
        )
    if m.gpus or not m.gpu_known or m.container:
        return ""
    if m.toolkits and m.arch in ("aarch64", "arm64"):
        return ""  # a Jetson board: CUDA without nvidia-smi
    where = f"an {m.arch} machine" if m.arch in ("aarch64", "arm64") else "this machine"
    return f"{where} has no NVIDIA GPU ({m.gpu_probe}{'' if m.toolkits else '; no CUDA toolkit either'})"


# The CPU family's evidence of a RUN (a program that went on with the CPU, a library a program could not load), by
# the scan's signature names (`signatures` in doctor --log --json; facts' decisions as `anchor:<rule>`). A machine
# without an NVIDIA GPU expects those. Evidence of a BUILD (a link without libcuda, a CUDA flag that never reached
# CMake, pip compiling where a CUDA wheel was wanted) is a failure wherever the wheel is built: a CI runner without
# a GPU builds for other machines, so nothing is ruled out there (except on macOS, where no CUDA build exists).
RUN_SIGNATURES = frozenset(
    {
        "zero-layers-offloaded",
        "blas-off",
        "no-device",
        "ggml-init-failed-cpu",
        "so-not-found",
        *(
            f"anchor:{rule}"
            for rule in (
                "cpu-only",
                "no-cuda-device",
                "cpu-fallback-gpu-expected",
                "cpu-run-said-gpu-asked",
                "cuda-init-failed",
                "cpu-backend-only",
                "weights-on-cpu-layers-asked",
                "zero-gpu-layers",
                "gpu-asked-no-layers",
                "run-without-layers",
                "shared-object-missing",
                "no-nvidia-driver",
                "container-without-gpus",
                "cpu-only-wheel",
                "cpu-only-wheel-file",
            )
        ),
    }
)


def _cpu_family(match: Any, m: MachineFacts) -> tuple[str, str] | None:
    why = no_nvidia(m)
    if not why or (m.os != "darwin" and not RUN_SIGNATURES & set(match.signatures)):
        return None
    return CONTRADICTED, f"{why}: a CPU run is expected, not a failure"


def _kernel_image(match: Any, m: MachineFacts) -> tuple[str, str] | None:
    """F14 against the installed package's device code, where the log is about that package (llama.cpp's)."""
    if not m.fits or not _about_llama(match):
        return None
    bad = [f for f in m.fits if f.how == NONE]
    code = f"the installed llama_cpp's device code: {m.device}"
    if bad:
        return CONFIRMED, f"{code}; {bad[0].gpu}: {bad[0].detail}"
    runs = "; ".join(f"{f.gpu}: {f.how} via {f.via}" for f in m.fits)
    return CONTRADICTED, f"{code} runs on every GPU here ({runs})"


def _about_llama(match: Any) -> bool:
    """The log is llama-cpp-python's: buildlog's advice keeps the catalog's (llama-cpp-python's) command for an F14,
    F18 or F19 exactly there (advice None); another runtime, or none named, has an Advice."""
    return match.advice is None


def _driver(match: Any, m: MachineFacts) -> tuple[str, str] | None:
    """F17: the driver against the minimum of the log's CUDA (its details), else of the chosen toolkit."""
    cuda = str(match.details.get("cuda") or "")
    from_log = bool(cuda)
    cuda = cuda or m.cuda
    if not m.driver or not cuda:
        return None
    floor = knowledge.driver_minimum(cuda, m.windows)
    if floor is None:
        return None
    if _older(m.driver, floor):
        return CONFIRMED, f"the driver {m.driver} is older than CUDA {cuda.split('.')[0]}'s minimum {floor}"
    if from_log:
        return CONTRADICTED, f"the driver {m.driver} meets CUDA {cuda.split('.')[0]}'s minimum {floor}"
    return None


def _no_gpu_arch(match: Any, m: MachineFacts) -> tuple[str, str] | None:
    """F12 ('native' architecture without a visible GPU): confirmed where no GPU is visible here."""
    if m.gpu_known and not m.gpus:
        return CONFIRMED, f"no GPU is visible here ({m.gpu_probe})"
    return None


def _no_toolkit(match: Any, m: MachineFacts) -> tuple[str, str] | None:
    """F07/F22 (no nvcc, no toolkit): confirmed where discovery found no toolkit at all."""
    if not m.toolkits:
        return CONFIRMED, "discovery found no CUDA toolkit on this machine"
    return None


RULES: dict[str, Callable[[Any, MachineFacts], tuple[str, str] | None]] = {
    **dict.fromkeys(CPU_FAMILY, _cpu_family),
    "F14": _kernel_image,
    "F17": _driver,
    "F12": _no_gpu_arch,
    "F07": _no_toolkit,
    "F22": _no_toolkit,
}


def judge(matches: Iterable[Any], m: MachineFacts) -> tuple[Verdict, ...]:
    """One verdict per match (buildlog's LogMatch: id, line_no, line, lines, details, advice)."""
    out = []
    for match in matches:
        log = f"line {match.line_no}: {match.line[:200]}"
        ruled = RULES[match.id](match, m) if match.id in RULES else None
        if ruled is None:
            ruled = _by_check(match, m)
        verdict, why = ruled or (UNJUDGED, "")
        out.append(Verdict(match.id, verdict, log, why))
    return tuple(out)


def _by_check(match: Any, m: MachineFacts) -> tuple[str, str] | None:
    """The id's own doctor check failed in this run: the machine shows the cause too (a warning is no proof). Where
    the log names the CUDA or the MSVC it failed with (its details) and they are not the ones doctor checked here, the
    check is about another pair: nothing is confirmed."""
    check = next((c for c in m.checks if c.id == match.id and c.status == FAIL), None)
    if check is None or _other_pair(match.details, m) or not _same_instance(match, check, m):
        return None
    return CONFIRMED, f"doctor's check {match.id} fails here: {check.summary}"


# Ids whose check and log are about a pair of versions (a compiler or a GPU against a CUDA): one id covers opposite
# cases (F13: a new GPU for an old nvcc, or an old GPU a new CUDA dropped), so the log must name the CUDA doctor
# checked here. F24: the component the log misses must be one the check finds missing.
PAIR_IDS: frozenset[FailureId] = frozenset({"F04", "F05", "F13", "F21"})


def _same_instance(match: Any, check: Check, m: MachineFacts) -> bool:
    if match.id in PAIR_IDS:
        return bool(match.details.get("cuda")) and bool(m.cuda)
    if match.id == "F24":
        component = str(match.details.get("component") or "")
        return bool(component) and component.lower() in check.summary.lower()
    return True


def _other_pair(details: dict[str, Any], m: MachineFacts) -> str:
    """Which version the log names differently from the machine's choice ("" where none does)."""
    for key, mine in (("cuda", m.cuda), ("msvc", m.msvc)):
        theirs = str(details.get(key) or "")
        if theirs and mine and theirs.split(".")[:2] != mine.split(".")[:2]:
            return f"the log's {key} {theirs}, this machine's {mine}"
    return ""


def kept(matches: Sequence[Any], verdicts: Sequence[Verdict]) -> tuple[Any, ...]:
    """The matches the machine did not rule out, with the decisive mark moved to the first of them where the
    decisive one was dropped."""
    out = tuple(mt for mt, v in zip(matches, verdicts, strict=True) if v.verdict != CONTRADICTED)
    if out and not any(mt.decisive for mt in out):
        first = out[0]
        out = (
            replace(first, decisive=True, why=f"{first.why}; decisive once this machine ruled out the rest"),
            *out[1:],
        )
    return out


def _older(driver: str, floor: str) -> bool:
    def nums(v: str) -> tuple[int, ...]:
        return tuple(int(x) for x in v.replace("-", ".").split(".")[:3] if x.isdigit())

    return bool(nums(driver)) and nums(driver) < nums(floor)


def render_verdicts(verdicts: Sequence[Verdict], paint: Callable[..., str], source: str = THIS) -> list[str]:
    """The lines a report adds: what the machine confirmed and what it ruled out, each with both evidences."""
    who = "this machine" if source == THIS else f"the machine in {source}"
    out = []
    for v in verdicts:
        if v.verdict == CONFIRMED:
            out.append(f"{paint(f'confirmed by {who}:', 'green', 'bold')} {v.id}: {v.machine}")
        elif v.verdict == CONTRADICTED:
            out.append(f"{paint(f'ruled out by {who}:', 'yellow', 'bold')} {v.id}: {v.machine}")
        else:
            continue
        out.append(f"  {paint('log:', 'dim')} {v.log}")
    return out


def verdicts_json(doc: dict[str, Any], verdicts: Sequence[Verdict], m: MachineFacts) -> dict[str, Any]:
    """A scan's --json (buildlog/report.py scan_json) with a `machine` section per match, the machine's facts
    (`machine_facts`: doctor --json's `machine` is the record's path), and `decisive` as this machine leaves it (null
    when every candidate was ruled out)."""
    by_id = {v.id: v for v in verdicts}
    matches = [{**mt, "machine": by_id[mt["id"]].to_json()} if mt["id"] in by_id else mt for mt in doc["matches"]]
    ruled = [v.id for v in verdicts if v.verdict == CONTRADICTED]
    decisive = doc["decisive"]
    if decisive in ruled:
        decisive = next((mt["id"] for mt in matches if mt["id"] not in ruled), None)
    return {**doc, "decisive": decisive, "matches": matches, "ruled_out": ruled, "machine_facts": m.to_json()}


def report_text(scan: Any, verdicts: Sequence[Verdict], paint: Callable[..., str], source: str = THIS) -> str:
    """doctor --log's text (buildlog/report.py) for the candidates the machine left, then its verdicts."""
    left = kept(scan.matches, verdicts)
    who = "this machine" if source == THIS else f"the machine in {source}"
    head = (
        render_matches(left, paint)
        if left
        else f"no known failure stands: {who} rules out every catalog id the log suggests\n\n"
    )
    lines = render_verdicts(verdicts, paint, source)
    return head + ("\n".join(lines) + "\n" if lines else "")
