"""A team's wheel index end to end: real venvs, a real pip, a real build, and the index served by
`python -m http.server` on 127.0.0.1 (about 20 s).

Machine A builds with `envmgr install --publish INDEX`; machines B, C, D (fresh venvs with their own
empty wheel caches) install from the served index: B with envmgr (key hit, no build), C with plain
pip `--index-url`, D after the wheel on the server was truncated (refused, rebuilt, republished).
The package is test_wheels_e2e.py's in-tree PEP 517 backend (no network); the toolkit is this
machine's (the linux tier), so the install runs exactly as a user's does.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import need
from tests.linux.test_wheels_e2e import ROOT, fake_cuda_project, make_venv

pytestmark = [pytest.mark.slow, pytest.mark.linux]
WHEEL = "fakecuda-1.2.3-py3-none-any.whl"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    need(shutil.which("nvcc") is not None, "no nvcc on PATH: the recipe needs a CUDA toolkit on this machine")
    base = tmp_path_factory.mktemp("wheel-index-e2e")
    fake_cuda_project(base)
    return base


@pytest.fixture(scope="module")
def server(base):
    index = base / "index"
    index.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "--bind", "127.0.0.1", "0", "--directory", str(index)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    port = re.search(r"port (\d+)", proc.stdout.readline())
    assert port, "http.server did not start"
    yield index, f"http://127.0.0.1:{port.group(1)}/"
    proc.terminate()
    proc.wait(timeout=10)


def envmgr(base: Path, cache: str, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "ENVMGR_CONFIG_DIR": str(base / "config"),
        "ENVMGR_CACHE_DIR": str(base / cache),
        "NO_COLOR": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("ENVMGR_MACHINE", None)
    env.pop("ENVMGR_WHEEL_INDEX", None)
    return subprocess.run([sys.executable, "-m", "envmgr", *args], env=env, capture_output=True, text=True, timeout=180)


def install(base: Path, cache: str, venv_name: str, *extra: str) -> tuple[subprocess.CompletedProcess, Path]:
    py = make_venv(base / venv_name)
    out = envmgr(
        base,
        cache,
        "install",
        "--recipe",
        "fake-cuda",
        "--arch-list",
        "90",
        "--python",
        str(py),
        *extra,
        "--no-index",
        str(base / "fakecuda-1.2.3.tar.gz"),
    )
    return out, py


def imports(py: Path) -> bool:
    return subprocess.run([str(py), "-c", "import fakecuda"], capture_output=True).returncode == 0


def test_publish_then_install_from_the_served_index(base, server):
    index, url = server
    built, py_a = install(base, "cache-a", "a", "--publish", str(index))
    assert built.returncode == 0, built.stderr
    assert "built fakecuda" in built.stderr and f"published {WHEEL} to {index} (added)" in built.stderr
    assert imports(py_a)

    hit, py_b = install(base, "cache-b", "b", "--wheel-index", url)
    assert hit.returncode == 0, hit.stderr
    assert f"downloaded {WHEEL} from the wheel index (sha256 ok, CUDA backend inside)" in hit.stderr
    assert "building" not in hit.stderr and imports(py_b)

    # plain pip, no envmgr: the same index is a PEP 503 index with hashes
    py_c = make_venv(base / "c")
    pip = subprocess.run(
        [str(py_c), "-m", "pip", "install", "--no-deps", "--index-url", url, "fakecuda==1.2.3"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_CACHE_DIR": "1"},
    )
    assert pip.returncode == 0, pip.stdout + pip.stderr
    assert imports(py_c)


def test_another_key_is_refused_with_the_reason_and_built(base, server):
    _, url = server
    out, py = install(base, "cache-e", "e", "--wheel-index", url)  # cache-e: empty; and --arch-list 86 below
    assert "downloaded" in out.stderr
    other = envmgr(
        base,
        "cache-e",
        "install",
        "--recipe",
        "fake-cuda",
        "--arch-list",
        "86",
        "--python",
        str(py),
        "--wheel-index",
        url,
        "--no-index",
        str(base / "fakecuda-1.2.3.tar.gz"),
    )
    assert other.returncode == 0, other.stderr
    assert "CUDA architectures 90, missing 86 wanted here" in other.stderr
    assert "has no wheel for this key" in other.stderr and "building" in other.stderr


def test_a_truncated_wheel_on_the_server_is_refused_rebuilt_and_republished(base, server):
    index, url = server
    (wheel,) = index.glob(f"fakecuda/*/{WHEEL}")
    good = wheel.read_bytes()
    wheel.write_bytes(good[: len(good) // 2])
    out, py = install(base, "cache-d", "d", "--wheel-index", url, "--publish", str(index))
    assert out.returncode == 0, out.stderr
    assert "does not match its sha256" in out.stderr and "building instead" in out.stderr
    assert "built fakecuda" in out.stderr and "(repaired)" in out.stderr and imports(py)
    again, _ = install(base, "cache-f", "f", "--wheel-index", url)
    assert "downloaded" in again.stderr and "building" not in again.stderr


def test_an_unreachable_index_falls_back_to_building(base):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/"
    out, py = install(base, "cache-g", "g", "--wheel-index", closed)
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stderr.splitlines() if "cannot be reached" in x)
    assert closed in line and line.endswith("building instead")
    assert "built fakecuda" in out.stderr and imports(py)


def test_publish_to_a_dest_that_is_a_file_fails_before_building(base):
    blocker = base / "not-a-folder"
    blocker.write_text("x")
    out, _ = install(base, "cache-h", "h", "--publish", str(blocker / "index"))
    assert out.returncode == 2 and "cannot be written" in out.stderr and "building" not in out.stderr
    assert not (base / "cache-h" / "wheels").exists() or not any((base / "cache-h" / "wheels").iterdir())
