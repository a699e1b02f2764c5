"""The CI check that a whole test tier did not silently vanish.

Under CI (tests/conftest.py `on_ci`), a tier marker that the run selected (its tests were collected
and kept by `-m`, or the run's paths cover the tier's folder and `-m` keeps the marker) must have run
at least one test: passed, failed or xfailed. Skipped does not count. When a tier ran none (its tool or
Python package is missing, a module-level skip removed its files), the run fails and says which tier
and why. On win32 (the workflow's runners, tests/run-win32.sh under Wine) the POSIX tiers skip by
design, so only `windows` is checked there; on Linux `windows` skips by design.

tests/conftest.py installs it; `-p tests.tierguard` installs it in a pytest run of other files (its
own tests do that).
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path

import pytest

POSIX_TIERS = ("wine", "linux", "winpy", "posix")
WIN32_TIERS = ("windows",)
HOMES = {"wine": "tests/wine", "linux": "tests/linux", "winpy": "tests/winpy", "windows": "tests/windows"}
ALSO = {"winpy": ("wine",)}  # every winpy test is a wine test too (tests/winpy/*.py pytestmark)
ROOT = Path(__file__).resolve().parent.parent


def on_ci() -> bool:
    """CI is set (GitHub sets CI=true); "", 0, false and no mean off."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def tiers_for(platform: str) -> tuple[str, ...]:
    return WIN32_TIERS if platform == "win32" else POSIX_TIERS


def mark_keeps(markexpr: str, tier: str) -> bool:
    """Whether `-m markexpr` keeps a test that carries only this tier's markers."""
    if not markexpr:
        return True
    from _pytest.mark.expression import Expression

    names = {tier, *ALSO.get(tier, ())}
    return Expression.compile(markexpr).evaluate(lambda name, **kwargs: name in names)


def covers(args: list[str], start: Path, home: Path) -> bool:
    """Whether one of the run's path arguments is the tier's folder or contains it."""
    for arg in args:
        path = (start / arg.split("::")[0]).resolve()
        if path == home or path in home.parents:
            return True
    return False


def ran(report) -> bool:
    """A test ran: passed or failed in any phase, or xfailed (skipped with wasxfail)."""
    if report.failed:
        return True
    if report.when != "call":
        return False
    return report.passed or (report.skipped and hasattr(report, "wasxfail"))


class TierGuard:
    def __init__(self, config, platform: str = sys.platform) -> None:
        self.config = config
        self.tiers = tiers_for(platform)
        self.selected: Counter = Counter()
        self.ran: Counter = Counter()
        self.skips: dict[str, str] = {}
        self.session = None

    def expected(self) -> list[str]:
        option = self.config.option
        markexpr = getattr(option, "markexpr", "") or ""
        start = Path(self.config.invocation_params.dir)
        by_path = not getattr(option, "keyword", "")
        out = []
        for tier in self.tiers:
            home = ROOT / HOMES[tier] if tier in HOMES else None
            if self.selected[tier] or (
                by_path
                and home is not None
                and home.is_dir()
                and covers(list(self.config.args), start, home)
                and mark_keeps(markexpr, tier)
            ):
                out.append(tier)
        return out

    def empty(self) -> list[str]:
        return [t for t in self.expected() if not self.ran[t]]

    def pytest_sessionstart(self, session) -> None:
        self.session = session

    def pytest_collection_finish(self, session) -> None:
        for item in session.items:
            for tier in self.tiers:
                if item.get_closest_marker(tier) is not None:
                    self.selected[tier] += 1

    def pytest_runtest_logreport(self, report) -> None:
        for tier in self.tiers:
            if tier not in report.keywords:
                continue
            if ran(report):
                self.ran[tier] += 1
            elif report.skipped and tier not in self.skips and isinstance(report.longrepr, tuple):
                self.skips[tier] = str(report.longrepr[2]).removeprefix("Skipped: ")

    def pytest_sessionfinish(self, session, exitstatus) -> None:
        if (
            self.active(session)
            and self.empty()
            and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)
        ):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def active(self, session) -> bool:
        option = self.config.option
        return on_ci() and not getattr(option, "collectonly", False) and not session.shouldstop

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.active(self.session):
            return
        empty = self.empty()
        counts = ", ".join(f"{t} {self.ran[t]} ran of {self.selected[t]}" for t in self.expected())
        if not empty:
            terminalreporter.write_line(f"tier guard (CI): {counts or 'no tier selected'}")
            return
        terminalreporter.write_sep("=", "tier guard: a whole test tier ran zero tests (CI)", red=True, bold=True)
        for tier in empty:
            why = self.skips.get(tier, "its tests were not collected (a module-level skip or a missing folder?)")
            terminalreporter.write_line(
                f"tier {tier!r}: {self.selected[tier]} selected, 0 ran; first reason: {why}", red=True
            )
        terminalreporter.write_line(
            "CI installs every tier's tools (tests/run-all.sh): this run FAILS instead of shrinking silently.", red=True
        )


def install(config) -> None:
    if not config.pluginmanager.has_plugin("envmgr-tierguard"):
        config.pluginmanager.register(TierGuard(config), "envmgr-tierguard")


def pytest_configure(config) -> None:
    install(config)
