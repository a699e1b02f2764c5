"""The clock family: a build that takes too long (F20): still running when the log was copied, a build known to take
long left unfinished, the reporter saying it is slow, a timed nvcc call, or the time the log itself measured (a
step's gap, the build's span, the build tool's total). All of it is weak: the registry runs it only where nothing
else was named.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable

from envmgr.buildlog.clock import FAILURE
from envmgr.buildlog.rules.base import Add, Fact, FactRx, Facts, Lines, fx
from envmgr.buildlog.rules.outcome import unfinished
from envmgr.buildlog.signatures import Signature, sig, words
from envmgr.catalog import FailureId

IDS: tuple[FailureId, ...] = ("F20",)

FACTS: tuple[FactRx, ...] = (
    # a build known to compile for a long time (flash-attention's and xformers' kernels, llama.cpp's fattn template
    # instances, vLLM, mamba): its sdist fetched by pip, its wheel being built, or its kernels being compiled
    fx(
        "heavy_build",
        r"(?i:\b(?:flash[_-]attn|xformers|vllm|mamba[_-]ssm|causal[_-]conv1d|tensorrt[_-]llm)"
        r"-\d[\w.+-]*\.(?:tar\.gz|zip)\b|Building wheel for (?:flash[_-]attn|xformers|vllm|mamba[_-]ssm|"
        r"causal[_-]conv1d|tensorrt[_-]llm)\b)|template-instances[\\/]+fattn|"
        r"ptxas info\s*:[^\n]*flash_(?:fwd|bwd)|\bflash_(?:fwd|bwd)\w*\.cu\b",
        ("tar.gz", ".zip", "Building wheel for", "template-instances", "flash_fwd", "flash_bwd"),
    ),
    # a compile the reporter timed with the shell's `time` (bash: "real 0m22.238s" on the lines below the command;
    # zsh: "... 1.40s user 1.29s system 12% cpu 22.238 total" on the command's own line): nvcc's wall-clock time
    fx(
        "timed_compile",
        r"\btime[ \t]+(?:\S*[/\\])?nvcc\b[^\n]*\n(?:[^\n]*\n){0,2}?[ \t]*real[ \t]+(\d+m[\d.]+)s\b|"
        r"(?m:^[^\n]*?\bnvcc\b[^\n]*?[\d.]+s user [\d.]+s system \d+% cpu ([\d:.]+) total[ \t]*$)",
        "nvcc",
    ),
    # a whole build's time, as the build tool itself reports it at its end: MSBuild's summary ("Time Elapsed
    # 01:23:45.67"), Bazel's ("INFO: Elapsed time: 5025.3s"), uv's ("Prepared 1 package in 95m 12s"), Cargo's
    # ("Finished `release` profile [optimized] target(s) in 75m 02s"), colcon's ("Finished <<< pkg [1h 2min 3s]",
    # "Summary: 3 packages finished [2h 5min 1s]")
    fx(
        "build_elapsed",
        r"\bTime Elapsed (\d+:\d\d:\d\d)|\bElapsed time: (\d+(?:\.\d+)?s)\b|"
        r"\bPrepared \d+ packages? in (\d+m \d+s)\b|\btarget\(s\) in (\d+m \d+s|[\d.]+s)\b|"
        r"(?:\bFinished <<< \S+|\bpackages? finished) \[((?:\d+h ?)?(?:\d+min ?)?(?:[\d.]+s)?)\]",
        ("Time Elapsed", "Elapsed time:", "Prepared ", "target(s) in", "Finished <<<", " finished ["),
    ),
)


def decide(fs: Facts, add: Add) -> None:
    add("F20", "build-still-running", unfinished(fs.last))
    add("F20", "heavy-build-unfinished", heavy_unfinished(fs.first("heavy_build"), fs.last))
    add("F20", "build-said-slow", fs.first("slow_build"))
    add("F20", "compile-timed-long", timed_long(fs.facts.get("timed_compile", ())))
    _clock_rules(fs, add)


def heavy_unfinished(heavy: Fact | None, last: deque[tuple[int, str]]) -> Fact | None:
    """A build known to take long (`heavy_build`) in the log's last lines with nothing after it that says how it
    ended: the log was copied while that build still ran (pip stuck on flash-attn, ptxas on its kernels)."""
    if heavy is None or not last or heavy.line_no < last[0][0]:
        return None
    # after it in the text: by place, not line number (a repr or JSON string of a log is many lines of one number)
    at = next((i for i, (no, text) in enumerate(last) if no == heavy.line_no and text == heavy.line), None)
    after = list(last)[at + 1 :] if at is not None else [(no, text) for no, text in last if no > heavy.line_no]
    return None if any(_BUILD_END.search(text) for _, text in after) else heavy


# how a build ended (pip's own "... done" of metadata or of a download is no end of the build)
_BUILD_END = re.compile(
    r"(?i:error|fail|fatal|traceback|exception|successfully|killed|terminated|abort|denied)|"
    r"Building wheel for \S+ \([^)\n]*\)(?: \.\.\. \w|: finished)|Created wheel|"
    r"Stored in directory|Built target|\[100%\]"
)


TIMED_LONG = 10.0  # seconds of one timed nvcc call: nvcc itself takes 1-4 s on a small file


def timed_long(timed: Iterable[Fact]) -> Fact | None:
    """The first nvcc run the reporter timed (`time nvcc ...`) whose wall-clock time is TIMED_LONG seconds or more:
    someone measured how long one compile takes, and it is long."""
    return next((f for f in timed if _seconds(f.value) >= TIMED_LONG), None)


STEP_LONG = 20 * 60  # one compile step: nvcc on one .cu takes seconds to a few minutes; tens of minutes is the
BUILD_LONG = 2 * 3600  # a whole build: a CUDA extension builds in minutes, the largest (PyTorch) in about an hour on


def _clock_rules(fs: Facts, add: Add) -> None:
    """F20 from time the log itself measured: one compile step's line and the next stamped line tens of minutes
    apart (not where that next line reports a failure: a compiler killed or out of memory after a long step is
    another cause), a stamped build spanning hours, or the build tool's own total; the span and the total only
    where the log does not end in a failure (that failure is the question, whatever it is)."""
    clock = fs.clock
    gap = clock.longest if clock is not None else None
    if gap is not None and gap.seconds >= STEP_LONG and not gap.failed:
        add("F20", "compile-step-long", Fact("clock", _minutes(gap.seconds), gap.line_no, gap.line))
    if not (_ends_failed(fs.last) or (clock is not None and clock.ends_failed)):
        if clock is not None and clock.ordered and clock.compiles and clock.span >= BUILD_LONG and clock.began:
            add("F20", "build-span-long", Fact("clock", _minutes(clock.span), clock.began[0], clock.began[1]))
        total = next((f for f in fs.facts.get("build_elapsed", ()) if _duration(f.value) >= BUILD_LONG), None)
        add("F20", "build-elapsed-long", total, took=_minutes(_duration(total.value)) if total else None)


def _ends_failed(last: Lines) -> bool:
    return any(FAILURE.search(text) for _, text in list(last)[-10:])


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min"


def _duration(value: str) -> float:
    """MSBuild's "01:23:45", Bazel's "5025.3s", uv's and Cargo's "95m 12s", colcon's "1h 2min 3s" as seconds."""
    if ":" in value:
        h, m, sec = value.split(":")
        return int(h) * 3600 + int(m) * 60 + float(sec)
    total = 0.0
    for number, unit in re.findall(r"([\d.]+)\s*(h|min|m|s)", value):
        try:
            total += float(number) * {"h": 3600, "min": 60, "m": 60, "s": 1}[unit]
        except ValueError:
            return 0.0
    return total


def _seconds(value: str) -> float:
    """bash's "1m2.5" or zsh's "62.5" / "1:02.5" as seconds."""
    minutes, _, rest = value.replace(":", "m").rpartition("m")
    try:
        return (int(minutes) if minutes else 0) * 60 + float(rest)
    except ValueError:
        return 0.0


# ---------------------------------------------------------------- signatures: the tools' own sentences

SIGNATURES: tuple[Signature, ...] = (
    # F20: a build that takes too long. pip without a terminal prints "started", then "still running..." once a
    # minute: ten of them after "started" is ten minutes or more in one wheel (one match per wheel, at "started");
    # CI and batch schedulers kill a job at their time limit.
    sig(
        "F20",
        "pip-still-running",
        r"Building wheel for (?P<package>[^\s(]+) \([^)\n]*\): started[^\n]*\n"
        r"(?:[^\n]*?Building wheel for [^\n]*?: still running\.\.\.[^\n]*\n){10}",
        needle="still running",
        span=12,
    ),
    sig(
        "F20",
        "travis-time-limit",
        words("The job exceeded the maximum time limit for jobs, and has been terminated."),
        needle="maximum time limit",
    ),
    # Azure Pipelines' agent ("of 360." in minutes, or "of 06:00:00.") and GitHub Actions' runner ("of 360 minutes.").
    sig(
        "F20",
        "ci-job-time-limit",
        r"has exceeded the maximum execution time of (?P<limit>\d+(?::\d+)*)",
        needle="maximum execution time",
    ),
    sig("F20", "slurm-time-limit", r"CANCELLED AT \S+ DUE TO TIME LIMIT", needle="DUE TO TIME LIMIT"),
)
