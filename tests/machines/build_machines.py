"""Compose envmgr's recorded test machines from real captured samples, and write them as TOML.

    python3 tests/machines/build_machines.py          # (re)write tests/machines/*.toml + the example

Every machine file is self-contained (contents inline, no `from =`), and its `[meta]` says which real
samples it is built from (file in tests/corpus + where that sample came from, see
../shared/facts/windows.md §0) and which parts are composed by hand. The samples are read from
tests/corpus/, byte-exact copies of ../shared/corpus and ../shared/research-corpus.
`test_machines.py` checks that running this script reproduces the committed files exactly.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import tomlkit

from envmgr.knowledge import build_customizations_subdir
from envmgr.snapshot.capture import (
    BEGIN,
    END,
    LEVEL,
    PRE_BEGIN,
    PRE_END,
    base_environment,
    capture_script,
    vcvars_args,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CORPUS = HERE.parent / "corpus"
EXAMPLE = ROOT / "examples" / "machines" / "community-buildtools-cuda124.toml"

# Where each real sample came from (../shared/facts/windows.md §0).
SOURCES = {
    "vswhere-products-star-json-vs2022-buildtools-17.14.28-no-vctools.json": "a public repo holding a Copilot CLI session transcript (search-index id 52051282145), real machine, 2026-03-24",
    "vswhere-json-vs2022-community-17.5.4-flutter-fixture.json": "flutter/flutter packages/flutter_tools/test native_assets fixture (index ids 7275137 / 140307312), a real capture",
    "vswhere-json-products-star-vs2022-buildtools-17.13.6-EXCERPT.txt": "https://github.com/conan-io/conan/issues/18202",
    "vswhere-json-vs2019-community-16.11.15-japanese-description-EXCERPT.txt": "https://github.com/microsoft/react-native-windows/issues/10034",
    "vswhere-repo-fixture-state.json-buildtools-2017.json": "microsoft/vswhere docker/Instances/2/state.json",
    "vswhere-repo-fixture-state.json-enterprise-2017-with-errors.json": "microsoft/vswhere docker/Instances/4/state.json",
    "vswhere-repo-fixture-state.json-enterprise-preview-2017.json": "microsoft/vswhere docker/Instances/5/state.json",
    "node-gyp-fixture-VS_2026_Insiders_workload.json": "nodejs/node-gyp test/fixtures/VS_2026_Insiders_workload.json",
    "node-gyp-fixture-VS_2019_BuildTools_minimal.json": "nodejs/node-gyp test/fixtures/VS_2019_BuildTools_minimal.txt",
    "node-gyp-fixture-VS_2022_BuildTools_arm64_only.json": "nodejs/node-gyp test/fixtures/VS_2022_BuildTools_arm64_only.txt",
    "vswhere-text-all-vs2019-professional-incomplete-state13-EXCERPT.txt": "https://github.com/microsoft/vswhere/issues/213",
    "nvcc-version-windows-11.8.89.txt": "public files with this exact output, search-index ids 11087254619, 10768444696, 67449163253 (10+ hits)",
    "nvcc-version-windows-12.4.99.txt": "public files with this exact output, search-index ids 33497867333, 28615422224, 8284239715 (10+ hits)",
    "nvcc-version-windows-13.0.88.txt": "public files with this exact output, search-index ids 56710801826, 34727663025, 7899540161",
    "vsdevcmd-and-devpowershell-vs2026-18.2.1-community-default-x86-msvc14.50.35717-EXCERPT.txt": "a public guide, search-index id 53826862317",
    "vcvarsall-x64-vs2022-17.14.30-community-cl19.44.35225.txt": "a public blog post (CVE-2026-22561 write-up), search-index id 53621285739",
    "nvcc-version-windows-12.8.93.txt": "https://github.com/NVIDIA/cuda-samples/issues/362 (+ others)",
    "nvcc-version-windows-13.1.80.txt": "public file, search index id 53826862317 (+ others)",
    "nvcc-version-linux-12.4.131.txt": "public files with this exact output, search-index ids 69518771390, 42625701420 (10+ hits)",
    "cuda-version-json-linux-11.8.0.json": "a public file, search-index id 45068381594",
    "where-cudart-cuda13.0-bin-x64.txt": "a public file, search-index id 34727663025 (CUDA 13.0 keeps cudart64_13.dll in bin\\x64)",
    "nvidia-smi-windows-576.80-cuda12.9-rtx3080.txt": "a public file, search-index id 15237296467",
    "nvidia-smi-windows-596.36-cuda13.2-rtx4060ti.txt": "a public file, search-index id 56492244906",
    "nvidia-smi-query-gpu-compute_cap-csv-linux-570.86.15.txt": "https://github.com/triton-inference-server/server/pull/8070",
}

PF = "C:\\Program Files"
PF86 = "C:\\Program Files (x86)"
VSWHERE = f"{PF86}\\Microsoft Visual Studio\\Installer\\vswhere.exe"
VSWHERE_ARGV = [VSWHERE, "-all", "-prerelease", "-products", "*", "-format", "json", "-utf8"]
CUDA_ROOT = f"{PF}\\NVIDIA GPU Computing Toolkit\\CUDA"
CUDA_REG = "HKLM\\SOFTWARE\\NVIDIA Corporation\\GPU Computing Toolkit\\CUDA"
MACHINE_ENV = "HKLM\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment"
SMI_WIN = "C:\\Windows\\System32\\nvidia-smi.exe"
SMI_ARGS = ["--query-gpu=index,name,compute_cap,driver_version,memory.total", "--format=csv,noheader"]
NVCC_WIN = {
    "11.8": "nvcc-version-windows-11.8.89.txt",
    "12.4": "nvcc-version-windows-12.4.99.txt",
    "13.0": "nvcc-version-windows-13.0.88.txt",
    "12.8": "nvcc-version-windows-12.8.93.txt",
    "13.1": "nvcc-version-windows-13.1.80.txt",
}
# This machine's own /usr/local/cuda-13.0/bin/nvcc --version (captured while writing this script).
NVCC_LINUX_13_0 = (
    "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\n"
    "Built on Wed_Aug_20_01:58:59_PM_PDT_2025\nCuda compilation tools, release 13.0, V13.0.88\n"
    "Build cuda_13.0.r13.0/compiler.36424714_0\n"
)
PLACEHOLDER_NOTE = (
    "binaries (cl.exe, nvcc.exe, DLLs, MSBuild.exe ...) are empty files and text files such as "
    "vcvarsall.bat, host_config.h and windows.h hold a one-line placeholder: discovery only "
    "checks that they exist"
)


def sample(name: str) -> str:
    """A real sample exactly as stored (UTF-8, line endings untouched)."""
    return (CORPUS / name).read_bytes().decode("utf-8")


def crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def json_objects(text: str) -> list[str]:
    """The objects of a real vswhere JSON array, each as its exact text (for composing arrays)."""
    body = text.strip()
    assert body.startswith("[") and body.endswith("]"), "not a JSON array"
    inner = body[1:-1].strip("\n")
    json.loads(body)
    return [inner]  # every sample used here holds one instance


def json_array(objects: list[str]) -> str:
    text = "[\n" + ",\n".join(objects) + "\n]\n"
    json.loads(text)
    return text


@dataclass
class Machine:
    name: str
    platform: str
    description: str
    sources: list[str] = field(default_factory=list)
    composed: list[str] = field(default_factory=list)
    env: dict = field(default_factory=dict)
    dirs: list[str] = field(default_factory=list)
    links: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)
    registry: dict = field(default_factory=dict)
    commands: list[dict] = field(default_factory=list)

    def use(self, name: str, how: str = "") -> str:
        line = f"corpus/{name}: {SOURCES[name]}" + (f" ({how})" if how else "")
        if line not in self.sources:
            self.sources.append(line)
        return sample(name)

    def note(self, text: str) -> None:
        if text not in self.composed:
            self.composed.append(text)

    def file(self, path: str, content: str = "") -> None:
        self.files[path] = content

    def dir(self, path: str) -> None:
        if path not in self.dirs:
            self.dirs.append(path)

    def reg(self, key: str, name: str, kind: str, value) -> None:
        self.registry.setdefault(key, {})[name] = {"type": kind, "value": value}

    def command(self, argv: list[str], stdout: str = "", returncode: int = 0, **extra) -> None:
        self.commands.append({"argv": argv, "returncode": returncode, "stdout": stdout, **extra})


# ---- Windows building blocks ------------------------------------------------------------------


def windows_base(m: Machine, path_front: list[str]) -> None:
    m.env.update(
        {
            "ProgramData": "C:\\ProgramData",
            "ProgramFiles": PF,
            "ProgramFiles(x86)": PF86,
            "ProgramW6432": PF,
            "SystemRoot": "C:\\Windows",
            "PATHEXT": ".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC",
            "PATH": ";".join(
                path_front
                + [
                    "C:\\Windows\\system32",
                    "C:\\Windows",
                    "C:\\Windows\\System32\\Wbem",
                    "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\",
                    "C:\\Windows\\System32\\OpenSSH\\",
                    f"{PF}\\Git\\cmd",
                    "C:\\Users\\dev\\AppData\\Local\\Microsoft\\WindowsApps",
                ]
            ),
        }
    )
    m.file("C:\\Windows\\System32\\cmd.exe")
    m.note("the environment (PATH, PATHEXT, ProgramFiles ...) follows a default Windows 11 install")
    m.note(PLACEHOLDER_NOTE)


def vswhere(m: Machine, stdout: str, returncode: int = 0) -> None:
    m.file(VSWHERE)
    m.command(VSWHERE_ARGV, stdout, returncode)


def visual_studio(
    m: Machine,
    path: str,
    major: int,
    *,
    ide: bool,
    toolsets: tuple[str, ...] = (),
    cuda: tuple[str, ...] = (),
    vctargets: bool = True,
) -> None:
    """An instance's folder tree: MSVC toolsets, vcvars, and the BuildCustomizations of its VCTargets."""
    m.file(
        f"{path}\\Common7\\IDE\\devenv.exe" if ide else f"{path}\\Common7\\Tools\\LaunchDevCmd.bat",
        "" if ide else "@echo off\r\nrem placeholder\r\n",
    )
    m.file(f"{path}\\Common7\\Tools\\VsDevCmd.bat", "@echo off\r\nrem placeholder\r\n")
    msbuild = "15.0" if major == 15 else "Current"
    m.file(f"{path}\\MSBuild\\{msbuild}\\Bin\\MSBuild.exe")
    for ver in toolsets:
        for host, target in (("x64", "x64"), ("x64", "x86"), ("x86", "x86"), ("x86", "x64")):
            # VS 2017 spells the folders HostX64/HostX86; 2019 and later Hostx64/Hostx86.
            host = f"Host{'X' if major == 15 else 'x'}{host[1:]}"
            m.file(f"{path}\\VC\\Tools\\MSVC\\{ver}\\bin\\{host}\\{target}\\cl.exe")
        m.file(f"{path}\\VC\\Tools\\MSVC\\{ver}\\include\\vcruntime.h", "// placeholder\r\n")
    if toolsets:
        aux = f"{path}\\VC\\Auxiliary\\Build"
        for bat in ("vcvarsall.bat", "vcvars64.bat", "vcvars32.bat"):
            m.file(f"{aux}\\{bat}", "@echo off\r\nrem placeholder\r\n")
        m.file(f"{aux}\\Microsoft.VCToolsVersion.default.txt", toolsets[0] + "\r\n")
        m.note(
            "VS folder trees (VC\\Tools\\MSVC\\<ver>, VC\\Auxiliary\\Build, MSBuild\\...\\BuildCustomizations "
            "with VS's own masm.* files) follow the layout in facts/windows.md §3.1 and §6.1; toolset "
            "versions are the ones each VS release shipped"
        )
    if not vctargets:
        return
    bc = "\\".join((path, *build_customizations_subdir(major)))  # the product's rule (envmgr/knowledge.py)
    for ext in ("props", "targets", "xml"):
        m.file(f"{bc}\\masm.{ext}", "<!-- placeholder -->\r\n")
    for short in cuda:
        for name in msbuild_extensions(short):
            m.file(f"{bc}\\{name}", "" if name.endswith(".dll") else "<!-- placeholder -->\r\n")


def msbuild_extensions(short: str) -> list[str]:
    names = [f"CUDA {short}.props", f"CUDA {short}.targets", f"CUDA {short}.xml", f"Nvda.Build.CudaTasks.v{short}.dll"]
    if int(short.split(".")[0]) >= 13:
        names.insert(2, f"CUDA {short}.Version.props")
    return names


def windows_sdk(m: Machine, *versions: str) -> None:
    root = f"{PF86}\\Windows Kits\\10\\"
    roots = "HKLM\\SOFTWARE\\Microsoft\\Windows Kits\\Installed Roots"
    m.reg(roots, "KitsRoot10", "REG_SZ", root)
    for v in versions:
        m.registry.setdefault(f"{roots}\\{v}", {})  # one (empty) subkey per installed version
        m.file(f"{root}Include\\{v}\\um\\windows.h", "/* placeholder */\r\n")
        m.file(f"{root}Lib\\{v}\\um\\x64\\kernel32.Lib")
    m.note(
        "the Windows SDK (registry Installed Roots KitsRoot10, Include\\<ver>\\um\\windows.h) is composed "
        "by hand (facts/windows.md §9 layout)"
    )


def cuda_toolkit(m: Machine, short: str, *, cublas: bool = False) -> str:
    """A CUDA toolkit at its default root, its registry key, and its real `nvcc --version` output;
    with `cublas`, the cuBLAS/cuBLASLt files as the installer's default (Express) install lays them out."""
    root = f"{CUDA_ROOT}\\v{short}"
    major = int(short.split(".")[0])
    m.file(f"{root}\\bin\\nvcc.exe")
    if major >= 13:
        m.file(f"{root}\\bin\\x64\\cudart64_13.dll")
        m.dir(f"{root}\\bin\\crt")
        m.use("where-cudart-cuda13.0-bin-x64.txt", "the bin\\x64 location of cudart64_13.dll")
    else:
        m.file(f"{root}\\bin\\{'cudart64_110.dll' if major == 11 else 'cudart64_12.dll'}")
        m.file(f"{root}\\libnvvp\\nvvp.exe")
    m.file(f"{root}\\include\\crt\\host_config.h", "/* placeholder: not the real host_config.h */\r\n")
    m.file(f"{root}\\include\\cuda_runtime.h", "/* placeholder */\r\n")
    m.file(f"{root}\\lib\\x64\\cudart.lib")
    for name in msbuild_extensions(short):
        m.file(
            f"{root}\\extras\\visual_studio_integration\\MSBuildExtensions\\{name}",
            "" if name.endswith(".dll") else "<!-- placeholder -->\r\n",
        )
    if cublas:
        cublas_files(m, root, major)
    key = f"{CUDA_REG}\\v{short}"
    m.reg(key, "InstallDir", "REG_SZ", root + "\\")
    m.reg(key, "64BitInstalled", "REG_DWORD", 1)
    text = m.use(NVCC_WIN[short], "stdout of nvcc --version, converted to CRLF as a Windows console prints it")
    m.command([f"{root}\\bin\\nvcc.exe", "--version"], crlf(text))
    m.note(
        "CUDA toolkit trees (bin\\nvcc.exe, cudart DLL, include\\crt\\host_config.h, "
        "extras\\visual_studio_integration\\MSBuildExtensions with 4 files for 12.x and 5 for 13.x) and "
        "their registry keys (InstallDir REG_SZ with a trailing backslash, 64BitInstalled) are composed "
        "from facts/windows.md §5"
    )
    return root


def cublas_files(m: Machine, root: str, major: int) -> None:
    """cuBLAS and cuBLASLt in a Windows toolkit: the `cublas` subpackage's DLLs (bin, bin\\x64 from 13.0)
    and the `cublas_dev` one's import libraries and headers, the files llama.cpp's CUDA::cublas and
    CUDA::cublasLt need (doctor's F24)."""
    dlls = f"{root}\\bin\\x64" if major >= 13 else f"{root}\\bin"
    for name in ("cublas", "cublasLt"):
        m.file(f"{dlls}\\{name}64_{major}.dll")
        m.file(f"{root}\\lib\\x64\\{name}.lib")
    for name in ("cublas_api.h", "cublas_v2.h", "cublasLt.h"):
        m.file(f"{root}\\include\\{name}", "/* placeholder */\r\n")
    m.note(
        "cuBLAS/cuBLASLt (bin\\cublas64_<major>.dll and cublasLt64_<major>.dll, lib\\x64\\cublas.lib and "
        "cublasLt.lib, include\\cublas_api.h, cublas_v2.h and cublasLt.h) are laid out as NVIDIA's installer "
        "lays out its cublas and cublas_dev components (facts/windows.md §5 layout)"
    )


def cuda_env(m: Machine, installed: tuple[str, ...], current: str) -> None:
    """CUDA_PATH and CUDA_PATH_VX_Y, in the process env and in the machine env (registry)."""
    m.env["CUDA_PATH"] = f"{CUDA_ROOT}\\v{current}"
    m.reg(MACHINE_ENV, "CUDA_PATH", "REG_SZ", f"{CUDA_ROOT}\\v{current}")
    for short in installed:
        name = f"CUDA_PATH_V{short.replace('.', '_')}"
        m.env[name] = f"{CUDA_ROOT}\\v{short}"
        m.reg(MACHINE_ENV, name, "REG_SZ", f"{CUDA_ROOT}\\v{short}")
    m.reg(MACHINE_ENV, "Path", "REG_EXPAND_SZ", m.env["PATH"].replace("C:\\Windows", "%SystemRoot%"))


def cuda_path_dirs(*shorts: str) -> list[str]:
    """What the installers put on PATH, newest install first (each installer prepends)."""
    out = []
    for s in shorts:
        out.append(f"{CUDA_ROOT}\\v{s}\\bin")
        if int(s.split(".")[0]) < 13:
            out.append(f"{CUDA_ROOT}\\v{s}\\libnvvp")
    return out


def nvidia_smi(m: Machine, csv: str, how: str) -> None:
    m.file(SMI_WIN)
    m.file("C:\\Windows\\System32\\nvcuda.dll")
    m.command([SMI_WIN, *SMI_ARGS], csv)
    m.note(f"the nvidia-smi --query-gpu CSV line is composed in nvidia-smi's documented format ({how})")


# ---- the machines ---------------------------------------------------------------------------


def buildtools_only() -> Machine:
    m = Machine(
        "buildtools-only",
        "windows",
        "VS 2022 Build Tools 17.14.28 installed without the C++ workload: no MSVC toolset; no CUDA, no GPU",
    )
    windows_base(m, [])
    out = m.use(
        "vswhere-products-star-json-vs2022-buildtools-17.14.28-no-vctools.json", "the whole vswhere output, as is"
    )
    vswhere(m, out)
    visual_studio(m, f"{PF86}\\Microsoft Visual Studio\\2022\\BuildTools", 17, ide=False, vctargets=False)
    m.note(
        "the instance's folder holds no VC folder and no VCTargets, as a Build Tools install without the "
        "VCTools workload (the real capture's instance) has none"
    )
    return m


def buildtools_only_vctools() -> Machine:
    m = Machine(
        "buildtools-only-vctools",
        "windows",
        "VS 2022 Build Tools 17.13.6 with the C++ workload (MSVC 14.43.34808) and CUDA 12.4 integrated; "
        "a CI box without a GPU",
    )
    windows_base(m, cuda_path_dirs("12.4"))
    text = m.use(
        "vswhere-json-products-star-vs2022-buildtools-17.13.6-EXCERPT.txt",
        "its complete lines, up to enginePath, are kept byte-exact",
    )
    head = text.split("\n")[1:]  # drop the pasted prompt line
    keep = head[: next(i for i, ln in enumerate(head) if '"installedChannelId": "VisualStud' in ln)]
    tail = """    "installedChannelId": "VisualStudio.17.Release",
    "installedChannelUri": "https://aka.ms/vs/17/release/channel",
    "releaseNotes": "https://docs.microsoft.com/en-us/visualstudio/releases/2022/release-notes-v17.13#17.13.6",
    "thirdPartyNotices": "https://go.microsoft.com/fwlink/?LinkId=661288",
    "updateDate": "2025-04-10T22:18:32.0000000Z",
    "catalog": {
      "buildBranch": "d17.13",
      "buildVersion": "17.13.35931.197",
      "id": "VisualStudio/17.13.6+35931.197",
      "localBuild": "build-lab",
      "manifestName": "VisualStudio",
      "manifestType": "installer",
      "productDisplayVersion": "17.13.6",
      "productLine": "Dev17",
      "productLineVersion": "2022",
      "productMilestone": "RTW",
      "productMilestoneIsPreRelease": "False",
      "productName": "Visual Studio",
      "productPatchVersion": "6",
      "productPreReleaseMilestoneSuffix": "1.0",
      "productSemanticVersion": "17.13.6+35931.197"
    },
    "properties": {
      "campaignId": "",
      "channelManifestId": "VisualStudio.17.Release/17.13.6+35931.197",
      "nickname": "",
      "setupEngineFilePath": "C:\\\\Program Files (x86)\\\\Microsoft Visual Studio\\\\Installer\\\\setup.exe"
    }
  }
]
"""
    vswhere(m, "\n".join(keep) + "\n" + tail)
    m.note(
        "the vswhere output is the 17.13.6 excerpt completed into valid JSON: the fields from "
        "installedChannelId on (catalog, properties) are written by hand from the instance's version"
    )
    visual_studio(
        m,
        f"{PF86}\\Microsoft Visual Studio\\2022\\BuildTools",
        17,
        ide=False,
        toolsets=("14.43.34808",),
        cuda=("12.4",),
    )
    windows_sdk(m, "10.0.22621.0")
    cuda_toolkit(m, "12.4")
    cuda_env(m, ("12.4",), "12.4")
    return m


def community_buildtools_cuda124() -> Machine:
    m = Machine(
        "community-buildtools-cuda124",
        "windows",
        "The classic 'No CUDA toolset found' machine: VS 2022 Community 17.5.4 and Build Tools 17.14.28, "
        "both with MSVC; CUDA 11.8 and 12.4 installed (CUDA_PATH -> v12.4) while only Community existed, "
        "so only Community's v170\\BuildCustomizations has the CUDA files; one RTX 4070 SUPER",
    )
    windows_base(m, cuda_path_dirs("12.4", "11.8"))
    community = json_objects(
        m.use("vswhere-json-vs2022-community-17.5.4-flutter-fixture.json", "its instance object, byte-exact")
    )
    buildtools = json_objects(
        m.use(
            "vswhere-products-star-json-vs2022-buildtools-17.14.28-no-vctools.json", "its instance object, byte-exact"
        )
    )
    vswhere(m, json_array(community + buildtools))
    m.note("the vswhere output is one JSON array composed of the two real samples' instance objects")
    m.note("the real 17.14.28 Build Tools instance had no C++ workload; here its folder is given MSVC 14.44.35207")
    visual_studio(
        m,
        f"{PF}\\Microsoft Visual Studio\\2022\\Community",
        17,
        ide=True,
        toolsets=("14.35.32215",),
        cuda=("11.8", "12.4"),
    )
    visual_studio(m, f"{PF86}\\Microsoft Visual Studio\\2022\\BuildTools", 17, ide=False, toolsets=("14.44.35207",))
    windows_sdk(m, "10.0.22621.0")
    for short in ("11.8", "12.4"):
        cuda_toolkit(m, short, cublas=True)  # the installer's default install: doctor fails F01 only
    cuda_env(m, ("11.8", "12.4"), "12.4")
    nvidia_smi(m, "0, NVIDIA GeForce RTX 4070 SUPER, 8.9, 576.80, 12282 MiB\r\n", "RTX 4070 SUPER, driver 576.80")
    return m


def japanese_vs2019() -> str:
    """The 16.11.15 excerpt (Japanese description) completed into a JSON object."""
    text = sample("vswhere-json-vs2019-community-16.11.15-japanese-description-EXCERPT.txt")
    lines = text.split("\n")
    keep = lines[1 : next(i for i, ln in enumerate(lines) if ln.strip() == '"')]  # drop "[" and the cut line
    tail = """    "catalog": {
      "buildBranch": "d16.11",
      "buildVersion": "16.11.32510.428",
      "id": "VisualStudio/16.11.15+32510.428",
      "localBuild": "build-lab",
      "manifestName": "VisualStudio",
      "manifestType": "installer",
      "productDisplayVersion": "16.11.15",
      "productLine": "Dev16",
      "productLineVersion": "2019",
      "productMilestone": "RTW",
      "productMilestoneIsPreRelease": "False",
      "productName": "Visual Studio",
      "productPatchVersion": "15",
      "productPreReleaseMilestoneSuffix": "1.0",
      "productSemanticVersion": "16.11.15+32510.428"
    },
    "properties": {
      "campaignId": "",
      "channelManifestId": "VisualStudio.16.Release/16.11.15+32510.428",
      "nickname": "",
      "setupEngineFilePath": "C:\\\\Program Files (x86)\\\\Microsoft Visual Studio\\\\Installer\\\\setup.exe"
    }
  }"""
    return "\n".join(keep) + "\n" + tail


def vs2019_vs2022() -> Machine:
    m = Machine(
        "vs2019-vs2022",
        "windows",
        "VS 2019 Community 16.11.15 (Japanese) and VS 2022 Community 17.5.4; CUDA 11.8 installed when only "
        "VS 2019 existed (v160 only), CUDA 12.4 later (v160 and v170); one RTX 3080",
    )
    windows_base(m, cuda_path_dirs("12.4", "11.8"))
    m.use(
        "vswhere-json-vs2019-community-16.11.15-japanese-description-EXCERPT.txt",
        "its complete lines, up to updateDate, are kept byte-exact",
    )
    community = json_objects(
        m.use("vswhere-json-vs2022-community-17.5.4-flutter-fixture.json", "its instance object, byte-exact")
    )
    vswhere(m, json_array([japanese_vs2019()] + community))
    m.note(
        "the vswhere output is one JSON array of the VS 2019 excerpt, completed by hand from catalog on, "
        "and the real VS 2022 sample's object"
    )
    visual_studio(
        m,
        f"{PF86}\\Microsoft Visual Studio\\2019\\Community",
        16,
        ide=True,
        toolsets=("14.29.30133",),
        cuda=("11.8", "12.4"),
    )
    visual_studio(
        m, f"{PF}\\Microsoft Visual Studio\\2022\\Community", 17, ide=True, toolsets=("14.35.32215",), cuda=("12.4",)
    )
    windows_sdk(m, "10.0.19041.0", "10.0.22621.0")
    for short in ("11.8", "12.4"):
        cuda_toolkit(m, short)
    cuda_env(m, ("11.8", "12.4"), "12.4")
    m.use("nvidia-smi-windows-576.80-cuda12.9-rtx3080.txt", "GPU name, driver and memory of the CSV line")
    nvidia_smi(
        m, "0, NVIDIA GeForce RTX 3080, 8.6, 576.80, 10240 MiB\r\n", "values from the real RTX 3080 nvidia-smi table"
    )
    return m


def vs2026_object() -> str:
    insiders = json.loads(sample("node-gyp-fixture-VS_2026_Insiders_workload.json"))[0]
    path, version = insiders["path"], insiders["version"]
    obj = {
        "instanceId": "5d2b0a7e",
        "installDate": "2026-01-20T09:12:44Z",
        "installationName": f"VisualStudio/18.3.0-insiders+{version.split('.', 2)[2]}",
        "installationPath": path,
        "installationVersion": version,
        "productId": "Microsoft.VisualStudio.Product.Community",
        "productPath": f"{path}\\Common7\\IDE\\devenv.exe",
        "state": 4294967295,
        "isComplete": True,
        "isLaunchable": True,
        "isPrerelease": True,
        "isRebootRequired": False,
        "displayName": "Visual Studio Community 2026 Insiders",
        "description": "Powerful IDE, free for students, open-source contributors, and individuals",
        "channelId": "VisualStudio.18.Insiders",
        "channelUri": "https://aka.ms/vs/18/insiders/channel",
        "enginePath": f"{PF86}\\Microsoft Visual Studio\\Installer\\resources\\app\\ServiceHub\\Services\\Microsoft.VisualStudio.Setup.Service",
        "installedChannelId": "VisualStudio.18.Insiders",
        "installedChannelUri": "https://aka.ms/vs/18/insiders/channel",
        "updateDate": "2026-01-20T09:12:44.0000000Z",
        "catalog": {
            "buildVersion": version,
            "productDisplayVersion": "18.3.0 Insiders",
            "productLine": "Dev18",
            "productLineVersion": "18",
            "productMilestone": "Insiders",
            "productMilestoneIsPreRelease": "True",
            "productName": "Visual Studio",
            "productSemanticVersion": f"18.3.0-insiders+{version.split('.', 2)[2]}",
        },
        "properties": {"nickname": "", "setupEngineFilePath": f"{PF86}\\Microsoft Visual Studio\\Installer\\setup.exe"},
    }
    text = json.dumps([obj], indent=2, ensure_ascii=False)
    return json_objects(text)[0]


def vs2026_vs2022() -> Machine:
    m = Machine(
        "vs2026-vs2022",
        "windows",
        "VS 2026 Community Insiders 18.3 (MSVC 14.50.35717, empty v180\\BuildCustomizations: CUDA 13.0 does "
        "not integrate with VS 2026) beside VS 2022 Community 17.5.4 with CUDA 13.0 in v170; one RTX 4060 Ti",
    )
    windows_base(m, cuda_path_dirs("13.0"))
    m.use("node-gyp-fixture-VS_2026_Insiders_workload.json", "installationPath and installationVersion of VS 2026")
    community = json_objects(
        m.use("vswhere-json-vs2022-community-17.5.4-flutter-fixture.json", "its instance object, byte-exact")
    )
    vswhere(m, json_array([vs2026_object()] + community))
    m.note(
        "the VS 2026 Insiders vswhere object is hand-composed (instanceId, dates, channelId "
        'VisualStudio.18.Insiders, productLineVersion "18", displayName "Visual Studio Community 2026 '
        'Insiders"); only its path and version are real (node-gyp fixture)'
    )
    vs26 = "C:\\Program Files\\Microsoft Visual Studio\\18\\Insiders"
    visual_studio(m, vs26, 18, ide=True, toolsets=("14.50.35717",))
    m.file(
        f"{vs26}\\VC\\Auxiliary\\Build\\v145\\Microsoft.VCToolsVersion.VC.14.50.18.0.props", "<!-- placeholder -->\r\n"
    )
    visual_studio(
        m, f"{PF}\\Microsoft Visual Studio\\2022\\Community", 17, ide=True, toolsets=("14.35.32215",), cuda=("13.0",)
    )
    windows_sdk(m, "10.0.22621.0", "10.0.26100.0")
    cuda_toolkit(m, "13.0")
    cuda_env(m, ("13.0",), "13.0")
    m.use("nvidia-smi-windows-596.36-cuda13.2-rtx4060ti.txt", "GPU name, driver and memory of the CSV line")
    nvidia_smi(
        m,
        "0, NVIDIA GeForce RTX 4060 Ti, 8.9, 596.36, 16380 MiB\r\n",
        "values from the real RTX 4060 Ti nvidia-smi table",
    )
    return m


# GitHub's windows-2025 (windows-latest) image: actions/runner-images images/windows/Windows2025-Readme.md
# (search-index id 32395713444) lists "Visual Studio Enterprise 2026 | 18.2.11415.280 | C:\\Program Files\\
# Microsoft Visual Studio\\18\\Enterprise" and, among its components,
# Microsoft.VisualStudio.Component.VC.14.44.17.14.x86.x64 and Windows11SDK.26100.
RUNNER_IMAGE = (
    "actions/runner-images Windows2025-Readme.md, search-index id 32395713444 (VS Enterprise 2026 "
    "18.2.11415.280 at 18\\Enterprise with the VC.14.44.17.14.x86.x64 component and SDK 10.0.26100)"
)
VS2026_DEFAULT_MSVC = "14.50.35717"  # VS 2026 18.2.1's toolset (corpus vsdevcmd-and-devpowershell-vs2026-18.2.1...)
V143_IN_VS2026 = "14.44.35207"  # the v143 component's folder inside VS 2026 (search-index id 66427120461)


def vs2026_release_object(iid: str, edition: str, path: str, version: str, display: str) -> str:
    """A vswhere object for a VS 2026 release instance, hand-composed in vswhere's format around a real
    path and version (the instance ids and dates are made up)."""
    build = version.split(".", 2)[2]
    obj = {
        "instanceId": iid,
        "installDate": "2026-06-02T08:00:00Z",
        "installationName": f"VisualStudio/{display}+{build}",
        "installationPath": path,
        "installationVersion": version,
        "productId": f"Microsoft.VisualStudio.Product.{edition}",
        "productPath": f"{path}\\Common7\\IDE\\devenv.exe",
        "state": 4294967295,
        "isComplete": True,
        "isLaunchable": True,
        "isPrerelease": False,
        "isRebootRequired": False,
        "displayName": f"Visual Studio {edition} 2026",
        "description": "",
        "channelId": "VisualStudio.18.Stable",
        "channelUri": "https://aka.ms/vs/18/stable/channel",
        "enginePath": f"{PF86}\\Microsoft Visual Studio\\Installer\\resources\\app\\ServiceHub\\Services\\"
        "Microsoft.VisualStudio.Setup.Service",
        "installedChannelId": "VisualStudio.18.Stable",
        "installedChannelUri": "https://aka.ms/vs/18/stable/channel",
        "updateDate": "2026-06-02T08:00:00.0000000Z",
        "catalog": {
            "buildVersion": version,
            "productDisplayVersion": display,
            "productLine": "Dev18",
            "productLineVersion": "18",
            "productMilestone": "RTW",
            "productMilestoneIsPreRelease": "False",
            "productName": "Visual Studio",
            "productSemanticVersion": f"{display}+{build}",
        },
        "properties": {"nickname": "", "setupEngineFilePath": f"{PF86}\\Microsoft Visual Studio\\Installer\\setup.exe"},
    }
    return json_objects(json.dumps([obj], indent=2, ensure_ascii=False))[0]


def v143_component(m: Machine, path: str) -> None:
    """The files the v143 14.44 component adds beside VS 2026's own toolset: its toolset folder and the
    VC\\Auxiliary\\Build\\14.44 version files that vcvarsall's -vcvars_ver=14.44 reads."""
    aux = f"{path}\\VC\\Auxiliary\\Build\\14.44"
    m.file(f"{aux}\\Microsoft.VCToolsVersion.14.44.txt", V143_IN_VS2026 + "\r\n")
    m.file(f"{aux}\\Microsoft.VCToolsVersion.14.44.props", "<!-- placeholder -->\r\n")
    m.note(
        "the v143 14.44 component inside VS 2026 is laid out as a side-by-side toolset: "
        "VC\\Tools\\MSVC\\14.44.35207 and VC\\Auxiliary\\Build\\14.44\\Microsoft.VCToolsVersion.14.44.txt "
        "(facts/windows.md §3.1)"
    )


def vs2026_machine(m: Machine, edition: str, toolsets: tuple[str, ...], how: str) -> str:
    path = f"{PF}\\Microsoft Visual Studio\\18\\{edition}"
    m.use(
        "vsdevcmd-and-devpowershell-vs2026-18.2.1-community-default-x86-msvc14.50.35717-EXCERPT.txt",
        "VS 2026 18.2.1's default MSVC 14.50.35717",
    )
    m.note(f"the VS 2026 {edition} vswhere object is hand-composed in vswhere's format ({how})")
    visual_studio(m, path, 18, ide=True, toolsets=toolsets)
    m.file(
        f"{path}\\VC\\Auxiliary\\Build\\v145\\Microsoft.VCToolsVersion.VC.14.50.18.0.props", "<!-- placeholder -->\r\n"
    )
    if V143_IN_VS2026 in toolsets:
        v143_component(m, path)
    return path


def vcvars_capture(m: Machine, vs: str, toolset: str, sdk: str) -> None:
    """The `cmd.exe /d /u /c <script>` run that `vcvars_args("x64", toolset)` asks for, and what it prints.
    The script's path carries its digest, so the record answers only that exact vcvarsall call: an
    export that asked for another toolset (or none) finds no capture."""
    vcvarsall = f"{vs}\\VC\\Auxiliary\\Build\\vcvarsall.bat"
    script = capture_script(vcvarsall, vcvars_args("x64", toolset))
    digest = hashlib.sha256(script.encode()).hexdigest()[:12]
    before = base_environment(m.env)
    tools = f"{vs}\\VC\\Tools\\MSVC\\{toolset}"
    kits = f"{PF86}\\Windows Kits\\10"
    after = {
        **before,
        "VSINSTALLDIR": vs + "\\",
        "VCINSTALLDIR": f"{vs}\\VC\\",
        "VisualStudioVersion": "18.0",
        "VCToolsVersion": toolset,
        "VCToolsInstallDir": tools + "\\",
        "VSCMD_ARG_HOST_ARCH": "x64",
        "VSCMD_ARG_TGT_ARCH": "x64",
        "VSCMD_ARG_app_plat": "Desktop",
        "VSCMD_VER": "18.2.1",
        "WindowsSdkDir": kits + "\\",
        "WindowsSDKVersion": sdk + "\\",
        "Platform": "x64",
        "INCLUDE": f"{tools}\\include;{kits}\\include\\{sdk}\\ucrt;{kits}\\include\\{sdk}\\um",
        "LIB": f"{tools}\\lib\\x64;{kits}\\lib\\{sdk}\\ucrt\\x64;{kits}\\lib\\{sdk}\\um\\x64",
        "PATH": f"{tools}\\bin\\HostX64\\x64;{kits}\\bin\\{sdk}\\x64;{vs}\\MSBuild\\Current\\Bin\\amd64;"
        + before["PATH"],
    }
    banner = m.use(
        "vsdevcmd-and-devpowershell-vs2026-18.2.1-community-default-x86-msvc14.50.35717-EXCERPT.txt",
        "VS 2026 18.2.1's default MSVC 14.50.35717",
    ).split("\n")[12:16]
    text = m.use("vcvarsall-x64-vs2022-17.14.30-community-cl19.44.35225.txt", "vcvarsall's x64 banner line")
    lines = [
        PRE_BEGIN,
        *(f"{k}={v}" for k, v in sorted(before.items())),
        PRE_END,
        *banner,
        text.split("\n")[5].rstrip("\r"),
        f"{LEVEL}0",
        BEGIN,
        *(f"{k}={v}" for k, v in sorted(after.items())),
        END,
    ]
    m.command(
        ["cmd.exe", "/d", "/u", "/c", f"C:\\envmgr-temp\\envmgr-vcvars-{digest}.cmd"],
        {"text": "\r\n".join(lines) + "\r\n", "encoding": "utf-16-le"},
    )
    m.note(
        f"the vcvars capture (cmd.exe /u output, UTF-16) for `vcvarsall.bat x64 -vcvars_ver={toolset}` is "
        "composed: the banner lines are VS 2026 18.2.1's and vcvarsall's real ones, the variables follow "
        "vcvars' names (facts/windows.md §3) with this machine's paths"
    )


def windows_latest_vs2026() -> Machine:
    m = Machine(
        "windows-latest-vs2026",
        "windows",
        "GitHub's windows-latest image from June 2026: VS 2026 Enterprise 18.2 with MSVC 14.50.35717 "
        "(default) and the v143 14.44.35207 component, no VS 2022; CUDA 12.8 installed by a setup "
        "action at its default root; no GPU",
    )
    windows_base(m, cuda_path_dirs("12.8"))
    m.sources.append(RUNNER_IMAGE)
    path = f"{PF}\\Microsoft Visual Studio\\18\\Enterprise"
    vswhere(m, json_array([vs2026_release_object("a1f5c3e7", "Enterprise", path, "18.2.11415.280", "18.2.1")]))
    vs2026_machine(m, "Enterprise", (VS2026_DEFAULT_MSVC, V143_IN_VS2026), "path and version from the runner image")
    windows_sdk(m, "10.0.26100.0")
    cuda_toolkit(m, "12.8")
    cuda_env(m, ("12.8",), "12.8")
    vcvars_capture(m, path, V143_IN_VS2026, "10.0.26100.0")
    return m


def vs2026_laptop_no_v143() -> Machine:
    m = Machine(
        "vs2026-laptop-no-v143",
        "windows",
        "A laptop with only VS 2026 Community 18.2 (MSVC 14.50.35717, without the v143 14.44 component) "
        "and CUDA 12.8; one RTX 3080",
    )
    windows_base(m, cuda_path_dirs("12.8"))
    path = f"{PF}\\Microsoft Visual Studio\\18\\Community"
    vswhere(m, json_array([vs2026_release_object("c7d2e9a4", "Community", path, "18.2.11415.280", "18.2.1")]))
    vs2026_machine(m, "Community", (VS2026_DEFAULT_MSVC,), "the runner image's 18.2 version, the default path")
    windows_sdk(m, "10.0.26100.0")
    cuda_toolkit(m, "12.8")
    cuda_env(m, ("12.8",), "12.8")
    m.use("nvidia-smi-windows-576.80-cuda12.9-rtx3080.txt", "GPU name, driver and memory of the CSV line")
    nvidia_smi(
        m, "0, NVIDIA GeForce RTX 3080, 8.6, 576.80, 10240 MiB\r\n", "values from the real RTX 3080 nvidia-smi table"
    )
    return m


def vs2026_beside_vs2022() -> Machine:
    m = Machine(
        "vs2026-beside-vs2022",
        "windows",
        "VS 2026 Community 18.2 (MSVC 14.50.35717 only) beside VS 2022 Build Tools 17.14.28 "
        "(MSVC 14.44.35207); CUDA 13.1 and 12.8; one RTX 3080",
    )
    windows_base(m, cuda_path_dirs("13.1", "12.8"))
    path = f"{PF}\\Microsoft Visual Studio\\18\\Community"
    buildtools = json_objects(
        m.use(
            "vswhere-products-star-json-vs2022-buildtools-17.14.28-no-vctools.json", "its instance object, byte-exact"
        )
    )
    vswhere(
        m, json_array([vs2026_release_object("c7d2e9a4", "Community", path, "18.2.11415.280", "18.2.1")] + buildtools)
    )
    vs2026_machine(m, "Community", (VS2026_DEFAULT_MSVC,), "the runner image's 18.2 version, the default path")
    visual_studio(m, f"{PF86}\\Microsoft Visual Studio\\2022\\BuildTools", 17, ide=False, toolsets=(V143_IN_VS2026,))
    m.note(
        "the VS 2022 Build Tools 17.14.28 instance is given the C++ workload (MSVC 14.44.35207, the toolset "
        "17.14 ships) that the captured instance lacked"
    )
    windows_sdk(m, "10.0.26100.0")
    cuda_toolkit(m, "12.8")
    cuda_toolkit(m, "13.1")
    cuda_env(m, ("12.8", "13.1"), "13.1")
    m.use("nvidia-smi-windows-576.80-cuda12.9-rtx3080.txt", "GPU name, driver and memory of the CSV line")
    nvidia_smi(
        m, "0, NVIDIA GeForce RTX 3080, 8.6, 576.80, 10240 MiB\r\n", "values from the real RTX 3080 nvidia-smi table"
    )
    return m


def cuda_three_wrong_cuda_path() -> Machine:
    m = Machine(
        "cuda-three-wrong-cuda-path",
        "windows",
        "CUDA 11.8, 12.4 and 13.0 side by side; 11.8 was (re)installed last, so CUDA_PATH and the first nvcc "
        "on PATH are v11.8, the wrong one for a 12.4 build; VS 2022 Community 17.5.4 has all three in v170",
    )
    windows_base(m, cuda_path_dirs("11.8", "13.0", "12.4"))
    vswhere(m, m.use("vswhere-json-vs2022-community-17.5.4-flutter-fixture.json", "the whole vswhere output, as is"))
    visual_studio(
        m,
        f"{PF}\\Microsoft Visual Studio\\2022\\Community",
        17,
        ide=True,
        toolsets=("14.35.32215",),
        cuda=("11.8", "12.4", "13.0"),
    )
    windows_sdk(m, "10.0.22621.0")
    for short in ("11.8", "12.4", "13.0"):
        cuda_toolkit(m, short)
    cuda_env(m, ("11.8", "12.4", "13.0"), "11.8")
    m.use("nvidia-smi-windows-596.36-cuda13.2-rtx4060ti.txt", "GPU name, driver and memory of the CSV line")
    nvidia_smi(
        m,
        "0, NVIDIA GeForce RTX 4060 Ti, 8.9, 596.36, 16380 MiB\r\n",
        "values from the real RTX 4060 Ti nvidia-smi table",
    )
    return m


STATE_DIR = "C:\\ProgramData\\Microsoft\\VisualStudio\\Packages\\_Instances"


def state_json(m: Machine, instance_dir: str, sample_name: str) -> None:
    m.file(
        f"{STATE_DIR}\\{instance_dir}\\state.json",
        m.use(sample_name, f"byte-exact as _Instances\\{instance_dir}\\state.json, the fixture's own folder name"),
    )


def no_vswhere_state_json() -> Machine:
    m = Machine(
        "no-vswhere-state-json",
        "windows",
        "No vswhere.exe (the VS Installer folder is gone); two VS 2017 instances known only from the "
        "installer's state.json files: Build Tools (MSBuild workload only, no MSVC) and Enterprise with a "
        "failed package (incomplete)",
    )
    windows_base(m, [])
    state_json(m, "2", "vswhere-repo-fixture-state.json-buildtools-2017.json")
    state_json(m, "4", "vswhere-repo-fixture-state.json-enterprise-2017-with-errors.json")
    visual_studio(m, "C:\\BuildTools", 15, ide=False, vctargets=False)
    visual_studio(m, "C:\\VS\\Enterprise", 15, ide=True, toolsets=("14.10.25017",))
    windows_sdk(m, "10.0.14393.0")
    m.note(
        "the installation folders the state.json files name (C:\\BuildTools, C:\\VS\\Enterprise) are created "
        "by hand: Build Tools with the MSBuild workload only, Enterprise with the MSVC 14.10.25017 of VS 15.0"
    )
    return m


def vswhere_failing() -> Machine:
    m = Machine(
        "vswhere-failing",
        "windows",
        "vswhere.exe is present but prints 'Error 0x80004005' and exits 0; the VS 2017 Enterprise Preview "
        "15.3 instance is found through its state.json",
    )
    windows_base(m, [])
    vswhere(m, "Error 0x80004005: Unspecified error\r\n", 0)
    m.note(
        "the vswhere output is hand-composed in vswhere's `Error 0x<hex>: <message>` shape (facts/windows.md "
        "§1.4); exit status 0 checks that envmgr does not trust vswhere's exit code"
    )
    state_json(m, "5", "vswhere-repo-fixture-state.json-enterprise-preview-2017.json")
    visual_studio(m, "C:\\VS\\Preview", 15, ide=True, toolsets=("14.11.25503",))
    windows_sdk(m, "10.0.15063.0")
    m.note("the installation folder C:\\VS\\Preview is created by hand, with the MSVC 14.11.25503 of VS 15.3")
    return m


def linux_two_toolkits() -> Machine:
    m = Machine(
        "linux-two-toolkits",
        "linux",
        "Ubuntu 24.04 with CUDA 12.4 (version.json) and CUDA 13.0 (no version.json), /usr/local/cuda -> "
        "cuda-13.0, gcc 12 and 13; a 570 driver (older than CUDA 13.0 needs) with a TITAN V (sm_70, dropped by "
        "CUDA 13.0) and an RTX 5880 Ada",
    )
    m.env.update(
        {
            "PATH": "/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": "/home/dev",
            "LANG": "C.UTF-8",
        }
    )
    shape = json.loads(m.use("cuda-version-json-linux-11.8.0.json", "the shape of the 12.4 version.json"))
    names = {k: shape[k]["name"] for k in ("cuda", "cuda_cudart", "cuda_nvcc", "libcublas")}
    v124 = {"cuda": "12.4.1", "cuda_cudart": "12.4.127", "cuda_nvcc": "12.4.131", "libcublas": "12.4.5.8"}
    m.file(
        "/usr/local/cuda-12.4/version.json",
        json.dumps({k: {"name": names[k], "version": v} for k, v in v124.items()}, indent=3) + "\n",
    )
    m.note("/usr/local/cuda-12.4/version.json is composed in the shape of the real 11.8 one, with 12.4.1's versions")
    for root in ("/usr/local/cuda-12.4", "/usr/local/cuda-13.0"):
        m.file(f"{root}/bin/nvcc")
        m.file(f"{root}/include/crt/host_config.h", "/* placeholder: not the real host_config.h */\n")
        m.file(f"{root}/targets/x86_64-linux/lib/libcudart.so.{root[-4:-2]}")
        m.links[f"{root}/lib64"] = f"{root}/targets/x86_64-linux/lib"
    m.links["/usr/local/cuda"] = "/usr/local/cuda-13.0"
    # 12.4 from NVIDIA's apt repository, with the libraries its version.json lists (libcublas 12.4.5.8):
    # runtime and cuBLAS headers and libraries under targets/x86_64-linux, include/ a link there. 13.0,
    # assembled from nvidia-* wheels like this machine's own, has no cuBLAS (doctor's F24).
    t124 = "/usr/local/cuda-12.4/targets/x86_64-linux"
    m.links["/usr/local/cuda-12.4/include"] = f"{t124}/include"
    for name in ("cuda_runtime.h", "cublas_api.h", "cublas_v2.h", "cublasLt.h"):
        m.file(f"{t124}/include/{name}", "/* placeholder */\n")
    for name, version in (("libcublas", "12.4.5.8"), ("libcublasLt", "12.4.5.8")):
        m.file(f"{t124}/lib/{name}.so.{version}")
        m.links[f"{t124}/lib/{name}.so.12"] = f"{t124}/lib/{name}.so.{version}"
        m.links[f"{t124}/lib/{name}.so"] = f"{t124}/lib/{name}.so.12"
    m.note(
        "CUDA 12.4's cuda_runtime.h and cuBLAS/cuBLASLt files (libcublas.so -> .so.12 -> .so.12.4.5.8, headers "
        "in targets/x86_64-linux/include) follow the layout of NVIDIA's cuda-cudart-dev-12-4 and libcublas-dev-12-4 "
        "packages; CUDA 13.0 has none (doctor's F24 fires with it)"
    )
    m.use("nvcc-version-linux-12.4.131.txt", "stdout of /usr/local/cuda-12.4/bin/nvcc --version")
    m.command(["/usr/local/cuda-12.4/bin/nvcc", "--version"], sample("nvcc-version-linux-12.4.131.txt"))
    m.command(["/usr/local/cuda-13.0/bin/nvcc", "--version"], NVCC_LINUX_13_0)
    m.sources.append("/usr/local/cuda-13.0/bin/nvcc --version: captured on envmgr's development machine (CUDA 13.0.88)")
    copyright_ = (
        "Copyright (C) {y} Free Software Foundation, Inc.\nThis is free software; see the source for copying "
        "conditions.  There is NO\nwarranty; not even for MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.\n\n"
    )
    for name, first, year, target in (
        ("gcc-12", "gcc-12 (Ubuntu 12.3.0-17ubuntu1) 12.3.0", 2022, None),
        ("gcc-13", "gcc-13 (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0", 2023, None),
        ("gcc", "gcc (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0", 2023, "gcc-13"),
        ("g++-12", "g++-12 (Ubuntu 12.3.0-17ubuntu1) 12.3.0", 2022, None),
        ("g++-13", "g++-13 (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0", 2023, None),
        ("g++", "g++ (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0", 2023, "g++-13"),
    ):
        if target:
            m.links[f"/usr/bin/{name}"] = f"/usr/bin/{target}"
        else:
            m.file(f"/usr/bin/{name}")
        m.command([f"/usr/bin/{name}", "--version"], first + "\n" + copyright_.format(y=year))
    m.note(
        "gcc/g++ --version outputs are composed for Ubuntu 24.04's gcc-12 and gcc-13 packages, in the shape of "
        "this machine's real gcc 12 output (first line names the program as invoked)"
    )
    m.use(
        "nvidia-smi-query-gpu-compute_cap-csv-linux-570.86.15.txt",
        "its two GPUs and driver, reordered into envmgr's query",
    )
    m.file("/usr/bin/nvidia-smi")
    m.command(
        ["/usr/bin/nvidia-smi", *SMI_ARGS],
        "0, NVIDIA TITAN V, 7.0, 570.86.15, 12288 MiB\n1, NVIDIA RTX 5880 Ada Generation, 8.9, 570.86.15, 49140 MiB\n",
    )
    m.note("the nvidia-smi CSV is the real Linux sample's GPUs in envmgr's field order; memory.total is composed")
    m.note("binaries (nvcc, gcc ...) are empty files; host_config.h holds a placeholder")
    return m


# ---- machines built from node-gyp's fixtures: {path, version, packages[]} of real installs -------------
# node-gyp (lib/find-visualstudio.js) rejects an instance without VC.MSBuild.Base, without a VC toolset for
# the host, or without a Windows SDK package. Here the packages decide which files the instance has.


def node_gyp_instance(m: Machine, fixture: str, toolset: str) -> tuple[dict, list[str]]:
    inst = json.loads(m.use(fixture, "path, version and packages[]; the folder tree follows the packages"))[0]
    path, version, packages = inst["path"], inst["version"], inst["packages"]
    major = int(version.split(".")[0])
    hosts = []
    if "Microsoft.VisualStudio.Component.VC.Tools.x86.x64" in packages:
        hosts += [("Hostx64", "x64"), ("Hostx64", "x86"), ("Hostx86", "x86"), ("Hostx86", "x64")]
    if "Microsoft.VisualStudio.Component.VC.Tools.ARM64" in packages:
        hosts += [("Hostx64", "arm64"), ("Hostx86", "arm64"), ("Hostarm64", "arm64")]
    m.file(f"{path}\\Common7\\Tools\\VsDevCmd.bat", "@echo off\r\nrem placeholder\r\n")
    m.file(f"{path}\\MSBuild\\Current\\Bin\\MSBuild.exe")
    for host, target in hosts:
        m.file(f"{path}\\VC\\Tools\\MSVC\\{toolset}\\bin\\{host}\\{target}\\cl.exe")
    if hosts:
        m.file(f"{path}\\VC\\Tools\\MSVC\\{toolset}\\include\\vcruntime.h", "// placeholder\r\n")
        aux = f"{path}\\VC\\Auxiliary\\Build"
        for bat in ("vcvarsall.bat", "vcvars64.bat", "vcvars32.bat"):
            m.file(f"{aux}\\{bat}", "@echo off\r\nrem placeholder\r\n")
        m.file(f"{aux}\\Microsoft.VCToolsVersion.default.txt", toolset + "\r\n")
    if any(p.startswith("Microsoft.VisualStudio.VC.MSBuild.") and p.endswith(".Base") for p in packages):
        m.file(f"{path}\\MSBuild\\Microsoft\\VC\\v{major}0\\Microsoft.Cpp.Default.props", "<!-- placeholder -->\r\n")
        for ext in ("props", "targets", "xml"):
            m.file(
                f"{path}\\MSBuild\\Microsoft\\VC\\v{major}0\\BuildCustomizations\\masm.{ext}",
                "<!-- placeholder -->\r\n",
            )
    sdks = [f"{p.split('_', 1)[1]}.0" for p in packages if p.startswith(("Win10SDK_", "Win11SDK_"))]
    if sdks:
        windows_sdk(m, *sdks)
    product = next(p for p in packages if p.startswith("Microsoft.VisualStudio.Product."))
    m.note(
        "the instance's files follow its packages: VC\\Tools\\MSVC\\<toolset>\\bin\\Host*\\<target>\\cl.exe "
        "for each VC.Tools.x86.x64 / VC.Tools.ARM64 component, MSBuild\\Microsoft\\VC\\v<N>0 (with "
        "BuildCustomizations) when a VC.MSBuild.*Base package is there, a Windows SDK per Win10SDK_/Win11SDK_ "
        "package; the MSVC toolset version is the one that VS release shipped"
    )
    m.note(
        "the vswhere object is composed from the fixture's path, version and Microsoft.VisualStudio.Product.* "
        "package; instanceId, dates and the other fields are hand-written"
    )
    obj = {
        "instanceId": "",
        "installationPath": path,
        "installationVersion": version,
        "productId": product,
        "isComplete": True,
        "isLaunchable": True,
        "isPrerelease": False,
        "isRebootRequired": False,
        "displayName": "",
        "channelId": f"VisualStudio.{major}.Release",
    }
    return obj, sdks


def node_gyp_machine(name: str, description: str, fixture: str, toolset: str, **fields) -> Machine:
    m = Machine(name, "windows", description)
    windows_base(m, [])
    obj, _ = node_gyp_instance(m, fixture, toolset)
    obj.update(fields)
    vswhere(m, json_array([json.dumps(obj, indent=2, ensure_ascii=False)]))
    return m


def node_gyp_vs2019_buildtools_minimal() -> Machine:
    return node_gyp_machine(
        "node-gyp-vs2019-buildtools-minimal",
        "VS 2019 Build Tools 16.1 with only the minimal C++ components (x64 tools, VC MSBuild, SDK 10.0.17134): "
        "usable, as node-gyp finds it",
        "node-gyp-fixture-VS_2019_BuildTools_minimal.json",
        "14.21.27702",
        instanceId="3a7c1f20",
        displayName="Visual Studio Build Tools 2019",
    )


def node_gyp_vs2022_buildtools_arm64_only() -> Machine:
    return node_gyp_machine(
        "node-gyp-vs2022-buildtools-arm64-only",
        "VS 2022 Build Tools 17.11 with only the ARM64 C++ tools on an x64 machine: no Hostx64\\x64\\cl.exe, "
        "so unusable (node-gyp: 'missing any VC++ toolset')",
        "node-gyp-fixture-VS_2022_BuildTools_arm64_only.json",
        "14.41.34120",
        instanceId="8b1e2d44",
        displayName="Visual Studio Build Tools 2022",
    )


def node_gyp_vs2026_insiders_reboot_pending() -> Machine:
    m = node_gyp_machine(
        "node-gyp-vs2026-insiders-reboot-pending",
        "VS 2026 Community Insiders 18.3 (x64 and ARM64 tools, v180 targets, SDK 10.0.26100) whose vswhere record "
        "has no productId and no channelId (edition and channel come from the display name) and waits for a "
        "reboot",
        "node-gyp-fixture-VS_2026_Insiders_workload.json",
        "14.50.35717",
        instanceId="5d2b0a7e",
        productId="",
        channelId="",
        isPrerelease=True,
        isRebootRequired=True,
        displayName="Visual Studio Community 2026 Insiders",
    )
    m.note(
        "productId and channelId are left out and isRebootRequired is true on purpose: the cases this "
        "machine tests (no real vswhere output with them is in the corpus)"
    )
    return m


def vs2019_professional_incomplete() -> Machine:
    m = Machine(
        "vs2019-professional-incomplete",
        "windows",
        "VS 2019 Professional 16.4.5 on D:, left incomplete by the installer (state 13, isComplete 0, "
        "isLaunchable 0) but with its MSVC 14.24 toolset and VC targets on disk; SDK 10.0.18362",
    )
    windows_base(m, [])
    text = m.use(
        "vswhere-text-all-vs2019-professional-incomplete-state13-EXCERPT.txt",
        "its instance fields, from vswhere's text format into the JSON that -format json prints",
    )
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key.isidentifier() and not key.startswith("catalog_"):
            fields[key] = value.strip()
    for key in ("state",):
        fields[key] = int(fields[key])
    for key in ("isComplete", "isLaunchable", "isPrerelease", "isRebootRequired"):
        fields[key] = fields[key] == "1"
    vswhere(m, json_array([json.dumps(fields, indent=2, ensure_ascii=False)]))
    m.note("the vswhere JSON holds the excerpt's top-level fields (the catalog part was cut in the source)")
    visual_studio(m, fields["installationPath"], 16, ide=True, toolsets=("14.24.28314",))
    windows_sdk(m, "10.0.18362.0")
    return m


MACHINES = (
    buildtools_only,
    buildtools_only_vctools,
    community_buildtools_cuda124,
    vs2019_vs2022,
    vs2026_vs2022,
    cuda_three_wrong_cuda_path,
    no_vswhere_state_json,
    vswhere_failing,
    linux_two_toolkits,
    node_gyp_vs2019_buildtools_minimal,
    node_gyp_vs2022_buildtools_arm64_only,
    node_gyp_vs2026_insiders_reboot_pending,
    vs2019_professional_incomplete,
    windows_latest_vs2026,
    vs2026_laptop_no_v143,
    vs2026_beside_vs2022,
)


# ---- TOML --------------------------------------------------------------------------------------


def _text(value: str):
    """Readable TOML strings: LF-only text as a multi-line literal, anything with CR escaped."""
    if "\n" in value and "\r" not in value and "'''" not in value and all(c == "\n" or c.isprintable() for c in value):
        return tomlkit.string(value, literal=True, multiline=True)
    return tomlkit.string(value)


def _array(items) -> tomlkit.items.Array:
    arr = tomlkit.array()
    arr.extend(items)
    return arr.multiline(True) if len(items) > 1 else arr


def document(m: Machine) -> tomlkit.TOMLDocument:
    doc = tomlkit.document()
    doc.add(tomlkit.comment(f"envmgr test machine '{m.name}': generated by tests/machines/build_machines.py."))
    doc.add(tomlkit.comment("Do not edit by hand: change the script and run it (a test checks they agree)."))
    doc.add("schema", 1)
    doc.add("platform", m.platform)
    if m.dirs:
        doc.add("dirs", _array(sorted(m.dirs)))
    meta = tomlkit.table()
    meta.add("description", m.description)
    meta.add("sources", _array(m.sources))
    meta.add("composed", _array(m.composed))
    doc.add("meta", meta)
    env = tomlkit.table()
    for k in sorted(m.env, key=str.lower):
        env.add(k, m.env[k])
    doc.add("env", env)
    if m.links:
        links = tomlkit.table()
        for k in sorted(m.links):
            links.add(k, m.links[k])
        doc.add("links", links)
    files = tomlkit.table()
    for path in sorted(m.files, key=str.lower):
        files.add(path, _text(m.files[path]))
    doc.add("files", files)
    if m.registry:
        registry = tomlkit.table(is_super_table=True)
        for key in sorted(m.registry, key=str.lower):
            table = tomlkit.table()
            for name, spec in m.registry[key].items():
                item = tomlkit.inline_table()
                item.update(spec)
                table.add(name, item)
            registry.add(key, table)
        doc.add("registry", registry)
    commands = tomlkit.aot()
    for c in m.commands:
        t = tomlkit.table()
        for k, v in c.items():
            if isinstance(v, dict):  # stdout = { text = ..., encoding = ... }
                sub = tomlkit.table()
                for sk, sv in v.items():
                    sub.add(sk, _text(sv))
                t.add(k, sub)
                continue
            t.add(k, _text(v) if k in ("stdout", "stderr") else v)
        commands.append(t)
    doc.add("commands", commands)
    return doc


def render(m: Machine) -> str:
    text = tomlkit.dumps(document(m))
    back = tomllib.loads(text)  # the TOML must say exactly what was meant
    assert back["files"] == m.files, m.name
    assert back.get("registry", {}) == m.registry and back.get("dirs", []) == sorted(m.dirs), m.name
    assert [c["stdout"] for c in back["commands"]] == [c["stdout"] for c in m.commands], m.name
    return text


def render_all() -> dict[Path, str]:
    """Every output path -> its exact text."""
    out: dict[Path, str] = {}
    for make in MACHINES:
        m = make()
        text = render(m)
        out[HERE / f"{m.name}.toml"] = text
        if m.name == "community-buildtools-cuda124":
            out[EXAMPLE] = text
    return out


def main() -> None:
    for path, text in render_all().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
