"""The memory family: a compiler of a CUDA build killed or out of memory (F25), in nvcc's, gcc's, the shell's, the
kernel's and MSVC's words; outside a CUDA build the same words are no failure of this catalog.
"""

from __future__ import annotations

import re

from envmgr.buildlog.rules.base import Add, FactRx, Facts, fx
from envmgr.buildlog.signatures import Signature, lines_above, sig
from envmgr.catalog import FailureId

IDS: tuple[FailureId, ...] = ("F25",)

FACTS: tuple[FactRx, ...] = (
    # F25: a compiler killed (SIGKILL: the kernel's OOM killer, a container's memory limit) or out of memory, in the
    # words of whoever saw it: nvcc naming its tool, gcc's driver (cut anywhere after "Killed"), collect2, the
    # shell's report of a child killed by signal 9 (a line of its own, in glibc's words of each locale), the exit
    # status a build tool shows for it (137 = 128 + 9; nvcc exits 9 when its tool was killed: make's "Error 9",
    # ninja's "[code=9]"), the kernel's OOM-killer line, and compilers' own out-of-memory codes and messages
    fx(
        "tool_killed",
        r"'([\w+.-]+)' died due to signal 9\b|(?:fatal error|internal compiler error): Killed\b"
        r"(?: signal terminated program ([\w+.-]+)| \(program ([\w+.-]+)\))?|"
        r"\b([\w+.-]+) terminated with signal 9\b",
        ("signal 9", "error: Killed"),
    ),
    fx(
        "job_killed",
        r"(?m:^[ \t]*(?:Killed|Getötet|已杀死|強制終了|Убито|Processus arrêté|Terminado \(killed\))"
        r"[ \t]*$)|"
        r"(?m:line \d+: +\d+ Killed\b)|\*\*\* \[[^\n]*\] (?:Error (?:137|9)|Killed)\b|"
        r"\[code=(?:9|137)\]|(?i:exit (?:status|code)[:= ]+137\b)|"
        r"(?i:returned (?:a )?non-zero (?:exit status|code):? 137\b)|\bsignal: killed\b",
        (
            "Killed",
            "Getötet",
            "已杀死",
            "強制終了",
            "Убито",
            "Processus arrêté",
            "Terminado (killed)",
            "Error 137",
            "Error 9",
            "code=",
            "137",
            "signal: killed",
        ),
    ),
    fx(
        "compiler_oom",
        r"\b(?:C1060|C1002|C1076|C3859)\b|virtual memory exhausted|out of memory allocating|"
        r"(?:cc1plus|cc1|cicc|ptxas|nvcc|cudafe\+\+|ld)(?:\.exe)?: (?:fatal error: )?out of memory|"
        r"Out of memory: Kill(?:ed)? process \d+ \((?:cc1plus|cc1|cicc|ptxas|cudafe\+\+|nvcc|ld)\)|"
        r"LLVM ERROR: out of memory",
        ("C1060", "C1002", "C1076", "C3859", "memory exhausted", "out of memory", "Out of memory"),
    ),
    # the kernel's OOM-killer task dump (mm/oom_kill.c dump_task: "[  pid  ]   uid  tgid total_vm  rss ... name"),
    # printed only when the OOM killer runs: a row of one of nvcc's own tools is a CUDA compile it found in memory
    # (the kill line after the dump may be cut from a paste; issue 36)
    fx(
        "oom_dump",
        r"\[ *\d+\](?:[ \t]+-?\d+){5,8}[ \t]+(nvcc|cicc|ptxas|cudafe\+\+)(?=\s|\[|$)",
        ("nvcc", "cicc", "ptxas", "cudafe"),
    ),
)


_NVCC_TOOLS = {"cicc", "cudafe", "cudafe++", "ptxas", "nvlink", "fatbinary", "nvcc"}


def decide(fs: Facts, add: Add) -> None:
    """F25: a compiler killed or out of memory in a build that compiles CUDA (nvcc's own tools need no more; the
    same words in a build without CUDA are outside the catalog)."""
    killed = fs.first("tool_killed")
    if killed and killed.value in _NVCC_TOOLS:
        add("F25", "nvcc-tool-killed", killed, tool=killed.value)
    dump = fs.first("oom_dump")
    add("F25", "oom-killer-during-nvcc", dump, tool=dump.value if dump else None)
    if fs.first("cuda_compile") is not None:  # gcc's, the shell's and MSVC's words: in a CUDA build only
        tool = killed.value if killed and re.fullmatch(r"[\w+.-]+", killed.value) else None
        add("F25", "compiler-killed", killed, tool=tool)
        add("F25", "compiler-out-of-memory", fs.first("compiler_oom"))
        add("F25", "job-killed", fs.first("job_killed"))


# ---------------------------------------------------------------- signatures: the tools' own sentences

# F25: the kernel's OOM killer (or a container's memory limit) killed a compiler of a parallel build: nvcc names
# the tool and the signal, gcc's driver the program; MSVC (C1060/C1002, codes every locale prints) runs out of heap.
# gcc's and MSVC's words count only in a CUDA build (a .cu file, nvcc or the word cuda, any case, in the lines
# above): the same words in a C++ project's log are no failure of this catalog (logs/clean keeps such logs).
_CUDA_BUILD = re.compile(r"\.cu\b|\bnvcc\b|(?i:\bcuda\b)")


_CUDA_LINES = 30


def _in_cuda_build(m: re.Match[str]) -> bool:
    return _CUDA_BUILD.search(m.string, lines_above(m.string, m.start(), _CUDA_LINES), m.end()) is not None


SIGNATURES: tuple[Signature, ...] = (
    sig(
        "F25",
        "nvcc-tool-killed",
        r"nvcc error\s*:\s*'(?P<tool>[\w+.-]+)' died due to signal 9\b",
        needle="died due to signal 9",
    ),
    # Windows has no signal 9: a tool that ran out of memory dies with an NTSTATUS code, STATUS_NO_MEMORY (0xC0000017)
    # or STATUS_COMMITMENT_LIMIT (0xC000012D, the page file full), in nvcc's "died with status 0x..." words
    sig(
        "F25",
        "nvcc-tool-no-memory",
        r"nvcc error\s*:\s*'(?P<tool>[^'\n]+)' died with status 0x(?P<code>C0000017|C000012D)\b",
        flags=re.I,
        needle="died with status",
    ),
    sig(
        "F25",
        "gcc-killed",
        r"fatal error: Killed signal terminated program (?P<tool>[\w+.-]+)",
        needle="Killed signal terminated",
        check=_in_cuda_build,
    ),
    # gcc 6 and older word the same kill as an internal compiler error
    sig(
        "F25",
        "gcc-ice-killed",
        r"internal compiler error: Killed \(program (?P<tool>[\w+.-]+)\)",
        needle="internal compiler error: Killed",
        check=_in_cuda_build,
    ),
    sig(
        "F25",
        "msvc-out-of-heap",
        r"\b(?P<code>C1060|C1002)\b[^\n]*?out of heap space",
        needle="out of heap space",
        check=_in_cuda_build,
    ),
)
