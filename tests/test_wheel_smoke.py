"""The built wheel, not the source tree: what `pip install envmgr-cuda` gives a user (issue 33).

The sdist and the wheel are built once per session (`python -m build`, as .github/workflows/release.yml
does: the wheel is built from the sdist, so a file the sdist forgets fails here). The wheel is then
installed into a clean environment, on Linux (a venv) and under a real Windows CPython in Wine (a copy
of the embeddable interpreter with only the wheel and its dependencies in its site-packages), and
tests/wheel_smoke.py runs there: --version, list, export of a recorded machine, doctor --json.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, need, need_module
from tests.wine.conftest import WINE64, new_prefix
from tests.winpy.conftest import VERSION, WinPython, build_interpreter, windows_path

SMOKE = ROOT / "tests" / "wheel_smoke.py"
# `list` replays the Windows example; `export` needs a record that can make a snapshot without a vcvars
# capture (a Windows record needs `record --capture`; the example has none), which a Linux record can.
LIST_MACHINE = ROOT / "examples" / "machines" / "community-buildtools-cuda124.toml"
EXPORT_MACHINE = ROOT / "tests" / "machines" / "linux-two-toolkits.toml"


@pytest.fixture(scope="session")
def dist(tmp_path_factory) -> dict[str, Path]:
    """The sdist and the wheel, built once (PyPI gives hatchling to the isolated build, nothing else)."""
    need_module("build")
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], capture_output=True, text=True, timeout=600
    )
    said = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == 0, f"python -m build failed ({done.returncode}):\n{said}"
    [wheel] = out.glob("envmgr_cuda-*-py3-none-any.whl")
    [sdist] = out.glob("envmgr_cuda-*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


# The files are built on Linux only (the Windows-CPython tier has no `build`, and its interpreter is
# slow to build under Wine); the Windows side installs and runs those same files (the winpy test below,
# and release.yml's windows-latest job).
@pytest.mark.slow
@pytest.mark.posix
def test_the_wheel_and_the_sdist_carry_the_license_and_the_metadata(dist):
    with zipfile.ZipFile(dist["wheel"]) as whl:
        names = whl.namelist()
        [meta] = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = whl.read(meta).decode("utf-8")
        [lic] = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert whl.read(lic) == (ROOT / "LICENSE").read_bytes()
    assert "Name: envmgr-cuda\n" in metadata
    assert "License-Expression: MIT\n" in metadata
    for classifier in (
        "Programming Language :: Python :: 3.10",
        "Programming Language :: Python :: 3.13",
        "Operating System :: Microsoft :: Windows",
        "Operating System :: POSIX :: Linux",
        "Development Status :: 4 - Beta",
        "Topic :: Software Development :: Build Tools",
    ):
        assert f"Classifier: {classifier}\n" in metadata
    assert "envmgr/__init__.py" in names and "envmgr/_data/shells/Envmgr.psm1" in names
    # The long description is README.md: on an index page a relative link goes nowhere.
    body = metadata.split("\n\n", 1)[1]
    assert "](docs/" not in body and "](./" not in body
    with tarfile.open(dist["sdist"]) as tar:
        top = tar.getnames()[0].split("/")[0]
        assert f"{top}/LICENSE" in tar.getnames()


@pytest.mark.slow
@pytest.mark.posix
def test_the_wheel_in_a_clean_venv_passes_the_smoke(dist, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    done = subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(dist["wheel"])],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    smoke = subprocess.run(
        [
            str(py),
            str(SMOKE),
            "--python",
            str(py),
            "--machine",
            str(LIST_MACHINE),
            "--export-machine",
            str(EXPORT_MACHINE),
            "--not-under",
            str(ROOT),
            "--",
            str(venv / "bin" / "envmgr"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
    )
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    assert smoke.stdout.count("ok: ") == 6, smoke.stdout


def clean_windows_python(base: Path, wheel: Path) -> Path:
    """A copy of the embeddable interpreter whose path is its stdlib and its own site-packages only
    (the checkout is not on it), with the wheel installed there from the cached win_amd64 wheels."""
    source = build_interpreter(VERSION).parent
    dest = base / "py"
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("site-packages", "*._pth", ".envmgr-ready-*"))
    [pth] = source.glob("python3*._pth")
    (dest / pth.name).write_bytes(f"{pth.stem}.zip\r\n.\r\nLib\r\nLib\\site-packages\r\nimport site\r\n".encode())
    tag = "cp" + VERSION.replace(".", "")
    wheels = ROOT / ".cache" / "downloads" / f"win_amd64-{tag}"
    # pip evaluates markers for the Python it runs in (Linux), so the win32-only pin is named here, as
    # tests/setup/windows-python.sh does; 2.0.13 is the pywinpty that loads under Wine 8.
    extra = [] if VERSION == "3.13" else ["pywinpty==2.0.13"]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "--platform",
            "win_amd64",
            "--python-version",
            VERSION,
            "--implementation",
            "cp",
            "--only-binary=:all:",
            "--no-index",
            "--find-links",
            str(wheels),
            "--target",
            str(dest / "Lib" / "site-packages"),
            str(wheel),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return dest / "python.exe"


@pytest.mark.slow
@pytest.mark.wine
@pytest.mark.winpy
def test_the_wheel_under_windows_cpython_passes_the_smoke(dist, tmp_path):
    need(WINE64.exists(), f"{WINE64} is missing: run tests/setup/install-system.sh")
    exe = clean_windows_python(tmp_path, dist["wheel"])
    with new_prefix(tmp_path) as pfx:
        win = WinPython(exe, pfx)
        done = win.run(
            windows_path(SMOKE),
            "--python",
            windows_path(exe),
            "--machine",
            windows_path(LIST_MACHINE),
            "--export-machine",
            windows_path(EXPORT_MACHINE),
            "--not-under",
            windows_path(ROOT),
            "--",
            windows_path(exe),
            "-X",
            "utf8",
            "-m",
            "envmgr",
            cwd=tmp_path,
            timeout=900,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("ok: ") == 6, done.stdout
