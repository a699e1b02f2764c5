"""`envmgr doctor` on this Linux machine: it runs clean or only warns, and explains each warning."""

from __future__ import annotations

import sys

import pytest

pytestmark = [pytest.mark.linux, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")]


def _has_cublas(lib64: str) -> bool:
    import glob

    return bool(glob.glob(f"{lib64}/libcublas.so*"))


def test_doctor_live_fails_only_for_what_this_machine_lacks(cli):
    # This machine's CUDA 13.0 was assembled from pip wheels without cuBLAS, which llama.cpp's CUDA
    # backend links (F24, issue 13): that is the one failure doctor may report here.
    result = cli("doctor", "--json")
    data = result.json()
    fails = [c["id"] for c in data["checks"] if c["status"] == "fail"]
    expected = [] if _has_cublas("/usr/local/cuda-13.0/lib64") else ["F24"]
    assert fails == expected, data["checks"]
    assert result.code == (1 if expected else 0)
    for c in data["checks"]:
        if c["status"] == "warn":
            assert c["summary"] and c["evidence"] and c["fix"], c
        if c["status"] == "skipped":
            assert c["summary"], c


def test_doctor_live_dll_of_a_system_library(cli):
    import glob

    libs = sorted(glob.glob("/usr/lib/x86_64-linux-gnu/libz.so.1*")) or sorted(glob.glob("/lib*/libz.so.1"))
    if not libs:
        pytest.skip("no libz here")
    result = cli("doctor", "--dll", libs[0])
    assert result.code == 0 and "0 missing" in result.stdout


def test_f21_asks_a_cudahostcxx_outside_path_for_its_version(cli, tmp_path, cuda_13_0):
    """As on the GPU machine, where CUDAHOSTCXX=/opt/gcc/bin/g++ is no discovered compiler."""
    wrapper = tmp_path / "opt" / "g++"
    wrapper.parent.mkdir()
    wrapper.write_text('#!/bin/sh\nexec g++ "$@"\n')
    wrapper.chmod(0o755)
    result = cli("doctor", "--only", "F21", "--json", env={"CUDAHOSTCXX": str(wrapper)})
    check = result.json()["checks"][0]
    assert check["status"] == "ok", check
    assert any(str(wrapper) in e for e in check["evidence"])
