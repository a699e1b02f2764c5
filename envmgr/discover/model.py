"""The facts discovery produces: frozen dataclasses with tuple fields, turned into JSON by `to_json`."""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from envmgr.version import mm


@dataclass(frozen=True)
class Toolset:
    version: str  # the folder name under VC\Tools\MSVC, e.g. 14.44.35207
    path: str
    msc_ver: int | None  # 14.44 -> 1944 (from the folder's first two parts; never _MSC_FULL_VER)
    has_cl_x64: bool  # bin\Hostx64\x64\cl.exe exists
    is_default: bool = False


@dataclass(frozen=True)
class BuildCustomizations:
    dir: str
    exists: bool
    cuda_versions: tuple[str, ...] = ()  # "12.4", ... those with a CUDA X.Y.props
    files: tuple[str, ...] = ()  # every CUDA-related file name found there


@dataclass(frozen=True)
class VsInstance:
    instance_id: str
    edition: str
    product_id: str
    display_name: str
    version: str
    major: int | None
    year: str
    path: str
    is_complete: bool | None
    is_launchable: bool | None
    is_prerelease: bool | None
    channel: str
    channel_id: str
    nickname: str
    source: str
    toolsets: tuple[Toolset, ...]
    default_toolset: str | None
    vcvarsall: str | None
    build_customizations: BuildCustomizations | None
    sdks: tuple[str, ...]
    problems: tuple[str, ...] = ()
    is_reboot_required: bool | None = None
    unusable: tuple[str, ...] = ()  # why it cannot build (node-gyp's rejections); empty when usable

    @property
    def usable(self) -> bool:
        return not self.unusable

    @property
    def label(self) -> str:
        extra = f" {self.channel}" if self.channel in ("Preview", "Insiders") else ""
        return f"VS {self.year or '?'} {self.edition}{extra} {self.version}"

    @property
    def short_name(self) -> str:
        return f"vs{self.year or self.major}-{self.edition.lower()}"


@dataclass(frozen=True)
class CudaToolkit:
    version: str  # full: 13.0.88 (nvcc) or 11.8.0 (version.json)
    short: str  # 13.0
    path: str
    nvcc: str | None
    sources: tuple[str, ...]
    version_source: str  # version.json | version.txt | nvcc --version | dist-info | folder name
    bin_dirs: tuple[str, ...]  # where its DLLs / shared libraries are (bin, and bin\x64 on CUDA 13)
    lib_dirs: tuple[str, ...]
    msbuild_extensions: tuple[str, ...]
    components: tuple[tuple[str, str], ...] = ()  # pip dist-info (name, version), when any
    problems: tuple[str, ...] = ()

    @property
    def major_minor(self) -> tuple[int, int]:
        two = mm(self.short)
        return two.major, two.minor


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    compute_cap: str | None
    compute_cap_source: str  # nvidia-smi | name table | unknown | override (--gpu or ENVMGR_GPU)
    driver_version: str
    memory_mib: int | None


@dataclass(frozen=True)
class HostCompiler:
    name: str  # gcc, g++, clang, clang++, g++-12 ...
    path: str
    version: str
    major: int | None
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class Inventory:
    platform: str
    visual_studio: tuple[VsInstance, ...]
    cuda: tuple[CudaToolkit, ...]
    gpus: tuple[Gpu, ...]
    host_compilers: tuple[HostCompiler, ...]
    windows_sdks: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()  # machine-wide problems (e.g. vswhere failed)
    gpu_problems: tuple[str, ...] = ()


def to_json(value: Any) -> Any:
    """Dataclasses -> dicts (with `label`-like properties left out), tuples -> lists."""
    if is_dataclass(value):
        return {f.name: to_json(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, (tuple, list)):
        return [to_json(v) for v in value]
    return value
