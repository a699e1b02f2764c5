"""One Wine prefix per test session, laid out as a Windows machine with NVIDIA's real nvcc.exe.

Needs what tests/setup/install-system.sh installs (wine64, mingw-w64) and network access to PyPI the
first time (tests/setup/fetch-windows-cuda.sh caches the wheels). Measured costs: WINE-NOTES.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from tests.conftest import ROOT, need

WINE64 = Path("/usr/lib/wine/wine64")
WINESERVER = Path("/usr/lib/wine/wineserver")
MINGW_GCC = "x86_64-w64-mingw32-gcc"
CUDA_WHEELS = "nvidia-cuda-nvcc==13.2.* nvidia-cuda-crt==13.2.*"
CUDA_KEY = "HKLM\\SOFTWARE\\NVIDIA Corporation\\GPU Computing Toolkit\\CUDA"
MACHINE_ENV = "HKLM\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment"
CUDA_DIR = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v13.2"
STATE_ID = "4b2f1a9c"  # the installer names _Instances folders by instance id
BUILDTOOLS_TOOLSET = "14.16.27023"


@dataclass(frozen=True)
class WinePrefix:
    path: Path
    env: dict

    @property
    def drive_c(self) -> Path:
        return self.path / "drive_c"

    def unix(self, windows_path: str) -> Path:
        assert windows_path[:3].upper() == "C:\\", windows_path
        return self.drive_c.joinpath(*windows_path[3:].split("\\"))

    def wine(self, *args: str, timeout: float = 120) -> tuple[int, str, str]:
        """wine64 ARGS with output in files: a program left running by Wine (services.exe after
        wineboot) inherits the handles and would keep a pipe open."""
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            rc = subprocess.run(
                [str(WINE64), *args], stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=self.env, timeout=timeout
            ).returncode
            out.seek(0)
            err.seek(0)
            return rc, out.read().decode("cp437"), err.read().decode("cp437")

    def reg(self, *args: str) -> str:
        rc, out, err = self.wine("reg", *args)
        assert rc == 0, f"reg {' '.join(args)}: exit {rc}: {out}{err}"
        return out


def wine_env(prefix: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(WINEPREFIX=str(prefix), WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=;winemenubuilder.exe=d")
    return env


def fetch_cuda(target: Path) -> dict[str, Path]:
    script = ROOT / "tests" / "setup" / "fetch-windows-cuda.sh"
    done = subprocess.run(
        ["bash", str(script), str(target)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "ENVMGR_CUDA_WHEELS": CUDA_WHEELS},
    )
    if done.returncode != 0:
        pytest.fail(f"fetch-windows-cuda.sh failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return {"nvcc": target / "nvidia-cuda-nvcc-13.2", "crt": target / "nvidia-cuda-crt-13.2"}


def lay_out_cuda(pfx: WinePrefix, wheels: dict[str, Path]) -> None:
    """The parts of a CUDA 13.2 install that discovery reads, from NVIDIA's win_amd64 wheels."""
    root = pfx.unix(CUDA_DIR)
    (root / "bin").mkdir(parents=True)
    # nvcc.exe imports only KERNEL32.dll, so it runs on its own (WINE-NOTES.md "nvcc.exe").
    shutil.copy2(wheels["nvcc"] / "nvidia" / "cu13" / "bin" / "nvcc.exe", root / "bin" / "nvcc.exe")
    (root / "include" / "crt").mkdir(parents=True)
    shutil.copy2(
        wheels["crt"] / "nvidia" / "cu13" / "include" / "crt" / "host_config.h",
        root / "include" / "crt" / "host_config.h",
    )
    pfx.reg("add", f"{CUDA_KEY}\\v13.2", "/v", "InstallDir", "/t", "REG_SZ", "/d", CUDA_DIR + "\\", "/f")
    pfx.reg("add", MACHINE_ENV, "/v", "CUDA_PATH_V13_2", "/t", "REG_SZ", "/d", CUDA_DIR, "/f")


def lay_out_state_json(pfx: WinePrefix) -> None:
    """vswhere's own state.json fixture (byte-exact) as an installer record; its installationPath is
    C:\\BuildTools, made here with one MSVC toolset."""
    instances = pfx.unix("C:\\ProgramData\\Microsoft\\VisualStudio\\Packages\\_Instances") / STATE_ID
    instances.mkdir(parents=True)
    shutil.copy2(
        ROOT / "tests" / "corpus" / "vswhere-repo-fixture-state.json-buildtools-2017.json", instances / "state.json"
    )
    vc = pfx.unix("C:\\BuildTools\\VC")
    (vc / "Tools" / "MSVC" / BUILDTOOLS_TOOLSET / "bin" / "Hostx64" / "x64").mkdir(parents=True)
    (vc / "Auxiliary" / "Build").mkdir(parents=True)
    (vc / "Auxiliary" / "Build" / "Microsoft.VCToolsVersion.default.txt").write_bytes(
        BUILDTOOLS_TOOLSET.encode() + b"\r\n"
    )


@contextmanager
def new_prefix(base: Path) -> Iterator[WinePrefix]:
    """A fresh, booted prefix in base/pfx with a persistent wineserver (each wine call then costs
    ~0.1 s instead of ~0.5 s), killed when the block ends."""
    pfx = WinePrefix(base / "pfx", wine_env(base / "pfx"))
    pfx.path.mkdir()
    subprocess.run(
        [str(WINESERVER), "-p"],
        env=pfx.env,
        check=True,
        timeout=30,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        rc, out, err = pfx.wine("wineboot", "-i", timeout=300)
        assert rc == 0, f"wineboot -i failed ({rc}): {out}{err}"
        yield pfx
    finally:
        subprocess.run(
            [str(WINESERVER), "-k"], env=pfx.env, timeout=60, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )


@pytest.fixture(scope="session")
def wine_prefix(tmp_path_factory) -> Iterator[WinePrefix]:
    need(WINE64.exists(), f"{WINE64} is missing: run tests/setup/install-system.sh")
    base = tmp_path_factory.mktemp("wine")
    with new_prefix(base) as pfx:
        lay_out_cuda(pfx, fetch_cuda(base / "wheels"))
        lay_out_state_json(pfx)
        yield pfx


FAKE_VSWHERE_C = r"""
/* Stands in for vswhere.exe: logs its arguments, prints a prepared file byte for byte and exits
   with a prepared code, so discovery's real call path (wine, argv, exit code, stdout) is exercised. */
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    char buf[4096];
    size_t n;
    int code = 0;
    FILE *f = fopen("C:/envmgr-fake/argv.txt", "wb");
    for (int i = 1; f && i < argc; i++) fprintf(f, "%s\n", argv[i]);
    if (f) fclose(f);
    f = fopen("C:/envmgr-fake/exitcode.txt", "rb");
    if (f) { if (fscanf(f, "%d", &code) != 1) code = 98; fclose(f); }
    f = fopen("C:/envmgr-fake/stdout.bin", "rb");
    if (!f) return 99;
    _setmode(_fileno(stdout), _O_BINARY);  /* no \n -> \r\n translation of the payload */
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, stdout);
    fclose(f);
    return code;
}
"""


@dataclass(frozen=True)
class FakeVswhere:
    control: Path  # C:\envmgr-fake
    exe: Path

    def answer(self, stdout: bytes, code: int = 0) -> None:
        (self.control / "stdout.bin").write_bytes(stdout)
        (self.control / "exitcode.txt").write_text(str(code))

    def argv(self) -> list[str]:
        return (self.control / "argv.txt").read_text().splitlines()


@pytest.fixture(scope="session")
def fake_vswhere_exe(wine_prefix, tmp_path_factory) -> Path:
    gcc = shutil.which(MINGW_GCC)
    need(gcc is not None, f"{MINGW_GCC} is missing: run tests/setup/install-system.sh")
    src = tmp_path_factory.mktemp("fake-vswhere") / "vswhere.c"
    src.write_text(FAKE_VSWHERE_C)
    exe = src.with_suffix(".exe")
    subprocess.run([gcc, "-O2", "-s", "-static", "-o", str(exe), str(src)], check=True, timeout=120)
    return exe


@pytest.fixture
def fake_vswhere(wine_prefix, fake_vswhere_exe) -> Iterator[FakeVswhere]:
    """vswhere.exe installed where the Visual Studio Installer puts it, for one test."""
    installer = wine_prefix.unix("C:\\Program Files (x86)\\Microsoft Visual Studio\\Installer")
    installer.mkdir(parents=True, exist_ok=True)
    shutil.copy2(fake_vswhere_exe, installer / "vswhere.exe")
    control = wine_prefix.unix("C:\\envmgr-fake")
    control.mkdir(exist_ok=True)
    try:
        yield FakeVswhere(control, installer / "vswhere.exe")
    finally:
        (installer / "vswhere.exe").unlink()
        shutil.rmtree(control)
