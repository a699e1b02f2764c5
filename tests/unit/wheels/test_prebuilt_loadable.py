"""A prebuilt wheel whose CUDA library cannot load in the target Python is refused with the reason (issue 34,
audit ../shared/audits/hostile-input-2026-12.md N28): the wheel's tags may lie about its platform, the
library's own header does not. The libraries are the audit's minimal ELF with one sm_89 cubin
(tests/hostile_zip.py, hand-made: no real AArch64 CUDA library is in the corpus) and NVIDIA's real
Windows DLL from tests/corpus/devicecode.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from envmgr.binaries.devicecode import DeviceCode, read_binary
from envmgr.wheels import pick
from tests import hostile_zip as hz
from tests.conftest import MACHINES, run_cli, sample_bytes

LINUX = ("cp311-cp311-manylinux_2_17_x86_64", "py3-none-manylinux_2_17_x86_64", "py3-none-any")
WINDOWS = ("cp311-cp311-win_amd64", "py3-none-win_amd64", "py3-none-any")
DLL = "tiny_cuda-pe-with-nvcc13.0-fatbin.dll"


def machine(tags: tuple[str, ...]) -> pick.Machine:
    return pick.Machine(
        (("RTX 4070 SUPER", "8.9"),),
        "576.80",
        "12.9",
        tags[0].endswith("win_amd64"),
        tags,
        f"cp311 on {tags[0].rsplit('-', 1)[-1]}",
    )


def code(data: bytes, name: str = "llama_cpp/lib/libggml-cuda.so") -> DeviceCode:
    return DeviceCode((read_binary(data, name),))


def test_n28_a_library_of_another_machine_or_format_cannot_load():
    linux, windows = machine(LINUX), machine(WINDOWS)
    assert pick.cannot_load(code(hz.mini_elf(89)), linux) == ""
    why = pick.cannot_load(code(hz.mini_elf(89, 183)), linux)
    assert "libggml-cuda.so is an ELF file for AArch64" in why and "x86-64" in why
    assert "for x86;" in pick.cannot_load(code(hz.mini_elf(89, 3)), linux)
    assert "a PE file for x64" in pick.cannot_load(code(sample_bytes(DLL), "llama_cpp/lib/ggml-cuda.dll"), linux)
    assert pick.cannot_load(code(sample_bytes(DLL), "llama_cpp/lib/ggml-cuda.dll"), windows) == ""
    assert "an ELF file" in pick.cannot_load(code(hz.mini_elf(89)), windows)
    assert pick.cannot_load(code(hz.mini_elf(89, 183)), machine(("py3-none-any",))) == ""  # unknown: not judged


def test_n28_a_recorded_entry_keeps_the_machine():
    recorded = DeviceCode((read_binary(hz.mini_elf(89, 183), "x.so"),))
    from envmgr.binaries.devicecode import from_json

    assert from_json(recorded.to_json()).binaries[0].machine == "AArch64"


@pytest.mark.skipif(sys.platform == "win32", reason="the target Python here is a Linux x86-64 one")
def test_n28_the_plan_ranks_a_wheel_that_cannot_load_below_with_the_reason(tmp_path):
    folder = tmp_path / "cu124"
    folder.mkdir()
    for version, lib in (("0.3.36", hz.mini_elf(89, 183)), ("0.3.35", hz.mini_elf(89))):
        data = hz.make_zip({"llama_cpp/__init__.py": b"", "llama_cpp/lib/libggml-cuda.so": lib}, zipfile.ZIP_DEFLATED)
        Path(folder / f"llama_cpp_python-{version}-py3-none-linux_x86_64.whl").write_bytes(data)
    env = {
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "ENVMGR_WHEEL_INDEX": "",
    }
    args = (
        "--machine",
        str(MACHINES / "community-buildtools-cuda124.toml"),
        "install",
        "llama-cpp-python",
        "--dry-run",
        "--prebuilt-index",
        str(folder),
    )
    r = run_cli(*args, "--json", env=env)
    assert r.code == 0, r.stderr
    cands = {c["version"]: c for c in r.json()["prebuilt"]["candidates"]}
    assert cands["0.3.36"]["verdict"] == "refused" and "an ELF file for AArch64" in cands["0.3.36"]["reason"]
    assert cands["0.3.35"]["verdict"] == "chosen"
    text = run_cli(*args, env=env)
    assert "AArch64" in text.stdout + text.stderr and "0.3.35" in text.stdout
