"""One wheel/zip reader (envmgr/files/wheelzip.py) with an inflate budget, used by every route (issue 34: N9, N13).

The hostile wheels are hand-made (tests/hostile_zip.py): a real nvcc library (tests/corpus/devicecode) in a
zip that is then damaged as the audit of 2026-12-07 damaged its wheels. Every route that reads a wheel is
exercised: the prebuilt plan (the CLI, `install --dry-run --prebuilt-index`), the cache's store and lookup
(`install --recipe`), `--wheel-index`'s check, and doctor's pip-cache check.
"""

from __future__ import annotations

import ast
import os
import sys
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from envmgr.doctor.checks_install import wheel_has_cuda
from envmgr.errors import CheckFailed, EnvmgrError, InputFileError
from envmgr.files import wheelzip
from envmgr.files.wheelzip import BadWheel, open_wheel
from envmgr.host.live import LiveHost
from envmgr.wheels import pick, prebuilt
from envmgr.wheels import store as wheels
from tests import hostile_zip as hz
from tests.conftest import CUDA_SO, MACHINES, run_cli, sample_bytes

PACKAGE = Path(__file__).resolve().parents[3] / "envmgr"
READER = "files/wheelzip.py"
HERE_TAG = "py3-none-win_amd64" if sys.platform == "win32" else "py3-none-manylinux_2_17_x86_64"
NAME = f"llama_cpp_python-0.3.36-{HERE_TAG}.whl"
KEY = wheels.WheelKey(
    package="llama-cpp-python",
    version="0.3.36",
    source="index",
    cuda="13.0",
    archs="90",
    generator="Ninja",
    cmake_args="",
    python_tag="cp312",
    platform="linux_x86_64",
)


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVMGR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENVMGR_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "cache"


def cuda_wheel(**extra: bytes) -> bytes:
    return hz.make_zip(
        {"llama_cpp/__init__.py": b"", "llama_cpp/lib/libggml-cuda.so": sample_bytes(CUDA_SO), **extra},
        zipfile.ZIP_DEFLATED,
    )


def write(folder: Path, data: bytes, name: str = NAME) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)
    return folder / name


def plan(tmp_path: Path, folder: Path) -> dict:
    env = {
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "ENVMGR_WHEEL_INDEX": "",
    }
    r = run_cli(
        "--machine",
        str(MACHINES / "community-buildtools-cuda124.toml"),
        "install",
        "llama-cpp-python",
        "--dry-run",
        "--json",
        "--prebuilt-index",
        str(folder),
        env=env,
    )
    assert r.code == 0, r.stderr
    (cand,) = r.json()["prebuilt"]["candidates"]
    return cand


def every_route(tmp_path: Path, data: bytes, words: str, *, in_listing: bool = True) -> None:
    """The same refusal, with one line, on each route that reads a wheel; never an exception of another type.
    `in_listing`: the central directory alone shows it (doctor F19 lists names and inflates nothing)."""
    path = write(tmp_path / "cu124", data)
    code, problems = wheels.inspect_wheel(path)
    assert code is None and len(problems) == 1 and words in problems[0] and "\n" not in problems[0]
    assert words in wheels.check_wheel(path, "llama-cpp-python", True)[0]  # --wheel-index
    with pytest.raises(pick.Unusable, match=words):  # the prebuilt plan
        prebuilt.wheel_code(path)
    with pytest.raises(CheckFailed, match=words):  # install --recipe: store
        wheels.store(KEY, path, 1.0, True, "t")
    assert wheel_has_cuda(LiveHost(), str(path)) is (None if in_listing else True)  # doctor F19
    with pytest.raises(BadWheel, match=words) as err:
        with open_wheel(path) as wheel:
            for member in wheel.members:
                wheel.read(member)
    assert isinstance(err.value, InputFileError) and err.value.exit_code == 2
    cand = plan(tmp_path, tmp_path / "cu124")  # the CLI, --json
    assert cand["verdict"] == "refused" and words in cand["reason"], cand


# ---- N9: encrypted members and bad compressed data --------------------------------------------------


def test_n9_an_encrypted_member_is_refused_on_every_route(tmp_path):
    every_route(tmp_path, hz.set_flag(cuda_wheel(), ".so"), "encrypted member")


def test_n9_lzma_with_bad_data_is_refused_on_every_route(tmp_path):
    stored = hz.make_zip({"llama_cpp/__init__.py": b"", "llama_cpp/lib/libggml-cuda.so": sample_bytes(CUDA_SO)})
    every_route(tmp_path, hz.set_method(stored, ".so", zipfile.ZIP_LZMA), "libggml-cuda.so", in_listing=False)


def test_n9_bad_deflate_data_and_a_wrong_crc_are_refused(tmp_path):
    every_route(tmp_path / "crc", hz.break_crc(cuda_wheel(), ".so"), "Bad CRC-32", in_listing=False)
    data = bytearray(cuda_wheel())
    _cd, _name, local = next(e for e in hz.central_entries(bytes(data)) if e[1].endswith(".so"))
    start = local + 30 + len("llama_cpp/lib/libggml-cuda.so")  # the deflate stream starts here
    data[start : start + 64] = b"\xff" * 64
    every_route(tmp_path / "deflate", bytes(data), "libggml-cuda.so", in_listing=False)


# ---- N13: zip bombs, members listed many times, the total budget ---------------------------------


def test_n13_a_member_listed_many_times_is_refused(tmp_path):
    data = hz.repeat_central_directory(cuda_wheel(), 50)
    every_route(tmp_path, data, "more than once")


def test_n13_overlapping_entries_under_different_names_are_refused(tmp_path):
    data = bytearray(hz.repeat_central_directory(hz.make_zip({"pkg/libggml.so": sample_bytes(CUDA_SO)}), 2))
    entries = hz.central_entries(bytes(data))
    cd, name, _local = entries[-1]  # rename the second copy: no duplicate name, the same data
    data[cd + 46 : cd + 46 + len(name)] = name.replace("libggml", "libggmm").encode()
    with pytest.raises(BadWheel, match="overlap"), open_wheel(bytes(data)):
        pass


def test_n13_a_zip_bomb_is_refused_before_it_is_inflated(tmp_path):
    """64 MiB of zeros deflate to 64 KiB (ratio 1000): refused from the central directory, in well under a
    second and without inflating it (5725032 inflated each member whole: 2 GiB cost 17 s and 4.2 GB)."""
    data = cuda_wheel(**{"llama_cpp/lib/libbomb.so": bytes(64 << 20)})
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        every_route(tmp_path, data, "zip bomb", in_listing=False)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - t0 < 20 and peak < 32 << 20


def test_n13_the_budget_is_total_and_counts_each_member_once(tmp_path):
    parts = {f"pkg/lib{i}.so": os.urandom(1 << 20) for i in range(4)}
    data = hz.make_zip(parts)
    with open_wheel(data, budget=3 << 20) as wheel:
        first = wheel.members[0]
        for _ in range(5):
            assert bytes(wheel.read(first)) == parts[first.name]  # read again: counted once
        wheel.read(wheel.members[1])
        wheel.read(wheel.members[2])
        with pytest.raises(BadWheel, match="inflates beyond 3 MiB in all"):
            wheel.read(wheel.members[3])


def test_n13_a_huge_central_directory_is_refused_before_it_is_listed(monkeypatch):
    """zipfile builds an object per entry (~4 bytes of memory per byte of directory) before anything can be
    judged: the directory's size and count come from the end records first."""
    data = hz.repeat_central_directory(hz.make_zip({"pkg/x.py": b"x"}), 40_000)  # 2.1 MB of directory
    monkeypatch.setattr(wheelzip, "MAX_DIRECTORY", 1 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(BadWheel, match="central directory lists 40000 members"), open_wheel(data):
            pass
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < len(data) + (1 << 20)


def test_only_regular_files_are_opened(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    fifo = tmp_path / "x.whl"
    os.mkfifo(fifo)
    t0 = time.perf_counter()
    with pytest.raises(BadWheel, match="not a regular file"):
        with open_wheel(fifo):
            pass
    assert time.perf_counter() - t0 < 5
    with pytest.raises(BadWheel, match="folder"), open_wheel(tmp_path):
        pass


def test_a_good_wheel_reads_as_before(tmp_path):
    path = write(tmp_path, cuda_wheel())
    code, problems = wheels.inspect_wheel(path)
    assert problems == [] and code is not None and code.cubin == ("sm_75", "sm_90a")
    assert wheelzip.member_names(path) == ("llama_cpp/__init__.py", "llama_cpp/lib/libggml-cuda.so")


# ---- the structure: no other module opens a zip -------------------------------------------------

FORBIDDEN_MODULES = {"zipfile", "zipimport", "tarfile"}
FORBIDDEN_CALLS = {"unpack_archive", "ZipFile", "PyZipFile"}


def _zip_touches(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.split(".")[0] in FORBIDDEN_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in FORBIDDEN_MODULES:
            found.append(f"from {node.module} import (line {node.lineno})")
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_CALLS:
            found.append(f".{node.attr} (line {node.lineno})")
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_CALLS:
            found.append(f"{node.id} (line {node.lineno})")
    return found


def test_only_the_wheel_reader_opens_zip_files():
    """A new route that reads a wheel goes through files/wheelzip.py and gets its budgets."""
    hits = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel != READER and (found := _zip_touches(ast.parse(path.read_text(encoding="utf-8"), rel))):
            hits[rel] = found
    assert hits == {}
    assert _zip_touches(ast.parse((PACKAGE / READER).read_text(encoding="utf-8")))  # the scan sees the reader


def test_the_zip_rule_sees_what_it_forbids():
    code = (
        "import zipfile\nfrom zipfile import ZipFile\nimport shutil\nshutil.unpack_archive('a.whl')\n"
        "import tarfile\nz = ZipFile('w')\n"
    )
    assert len(_zip_touches(ast.parse(code))) == 5
    assert _zip_touches(ast.parse("from envmgr.files.wheelzip import open_wheel\nopen_wheel('a.whl')\n")) == []


def test_the_reader_raises_only_envmgrs_error_type():
    """Checked over generated input by tests/unit/files/test_wheelzip_property.py; here the class tree."""
    assert issubclass(BadWheel, EnvmgrError) and BadWheel("x.whl", "why").message == "x.whl: why"
