"""No test writes into the real user folders (issue 34, deliverable 4): the isolation is the default, and a
run that reached a real location fails.

* Every test gets its own ENVMGR_CACHE_DIR, ENVMGR_CONFIG_DIR and ENVMGR_DATA_DIR (tests/conftest.py's
  autouse fixture `isolated_user_folders`), in os.environ, so an in-process command and every subprocess a
  test starts (which inherits os.environ) use them. A test that sets its own (`envmgr_dirs`,
  monkeypatch.setenv, an `env=` argument) still wins.
* Where a test takes those settings away (a subprocess given a filtered environment, a test of the
  default location), envmgr falls back to platformdirs, and for the whole session platformdirs' own
  locations point at a trap folder: XDG_CACHE_HOME, XDG_CONFIG_HOME, XDG_DATA_HOME (Linux, and the fast
  path's copy of the cache rule) and WIN_PD_OVERRIDE_LOCAL_APPDATA / WIN_PD_OVERRIDE_APPDATA (platformdirs
  on Windows, whose known-folder lookup ignores LOCALAPPDATA and APPDATA). At the end an `envmgr` folder in
  the trap fails the run, naming what was written.
* The real folders (worked out before the trap was set) are compared at the end as well: on CI a change
  fails the run; on a developer machine it is a warning, because other processes there (an envmgr the
  developer runs, another checkout's tests) write to them too.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import platformdirs
import pytest

from tests.tierguard import on_ci

SETTINGS = ("ENVMGR_CACHE_DIR", "ENVMGR_CONFIG_DIR", "ENVMGR_DATA_DIR")
TRAPPED = {
    "XDG_CACHE_HOME": "xdg-cache",
    "XDG_CONFIG_HOME": "xdg-config",
    "XDG_DATA_HOME": "xdg-data",
    "WIN_PD_OVERRIDE_LOCAL_APPDATA": "localappdata",
    "WIN_PD_OVERRIDE_APPDATA": "appdata",
}
MAX_LISTED = 2000  # entries of a real folder compared; the real cache of a long-used machine can be large


def real_folders() -> tuple[Path, ...]:
    """envmgr's real cache, config and data folders, as platformdirs gives them in this environment."""
    return tuple(
        Path(f("envmgr", appauthor=False))
        for f in (platformdirs.user_cache_dir, platformdirs.user_config_dir, platformdirs.user_data_dir)
    )


def listing(folder: Path) -> dict[str, tuple[int, int]]:
    """{relative path: (size, mtime_ns)} of what is under folder (at most MAX_LISTED entries)."""
    out: dict[str, tuple[int, int]] = {}
    if not folder.is_dir():
        return out
    for root, dirs, files in os.walk(folder):
        for name in (*dirs, *files):
            path = Path(root, name)
            try:
                st = path.lstat()
            except OSError:
                continue
            out[path.relative_to(folder).as_posix()] = (st.st_size if name in files else 0, st.st_mtime_ns)
            if len(out) >= MAX_LISTED:
                return out
    return out


def changes(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> list[str]:
    return sorted(
        [f"new {p}" for p in after.keys() - before.keys()]
        + [f"changed {p}" for p in after.keys() & before.keys() if after[p] != before[p]]
        + [f"removed {p}" for p in before.keys() - after.keys()]
    )


class Isolation:
    def __init__(self) -> None:
        self.real = real_folders()
        self.before = {str(f): listing(f) for f in self.real}
        self.trap = Path(tempfile.mkdtemp(prefix="envmgr-test-trap-"))
        self.saved = {name: os.environ.get(name) for name in (*SETTINGS, *TRAPPED)}
        for name in SETTINGS:  # a developer's own setting (perhaps the real cache) is not inherited
            os.environ.pop(name, None)
        for name, sub in TRAPPED.items():
            os.environ[name] = str(self.trap / sub)

    def reached(self) -> list[str]:
        """What a test wrote where platformdirs would have put envmgr's folders."""
        # platformdirs' app folder is named "envmgr" exactly; the suite's own download cache beside it
        # (tests/setup/fetch-windows-cuda.sh's envmgr-test-downloads under XDG_CACHE_HOME) is not envmgr's
        return sorted(p.relative_to(self.trap).as_posix() for p in self.trap.rglob("*") if p.name == "envmgr")

    def touched(self) -> list[str]:
        return [f"{folder}: {c}" for folder in self.before for c in changes(self.before[folder], listing(Path(folder)))]

    def restore(self) -> None:
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(self.trap, ignore_errors=True)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session) -> None:
        reached, touched = self.reached(), self.touched()
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        say = reporter.write_line if reporter is not None else (lambda s: sys.stderr.write(s + "\n"))
        if reached:
            say(
                f"ISOLATION: tests wrote to envmgr's default folders (would have been the real ones): {reached[:20]}; "
                "give the command ENVMGR_CACHE_DIR/ENVMGR_CONFIG_DIR/ENVMGR_DATA_DIR (tests/isolation.py)"
            )
        if touched:
            say(
                ("ISOLATION: " if on_ci() else "isolation warning (another process may have done it): ")
                + f"the real envmgr folders changed during the run: {touched[:20]}"
            )
        if reached or (touched and on_ci()):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        self.restore()


def install(config) -> Isolation:
    guard = Isolation()
    config.pluginmanager.register(guard, "envmgr-isolation")
    return guard


def pytest_configure(config) -> None:
    """`-p tests.isolation`: the same guard in a pytest run of other files (its own tests do that)."""
    if not config.pluginmanager.has_plugin("envmgr-isolation"):
        install(config)
