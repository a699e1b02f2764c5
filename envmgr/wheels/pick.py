"""Which published CUDA wheel this machine can run: pure, from the wheels' names, their index folders'
CUDA, their device code, and the machine's driver, GPUs and target Python.

A wheel is refused, with its reason, when
- its name is not a wheel of the package, or its version is not the pinned one;
- none of its tags is one the target Python accepts (`py3-none-win_amd64` fits every CPython 3 on
  64-bit Windows, `cp312-cp312-manylinux_2_31_x86_64` only 3.12 on Linux);
- its folder's CUDA is one the driver cannot run: newer than the driver's CUDA (nvidia-smi's "CUDA
  Version") in another major, or below the driver table's minimum for that major (knowledge.py); a
  newer minor of the driver's major runs through minor-version compatibility, but its PTX cannot be
  JIT-compiled by that driver;
- its device code does not cover every GPU: a cubin for the GPU's SM (native), else PTX of a compute
  capability <= the GPU's ("through PTX JIT": the first load compiles), else nothing runs there
  (binaries/gpufit.py's rules, with its PTX ISA floor for the driver).
The order: native before PTX, then the newest version the spec allows, then the newest CUDA. Reading
device code needs the wheel itself (a download), so the candidates are examined in that order and the
first native one ends the search; the rest are "not examined", said so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Protocol

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version as PkgVersion

from envmgr import knowledge
from envmgr.binaries import gpufit
from envmgr.version import Version, mm
from envmgr.wheels import cpucode
from envmgr.wheels.url import IndexUrl

NATIVE, PTX_JIT = gpufit.NATIVE, gpufit.PTX_JIT
CHOSEN, REFUSED, FITS, NOT_EXAMINED = "chosen", "refused", "fits", "not examined"
MAX_EXAMINED = 8  # wheels downloaded to read their device code, per plan
_CU_FOLDER = re.compile(r"(?:^|[/-])cu(\d{2,3})(?:/|$)")


class Code(Protocol):
    """What a pick reads of a wheel: binaries/devicecode.py's DeviceCode (its cubins, PTX, CUDA imports)."""

    @property
    def cubin(self) -> tuple[str, ...]: ...
    @property
    def ptx(self) -> tuple[str, ...]: ...
    @property
    def cuda_imports(self) -> tuple[str, ...]: ...


class Unusable(Exception):
    """A candidate whose wheel could not be read (404, hash, truncated zip): the message is the reason."""


@dataclass(frozen=True)
class Machine:
    gpus: tuple[tuple[str, str], ...]  # (name, compute capability "8.9"), one per GPU
    driver: str = ""  # "576.80"; "" when no driver answered
    driver_cuda: str = ""  # the driver's CUDA version (nvidia-smi's header), "" unknown
    windows: bool = False
    tags: tuple[str, ...] = ()  # every tag the target Python accepts ("cp312-cp312-win_amd64")
    python: str = ""  # in words: "cp312 on win_amd64"
    cpu: cpucode.Cpu = cpucode.UNKNOWN  # its instruction sets (from the target Python, or the record)


@dataclass(frozen=True)
class Candidate:
    url: IndexUrl | str  # an IndexUrl from the readers: printed and serialised without its secret
    filename: str
    index: IndexUrl | str  # the index (folder) it was listed in
    cuda: str = ""  # "12.4" (the folder's cuXYZ, or the release tag's); "" unknown
    hashes: tuple[tuple[str, str], ...] = ()  # every hash its link states (wheels/pages.py)
    problem: str = ""  # why its link cannot be trusted (a malformed or unknown hash): refused

    @property
    def sha256(self) -> str | None:
        return dict(self.hashes).get("sha256")


ReadCode = Callable[[Candidate], Code]  # a candidate's device code, or Unusable
ReadCpu = Callable[[Candidate], cpucode.CpuCode]  # after ReadCode: the CPU code of the same wheel, or Unusable


@dataclass(frozen=True)
class Judged:
    cand: Candidate
    verdict: str  # chosen | refused | fits | not examined
    reason: str
    version: str = ""
    how: str = ""  # native | ptx-jit (examined and fitting)
    via: str = ""  # "sm_89", "compute_80"
    code: str = ""  # the device code in words ("cubin sm_75 sm_90; PTX compute_90")
    cpu: cpucode.CpuCode | None = None  # what its CPU code requires (examined wheels)

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.cand.filename,
            "url": str(self.cand.url),
            "index": str(self.cand.index),
            "cuda": self.cand.cuda or None,
            "version": self.version or None,
            "verdict": self.verdict,
            "reason": self.reason,
            "runs": self.how or None,
            "via": self.via or None,
            "device_code": self.code or None,
            "cpu_code": self.cpu.to_json() if self.cpu else None,
        }


@dataclass(frozen=True)
class Plan:
    judged: tuple[Judged, ...]
    machine: Machine

    @property
    def chosen(self) -> Judged | None:
        return next((j for j in self.judged if j.verdict == CHOSEN), None)


def cuda_of_url(url: str) -> str:
    """ "12.4" from an index folder `…/whl/cu124` or a release tag `…/v0.3.16-cu124/`; "" otherwise."""
    m = _CU_FOLDER.search(url.rstrip("/") + "/")
    return f"{m.group(1)[:-1]}.{m.group(1)[-1]}" if m else ""


# ---- the driver ---------------------------------------------------------------------------------


def driver_runs(cuda: str, m: Machine) -> tuple[bool, bool, str]:
    """(runs, PTX JIT possible, why) for a wheel built with `cuda` on this driver."""
    if not m.driver and not m.driver_cuda:
        return False, False, "no NVIDIA driver answered (nvidia-smi): nothing proves a CUDA wheel runs here"
    want = mm(cuda)
    if m.driver_cuda:
        have = mm(m.driver_cuda)
        if want <= have:
            return True, True, f"the driver runs CUDA <= {m.driver_cuda}"
        if want.major == have.major:
            return (
                True,
                False,
                (
                    f"CUDA {cuda} through minor-version compatibility (the driver's CUDA is "
                    f"{m.driver_cuda}: its PTX cannot be JIT-compiled here)"
                ),
            )
        return (
            False,
            False,
            (f"CUDA {cuda} needs a newer driver: this one ({m.driver or '?'}) runs CUDA <= {m.driver_cuda}"),
        )
    floor = knowledge.driver_minimum(cuda, m.windows)
    if floor is None:
        return False, False, f"CUDA {cuda}: envmgr's driver table has no row for CUDA {want.major}"
    if Version.of(m.driver) < Version.of(floor):
        return False, False, f"CUDA {cuda} needs driver {floor} or newer; this one is {m.driver}"
    return True, True, f"driver {m.driver} >= {floor}, CUDA {want.major}'s minimum (its own CUDA version unknown)"


# ---- the GPU ------------------------------------------------------------------------------------


def covers(code: Code, m: Machine, jit_ok: bool, driver_why: str = "") -> tuple[str, str, str]:
    """(native | ptx-jit | "", via, why) for every GPU of the machine, by binaries/gpufit.py's rules (a cubin
    for the GPU's SM, else PTX at or below its compute capability that the driver can compile); code has
    .cubin, .ptx and, when known, .ptx_isa."""
    hows, vias = [], []
    for name, cc in m.gpus:
        fit = gpufit.fit(code.cubin, code.ptx, cc, name, getattr(code, "ptx_isa", ""), m.driver, m.windows)
        if fit.how == gpufit.NONE:
            return "", "", f"no device code for {name} (compute capability {cc}) runs there: {fit.detail}"
        if fit.how == gpufit.PTX_JIT and not jit_ok:
            return (
                "",
                "",
                (
                    f"{name} (compute capability {cc}) would need PTX JIT of {fit.via}, and the driver is "
                    f"older than the CUDA that wrote it ({driver_why})"
                ),
            )
        hows.append(fit.how)
        vias.append(fit.via)
    how = NATIVE if all(h == gpufit.NATIVE for h in hows) else PTX_JIT
    via = ", ".join(dict.fromkeys(vias))
    if how == NATIVE:
        return how, via, f"native cubin {via} for {_gpus(m)}"
    return how, via, f"through PTX JIT ({via}) for {_gpus(m)}: the first load compiles the kernels"


def _gpus(m: Machine) -> str:
    return ", ".join(f"{name} ({cc})" for name, cc in m.gpus)


def _words(code: Code) -> str:
    parts = [("cubin " + " ".join(code.cubin)) if code.cubin else "", ("PTX " + " ".join(code.ptx)) if code.ptx else ""]
    return "; ".join(p for p in parts if p) or "no cubin or PTX at all"


# ---- the plan -----------------------------------------------------------------------------------


def _tags(filename: str, package: str) -> tuple[str, frozenset[str]]:
    """(version, tags) of a wheel of `package`; Unusable when the name says otherwise."""
    try:
        name, version, _, tags = parse_wheel_filename(filename)
    except ValueError:  # InvalidWheelFilename, InvalidVersion, and int()'s limit on a 5,000-digit version (N15)
        raise Unusable("not a wheel file name") from None
    if name != canonicalize_name(package):
        raise Unusable(f"a wheel of {name}, not {package}")
    return str(version), frozenset(str(t) for t in tags)


def first_refusal(cand: Candidate, m: Machine, package: str, spec: SpecifierSet) -> tuple[str, str]:
    """(version, why not) from what needs no download; why is "" when the candidate is worth reading."""
    try:
        version, tags = _tags(cand.filename, package)
    except Unusable as exc:
        return "", str(exc)
    if cand.problem:
        return version, cand.problem
    if not spec.contains(version, prereleases=True):
        return version, f"version {version} does not match {spec}"
    if not tags & set(m.tags):
        return version, f"its tags {', '.join(sorted(tags))} do not fit the target Python ({m.python})"
    if not m.gpus:
        return version, "no NVIDIA GPU visible: nothing proves a CUDA wheel runs here"
    if cand.cuda:
        ok, _, why = driver_runs(cand.cuda, m)
        if not ok:
            return version, why
    return version, ""


def _order(item: tuple[Candidate, str]) -> tuple[PkgVersion, Version]:
    cand, version = item
    return PkgVersion(version), mm(cand.cuda)


def allowed_versions(versions: Iterable[str], spec: SpecifierSet, pre: bool) -> set[str]:
    """The versions pip would consider (PEP 440's default, as packaging's filter): no prerelease unless
    --pre, the spec names one, or nothing else matches the spec (N14)."""
    return set(spec.filter(set(versions), prereleases=True if pre else None))


def plan(
    cands: Iterable[Candidate],
    m: Machine,
    package: str,
    spec: str | SpecifierSet,
    read_code: ReadCode,
    limit: int = MAX_EXAMINED,
    pre: bool = False,
    read_cpu: ReadCpu | None = None,
) -> Plan:
    """Judge every candidate; read_code(cand) gives its DeviceCode (.cubin .ptx .cuda_imports) or raises Unusable,
    read_cpu(cand) its CPU code (a wheel the machine's CPU cannot run is refused: examine_cpu).
    A prerelease is considered only as pip would (allowed_versions; `pre` is --pre)."""
    spec = spec if isinstance(spec, SpecifierSet) else SpecifierSet(spec)
    judged: dict[Candidate, Judged] = {}
    worth = []
    for cand in dict.fromkeys(cands):
        version, why = first_refusal(cand, m, package, spec)
        if why:
            judged[cand] = Judged(cand, REFUSED, why, version)
        else:
            worth.append((cand, version))
    allowed = allowed_versions((v for _, v in worth), spec, pre)
    for cand, version in [w for w in worth if w[1] not in allowed]:
        judged[cand] = Judged(
            cand,
            REFUSED,
            f"version {version} is a prerelease: pip takes one only with --pre or a spec that names it",
            version,
        )
    worth = [w for w in worth if w[1] in allowed]
    best: Judged | None = None
    examined = 0
    for cand, version in sorted(worth, key=_order, reverse=True):
        if (best is not None and best.how == NATIVE) or examined >= limit:
            why = (
                "ranked below the chosen native wheel"
                if best and best.how == NATIVE
                else f"not examined: {limit} wheels were read already (pin a version to narrow the search)"
            )
            judged[cand] = Judged(cand, NOT_EXAMINED, why, version)
            continue
        examined += 1
        j = examine(cand, version, m, read_code)
        if j.verdict == FITS and read_cpu is not None:
            j = examine_cpu(j, m, read_cpu)
        if j.verdict == FITS and (best is None or (best.how == PTX_JIT and j.how == NATIVE)):
            best = j
        judged[cand] = j
    if best is not None:
        judged[best.cand] = replace(best, verdict=CHOSEN)
        for cand, j in judged.items():
            if j.verdict == FITS:
                below = f"ranked below {best.cand.filename} (CUDA {best.cand.cuda or '?'})"
                judged[cand] = replace(j, reason=f"{j.reason}; {below}")
    return Plan(tuple(judged[c] for c in dict.fromkeys(cands)), m)


def examine(cand: Candidate, version: str, m: Machine, read_code: ReadCode) -> Judged:
    """The candidate judged on its device code (and, for a folder of unknown CUDA, on its CUDA imports)."""
    try:
        code = read_code(cand)
    except Unusable as exc:
        return Judged(cand, REFUSED, str(exc), version)
    words = _words(code)
    cuda = cand.cuda or cuda_of_imports(code.cuda_imports)
    if not cuda:
        return Judged(
            cand, REFUSED, "its CUDA is unknown (no cuXYZ folder or release tag, no CUDA import)", version, code=words
        )
    ok, jit_ok, why = driver_runs(cuda, m)
    if not ok:
        return Judged(cand, REFUSED, why, version, code=words)
    how, via, fit_why = covers(code, m, jit_ok, why)
    if not how:
        return Judged(cand, REFUSED, fit_why, version, code=words)
    foreign = cannot_load(code, m)
    if foreign:
        return Judged(cand, REFUSED, foreign, version, code=words)
    return Judged(cand, FITS, fit_why, version, how, via, words)


# The binaries a target Python loads, by the platform part of its tags (PEP 425): (format, machine) as
# binaries/devicecode.py names them. A platform not listed here (macOS, an unknown one) is not judged.
_LOADS = (
    (re.compile(r"^win_amd64$"), "pe", "x64"),
    (re.compile(r"^win32$"), "pe", "x86 (32-bit)"),
    (re.compile(r"^win_arm64$"), "pe", "ARM64"),
    (re.compile(r"linux.*_x86_64$"), "elf", "x86-64"),
    (re.compile(r"linux.*_aarch64$"), "elf", "AArch64"),
    (re.compile(r"linux.*_i686$"), "elf", "x86"),
    (re.compile(r"linux.*_armv7l$"), "elf", "ARM"),
)


def target_binaries(tags: Iterable[str]) -> tuple[str, str] | None:
    """(format, machine) of the libraries the target Python can load, from its most specific tag."""
    for tag in tags:
        platform = tag.rsplit("-", 1)[-1]
        for pattern, fmt, machine in _LOADS:
            if pattern.search(platform):
                return fmt, machine
    return None


def cannot_load(code: Code, m: Machine) -> str:
    """Why a CUDA library of the wheel cannot load in the target Python ("" when each can, or it is unknown):
    the wheel's tags may lie about its platform (audit N28: an AArch64 or 32-bit ELF, or a Windows DLL,
    in a linux_x86_64 wheel)."""
    want = target_binaries(m.tags)
    if want is None:
        return ""
    for b in getattr(code, "binaries", ()):
        fmt, machine = getattr(b, "format", ""), getattr(b, "machine", "")
        if not getattr(b, "is_cuda", False) or fmt not in ("elf", "pe"):
            continue
        if fmt != want[0] or (machine and machine != want[1]):
            return (
                f"its {str(b.name).rsplit('/', 1)[-1]} is {'an' if fmt == 'elf' else 'a'} {fmt.upper()} file "
                f"for {machine or 'an unknown machine'}; the target Python ({m.python or '?'}) loads "
                f"{want[0].upper()} files for {want[1]} only: it cannot load there"
            )
    return ""


def examine_cpu(j: Judged, m: Machine, read_cpu: ReadCpu) -> Judged:
    """A fitting wheel judged on its CPU code: refused where the CPU lacks what it (likely) requires
    (`0xC000001D`, illegal instruction, on load); kept, with the reason, where the CPU is unknown."""
    try:
        code = read_cpu(j.cand)
    except Unusable as exc:
        return replace(j, reason=f"{j.reason}; its CPU code was not read ({exc})")
    ok, why = cpucode.runs(code, m.cpu)
    if ok is False:
        return replace(j, verdict=REFUSED, reason=f"its CPU code {why}: {code.words()}", how="", via="", cpu=code)
    if code.how == "variants":
        pick_ = cpucode.ggml_choice(code.variants, m.cpu)
        why = why or (f"ggml would load ggml-cpu-{pick_} here" if pick_ else "")
    return replace(j, reason=f"{j.reason}; CPU: {code.words()}" + (f" ({why})" if why else ""), cpu=code)


def cuda_of_imports(imports: Iterable[str]) -> str:
    """ "12" from libcudart.so.12 / cudart64_12.dll / cublas64_13.dll: the major only."""
    for name in imports:
        m = re.match(r"^(?:lib)?(?:cudart|cublas|cublasLt)(?:64)?[_.](?:so\.)?(\d+)", name, re.IGNORECASE)
        if m:
            return m.group(1)
    return ""
