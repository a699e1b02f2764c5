"""What CPU instruction sets a wheel's CPU code requires, and whether a CPU has them (issue 37).

Prebuilt llama-cpp-python wheels compiled for AVX-512 or AVX2 die with `0xC000001D` (illegal instruction)
on CPUs without them (JamePeng/llama-cpp-python#55, #57; dougeeai/llama-cpp-python-wheels#4, #10). Two kinds:
- a wheel built with GGML_BACKEND_DL + GGML_CPU_ALL_VARIANTS carries one `ggml-cpu-<variant>` library per
  instruction set and ggml's loader takes the best one this CPU supports (the highest score of
  ggml/src/ggml-cpu/arch/x86/cpu-feats.cpp; the variants and their features are ggml/src/CMakeLists.txt's
  `ggml_add_cpu_backend_variant` lines): such a wheel requires only its lowest variant;
- otherwise its CPU code is scanned: x86-64 machine code in the executable sections of ELF and PE files,
  swept linearly for VEX (C4/C5) and EVEX (62) encodings. A linear sweep also reads data and the middle of
  other instructions, so the scan says "likely requires", with the count and a sample offset, and only
  above a floor: matches that come in runs (another within CLUSTER bytes), at least MIN_RUN of them and
  MIN_PER_MIB per MiB of code. Measured on this machine's binaries: stray matches in gcc, cmake, python3.11,
  libstdc++ and libLLVM-14 (no AVX-512 code paths) stay at or below 5 clustered per MiB; gcc-built kernels
  and glibc's and libcrypto's AVX-512/AVX2 paths are hundreds to thousands per MiB (tests/unit/wheels/test_cpucode.py
  on gcc and mingw-w64 objects built with and without -mavx512f / -mavx2 -mfma -mf16c). A library that
  dispatches at run time (glibc's ifuncs) carries AVX-512 it never runs on other CPUs: the scan cannot tell,
  the words say so.
Pure: bytes in, frozen dataclasses out; never raises on hostile input.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from envmgr.binaries.devicecode import CUDA_LIBRARY
from envmgr.files.wheelzip import Wheel

AVX512F, AVX2, FMA, F16C, AVX, SSE42 = "avx512f", "avx2", "fma", "f16c", "avx", "sse4_2"
WORDS = {
    AVX512F: "AVX-512F",
    AVX2: "AVX2",
    FMA: "FMA",
    F16C: "F16C",
    AVX: "AVX",
    SSE42: "SSE4.2",
    "bmi2": "BMI2",
    "avx_vnni": "AVX-VNNI",
    "avx512vbmi": "AVX-512 VBMI",
    "avx512_vnni": "AVX-512 VNNI",
    "avx512_bf16": "AVX-512 BF16",
    "amx_tile": "AMX",
    "amx_int8": "AMX-INT8",
    "avx512cd": "AVX-512CD",
    "avx512vl": "AVX-512VL",
    "avx512dq": "AVX-512DQ",
    "avx512bw": "AVX-512BW",
}
SCANNED = (AVX512F, AVX2, FMA, F16C)  # what the instruction scan can see
_BASE = (SSE42, AVX, F16C, AVX2, "bmi2", FMA)
# ggml's GGML_AVX512 is five sets: cpu-feats.cpp's score returns 0 unless AVX512F, CD, VL, DQ and BW are all there.
_AVX512 = (AVX512F, "avx512cd", "avx512vl", "avx512dq", "avx512bw")
# ggml's x86 variants, in /proc/cpuinfo flag names. Checked against ggml-org/llama.cpp: the
# `ggml_add_cpu_backend_variant` lines of ggml/src/CMakeLists.txt (commit 013991d8569c) and the score of
# ggml/src/ggml-cpu/arch/x86/cpu-feats.cpp (commit 3d3e8e372c41): the same 14 names and feature sets; an MSVC
# build has no ivybridge, piledriver, cooperlake, zen4 or sapphirerapids; AMX_TILE is compiled in but not scored.
VARIANTS: dict[str, tuple[str, ...]] = {
    "x64": (),
    "sse42": (SSE42,),
    "sandybridge": (SSE42, AVX),
    "ivybridge": (SSE42, AVX, F16C),
    "piledriver": (SSE42, AVX, F16C, FMA),
    "haswell": _BASE,
    "alderlake": (*_BASE, "avx_vnni"),
    "skylakex": (*_BASE, *_AVX512),
    "cannonlake": (*_BASE, *_AVX512, "avx512vbmi"),
    "cascadelake": (*_BASE, *_AVX512, "avx512_vnni"),
    "icelake": (*_BASE, *_AVX512, "avx512vbmi", "avx512_vnni"),
    "cooperlake": (*_BASE, *_AVX512, "avx512_vnni", "avx512_bf16"),
    "zen4": (*_BASE, *_AVX512, "avx512vbmi", "avx512_vnni", "avx512_bf16"),
    "sapphirerapids": (*_BASE, *_AVX512, "avx512vbmi", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8"),
}
# cpu-feats.cpp's score: one bit per feature set a variant was built with; ggml loads the variant with the highest.
_SCORE = {
    FMA: 1,
    F16C: 1 << 1,
    SSE42: 1 << 2,
    "bmi2": 1 << 3,
    AVX: 1 << 4,
    AVX2: 1 << 5,
    "avx_vnni": 1 << 6,
    AVX512F: 1 << 7,
    "avx512vbmi": 1 << 8,
    "avx512_bf16": 1 << 9,
    "avx512_vnni": 1 << 10,
    "amx_int8": 1 << 11,
}
_VARIANT = re.compile(r"(?:^|/)(?:lib)?ggml-cpu-([a-z0-9_]+)\.(?:so|dll)$", re.I)
CLUSTER = 32  # bytes: a match with another this close is part of a run of vector code
MIN_RUN = 3  # clustered matches, fewer is noise whatever the density
MIN_PER_MIB = 64.0  # clustered matches per MiB of executable code
_SPECIFIC = {FMA: 2, F16C: 1}  # the fewest (unclustered) matches that count
MAX_HITS = 1 << 20  # matches kept per instruction set and library
MAX_CODE = 512 << 20  # executable bytes scanned per library


@dataclass(frozen=True)
class Evidence:
    isa: str  # "avx512f"
    hits: int  # matching encodings in the executable sections
    per_mib: float  # per MiB of executable code
    sample: str  # "libggml.so+0x1a2b40" (file offset)


@dataclass(frozen=True)
class CpuCode:
    how: str  # "variants" | "scan" | "" (no x86-64 code read)
    requires: tuple[str, ...] = ()  # flag names (avx512f, avx2, ...) the CPU must have
    certain: bool = False  # True for variants; a scan only says "likely"
    variants: tuple[str, ...] = ()  # the ggml-cpu variants carried, lowest first
    evidence: tuple[Evidence, ...] = ()
    scanned: str = ""  # "3 libraries, 4.2 MiB of code"
    dispatchers: tuple[str, ...] = ()  # NVIDIA's libraries in the wheel, not scanned (read_wheel)

    def words(self) -> str:
        text = self._words()
        if self.dispatchers:
            text += (
                f"; not scanned: {', '.join(self.dispatchers[:3])}{' …' if len(self.dispatchers) > 3 else ''}"
                " (NVIDIA's libraries pick their CPU code at run time)"
            )
        return text

    def _words(self) -> str:
        if self.how == "variants":
            need = ", ".join(WORDS.get(f, f) for f in self.requires) or "no extension"
            return f"ggml CPU variants {' '.join(self.variants)}: requires only the lowest ({need})"
        if not self.requires:
            return f"no AVX-512/AVX2/FMA/F16C code found ({self.scanned})" if self.how else "no x86-64 code read"
        ev = "; ".join(f"{WORDS[e.isa]} {e.hits} matches ({e.per_mib:.0f}/MiB, e.g. {e.sample})" for e in self.evidence)
        return f"likely requires {', '.join(WORDS[f] for f in self.requires)} ({ev}; {self.scanned})"

    def to_json(self) -> dict[str, Any]:
        return {
            "how": self.how or None,
            "requires": list(self.requires),
            "certain": self.certain,
            "variants": list(self.variants),
            "evidence": [
                {"isa": e.isa, "hits": e.hits, "per_mib": round(e.per_mib, 1), "sample": e.sample}
                for e in self.evidence
            ],
            "words": self.words(),
        }


@dataclass(frozen=True)
class Cpu:
    flags: frozenset[str] | None  # None: unknown
    source: str  # "/proc/cpuinfo of the target Python", "IsProcessorFeaturePresent", ...
    known: frozenset[str] = frozenset()  # the flags the source can tell (Windows: avx2, avx512f only)

    def to_json(self) -> dict[str, Any]:
        return {"flags": None if self.flags is None else sorted(self.flags & set(WORDS)), "source": self.source}


UNKNOWN = Cpu(None, "not read")


# ---- the variants -------------------------------------------------------------------------------


def variants_of(names: Iterable[str]) -> tuple[str, ...]:
    """The ggml-cpu variants among a wheel's member names, lowest first (unknown names last, kept)."""
    found = {m.group(1).lower() for n in names if (m := _VARIANT.search(n))}
    order = list(VARIANTS)
    return tuple(sorted(found, key=lambda v: (order.index(v) if v in order else len(order), v)))


def ggml_choice(variants: Iterable[str], cpu: Cpu) -> str:
    """The variant ggml's loader would take on this CPU: the supported one with the most features; "" none."""
    if cpu.flags is None:
        return ""
    ok = [v for v in variants if v in VARIANTS and set(VARIANTS[v]) <= _assumed(cpu)]
    return max(ok, key=lambda v: 1 + sum(_SCORE.get(f, 0) for f in VARIANTS[v]), default="")


# ---- the scan -----------------------------------------------------------------------------------


def _cls(pred: Any) -> bytes:
    return b"[" + b"".join(re.escape(bytes([b])) for b in range(256) if pred(b)) + b"]"


def _ops(values: Iterable[int]) -> bytes:
    return b"[" + b"".join(re.escape(bytes([b])) for b in values) + b"]"


# AVX2: 256-bit (L=1) integer operations of map 0F with the 66 prefix (pp=01); AVX had them 128-bit only.
_AVX2_0F = [
    *range(0x60, 0x6C),
    0x6D,
    *range(0x70, 0x77),
    *range(0xD1, 0xD6),
    *range(0xD8, 0xE6),
    *range(0xE8, 0xF0),
    *range(0xF1, 0xF7),
    *range(0xF8, 0xFF),
]
_AVX2_0F38 = [0x16, 0x36, 0x45, 0x46, 0x47, 0x58, 0x59, 0x5A, 0x78, 0x79, 0x8C, 0x8E, 0x90, 0x91, 0x92, 0x93]
_AVX2_0F3A = [0x00, 0x01, 0x02, 0x38, 0x39, 0x46]
_FMA_0F38 = [*range(0x96, 0xA0), *range(0xA6, 0xB0), *range(0xB6, 0xC0)]
# In 64-bit mode C4, C5 and 62 are always VEX/EVEX (LES, LDS and BOUND are gone there).
_C5_L256_66 = _cls(lambda b: b & 0x07 == 0x05)  # R vvvv L=1 pp=01
_C4_MAP = {m: _cls(lambda b, m=m: b & 0x1F == m) for m in (1, 2, 3)}
_C4_L256_66 = _cls(lambda b: b & 0x07 == 0x05)
_C4_66 = _cls(lambda b: b & 0x03 == 0x01)
_C4_W0_L128_66 = _cls(lambda b: b & 0x87 == 0x01)
_EVEX_P0 = _cls(lambda b: b & 0x0C == 0 and b & 0x03 != 0)  # R X B R' 0 0 m m (maps 1-3)
_EVEX_P1 = _cls(lambda b: b & 0x04)  # W vvvv 1 pp
_EVEX_P2 = _cls(lambda b: b & 0x60 != 0x60)  # z L'L b V' aaa: L'L=11 is reserved
PATTERNS: dict[str, re.Pattern[bytes]] = {
    AVX512F: re.compile(b"\\x62" + _EVEX_P0 + _EVEX_P1 + _EVEX_P2, re.S),
    AVX2: re.compile(
        b"(?:\\xc5"
        + _C5_L256_66
        + _ops(_AVX2_0F)
        + b"|\\xc4"
        + _C4_MAP[1]
        + _C4_L256_66
        + _ops(_AVX2_0F)
        + b"|\\xc4"
        + _C4_MAP[2]
        + _C4_L256_66
        + _ops(_AVX2_0F38)
        + b"|\\xc4"
        + _C4_MAP[3]
        + _C4_L256_66
        + _ops(_AVX2_0F3A)
        + b")",
        re.S,
    ),
    FMA: re.compile(b"\\xc4" + _C4_MAP[2] + _C4_66 + _ops(_FMA_0F38), re.S),
    F16C: re.compile(b"\\xc4(?:" + _C4_MAP[2] + _C4_W0_L128_66 + b"\\x13|" + _C4_MAP[3] + _C4_66 + b"\\x1d)", re.S),
}


def code_spans(data: bytes | bytearray) -> tuple[list[tuple[int, int]], str]:
    """(file spans of the executable sections of an x86-64 ELF or PE, "") or ([], why not)."""
    try:
        if data[:4] == b"\x7fELF":
            return _elf_spans(data)
        if data[:2] == b"MZ":
            return _pe_spans(data)
    except (struct.error, IndexError):
        return [], "a truncated header"
    return [], "neither ELF nor PE"


def _elf_spans(data: bytes | bytearray) -> tuple[list[tuple[int, int]], str]:
    if data[4] != 2 or data[5] != 1 or struct.unpack_from("<H", data, 18)[0] != 62:
        return [], "not x86-64"
    (shoff,) = struct.unpack_from("<Q", data, 40)
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    if shentsize < 64 or shoff + shnum * shentsize > len(data):
        return [], "no readable section table"
    spans = []
    for i in range(min(shnum, 65535)):
        _n, kind, flags, _a, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        if flags & 0x4 and kind != 8 and off < len(data):  # SHF_EXECINSTR, not NOBITS
            spans.append((off, min(off + size, len(data))))
    return spans, ""


def _pe_spans(data: bytes | bytearray) -> tuple[list[tuple[int, int]], str]:
    (pe_off,) = struct.unpack_from("<I", data, 0x3C)
    if data[pe_off : pe_off + 4] != b"PE\0\0":
        return [], "no PE header"
    machine, count = struct.unpack_from("<HH", data, pe_off + 4)
    if machine != 0x8664:
        return [], "not x64"
    (opt_size,) = struct.unpack_from("<H", data, pe_off + 20)
    table = pe_off + 24 + opt_size
    spans = []
    for i in range(min(count, 96)):
        vsize, _va, raw_size, raw_off = struct.unpack_from("<IIII", data, table + i * 40 + 8)
        (chars,) = struct.unpack_from("<I", data, table + i * 40 + 36)
        if chars & 0x20000000 and raw_off < len(data):  # IMAGE_SCN_MEM_EXECUTE
            spans.append((raw_off, min(raw_off + min(raw_size, vsize or raw_size), len(data))))
    return spans, ""


@dataclass(frozen=True)
class Scan:
    name: str
    code_bytes: int
    hits: tuple[tuple[str, int, int, int], ...]  # (isa, matches, clustered matches, a sample file offset)
    problem: str = ""


def _clustered(offsets: list[int]) -> list[int]:
    """The matches with another within CLUSTER bytes: vector code comes in runs, a stray match in data alone."""
    return [
        o
        for i, o in enumerate(offsets)
        if (i and o - offsets[i - 1] <= CLUSTER) or (i + 1 < len(offsets) and offsets[i + 1] - o <= CLUSTER)
    ]


def scan_binary(data: bytes | bytearray, name: str) -> Scan:
    """The VEX/EVEX encodings of each SCANNED instruction set in one library's executable sections."""
    spans, why = code_spans(data)
    total = 0
    offsets: dict[str, list[int]] = {isa: [] for isa in SCANNED}
    for start, end in spans:
        end = min(end, start + max(0, MAX_CODE - total))
        total += max(0, end - start)
        for isa, pattern in PATTERNS.items():
            found = offsets[isa]
            for m in pattern.finditer(data, start, end):
                if len(found) < MAX_HITS:
                    found.append(m.start())
    hits = []
    for isa, found in offsets.items():
        runs = _clustered(found)
        if found:
            hits.append((isa, len(found), len(runs), (runs or found)[0]))
    return Scan(name, total, tuple(hits), why)


def judge_scans(scans: Iterable[Scan]) -> CpuCode:
    """The wheel's likely requirement from its libraries' scans: an instruction set counts where some library
    has at least MIN_RUN clustered matches at MIN_PER_MIB or more; FMA and F16C, whose encodings are narrow
    enough that stray matches are rare (one each in libLLVM-14's 48 MiB), count every match. The floors are
    measured (the module docstring)."""
    scans = [s for s in scans if s.code_bytes]
    if not scans:
        return CpuCode("")
    evidence: dict[str, Evidence] = {}
    for s in scans:
        mib = s.code_bytes / (1 << 20)
        for isa, count, clustered, first in s.hits:
            n = count if isa in _SPECIFIC else clustered
            if (
                n >= _SPECIFIC.get(isa, MIN_RUN)
                and n / mib >= MIN_PER_MIB
                and (isa not in evidence or n > evidence[isa].hits)
            ):
                evidence[isa] = Evidence(isa, n, n / mib, f"{s.name}+0x{first:x}")
    total = sum(s.code_bytes for s in scans)
    size = f"{total / (1 << 20):.1f} MiB" if total >= 1 << 20 else f"{total} bytes"
    words = f"{len(scans)} librar{'y' if len(scans) == 1 else 'ies'}, {size} of code scanned"
    found = tuple(isa for isa in SCANNED if isa in evidence)
    return CpuCode("scan", found, False, (), tuple(evidence[i] for i in found), words)


NATIVE = re.compile(r"\.(so(\.\d+)*|pyd|dll)$", re.I)
MAX_MEMBER = 1 << 30  # a library larger than this is not read
MAX_READ = 4 << 30  # all the libraries of one wheel together (inflated), then the rest not read
MAX_LIBRARIES = 4096


def read_wheel(wheel: Wheel) -> CpuCode:
    """The CPU requirement of a wheel: its ggml-cpu variants where it carries them, else a scan of its libraries.
    The package's own CUDA library (libggml-cuda) is scanned too: its host code runs on the CPU. NVIDIA's
    libraries bundled with it (cuBLAS, cudart: devicecode's CUDA_LIBRARY names) are not: they choose their
    code path at run time (cublasLt64_12.dll of nvidia-cublas-cu12 12.9 has AVX-512 code at 78 runs per MiB
    and runs on AVX2 CPUs; tests/unit/wheels/test_cpucode.py). The wheel is read through files/wheelzip.py (its
    budgets; BadWheel for a damaged or hostile one)."""
    found = [m for m in wheel.members if not m.is_dir and NATIVE.search(m.name)]
    nvidia = tuple(m.name.rsplit("/", 1)[-1] for m in found if CUDA_LIBRARY.match(m.name.rsplit("/", 1)[-1]))
    infos = [m for m in found if not CUDA_LIBRARY.match(m.name.rsplit("/", 1)[-1])]
    variants = variants_of(m.name for m in infos)
    if variants:
        lowest = variants[0]
        return CpuCode("variants", VARIANTS.get(lowest, ()), lowest in VARIANTS, variants)
    scans, budget = [], MAX_READ
    for member in infos[:MAX_LIBRARIES]:
        if member.size > min(MAX_MEMBER, budget):
            continue
        budget -= member.size
        scans.append(scan_binary(wheel.read(member), member.name))
    return replace(judge_scans(scans), dispatchers=nvidia)


# ---- the CPU ------------------------------------------------------------------------------------

# Run by the TARGET Python: its own CPU as it sees it. Windows exposes AVX2 and AVX-512F through
# IsProcessorFeaturePresent (PF_AVX_INSTRUCTIONS_AVAILABLE 39, PF_AVX2_INSTRUCTIONS_AVAILABLE 40,
# PF_AVX512F_INSTRUCTIONS_AVAILABLE 41: winnt.h); Linux lists every flag in /proc/cpuinfo.
CPU_SCRIPT = r"""
import json, sys
out = {"platform": sys.platform}
if sys.platform == "win32":
    import ctypes
    f = ctypes.windll.kernel32.IsProcessorFeaturePresent
    out["features"] = {"avx": bool(f(39)), "avx2": bool(f(40)), "avx512f": bool(f(41))}
else:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("flags"):
                    out["flags"] = line.split(":", 1)[1].split()
                    break
    except OSError as exc:
        out["error"] = str(exc)
print(json.dumps(out))
"""


def parse_cpu(data: object, source: str) -> Cpu:
    """A Cpu from CPU_SCRIPT's JSON, or from a record's `cpu_flags`; UNKNOWN-like for anything else."""
    if isinstance(data, list) and all(isinstance(f, str) for f in data):
        return Cpu(frozenset(f.lower() for f in data[:4096]), source)
    if not isinstance(data, dict):
        return Cpu(None, f"{source}: no answer")
    if isinstance(data.get("flags"), list):
        return parse_cpu(data["flags"], f"{source} (/proc/cpuinfo)")
    feats = data.get("features")
    if isinstance(feats, dict):
        known = frozenset(k for k, v in feats.items() if isinstance(k, str) and isinstance(v, bool))
        return Cpu(frozenset(k for k in known if feats[k]), f"{source} (IsProcessorFeaturePresent)", known)
    return Cpu(None, f"{source}: {str(data.get('error', 'no flags'))[:80]}")


def _assumed(cpu: Cpu) -> set[str]:
    """The flags, with what Windows cannot tell filled from what it can: every AVX2 CPU has SSE4.2, AVX, FMA,
    F16C and BMI2 (Haswell, Zen on); every AVX-512F CPU since Skylake-X also CD, VL, DQ and BW (Xeon Phi apart)."""
    flags = set(cpu.flags or ())
    if cpu.known and AVX2 in flags:
        flags |= set(_BASE)
    if cpu.known and AVX512F in flags:
        flags |= set(_AVX512)
    return flags


def record_flags(cpu: Cpu) -> list[str] | None:
    """The flags a machine record keeps (`meta.cpu_flags`): Windows' few, completed as _assumed does, so
    that a replay reads them as /proc/cpuinfo's; None when unknown."""
    return None if cpu.flags is None else sorted(_assumed(cpu))


def runs(code: CpuCode, cpu: Cpu) -> tuple[bool | None, str]:
    """(True, "") when the CPU has every required set, (False, why) when it lacks one, (None, why) unknown."""
    if not code.requires:
        return True, ""
    if cpu.flags is None:
        return None, f"this CPU's instruction sets are unknown ({cpu.source})"
    have = _assumed(cpu)
    missing = [f for f in code.requires if f not in have and (not cpu.known or f in cpu.known)]
    if not missing:
        return True, ""
    has = [WORDS[f] for f in (AVX512F, AVX2, AVX) if f in have][:1]
    verb = "needs" if code.certain else "likely needs"
    return False, (
        f"{verb} {', '.join(WORDS.get(f, f) for f in missing)}; this CPU has "
        f"{has[0] + ' only' if has else 'neither AVX nor AVX2'} ({cpu.source})"
    )
