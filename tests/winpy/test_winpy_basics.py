"""envmgr's own win32 code paths, run by a real Windows CPython under Wine."""

from __future__ import annotations

import json

import pytest

from tests.winpy.conftest import windows_path

pytestmark = [pytest.mark.wine, pytest.mark.winpy]


def test_the_interpreter_is_windows_cpython(winpy):
    done = winpy.run("-c", "import sys, envmgr; print(sys.platform, sys.version.split()[0], envmgr.__file__)")
    assert done.returncode == 0, done.stderr
    platform, version, where = done.stdout.split()
    assert platform == "win32"
    assert version.startswith("3.")
    assert where.startswith("Z:\\") and where.endswith("envmgr\\__init__.py")


@pytest.fixture(scope="module")
def cuda_in_prefix(winpy, tmp_path_factory):
    """NVIDIA's real nvcc.exe (and host_config.h) laid out as CUDA 13.2 in the prefix, known only through
    the installer's registry key and machine environment: what envmgr's winreg code must read."""
    from tests.wine.conftest import CUDA_DIR, fetch_cuda, lay_out_cuda

    lay_out_cuda(winpy.prefix, fetch_cuda(tmp_path_factory.mktemp("cuda-wheels")))
    return CUDA_DIR


def test_list_finds_the_toolkit_from_its_registry_key_through_winreg(winpy, cuda_in_prefix):
    done = winpy.envmgr("list", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["platform"] == "windows"
    [kit] = [k for k in data["cuda"] if k["path"].lower() == cuda_in_prefix.lower()]
    assert kit["short"] == "13.2" and kit["version"].startswith("13.2.")
    assert kit["version_source"] == "nvcc --version"  # NVIDIA's nvcc.exe, run by envmgr
    assert "registry v13.2" in kit["sources"]
    assert "machine env CUDA_PATH_V13_2" in kit["sources"]


@pytest.mark.parametrize("make", ["missing", "directory", "binary"])
def test_a_bad_machine_file_is_one_line_and_exit_2(winpy, tmp_path, make):
    path = tmp_path / "machine.toml"
    if make == "directory":
        path.mkdir()
    elif make == "binary":
        path.write_bytes(b"\x00\x01\x02\xff" * 64)
    done = winpy.envmgr("--machine", windows_path(path), "list")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("envmgr: error:")]
    assert len(errors) == 1 and "machine.toml" in errors[0], done.stderr


def test_json_on_a_pipe_is_utf8_whatever_the_code_page(winpy, tmp_path):
    # Windows gives a pipe the ANSI code page (cp1252): a CJK path could not be written at all.
    snap = tmp_path / "env.toml"
    snap.write_text("schema = 1\nplatform = 'windows'\n[env]\nCUDA_PATH = 'C:\\用户\\CUDA·v13'\n", encoding="utf-8")
    done = winpy.run(
        "-m",
        "envmgr",
        "export",
        "--from",
        windows_path(snap),
        "--format",
        "json",
        env={"PYTHONUTF8": "0"},
        utf8_mode=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["env"]["CUDA_PATH"] == {"set": "C:\\用户\\CUDA·v13"}


@pytest.mark.parametrize(
    "text,code,words",
    [
        ("schema = 1\nplatform = 'windows'\n[env\n", 2, "line 3"),  # not TOML
        ("schema = 1\nplatform = 'windows'\nenv = 'x'\n", 2, "env"),  # a field of the wrong type
        ("schema = 1\nplatform = 'linux'\n[env]\nX = '/x'\n", 2, "linux"),  # another platform's snapshot
    ],
)
def test_a_bad_snapshot_is_one_line_and_exit_2(winpy, tmp_path, text, code, words):
    snap = tmp_path / "env.toml"
    snap.write_text(text, encoding="utf-8")
    done = winpy.envmgr("export", "--from", windows_path(snap))
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("envmgr: error:")]
    assert len(errors) == 1 and words in errors[0], done.stderr
