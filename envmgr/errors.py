"""The error tree: each class carries its exit code; every error carries a one-line remedy."""
from __future__ import annotations


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


class InputFileError(EnvmgrError):
    """A file the user handed us (machine record, snapshot, recipe) is unreadable or malformed."""

    exit_code = 2


class NoMatchError(EnvmgrError):
    """A selector matched nothing; `details` lists the candidates."""

    exit_code = 3


class CheckFailed(EnvmgrError):
    exit_code = 1
