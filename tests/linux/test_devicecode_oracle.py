"""The device-code reader against NVIDIA's own: `cuobjdump --list-elf` / `--list-ptx` (PyPI
nvidia-cuda-cuobjdump, Linux build) on real binaries of both platforms.

ELF: shared libraries built here by nvcc 13.0 with chosen -gencode sets (arch-specific `a`, family `f`,
PTX only, compressed and not). PE: NVIDIA's nvjpeg64_12.dll from the PyPI win_amd64 wheel
nvidia-nvjpeg-cu12 (a Windows DLL with device code) and cudart64_12.dll (none). The Linux cuobjdump
does not read PE files ("does not contain device code", asserted below), so for a DLL it is given the
`.nv_fatb` section's bytes as a .fatbin file, which it reads; the section is found by pefile.
cuobjdump 13.5 names a family cubin (`sm_100f`) `sm_100`; the comparison drops that `f` for cubins only.
"""

from __future__ import annotations

import os
import re
import subprocess
import venv
import zipfile
from pathlib import Path

import pytest

from envmgr.binaries import devicecode as dc
from tests.conftest import need

pytestmark = [pytest.mark.linux]
KERNEL = Path(__file__).resolve().parents[1] / "corpus" / "devicecode" / "tiny_kernel.cu"
DOWNLOADS = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "envmgr-test-downloads"
WIN_WHEELS = {
    "nvidia-nvjpeg-cu12==12.4.0.76": "nvidia/nvjpeg/bin/nvjpeg64_12.dll",
    "nvidia-cuda-runtime-cu12==12.9.79": "nvidia/cuda_runtime/bin/cudart64_12.dll",
}
GENCODES = {
    "sm75-sm90a-ptx90-sm120": [
        "arch=compute_75,code=sm_75",
        "arch=compute_90a,code=sm_90a",
        "arch=compute_90,code=compute_90",
        "arch=compute_120,code=sm_120",
    ],
    "family-and-arch-specific": [
        "arch=compute_100a,code=sm_100a",
        "arch=compute_100f,code=sm_100f",
        "arch=compute_120f,code=compute_120f",
        "arch=compute_120a,code=compute_120a",
        "arch=compute_89,code=sm_89",
    ],
    "ptx-only-86": ["arch=compute_86,code=compute_86"],
}
_ELF = re.compile(r"^ELF file\s+\d+: .*\.(sm_\d+[a-z]?)\.cubin$", re.M)
_PTX = re.compile(r"^PTX file\s+\d+: .*\.sm_(\d+[a-z]?)\.ptx$", re.M)


@pytest.fixture(scope="session")
def cuobjdump(tmp_path_factory) -> Path:
    """NVIDIA's cuobjdump from PyPI; ENVMGR_TEST_CUOBJDUMP_VENV reuses a venv (tests/run-all.sh keeps one)."""
    where = os.environ.get("ENVMGR_TEST_CUOBJDUMP_VENV")
    if not (where and list(Path(where).glob("lib/python*/site-packages/nvidia/cu13/bin/cuobjdump"))):
        where = str(tmp_path_factory.mktemp("cuobjdump") / "venv")
        venv.EnvBuilder(with_pip=True).create(where)
        done = subprocess.run(
            [
                f"{where}/bin/python",
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "nvidia-cuda-cuobjdump==13.*",
            ],
            capture_output=True,
            text=True,
        )
        need(done.returncode == 0, f"pip could not install nvidia-cuda-cuobjdump: {done.stderr[-300:]}")
    return next(Path(where).glob("lib/python*/site-packages/nvidia/cu13/bin/cuobjdump"))


def oracle(cuobjdump: Path, path: Path) -> tuple[list[str], list[str]]:
    out = subprocess.run([str(cuobjdump), "--list-elf", "--list-ptx", str(path)], capture_output=True, text=True)
    return _ELF.findall(out.stdout), [f"compute_{a}" for a in _PTX.findall(out.stdout)]


def ours(code: dc.BinaryCode) -> tuple[list[str], list[str]]:
    cubin = [re.sub(r"f$", "", e.arch) for e in code.entries if e.kind == "cubin"]
    return cubin, [e.arch for e in code.entries if e.kind == "ptx"]


@pytest.mark.parametrize("name", sorted(GENCODES))
@pytest.mark.parametrize("compress", ["default", "none", "size"])
def test_nvcc_13_0_builds_list_as_cuobjdump_lists_them(name, compress, tmp_path, cuda_13_0, cuobjdump):
    lib = tmp_path / f"lib{name}.so"
    args = [str(cuda_13_0 / "bin" / "nvcc"), "-shared", "-Xcompiler", "-fPIC", "-o", str(lib), str(KERNEL)]
    args += [x for g in GENCODES[name] for x in ("-gencode", g)]
    args += {"default": [], "none": ["--no-compress"], "size": ["--compress-mode=size"]}[compress]
    done = subprocess.run(args, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-800:]
    want = oracle(cuobjdump, lib)
    got = dc.read_binary(lib.read_bytes(), lib.name)
    assert want[0] or want[1]
    assert ours(got) == want and got.problems == ()


def _windows_dll(spec: str, member: str, tmp_path: Path) -> Path:
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    name, version = spec.split("==")
    found = sorted(DOWNLOADS.glob(f"{name.replace('-', '_')}-{version}-*win_amd64.whl"))
    if not found:
        done = subprocess.run(
            [
                "python3",
                "-m",
                "pip",
                "download",
                "-q",
                "--disable-pip-version-check",
                "--no-deps",
                "--only-binary=:all:",
                "--platform",
                "win_amd64",
                "-d",
                str(DOWNLOADS),
                spec,
            ],
            capture_output=True,
            text=True,
        )
        need(done.returncode == 0, f"pip could not download {spec} (win_amd64): {done.stderr[-300:]}")
        found = sorted(DOWNLOADS.glob(f"{name.replace('-', '_')}-{version}-*win_amd64.whl"))
    with zipfile.ZipFile(found[-1]) as zf:
        out = tmp_path / Path(member).name
        out.write_bytes(zf.read(member))
    return out


@pytest.mark.parametrize("spec", sorted(WIN_WHEELS))
def test_nvidia_windows_dlls_list_as_cuobjdump_lists_their_fat_binaries(spec, tmp_path, cuobjdump):
    import pefile

    dll = _windows_dll(spec, WIN_WHEELS[spec], tmp_path)
    data = dll.read_bytes()
    got = dc.read_binary(data, dll.name)
    assert got.format == "pe" and got.machine == "x64" and got.problems == ()
    plain = subprocess.run([str(cuobjdump), "--list-elf", str(dll)], capture_output=True, text=True)
    assert "does not contain device code" in plain.stdout + plain.stderr  # the Linux build skips PE files
    pe = pefile.PE(data=data, fast_load=True)
    sections = [s for s in pe.sections if s.Name.rstrip(b"\0") == b".nv_fatb"]
    if not sections:
        assert got.entries == () and not got.has_device_code
        return
    fatbin = tmp_path / "section.fatbin"
    fatbin.write_bytes(sections[0].get_data()[: sections[0].Misc_VirtualSize])
    want = oracle(cuobjdump, fatbin)
    assert want[0] and ours(got) == want


def _object(cuda: Path, out: Path, *extra: str) -> Path:
    done = subprocess.run(
        [
            str(cuda / "bin" / "nvcc"),
            "-c",
            "-Xcompiler",
            "-fPIC",
            *extra,
            "-o",
            str(out),
            str(KERNEL),
            "-gencode",
            "arch=compute_75,code=sm_75",
            "-gencode",
            "arch=compute_90,code=compute_90",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-800:]
    return out


def _link(cuda: Path, lib: Path, *args: str) -> Path:
    done = subprocess.run(
        ["g++", "-shared", "-o", str(lib), *args, f"-L{cuda / 'lib'}", "-lcudart"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-800:]
    return lib


@pytest.mark.parametrize("linker", ["bfd", "gold"])
def test_fat_binaries_merged_into_rodata_are_found_through_the_wrappers(linker, tmp_path, cuda_13_0, cuobjdump):
    """A link that put the fat binary in .rodata (the object's .nv_fatbin renamed .rodata.nvfb, which the
    default linker scripts merge into .rodata): only .nvFatBinSegment's wrapper leads to it, as cuobjdump
    follows it."""
    obj = _object(cuda_13_0, tmp_path / "k.o")
    moved = tmp_path / "k-rodata.o"
    subprocess.run(["objcopy", "--rename-section", ".nv_fatbin=.rodata.nvfb", str(obj), str(moved)], check=True)
    lib = _link(cuda_13_0, tmp_path / f"librodata-{linker}.so", f"-fuse-ld={linker}", str(moved))
    data = lib.read_bytes()
    names = [s[0] for s in dc._elf_sections(data, True)]
    assert ".nv_fatbin" not in names and ".nvFatBinSegment" in names
    want = oracle(cuobjdump, lib)
    got = dc.read_binary(data, lib.name)
    assert want == (["sm_75"], ["compute_90"]) and ours(got) == want and got.problems == ()


def test_a_wrapper_pointer_left_to_its_relocation_is_followed(tmp_path, cuda_13_0):
    """The same library with the wrapper's pointer field cleared, as a linker that leaves RELA addends out of
    the section (lld without --apply-dynamic-relocs) writes it: the R_X86_64_RELATIVE addend leads on.
    cuobjdump does not follow relocations ("Invalid fatbin header"): the in-place result is the reference."""
    obj = _object(cuda_13_0, tmp_path / "k.o")
    moved = tmp_path / "k-rodata.o"
    subprocess.run(["objcopy", "--rename-section", ".nv_fatbin=.rodata.nvfb", str(obj), str(moved)], check=True)
    data = bytearray(_link(cuda_13_0, tmp_path / "librodata.so", str(moved)).read_bytes())
    seg = next(s for s in dc._elf_sections(data, True) if s[0] == ".nvFatBinSegment")
    assert any(data[seg[2] + 8 : seg[2] + 16])
    before = dc.read_binary(data, "librodata.so")
    data[seg[2] + 8 : seg[2] + 16] = bytes(8)
    after = dc.read_binary(data, "librodata.so")
    assert after.cubin == before.cubin == ("sm_75",) and after.ptx == ("compute_90",) and after.problems == ()


def test_relocatable_device_code_lists_what_the_runtime_loads(tmp_path, cuda_13_0, cuobjdump):
    """-rdc: __nv_relfatbin holds the object's code for the device linker (cuobjdump shows it only with -all),
    .nv_fatbin the linked image, which has no PTX: `cubin`/`ptx` are the linked image's."""
    obj = _object(cuda_13_0, tmp_path / "k.o", "-rdc=true")
    lib = tmp_path / "librdc.so"
    done = subprocess.run(
        [
            str(cuda_13_0 / "bin" / "nvcc"),
            "-shared",
            "-Xcompiler",
            "-fPIC",
            "-o",
            str(lib),
            str(obj),
            "-gencode",
            "arch=compute_75,code=sm_75",
            "-gencode",
            "arch=compute_90,code=compute_90",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-800:]
    got = dc.read_binary(lib.read_bytes(), lib.name)
    everything = subprocess.run(
        [str(cuobjdump), "-all", "--list-elf", "--list-ptx", str(lib)], capture_output=True, text=True
    ).stdout
    assert ours(got) == (_ELF.findall(everything), [f"compute_{a}" for a in _PTX.findall(everything)])
    loaded = oracle(cuobjdump, lib)
    assert (list(got.cubin), list(got.ptx)) == loaded and got.problems == ()
    assert any(e.relocatable and e.kind == "ptx" for e in got.entries)
