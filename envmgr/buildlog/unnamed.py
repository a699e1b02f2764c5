"""Why `doctor --log` named no catalog id, and what the user can do (issue 23): the one home of the kinds of stop
outside the catalog (their words, what they are, one line of advice each) and of the other reasons a log names
nothing (it ends in success, it was cut while the build still ran, it holds no program output).

`OUTSIDE` is read by logfacts (its `outside_stop` fact is these patterns joined, in this order) and by `explain`,
which logscan calls with facts it has already found; nothing here scans a log itself except `Marks`, which looks
at lines only until the first one a program printed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from envmgr.buildlog.engine import glimpse

PASTE = (
    "run the failing command again with its whole output in a file and scan that: "
    "pip install -v ... > build.log 2>&1, then envmgr doctor --log build.log"
)


@dataclass(frozen=True)
class Outside:
    kind: str  # a stable name, in --json
    pattern: str  # the tool's own words (a regex; part of logfacts' `outside_stop`)
    needles: tuple[str, ...]  # literals one of which is in every match (logfacts' gate)
    title: str  # what stopped the log, in plain words
    advice: str  # what to do, one line


# the disk full (errno 28 in Linux's and Windows' words), the GPU's memory used up at run time (the runtimes' words;
# a compiler out of memory is F25's and reads otherwise), the network given up on (not pip's retry warning, which a
# download may follow; not an HTTP status, which a wrong index URL gives), pip's requires-python refusal, CMake sent
# into an empty folder (a git submodule not cloned), Python unable to read a source file or to find a module
OUTSIDE: tuple[Outside, ...] = (
    Outside(
        "disk_full",
        r"No space left on device|\[Errno 28\]|There is not enough space on the disk",
        ("No space left", "Errno 28", "not enough space on the disk"),
        "the disk filled up (no space left on the device)",
        "free space on that drive, or point the temporary folder (TMPDIR; TMP and TEMP on Windows) and pip's cache "
        "(PIP_CACHE_DIR, or pip install --no-cache-dir) at a drive with room, then run it again",
    ),
    Outside(
        "gpu_memory",
        r"CUDA out of memory|OutOfMemoryError|CUDA_ERROR_OUT_OF_MEMORY|ResourceExhaustedError",
        ("out of memory", "OutOfMemoryError", "OUT_OF_MEMORY", "ResourceExhaustedError"),
        "the GPU's memory ran out while the program ran (the build and the CUDA setup worked)",
        "use a smaller batch or context, a smaller or quantized model, or fewer layers on the GPU (-ngl / "
        "n_gpu_layers); close other programs holding GPU memory (nvidia-smi lists them)",
    ),
    Outside(
        "network",
        r"^(?![ \t]*WARNING: Retrying)[^\n]*?(?:Max retries exceeded|Missing dependencies for SOCKS|"
        r"SSL module is not available|CERTIFICATE_VERIFY_FAILED|Temporary failure in name resolution|"
        r"getaddrinfo failed|Network is unreachable)",
        (
            "Max retries exceeded",
            "SOCKS",
            "SSL module",
            "CERTIFICATE_VERIFY_FAILED",
            "name resolution",
            "getaddrinfo failed",
            "Network is unreachable",
        ),
        "a download failed: the network, a proxy or a TLS certificate stopped it",
        "check the proxy (HTTPS_PROXY) and certificate settings (pip --cert, or the system's CA store), and that "
        "this Python has its ssl module; retry, or use a reachable mirror with --index-url",
    ),
    Outside(
        "requires_python",
        r"requires a different Python: ",
        ("requires a different Python",),
        "the package does not support this Python version",
        "use a Python version in the range the line names (a new venv with that Python), or a release of the "
        "package that supports yours",
    ),
    Outside(
        "submodule",
        r"does not contain a CMakeLists\.txt file",
        ("does not contain a CMakeLists",),
        "CMake found an empty source folder: a git submodule was not cloned",
        "run git submodule update --init --recursive in the checkout (or clone it with --recursive), then build again",
    ),
    Outside(
        "python_syntax",
        r"^[ \t>]*SyntaxError: ",
        ("SyntaxError: ",),
        "Python could not read a source file (SyntaxError)",
        "run it with a Python version the code is written for (the line and file above it show what it uses); "
        "an old interpreter cannot read newer syntax such as f-strings, Python 3 cannot read Python 2's print",
    ),
    Outside(
        "python_module",
        r"ModuleNotFoundError: No module named ",
        ("No module named ",),
        "a Python module is not installed in the Python that ran the program",
        "install the module the line names into that Python (python -m pip install NAME, where NAME may differ "
        "from the module's), or activate the environment that has it",
    ),
)

# kinds told to the user only where nothing is named and the log's last lines show them: not part of `outside_stop`,
# so they change no decision (a permission refused is often a step's side issue, not what stopped the build)
SEEN_LAST: tuple[Outside, ...] = (
    Outside(
        "permission",
        r"\[(?:Errno 13|WinError 5)\]|Permission denied|Access is denied|Zugriff verweigert|"
        r"Accès refusé|Acceso denegado|Accesso negato|Acesso negado|Отказано в доступе|拒绝访问|"
        r"存取被拒|アクセスが拒否されました|액세스가 거부되었습니다",
        (),
        "the system refused to write or open a file or folder (permission denied; on Windows often a file in use)",
        "close programs that hold the files the line names (a running Python or notebook, an editor's "
        "interpreter, an antivirus scan), install into a virtual environment you own rather than a system "
        "Python, and do not mix sudo and plain pip installs in one environment",
    ),
)

OUTSIDE_PATTERN = "|".join(o.pattern for o in OUTSIDE)
OUTSIDE_NEEDLES = tuple(n for o in OUTSIDE for n in o.needles)
_KINDS = tuple((o, re.compile(o.pattern, re.M)) for o in (*OUTSIDE, *SEEN_LAST))
_SEEN = re.compile("|".join(o.pattern for o in SEEN_LAST))


@dataclass(frozen=True)
class Unnamed:
    reason: str  # outside | succeeded | unfinished | no_output | unknown
    title: str
    advice: str
    line_no: int | None = None
    line: str | None = None
    kind: str | None = None  # the outside kind (OUTSIDE), for reason "outside"
    first_failure: tuple[int, str] | None = None  # the first failure line of a tool's own output (line_no, text)
    vetoed: str | None = None  # for reason "vetoed": the veto's kind (context.Veto.reason)


def outside_kind(line: str) -> Outside | None:
    """The kind of stop outside the catalog a line (an `outside_stop` fact's, or `seen_last`'s) shows, in OUTSIDE's
    order, then SEEN_LAST's."""
    return next((o for o, rx in _KINDS if rx.search(line)), None)


@dataclass(frozen=True)
class Seen:
    line_no: int
    line: str


def seen_last(last: Sequence[tuple[int, str]]) -> Seen | None:
    """The last of the log's last lines ((line_no, text) pairs, logscan keeps them) that shows a SEEN_LAST kind."""
    return next((Seen(no, text) for no, text in reversed(last) if _SEEN.search(text)), None)


class Found(Protocol):
    """A line a fact was found on (logfacts.Fact: this module is below it; or a `Seen`)."""

    @property
    def line_no(self) -> int: ...

    @property
    def line(self) -> str: ...


# what to do where the only candidates were vetoed, by the veto's reason (context.py)
_VETO_ADVICE = {
    "platform": "the catalog covers NVIDIA CUDA builds and runs; on this machine look up the backend the log shows "
    "(Metal, ROCm/HIP, Vulkan, SYCL, OpenVINO, or a CPU build) in the tool's own documentation",
    "prose": "the failure is the tool's own line quoted here, not the command the reporter wrote above it: read that "
    "line (it is outside the catalog), or " + PASTE,
    "cpu_chosen": "the CPU was chosen (a device or build flag in the log): nothing failed for the GPU; to use the GPU, "
    "drop that choice and build or install the CUDA variant",
    "warning_then_ran": "the run went past the warning and did its work: nothing failed; if the result is slow or "
    "wrong, scan the output of that run",
}


def vetoed_answer(why: Unnamed, veto: Any, first_failure: tuple[int, str] | None) -> Unnamed:
    """`why` with the first failure line quoted; where a candidate was vetoed (context.Veto) and nothing else explains
    the log (no stop outside the catalog, no success), the answer says why nothing was named."""
    if veto is not None and why.reason in ("unknown", "unfinished", "no_output"):
        return Unnamed(
            "vetoed",
            f"no catalog id: {veto.id} was set aside, {veto.why}",
            _VETO_ADVICE[veto.reason],
            veto.line_no,
            veto.line,
            None,
            first_failure,
            veto.reason,
        )
    return replace(why, first_failure=first_failure)


def explain(outside: Found | None, succeeded: Found | None, unfinished: Found | None, output_seen: bool) -> Unnamed:
    """Why nothing was named, from facts found already (each a logfacts.Fact or None): a stop outside the catalog,
    a log that ends in its build's success, a log cut while its build still ran, a paste without program output."""
    if succeeded is not None:
        return Unnamed(
            "succeeded",
            "the log ends in success: the build or install it shows did not fail",
            "if the program fails later, scan the output of that run (python your_script.py > run.log "
            "2>&1; envmgr doctor --log run.log)",
            succeeded.line_no,
            succeeded.line.strip(),
        )
    kind = outside_kind(outside.line) if outside is not None else None
    if outside is not None and kind is not None:
        return Unnamed(
            "outside",
            f"not a catalog failure: {kind.title}",
            kind.advice,
            outside.line_no,
            outside.line.strip(),
            kind.kind,
        )
    if not output_seen:
        return Unnamed(
            "no_output",
            "the text holds no program output, only words about it",
            f"paste what the program printed, not a description: {PASTE}",
        )
    if unfinished is not None:
        return Unnamed(
            "unfinished",
            "its last lines show no outcome (no error, failure or success): it may be cut "
            "before the failing tool's message, or the command was still running",
            f"if it was cut or still running, let the command finish, then {PASTE}",
            unfinished.line_no,
            unfinished.line.strip(),
        )
    return Unnamed(
        "unknown",
        "no failure the catalog knows is in the log",
        f"if this is an excerpt, {PASTE}; if the log is whole, its failure is outside the catalog",
    )


# a line a program printed, by marks people seldom type: a tool's error/warning prefix or code, a Python traceback,
# an exception's name, a file:line place, a shell or Python prompt, an absolute path, a clock time, progress counters,
# CMake's `-- ` and its errors, a tool's name before its error, a repr's `(name=`, a log-style `name_with_underscores:`
# prefix, pip's own verbs at a line's start
_OUTPUT = re.compile(
    r"^[ \t]*(?:(?i:error|warning|note|fatal error|info|debug)\b[^\n]{0,40}?[:\]]|\[\s*\d+%\]|\[\d+/\d+\]|-- \S|"
    r"Traceback \(most recent|File \"|\$ \S|>>> |PS [A-Z]:|FAILED\b|[a-z][a-z0-9]*_[\w.]*: |"
    r"(?:Collecting|Downloading|Requirement already|Successfully|Installing collected|Using cached|"
    r"Building wheels? for|Running setup\.py|Obtaining|Looking in indexes)\b)|"
    r"\b[A-Z]\w*(?:Error|Exception)\b: |\bCMake (?:Error|Warning)\b|\w\.\w{1,4}:\d+\b|\(\w+=|"
    r"[\w+.-]:? (?:fatal |internal compiler )?(?:error|warning) ?: |"
    r"(?<![\w/])(?:[A-Za-z]:\\|/(?:usr|home|opt|tmp|var|root|mnt|content|workspace|data|lib|Users)/)|"
    r"\b\d\d:\d\d:\d\d\b|\b(?:error|warning) [A-Z]{1,4}\d{3,5}\b"
)
# a line of a person's sentences: five words or more, most of them plain words; or mostly CJK text
_WORD = re.compile(r"[(\"'`*]?[A-Za-z][a-z']*[)\"'`*]?[,.;:!?]*")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
MARKS_READ = 2000  # lines looked at at most: a log this long is a program's output


def printed(line: str) -> bool:
    """Whether a line bears a mark of a program's output (an error prefix, a path, a timestamp...; `_OUTPUT`)."""
    return bool(_OUTPUT.search(glimpse(line)))


def _sentence(line: str) -> bool:
    words = line.split()
    if len(_CJK.findall(line)) * 2 >= len(line.strip()):
        return True
    return len(words) >= 5 and sum(1 for w in words if _WORD.fullmatch(w)) >= 0.7 * len(words)


@dataclass
class Marks:
    """Whether the lines fed so far show program output: a line a program printed (looking stops at the first), or
    fewer lines of sentences than of anything else (a paste of words is mostly sentences)."""

    seen: bool = False
    read: int = 0
    lines: int = 0  # lines with text
    sentences: int = 0

    def feed(self, texts: list[str]) -> None:
        if self.seen or self.read >= MARKS_READ:
            return
        look = texts[: MARKS_READ - self.read]
        self.read += len(look)
        for t in map(glimpse, look):
            if not t.strip():
                continue
            if _OUTPUT.search(t):
                self.seen = True
                return
            self.lines += 1
            self.sentences += _sentence(t)

    @property
    def output(self) -> bool:
        return self.seen or self.read >= MARKS_READ or self.sentences * 2 < self.lines
