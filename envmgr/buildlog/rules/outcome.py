"""How the log ends, and what its later lines contradict: the state a log stops in (a build that succeeded, a step
still running, a program's own stop, an excerpt cut open) and `contradicted`, the check the registry applies to every
decision (a cause whose thing then works is not named). Gives no id itself.
"""

from __future__ import annotations

import re

from envmgr.buildlog.rules.base import Details, Fact, Facts, Lines
from envmgr.catalog import FailureId

# ---------------------------------------------------------------- what the log's later lines contradict

# causes that stop a build (a compile, a link, a configure, pip's build of the wheel), by id and by rule: the build
# then ending in success, with no failure after it, says the step did not stop there (F10's quoting, F12's arch
# list from no GPU, F18-F20 leave a build that succeeds: not here; nor F09's old flag names, which the catalog says
# can leave a CPU-only build, except the removed flag of a version whose configure fails)
_BUILD_STOPS: set[FailureId] = {
    "F01",
    "F02",
    "F03",
    "F04",
    "F05",
    "F06",
    "F07",
    "F08",
    "F11",
    "F13",
    "F21",
    "F22",
    "F24",
    "F25",
}
_BUILD_STOP_RULES = {"empty-arch", "cuda-package-build-failed", "removed-flag-for-version"}
# F22's rules (the facts' and the signatures') where nvcc is not found at all, not a wrong one found
_NVCC_MISSING = {"nvcc-missing", "nvcc-not-on-path"}
# a build's own last word of success: pip's, setuptools' wheel, CMake's make/ninja targets, MSBuild's summary (en,
# de, zh, ja)
_BUILD_OK = re.compile(
    r"\bSuccessfully (?:installed|built) |\bCreated wheel for |\[100%\] Built target |"
    r"^\s*(?:Build succeeded\.|0 Error\(s\)|0 Fehler|0 个错误|0 エラー)|"
    r"Der Buildvorgang wurde erfolgreich ausgeführt|已成功生成|ビルドに成功しました"
)
_FAILED_AFTER = re.compile(r"(?i:\berror|\bfail|fatal|traceback|exception|\bkilled\b|\babort)")


def contradicted(fs: Facts, fid: FailureId, rule: str, fact: Fact, details: Details) -> Fact | None:
    """A line after the cause's own that shows the thing the cause says is missing working, judged by what the
    cause IS: a run on the CPU (F18) and the GPU then doing the run's work; a library named missing and that
    library then opened; no CUDA compiler and CMake then identifying nvcc; a build stopped and the build then
    ending in success with no failure after it (the log's last lines)."""

    def after(kind: str, value: str | None = None) -> Fact | None:
        return next(
            (
                f
                for f in fs.facts.get(kind, ())
                if f.line_no > fact.line_no and (value is None or f.value.lower() == value.lower())
            ),
            None,
        )

    lib = details.get("dll") or details.get("lib")
    if fid == "F18":
        return after("ok_gpu_work") or (stopped_after(fs.last, fact.line_no) if rule in _F18_ASKED else None)
    if fid in ("F15", "F23") and isinstance(lib, str):
        return after("ok_lib_loaded", lib)
    if fid == "F07" or rule in _NVCC_MISSING:
        return after("ok_nvcc_found")
    return build_stop_contradicted(fs.last, fid, rule, fact.line_no)


def build_stop_contradicted(last: Lines, fid: FailureId, rule: str, line_no: int) -> Fact | None:
    """A cause that stops a build (by id, or by rule where the id also names causes that do not) whose line the
    build's own success follows, with no failure after it (`build_succeeded`): the build did not stop there. Read
    for a signature's match as for a fact's (logscan), so one rule covers every build-stopping id."""
    if fid in _BUILD_STOPS or rule in _BUILD_STOP_RULES:
        return build_succeeded(last, line_no)
    return None


# F18's rules that rest on what the run was given or the reporter's words, not on the runtime's own report: a run
# left on the CPU is a run that went on, so a log that then ends with the program's own stop (a Python exception, a
# frozen app's unhandled one, a crash, a ggml assertion) reports that stop, not a CPU run
_F18_ASKED = {"gpu-asked-no-layers", "run-without-layers", "zero-gpu-layers", "cpu-run-said-gpu-asked"}
_STOPPED = re.compile(
    r"Traceback \(most recent call last\)|^[ \t>]*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\b: |"
    r"Failed to execute script|unhandled exception|Segmentation fault|core dumped|GGML_ASSERT|"
    r"terminate called after"
)


def stopped_after(last: Lines, line_no: int) -> Fact | None:
    """The first of the log's last lines, after `line_no`, where the program stopped on an error of its own."""
    return next(
        (Fact("stopped", text.strip(), no, text) for no, text in last if no > line_no and _STOPPED.search(text)), None
    )


def build_succeeded(last: Lines, line_no: int) -> Fact | None:
    """The last success line of a build among the log's last lines, after `line_no`, with no failure after it."""
    return _last_unanswered(last, "build_ok", _BUILD_OK, _FAILED_AFTER, after=line_no)


def _last_unanswered(
    last: Lines, kind: str, mark: re.Pattern[str], answer: re.Pattern[str], after: int = 0
) -> Fact | None:
    """The last of the log's last lines (after line `after`) that `mark` finds, where no line after it is one
    `answer` finds: the state the log ends in (a build still running, a build that succeeded)."""
    found: Fact | None = None
    for no, text in last:
        if no <= after:
            continue
        m = mark.search(text)
        if m is not None:  # (the answer may follow on the same line: an excerpt whose lines were joined)
            found = None if answer.search(text, m.end()) else Fact(kind, text.strip(), no, text)
        elif found is not None and answer.search(text):
            found = None
    return found


# pip at work on a wheel: its spinner, "started" or "still running" (a build's own progress lines are no
# evidence: a clean train log is a build's progress, pasted while it went well)
_PROGRESS = re.compile(
    r"Building wheels? for (?:collected packages:|\S+ \([^)\n]*\)(?:: (?:started|still running)|"
    r" \.\.\.[ \t|/\\-]*$))|Running setup\.py bdist_wheel for \S+ \.\.\.[ \t|/\\-]*$"
)
# what a build step ends with, or a failure says
_OUTCOME = re.compile(
    r"(?i:error|fail|fatal|traceback|exception|success|killed|terminated|abort|denied|warning)|"
    r"\.\.\. done|: finished|Built target|Created wheel|Stored in directory|Linking"
)


def unfinished(last: Lines) -> Fact | None:
    """The last progress line of a build when nothing after it says how the step ended: the log was copied
    while the build still ran (a spinner, a compile line), so it took long enough for someone to stop and ask."""
    return _last_unanswered(last, "unfinished", _PROGRESS, _OUTCOME)


def ends_open(last: Lines) -> Fact | None:
    """The log's last line with text where none of its last lines says how a step ended (an error, a failure, a
    success, a stop): an excerpt cut before its tool printed the outcome (read only where nothing was named)."""
    texts = [(no, text) for no, text in last if text.strip()]
    if not texts or any(_OUTCOME.search(text) for _, text in texts):
        return None
    no, text = texts[-1]
    return Fact("ends_open", text.strip(), no, text)
