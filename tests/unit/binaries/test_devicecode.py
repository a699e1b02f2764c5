"""The device-code reader on real samples (tests/corpus/devicecode/README.md says how each was made).

The expected lists are cuobjdump's (NVIDIA's own reader) for the same files; tests/linux/
test_devicecode_oracle.py runs cuobjdump itself on fresh nvcc builds and on NVIDIA's Windows DLLs.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envmgr.binaries import devicecode as dc

SAMPLES = Path(__file__).resolve().parents[2] / "corpus" / "devicecode"
ELF = (SAMPLES / "libtiny_cuda-sm75-sm90a-compute90.so").read_bytes()
PE = (SAMPLES / "tiny_cuda-pe-with-nvcc13.0-fatbin.dll").read_bytes()
PLAIN = (SAMPLES / "libplain-no-device-code.so").read_bytes()
# `cuobjdump --list-elf --list-ptx` of the ELF sample, in its order (README.md)
CUOBJDUMP_ORDER = ["sm_75", "sm_90a", "sm_75", "sm_90a"], ["compute_90"]


def test_elf_sample_lists_what_cuobjdump_lists():
    got = dc.read_binary(ELF, "libtiny_cuda.so")
    assert got.format == "elf" and got.machine == "x86-64" and got.problems == ()
    assert [e.arch for e in got.entries if e.kind == "cubin"] == CUOBJDUMP_ORDER[0]
    assert [e.arch for e in got.entries if e.kind == "ptx"] == CUOBJDUMP_ORDER[1]
    assert got.cubin == ("sm_75", "sm_90a") and got.ptx == ("compute_90",)
    assert got.cuda_imports == ("libcudart.so.13",) and "libc.so.6" in got.imports
    ptx = next(e for e in got.entries if e.kind == "ptx")
    assert ptx.ptx_isa == "9.0" and ptx.compressed  # nvcc 13.0 compresses PTX by default


def test_pe_sample_reads_the_same_fat_binary_from_nv_fatb():
    got = dc.read_binary(PE, "tiny_cuda.dll")
    assert got.format == "pe" and got.machine == "x64" and got.problems == ()
    assert got.cubin == ("sm_75", "sm_90a") and got.ptx == ("compute_90",)
    assert [e.arch for e in got.entries] == [e.arch for e in dc.read_binary(ELF, "x").entries]
    assert {n.lower() for n in got.imports} == {"kernel32.dll", "msvcrt.dll"} and got.cuda_imports == ()


def test_a_library_without_cuda_is_not_cuda():
    got = dc.read_binary(PLAIN, "libplain.so")
    assert got.format == "elf" and got.entries == () and not got.is_cuda and got.problems == ()
    assert "libm.so.6" in got.imports


@pytest.mark.parametrize(
    "data,why",
    [(b"", "neither"), (b"PK\x03\x04zip", "neither"), (b"\x7fELF\x02", "truncated"), (b"MZ" + b"\0" * 100, "not a PE")],
)
def test_foreign_or_tiny_input_is_a_clear_result(data, why):
    got = dc.read_binary(data, "x")
    assert got.entries == () and any(why in p for p in got.problems)


def _fatbin_section_offset(data: bytes) -> int:
    return data.find(struct.pack("<I", dc.FATBIN_MAGIC))


def test_a_cut_fat_binary_is_reported_not_raised():
    start = _fatbin_section_offset(ELF)
    got = dc.read_binary(ELF[: start + 200], "cut.so")
    assert any("truncated" in p or "cut" in p for p in got.problems)


def test_every_prefix_of_both_samples_reads_without_an_exception():
    for data in (ELF, PE):
        for cut in range(0, len(data), 97):
            got = dc.read_binary(data[:cut], "cut")
            assert isinstance(got, dc.BinaryCode)
            if cut < len(data) // 2:
                assert got.problems, cut  # a file cut before its section table says so


def test_a_garbled_entry_header_is_a_problem():
    data = bytearray(ELF)
    off = _fatbin_section_offset(ELF) + 16
    struct.pack_into("<I", data, off + 4, 8)  # entry header size 8: below the 64 every entry has
    got = dc.read_binary(bytes(data), "bad.so")
    assert any("unreadable device-code entry header" in p for p in got.problems)


@settings(max_examples=150, deadline=None)
@given(st.integers(4, len(ELF) - 1), st.binary(min_size=1, max_size=16))
def test_random_corruption_never_raises(pos, junk):
    data = ELF[:pos] + junk + ELF[pos + len(junk) :]
    got = dc.read_binary(data, "fuzz.so")
    assert got.format == "elf"


def test_cuda_library_names():
    yes = [
        "libcudart.so.13",
        "libcuda.so.1",
        "nvcuda.dll",
        "cudart64_12.dll",
        "cublas64_13.dll",
        "cublasLt64_13.dll",
        "libcublasLt.so.13",
        "libc10_cuda.so",
        "c10_cuda.dll",
        "libtorch_cuda.so",
        "libnvrtc.so.13",
        "cudnn64_9.dll",
        "libcudnn.so.9",
    ]
    no = ["libggml.so", "libc.so.6", "KERNEL32.dll", "libstdc++.so.6", "libcudafoo.so", "cuda_helper.py"]
    assert [n for n in yes if not dc.CUDA_LIBRARY.match(n)] == []
    assert [n for n in no if dc.CUDA_LIBRARY.match(n)] == []


def test_device_code_summary_and_json_round_trip():
    code = dc.DeviceCode((dc.read_binary(ELF, "pkg/lib/libtiny_cuda.so"), dc.read_binary(PLAIN, "pkg/libplain.so")))
    assert code.is_cuda and code.summary() == "cubin sm_75 sm_90a; PTX compute_90"
    again = dc.from_json(code.to_json())
    assert again is not None and again.cubin == code.cubin and again.ptx == code.ptx
    assert again.cuda_imports == ("libcudart.so.13",)
    assert dc.from_json({"binaries": "nope"}) is None and dc.from_json(None) is None


def test_arch_order_is_numeric():
    assert dc.arch_sorted(["sm_120", "sm_75", "sm_90a", "sm_86"]) == ("sm_75", "sm_86", "sm_90a", "sm_120")


RODATA = (SAMPLES / "libtiny_cuda-fatbin-in-rodata.so").read_bytes()


def _segment(data: bytes) -> tuple[int, int]:
    """(file offset, address) of .nvFatBinSegment."""
    seg = next(s for s in dc._elf_sections(data, True) if s[0] == ".nvFatBinSegment")
    return seg[2], seg[5]


def test_a_fat_binary_outside_every_device_code_section_is_found_through_its_wrapper():
    """No .nv_fatbin: the fat binary sits in .rodata (README.md), and cuobjdump lists ELF sm_75, PTX sm_90."""
    assert ".nv_fatbin" not in [s[0] for s in dc._elf_sections(RODATA, True)]
    got = dc.read_binary(RODATA, "librodata.so")
    assert [e.arch for e in got.entries] == ["sm_75", "compute_90"] and got.problems == ()
    assert got.cubin == ("sm_75",) and got.ptx == ("compute_90",) and got.has_device_code


def test_a_wrapper_that_points_at_no_fat_binary_is_a_problem():
    data = bytearray(RODATA)
    off, _ = _segment(RODATA)
    text = next(s[5] for s in dc._elf_sections(RODATA, True) if s[0] == ".text")
    struct.pack_into("<Q", data, off + 8, text)  # machine code, not a fat binary
    got = dc.read_binary(bytes(data), "bad.so")
    assert got.entries == () and any("points at no fat binary" in p for p in got.problems)
    struct.pack_into("<Q", data, off + 8, 1 << 60)  # outside every section: nothing to read, no problem
    assert dc.read_binary(bytes(data), "far.so").entries == ()


def test_a_cut_file_or_segment_with_wrappers_reads_without_an_exception():
    for cut in range(0, len(RODATA), 61):
        assert isinstance(dc.read_binary(RODATA[:cut], "cut"), dc.BinaryCode)
