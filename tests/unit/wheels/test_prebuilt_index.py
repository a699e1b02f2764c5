"""Reading prebuilt indexes (wheels/prebuilt.py) without a network: the official page layout, a plain
folder of wheels, where the index list comes from, and a wheel's device code.

The page is laid out as llama-cpp-python's scripts/releases-to-pep-503.sh writes it (abetlen/llama-cpp-python
at 3691546f; tests/linux/test_prebuilt_loopback.py serves the same over HTTP). The wheels hold the real
nvcc 13.0 library tests/corpus/devicecode/libtiny_cuda-sm75-sm90a-compute90.so (its README says how it
was built) as llama_cpp/lib/libggml-cuda.so.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from envmgr.errors import InputFileError
from envmgr.wheels import pick, prebuilt
from tests.conftest import run_cli

SO = Path(__file__).resolve().parents[2] / "corpus" / "devicecode" / "libtiny_cuda-sm75-sm90a-compute90.so"
PLAIN = SO.with_name("libplain-no-device-code.so")
REL = "https://github.com/abetlen/llama-cpp-python/releases/download"
WIN = f"{REL}/v0.3.16-cu124/llama_cpp_python-0.3.16-py3-none-win_amd64.whl"
PAGE = f"""<!DOCTYPE html>
<html>
  <body>
    <h1>Links for llama-cpp-python</h1>
    <h2>v0.3.16</h2>
    <a href="{WIN}">{WIN}</a>
    <br>
    <a href="{REL}/v0.3.16-cu124/llama_cpp_python-0.3.16-py3-none-manylinux_2_17_x86_64.whl">x</a>
    <br>
    <h2>v0.2.90</h2>
    <a href="{REL}/v0.2.90-cu124/llama_cpp_python-0.2.90-cp312-cp312-win_amd64.whl">y</a>
    <a href="javascript:alert(1)">llama_cpp_python-9.9.9-py3-none-any.whl</a>
    <a href="{REL}/v0.2.90-cu124/..%2F..%2Fevil.exe">evil</a>
  </body>
</html>
"""


# The target Python's platform tag comes from this machine's Python, even with --machine (a known limit of
# the pick, docs/json.md): the test wheels carry the tag of the platform the suite runs on.
HERE_TAG = "py3-none-win_amd64" if sys.platform == "win32" else "py3-none-manylinux_2_17_x86_64"
# The same device code in the binary format this Python loads (the plan refuses a library the target cannot load,
# audit N28): the PE copy of SO's fat binary (tests/corpus/devicecode/README.md) under Windows.
HERE_LIB = SO.with_name("tiny_cuda-pe-with-nvcc13.0-fatbin.dll") if sys.platform == "win32" else SO


def wheel(folder: Path, version: str, lib: Path, tag: str = HERE_TAG) -> Path:
    path = folder / f"llama_cpp_python-{version}-{tag}.whl"
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("llama_cpp/__init__.py", "")
        zf.writestr("llama_cpp/lib/libggml-cuda.so", lib.read_bytes())
    return path


def test_the_official_page_gives_release_urls_and_the_folders_cuda():
    page_url = "https://abetlen.github.io/llama-cpp-python/whl/cu124/llama-cpp-python/"
    found = prebuilt.parse_page(PAGE.encode(), page_url, "https://abetlen.github.io/llama-cpp-python/whl/cu124/")
    assert [c.filename for c in found] == [
        "llama_cpp_python-0.3.16-py3-none-win_amd64.whl",
        "llama_cpp_python-0.3.16-py3-none-manylinux_2_17_x86_64.whl",
        "llama_cpp_python-0.2.90-cp312-cp312-win_amd64.whl",
    ]
    assert {c.cuda for c in found} == {"12.4"} and all(c.sha256 is None for c in found)
    assert str(found[0].url).startswith(f"{REL}/v0.3.16-cu124/")  # an IndexUrl since issue 34


def test_a_plain_folder_of_wheels_is_an_index_and_its_device_code_is_read(tmp_path):
    folder = tmp_path / "cu130"
    wheel(folder, "0.3.16", SO)
    listing = prebuilt.list_index(str(folder), "llama-cpp-python")
    assert listing.problem == "" and [c.cuda for c in listing.candidates] == ["13.0"]
    code = prebuilt.wheel_code(folder / listing.candidates[0].filename)
    assert code.cubin == ("sm_75", "sm_90a") and code.ptx == ("compute_90",)
    assert code.cuda_imports == ("libcudart.so.13",)


def test_a_cpu_only_or_broken_wheel_is_unusable(tmp_path):
    cpu = wheel(tmp_path, "0.3.16", PLAIN)
    with pytest.raises(pick.Unusable, match="a CPU-only wheel"):
        prebuilt.wheel_code(cpu)
    cut = tmp_path / "cut.whl"
    cut.write_bytes(wheel(tmp_path / "x", "0.3.16", SO).read_bytes()[:3000])
    with pytest.raises(pick.Unusable, match="not a readable wheel"):
        prebuilt.wheel_code(cut)


def test_where_the_index_list_comes_from(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVMGR_CONFIG_DIR", str(tmp_path))
    assert prebuilt.configured((), False)[0] == prebuilt.default_indexes()
    assert prebuilt.default_indexes()[0] == "https://abetlen.github.io/llama-cpp-python/whl/cu132/"
    assert prebuilt.configured(("a", "b"), False) == (("a", "b"), "--prebuilt-index")
    assert prebuilt.configured(("a",), True) == ((), "--no-prebuilt")
    (tmp_path / "config.toml").write_text('[wheels]\nprebuilt = ["http://mirror/whl/cu124/", "D:/wheels/cu125"]\n')
    found, source = prebuilt.configured((), False)
    assert found == ("http://mirror/whl/cu124/", "D:/wheels/cu125") and source.startswith("[wheels] prebuilt in ")
    (tmp_path / "config.toml").write_text('[wheels]\nprebuilt = "http://mirror/"\n')
    with pytest.raises(InputFileError, match="must be a list"):
        prebuilt.configured((), False)


def test_flags_after_the_package_and_the_environment_setting(tmp_path):
    folder = tmp_path / "cu124"
    wheel(folder, "0.3.16", SO)
    env = {
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "ENVMGR_WHEEL_INDEX": "",
    }
    machine = str(Path(__file__).resolve().parents[2] / "machines" / "community-buildtools-cuda124.toml")
    r = run_cli(
        "--machine",
        machine,
        "install",
        "llama-cpp-python",
        "--dry-run",
        "--json",
        "--prebuilt-index",
        str(folder),
        env=env,
    )
    assert r.code == 0, r.stderr
    data = r.json()
    assert data["prebuilt"]["indexes_from"] == "--prebuilt-index"
    (cand,) = data["prebuilt"]["candidates"]
    assert cand["cuda"] == "12.4" and cand["device_code"] == "cubin sm_75 sm_90a; PTX compute_90"
    # RTX 4070 SUPER (8.9): sm_90a does not run there, compute_90 PTX needs >= 9.0: refused
    assert cand["verdict"] == "refused" and "no device code for NVIDIA GeForce RTX 4070 SUPER" in cand["reason"]
    off = run_cli("--machine", machine, "install", "--no-prebuilt", "--dry-run", "--json", "llama-cpp-python", env=env)
    assert off.code == 0 and off.json()["prebuilt"]["note"] == "off (--no-prebuilt)"
    assert "F01" in off.json()["build"]["blocked_by"]
    src = run_cli("--machine", machine, "install", "--dry-run", "llama-cpp-python", str(SO), env=env)
    assert src.code == 2 and "--dry-run plans" in src.stderr
    via_env = run_cli(
        "--machine",
        machine,
        "install",
        "--dry-run",
        "--json",
        "llama-cpp-python",
        env={**env, "ENVMGR_PREBUILT_INDEX": f"{folder};{tmp_path / 'nowhere'}"},
    )
    data = via_env.json()
    assert data["prebuilt"]["indexes_from"] == "ENVMGR_PREBUILT_INDEX"
    assert data["prebuilt"]["indexes"][1]["problem"].startswith("no such folder")
