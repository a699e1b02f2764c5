"""Recorded machines for `envmgr doctor`: the test machines of ../build_machines.py plus small edits.

    python3 tests/machines/doctor/build_doctor_machines.py     # (re)write tests/machines/doctor/*.toml

Each machine starts from a machine built from real samples (mostly the classic
community-buildtools-cuda124 one) and applies the edits its `[meta] composed` lines name, so that one
doctor check fires (or passes). test_doctor_machines.py checks the files match this script.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import tomlkit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import build_machines as bm  # noqa: E402

BT = f"{bm.PF86}\\Microsoft Visual Studio\\2022\\BuildTools"
COMMUNITY = f"{bm.PF}\\Microsoft Visual Studio\\2022\\Community"
PY_WIN = "C:\\Users\\dev\\AppData\\Local\\Programs\\Python\\Python312"
SITE_WIN = f"{PY_WIN}\\Lib\\site-packages"
SITE_LINUX = "/home/dev/.venv/lib/python3.12/site-packages"


def pe_header(machine: int) -> str:
    """The first bytes of a PE image (DOS header, e_lfanew, PE signature, COFF machine): enough for the
    word-size check; hand-made, no real sample needed for four header fields."""
    head = bytearray(0x40)
    head[0:2] = b"MZ"
    struct.pack_into("<I", head, 0x3C, 0x40)
    return (bytes(head) + b"PE\0\0" + struct.pack("<H", machine) + b"\0" * 18).hex()


def elf_header() -> str:
    head = bytearray(64)
    head[0:7] = b"\x7fELF\x02\x01\x01"
    struct.pack_into("<HH", head, 16, 3, 62)  # ET_DYN, x86-64
    return bytes(head).hex()


class Doc:
    """A Machine plus what build_machines' Machine has no field for: [python] and binary files."""

    def __init__(self, m: bm.Machine) -> None:
        self.m, self.python, self.hex = m, None, {}

    def render(self) -> str:
        doc = bm.document(self.m)
        doc["meta"]["composed"].append("edited for envmgr doctor by tests/machines/doctor/build_doctor_machines.py")
        for path, value in sorted(self.hex.items()):
            item = tomlkit.inline_table()
            item.add("hex", value)
            doc["files"].add(path, item)
        if self.python:
            table = tomlkit.table()
            for k, v in self.python.items():
                table.add(k, v)
            doc.add("python", table)
        return tomlkit.dumps(doc).replace("test machine '", "doctor test machine '")


def classic(name: str, description: str, *edits: str) -> Doc:
    m = bm.community_buildtools_cuda124()
    m.name, m.description = name, description
    for e in edits:
        m.note(e)
    return Doc(m)


def windows_python(d: Doc, machine: int = 0x8664) -> None:
    exe = f"{PY_WIN}\\python.exe"
    d.hex[exe] = pe_header(machine)
    d.python = {"executable": exe, "version": "3.12.4", "site_packages": [SITE_WIN]}
    d.m.env["LOCALAPPDATA"] = "C:\\Users\\dev\\AppData\\Local"


def classic_fixed() -> Doc:
    d = classic(
        "classic-fixed",
        "The classic machine after CUDA 11.8 and 12.4 were integrated into Build Tools too",
        "Build Tools' v170\\BuildCustomizations holds the CUDA 11.8 and 12.4 MSBuildExtensions files",
    )
    bc = f"{BT}\\MSBuild\\Microsoft\\VC\\v170\\BuildCustomizations"
    for short in ("11.8", "12.4"):
        for name in bm.msbuild_extensions(short):
            d.m.file(f"{bc}\\{name}", "" if name.endswith(".dll") else "<!-- placeholder -->\r\n")
    windows_python(d)
    return d


def classic_bad_env() -> Doc:
    d = classic(
        "classic-bad-env",
        "The classic machine in a shell with every environment mistake doctor knows",
        'CMAKE_ARGS uses cmd\'s set X="..." quoting and the fatal LLAMA_CUBLAS; FORCE_CMAKE=1',
        "a 32-bit Python 3.12 (python.exe's COFF machine is i386)",
        "Git's usr\\bin (GNU link.exe) and an x86 cl.exe come first on PATH",
        "TEMP is a long path with a space and non-ASCII characters; LongPathsEnabled = 0",
        "CUDACXX names a removed CUDA 12.1; HIP_PATH names a removed HIP",
        "pip's wheel cache holds llama_cpp_python-0.3.36 built without CUDA",
    )
    m = d.m
    m.env["CMAKE_ARGS"] = '"-DLLAMA_CUBLAS=on" -DCMAKE_CUDA_COMPILER=C:\\Program Files\\NVIDIA\\nvcc.exe'
    m.env["FORCE_CMAKE"] = "1"
    user = "C:\\Users\\Jérôme Dupont-Delacroix-Longname"
    m.env["TEMP"] = m.env["TMP"] = f"{user}\\AppData\\Local\\Temp\\build area\\nested"
    m.env["USERPROFILE"] = user
    m.env["CUDACXX"] = f"{bm.CUDA_ROOT}\\v12.1\\bin\\nvcc.exe"
    m.env["HIP_PATH"] = "C:\\Program Files\\AMD\\ROCm\\5.7\\"
    x86 = f"{BT}\\VC\\Tools\\MSVC\\14.44.35207\\bin\\Hostx86\\x86"
    m.env["PATH"] = f"{bm.PF}\\Git\\usr\\bin;{x86};" + m.env["PATH"]
    m.file(f"{bm.PF}\\Git\\usr\\bin\\link.exe")
    m.reg("HKLM\\SYSTEM\\CurrentControlSet\\Control\\FileSystem", "LongPathsEnabled", "REG_DWORD", 0)
    windows_python(d, 0x14C)
    wheel = (
        f"C:\\Users\\dev\\AppData\\Local\\pip\\Cache\\wheels\\3f\\a1\\9c\\0d4e\\"
        "llama_cpp_python-0.3.36-cp312-cp312-win_amd64.whl"
    )
    d.hex[wheel] = cpu_wheel().hex()
    return d


def cpu_wheel() -> bytes:
    """A zip with the file names of a CPU-only llama-cpp-python wheel (contents are placeholders)."""
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name in (
            "llama_cpp/__init__.py",
            "llama_cpp/lib/llama.dll",
            "llama_cpp/lib/ggml.dll",
            "llama_cpp/lib/ggml-base.dll",
            "llama_cpp/lib/ggml-cpu.dll",
            "llama_cpp_python-0.3.36.dist-info/METADATA",
        ):
            info = zipfile.ZipInfo(name, (2026, 11, 1, 0, 0, 0))
            info.create_system = 3  # zipfile records 0 (MS-DOS) on win32: the same bytes on every OS
            zf.writestr(info, "")
    return buf.getvalue()


def classic_llama_cpu() -> Doc:
    d = classic(
        "classic-llama-cpu",
        "The classic machine with a CPU-only llama-cpp-python 0.3.36 installed",
        "site-packages\\llama_cpp\\lib holds llama.dll and ggml*.dll but no ggml-cuda.dll",
    )
    windows_python(d)
    lib = f"{SITE_WIN}\\llama_cpp\\lib"
    for name in ("llama.dll", "ggml.dll", "ggml-base.dll", "ggml-cpu.dll"):
        d.m.file(f"{lib}\\{name}")
    return d


def classic_new_gpu_old_driver() -> Doc:
    d = classic(
        "classic-rtx5090-old-driver",
        "The classic machine with an RTX 5090 (sm_120) on driver 522.06",
        "nvidia-smi reports an RTX 5090, compute capability 12.0, driver 522.06 (older than CUDA 12 needs)",
    )
    for c in d.m.commands:
        if c["argv"][0] == bm.SMI_WIN:
            c["stdout"] = "0, NVIDIA GeForce RTX 5090, 12.0, 522.06, 32607 MiB\r\n"
    return d


def linux_edit(name: str, description: str, *edits: str) -> Doc:
    m = bm.linux_two_toolkits()
    m.name, m.description = name, description
    for e in edits:
        m.note(e)
    d = Doc(m)
    exe = "/home/dev/.venv/bin/python3.12"
    d.hex[exe] = elf_header()
    d.python = {"executable": exe, "version": "3.12.3", "site_packages": [SITE_LINUX]}
    return d


LDCONFIG_HEAD = "4 libs found in cache `/etc/ld.so.cache'\n"


def linux_gcc15() -> Doc:
    d = linux_edit(
        "linux-gcc15-no-driver",
        "linux-two-toolkits with g++ 15 as g++, no nvcc on PATH, no driver",
        "g++ is g++-15 (15.2.0); PATH lacks /usr/local/cuda/bin; CUDA_HOME is set",
        "ldconfig -p lists no libcuda.so.1; CUDA 13.0 has the libcuda link stub",
    )
    m = d.m
    m.file("/usr/bin/g++-15")
    m.links["/usr/bin/g++"] = "/usr/bin/g++-15"
    m.commands = [c for c in m.commands if c["argv"][0] != "/usr/bin/g++"]
    for exe in ("/usr/bin/g++-15", "/usr/bin/g++"):
        m.command(
            [exe, "--version"],
            f"{exe.rsplit('/', 1)[1]} (GCC) 15.2.0\nCopyright (C) 2025 Free Software Foundation, Inc.\n",
        )
    m.env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    m.env["CUDA_HOME"] = "/usr/local/cuda-12.4"
    m.file("/usr/local/cuda-13.0/targets/x86_64-linux/lib/stubs/libcuda.so")
    m.file("/sbin/ldconfig")
    m.command(
        ["/sbin/ldconfig", "-p"],
        LDCONFIG_HEAD + "\tlibm.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libm.so.6\n"
        "\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6\n",
    )
    return d


def linux_driver() -> Doc:
    d = linux_edit(
        "linux-with-driver",
        "linux-two-toolkits with the 570 driver's libcuda.so.1 in ld.so.cache",
        "ldconfig -p lists libcuda.so.1 (driver 570.86.15)",
    )
    m = d.m
    m.file("/sbin/ldconfig")
    m.file("/usr/lib/x86_64-linux-gnu/libcuda.so.1")
    m.command(
        ["/sbin/ldconfig", "-p"],
        LDCONFIG_HEAD + "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
        "\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6\n",
    )
    return d


MACHINES = (classic_fixed, classic_bad_env, classic_llama_cpu, classic_new_gpu_old_driver, linux_gcc15, linux_driver)


def render_all() -> dict[Path, str]:
    return {HERE / f"{d.m.name}.toml": d.render() for d in (make() for make in MACHINES)}


def main() -> None:
    for path, text in render_all().items():
        path.write_bytes(text.encode("utf-8"))
        print(f"wrote {path.relative_to(bm.ROOT)}")


if __name__ == "__main__":
    main()
