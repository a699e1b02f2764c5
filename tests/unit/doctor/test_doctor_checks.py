"""Pure pieces of doctor's checks: CMake's instance choice, CMAKE_ARGS parsing, CC tables, --only."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from envmgr.errors import UsageError


def _vs(version: str, path: str):
    # Only the fields cmake_instance reads; the recorded-machine test is test_cmake_string_comparison_is_explained.
    return SimpleNamespace(
        major=int(version.split(".")[0]),
        version=version,
        path=path,
        default_toolset="14.44.35207",
        toolsets=(SimpleNamespace(version="14.44.35207"),),
    )


@pytest.mark.parametrize("texts_highest,newer", [("17.5.33530.505", "17.14.37027.9"), ("18.9.1", "18.10.0")])
def test_cmake_instance_compares_installation_versions_as_strings(texts_highest, newer):
    # cmVSSetupHelper.cxx: `vecVSInstances[chosenIndex].Version < vecVSInstances[i].Version` on std::string
    from envmgr.doctor.checks_vs import cmake_instance

    chosen, other = _vs(texts_highest, "C:\\VS\\chosen"), _vs(newer, "C:\\VS\\newer")
    for order in ((chosen, other), (other, chosen)):
        facts = SimpleNamespace(env={}, inv=SimpleNamespace(visual_studio=order), host=None)
        hit, why = cmake_instance(facts, chosen.major)
        assert hit is chosen
        assert f"'{texts_highest}' > '{newer}'" in why and "although the other is newer" in why


def test_cmake_instance_names_the_version_when_text_and_number_agree():
    from envmgr.doctor.checks_vs import cmake_instance

    a, b = _vs("17.8.1", "C:\\VS\\a"), _vs("17.9.2", "C:\\VS\\b")
    hit, why = cmake_instance(SimpleNamespace(env={}, inv=SimpleNamespace(visual_studio=(a, b)), host=None), 17)
    assert hit is b and why == "it has the highest installationVersion (17.9.2)"


def test_defines_follow_shlex():
    from envmgr.doctor.checks_env import defines

    assert defines('-DGGML_CUDA=on "-DCMAKE_CUDA_ARCHITECTURES=86;89"') == {
        "GGML_CUDA": "on",
        "CMAKE_CUDA_ARCHITECTURES": "86;89",
    }
    assert defines("-DX:BOOL=ON") == {"X": "ON"}


def test_min_cuda_per_compute_capability():
    from envmgr.doctor.checks_cuda import arch_cc
    from envmgr.knowledge import min_cuda_for

    assert min_cuda_for((12, 0)) == "12.8" and min_cuda_for((12, 1)) == "12.9"
    assert min_cuda_for((8, 9)) == "11.8" and min_cuda_for((7, 5)) is None
    assert arch_cc("120a-real") == (12, 0) and arch_cc("86") == (8, 6) and arch_cc("native") is None


def test_parse_only():
    from envmgr.doctor.run import parse_only

    assert parse_only("f01, F15,F01") == ("F01", "F15")
    with pytest.raises(UsageError) as exc:
        parse_only("F01,F42")
    assert "F42" in exc.value.message and any(d.startswith("F23") for d in exc.value.details)


def test_binary_machine():
    import struct

    from envmgr.binaries.dll import binary_machine

    head = bytearray(0x40)
    head[:2] = b"MZ"
    struct.pack_into("<I", head, 0x3C, 0x40)
    assert binary_machine(bytes(head) + b"PE\0\0" + struct.pack("<H", 0x14C)) == ("x86 (32-bit)", 32)
    assert binary_machine(b"#!/bin/sh\n") is None


def test_every_check_is_a_catalog_failure():
    from envmgr.catalog import CATALOG
    from envmgr.doctor.run import CHECKS

    assert set(CHECKS) <= set(CATALOG)  # that each failure is found: test_doctor_machines.py
