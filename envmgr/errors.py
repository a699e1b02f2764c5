"""The error tree: every expected failure of envmgr, each class with its exit code and every error
with a one-line remedy. The CLI prints them in one place (output.show_error) and exits with the code.

Exit codes (README "Exit codes"): 1 a check failed, 2 bad usage or bad input, 3 nothing matched a
selector; 126/127 a command that cannot be started (as shells do); 128 + N a signal; a child's own
code where envmgr ran a child (pip) whose failure is the answer. A class states its code; the few
that depend on what happened (a signal number, a child's code) derive it from their own fields.
"""

from __future__ import annotations

import unicodedata


class EnvmgrError(Exception):
    """An expected failure: printed as one line plus its remedy, never as a traceback."""

    exit_code = 2

    def __init__(self, message: str, remedy: str = "", *, details: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.remedy = remedy
        self.details = details


class UsageError(EnvmgrError):
    exit_code = 2


class NotAUrl(UsageError, ValueError):
    """A location that does not parse as a URL (`http://[::1`, a port that is no number): envmgr's own
    error (exit 2, one line) and a ValueError, as urllib's own parse errors are (wheels/url.py)."""


class InputFileError(EnvmgrError):
    """A file the user handed us (machine record, snapshot, recipe) is unreadable or malformed."""

    exit_code = 2


class NoMatchError(EnvmgrError):
    """A selector matched nothing; `details` lists the candidates."""

    exit_code = 3


class CheckFailed(EnvmgrError):
    exit_code = 1


# --- input files -------------------------------------------------------------------------------
class LogInputError(InputFileError):
    """Why a log cannot be scanned (doctor --log), one line."""


class BadWheel(InputFileError):
    """A wheel (zip) that cannot be read safely (files/wheelzip.py): one line; `reason` is it without the name."""

    def __init__(self, label: str, reason: str) -> None:
        super().__init__(
            f"{label}: {reason}",
            "use another wheel (download it again, or pick another index); "
            "envmgr never reads past its limits (docs/wheels.md)",
        )
        self.reason = reason


class PlanRejected(EnvmgrError):
    """A fix-msbuild plan file that is not one, or no longer matches the machine."""

    exit_code = 2


# --- environments and shells -------------------------------------------------------------------
# Where a format refuses something, the remedy names formats that can hold it: of these (the ones a user
# of the format would turn to), those that hold the environment; shellkit.render tries each (audit M2).
ALTERNATIVES = {
    "sh": ("fish", "ps1"),
    "fish": ("sh", "ps1"),
    "ps1": ("sh", "fish"),
    "cmd": ("ps1",),
    "dotenv": ("sh", "ps1"),
    "github": ("sh", "ps1"),
}
ALTERNATIVE_FORMATS = {
    fmt: " or ".join(alts) + (" (run it in a step)" if fmt == "github" else "") for fmt, alts in ALTERNATIVES.items()
}


def describe_char(ch: str) -> str:
    name = unicodedata.name(ch, "") or {"\n": "LINE FEED", "\r": "CARRIAGE RETURN", "\0": "NUL"}.get(ch, "control")
    return f"{ch!r} (U+{ord(ch):04X} {name})"


class UnrepresentableValue(EnvmgrError):
    """A variable's name or value cannot be written in the requested format without changing it."""

    exit_code = 2

    def __init__(self, fmt: str, name: str, reason: str, char: str | None = None, *, what: str = "value") -> None:
        where = f" ({describe_char(char)})" if char is not None else ""
        message = f"{fmt}: cannot represent the {what} of variable {name!r}: {reason}{where}"
        remedy = f"export this environment as {ALTERNATIVE_FORMATS.get(fmt, 'another format')} instead"
        super().__init__(message, remedy)
        self.fmt, self.name, self.char, self.reason = fmt, name, char, reason


class CaptureError(EnvmgrError):
    """vcvarsall.bat (or the environment dump after it) failed."""

    exit_code = 1


# --- running commands --------------------------------------------------------------------------
class CannotStart(EnvmgrError):
    """The command exists but cannot be started: exit 126, as shells do."""

    exit_code = 126


class CommandNotFound(CannotStart):
    """No such command in the environment's PATH: exit 127, as shells do."""

    exit_code = 127


class Interrupted(EnvmgrError):
    """A signal reached envmgr while a step ran (the step has ended): exit 128 + N, as shells do."""

    def __init__(self, message: str, signum: int, remedy: str = "") -> None:
        super().__init__(message, remedy)
        self.signum = signum

    @property
    def exit_code(self) -> int:  # type: ignore[override]  # read, never set: derived from the fields
        return 128 + self.signum


class ChildFailed(EnvmgrError):
    """A child envmgr ran for the user (pip) failed: its exit code is envmgr's (1 when it has none)."""

    def __init__(self, message: str, remedy: str, code: int) -> None:
        super().__init__(message, remedy)
        self.code = code

    @property
    def exit_code(self) -> int:  # type: ignore[override]  # read, never set: derived from the fields
        return self.code if self.code > 0 else 1


# --- fix-msbuild -------------------------------------------------------------------------------
class CannotWrite(EnvmgrError):
    """This host has no files envmgr can write (a recorded machine)."""

    exit_code = 2


class OutputFailed(EnvmgrError):
    """stdout could not be written: a full disk, a file size limit (`ulimit -f`), a closed stdout (issue 34, N24)."""

    exit_code = 2


class ApplyFailed(EnvmgrError):
    exit_code = 1


class UndoRefused(EnvmgrError):
    exit_code = 1


# --- hook --------------------------------------------------------------------------------------
class HookTargetError(EnvmgrError):
    """`envmgr hook`: the target Python cannot take the hook (it does not run, says nothing usable, or has no
    site folder that its start-up reads)."""

    exit_code = 2
