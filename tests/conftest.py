"""Shared test helpers. Markers (pyproject.toml): wine, linux, gpu, windows, posix, winpy, slow.

The one tier guard: `need()` skips a test whose tool or package is missing on a developer machine and
fails it under CI (CI installs everything: tests/run-all.sh, the workflows). At the end of a CI run,
`pytest_sessionfinish` fails the run when a whole tier selected by `-m` ran zero tests, so a missing
package or tool can make CI fail loudly but never shrink it silently.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner

from tests import isolation, tierguard
from tests.tierguard import on_ci

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
CORPUS = TESTS / "corpus"
MACHINES = TESTS / "machines"
EXAMPLES = ROOT / "examples" / "machines"


def _under_wine() -> bool:
    """True when this is a Windows Python running under Wine: Wine's ntdll exports wine_get_version,
    Windows' does not. Tests use it to mark what only Wine does differently (xfail, strict)."""
    if sys.platform != "win32":
        return False
    import ctypes

    return hasattr(ctypes.WinDLL("ntdll"), "wine_get_version")


UNDER_WINE = _under_wine()


def _no_wmi(*_args: object) -> None:
    raise OSError("WMI is not asked under Wine 8 (tests/conftest.py)")


if UNDER_WINE:
    # CPython 3.12+ asks WMI first in platform.system()/win32_ver()/uname(); under Wine 8 that query
    # reaches propsys.VariantToString, which Wine 8 does not implement, and the process dies (now and
    # then: CI of 2026-11-25, 3.13 tier, importing hypothesis). platform falls back to
    # sys.getwindowsversion() and the environment on OSError, as it does where WMI is unavailable.
    import platform

    if hasattr(platform, "_wmi_query"):
        platform._wmi_query = _no_wmi
# The linux, wine and winpy folders hold Linux-only tiers (real nvcc/gcc, Wine, POSIX signals at import
# time): on Windows their modules are not imported at all, rather than imported and then deselected.
collect_ignore = ["linux", "wine", "winpy"] if sys.platform == "win32" else []
# python.org's embeddable build (the Windows-CPython tier's interpreter): its python3XX._pth file fixes
# sys.path, so PYTHONPATH is ignored and it has no venv launcher. The runners' full CPython has both.
EMBEDDED_PYTHON = sys.platform == "win32" and any(Path(sys.executable).parent.glob("python3*._pth"))


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    def json(self):
        return json.loads(self.stdout)


def run_cli(*args: str, env: dict | None = None, host=None) -> CliResult:
    """Run envmgr in-process (fast) with its real error handling and exit codes; `host` is the machine
    the command describes (default: this one), given to the CLI as a command line gives a --machine."""
    from envmgr.cli.main import Ctx, cli

    runner = CliRunner()
    base = {"NO_COLOR": "1", "ENVMGR_MACHINE": None, "ENVMGR_WINEPREFIX": None, "ENVMGR_PREBUILT_INDEX": ""}
    obj = Ctx(host=host) if host is not None else None
    result = runner.invoke(cli, list(args), env={**base, **(env or {})}, catch_exceptions=False, obj=obj)
    return CliResult(result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def cli():
    return run_cli


def sample_bytes(name: str) -> bytes:
    """A real binary sample from tests/corpus/devicecode (its README says how each was built)."""
    return (CORPUS / "devicecode" / name).read_bytes()


CUDA_SO = "libtiny_cuda-sm75-sm90a-compute90.so"  # nvcc 13.0: cubin sm_75 sm_90a, PTX compute_90
PLAIN_SO = "libplain-no-device-code.so"  # gcc: no device code, no CUDA import


def corpus(name: str) -> str:
    """A real sample, read exactly as stored (bytes decoded as UTF-8, line endings untouched)."""
    return (CORPUS / name).read_bytes().decode("utf-8")


@pytest.fixture
def envmgr_dirs(tmp_path, monkeypatch) -> Path:
    """envmgr's cache and config folders under tmp_path and no team index; returns the cache folder."""
    monkeypatch.setenv("ENVMGR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENVMGR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("ENVMGR_WHEEL_INDEX", raising=False)
    return tmp_path / "cache"


def need(present: bool, why: str, *, required: bool = False) -> None:
    """Skip when what a test needs is missing; fail instead under CI, or always when `required`."""
    if present:
        return
    if required or on_ci():
        pytest.fail(f"{why} (CI is set, so this is a failure, not a skip)" if on_ci() else why)
    pytest.skip(why)


def need_module(name: str) -> ModuleType:
    """importorskip under the tier guard's rule: a missing test dependency fails the test under CI."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        need(False, f"needs the Python package {name!r} (pip install -e '.[test]'): {exc}")
        raise  # not reached: need() skips or fails


class Lazy:
    """A module imported on first use, inside the test that uses it, so that a module-level
    `x = Lazy("x")` skips (or, under CI, fails) only the tests that need x, not the whole file."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str):
        if attr.startswith(("_", "pytest")):  # pytest's collection probes module globals for these
            raise AttributeError(attr)
        return getattr(need_module(self._name), attr)


def pytest_configure(config):
    tierguard.install(config)
    isolation.install(config)


@pytest.fixture(autouse=True)
def isolated_user_folders(tmp_path_factory, monkeypatch) -> Path:
    """Every test's own envmgr cache, config and data folders (tests/isolation.py): in os.environ, so the
    subprocesses a test starts inherit them. Outside tmp_path, so a test's listing of tmp_path is its own."""
    home = tmp_path_factory.mktemp("envmgr-user")
    for name, sub in (("ENVMGR_CACHE_DIR", "cache"), ("ENVMGR_CONFIG_DIR", "config"), ("ENVMGR_DATA_DIR", "data")):
        monkeypatch.setenv(name, str(home / sub))
    return home


def pytest_collection_modifyitems(config, items):
    on_windows = sys.platform == "win32"
    for item in items:
        if "windows" in item.keywords and not on_windows:
            item.add_marker(pytest.mark.skip(reason="runs only on Windows"))
        if on_windows and any(m in item.keywords for m in ("posix", "linux", "wine")):
            item.add_marker(pytest.mark.skip(reason="needs POSIX tools (this tier runs on Linux)"))
        if "gpu" in item.keywords and not os.environ.get("ENVMGR_GPU_TESTS"):
            item.add_marker(pytest.mark.skip(reason="needs an NVIDIA GPU (run through the device tool)"))
