"""Visual Studio discovery: vswhere (once), state.json as fallback, then a probe of each instance's files."""

from __future__ import annotations

import re
from dataclasses import dataclass

from envmgr.discover.model import BuildCustomizations, Toolset, VsInstance
from envmgr.discover.vsusable import unusable_reasons
from envmgr.discover.vswhere import (
    VsRecord,
    VswhereError,
    check_vswhere_output,
    newest_first,
    parse_state_json,
    parse_vswhere_json,
)
from envmgr.host.base import Host, join, safe_listdir, safe_read_text
from envmgr.knowledge import build_customizations_subdir, msc_ver
from envmgr.version import Version

VSWHERE_ARGS = ("-all", "-prerelease", "-products", "*", "-format", "json", "-utf8")
VSWHERE_TIMEOUT = 30.0
_CUDA_FILE = re.compile(r"^(CUDA \d+\.\d+\b.*|Nvda\.Build\.CudaTasks\.v\d+\.\d+\.dll)$", re.I)
_CUDA_PROPS = re.compile(r"^CUDA (\d+\.\d+)\.props$", re.I)
_TOOLSET_DIR = re.compile(r"^14\.(\d+)\.\d+$")


def vswhere_path(host: Host) -> str | None:
    pf86 = host.env.get("ProgramFiles(x86)") or "C:\\Program Files (x86)"
    installed = join(host, pf86, "Microsoft Visual Studio", "Installer", "vswhere.exe")
    if host.exists(installed):
        return installed
    return host.which("vswhere.exe")


def find_records(host: Host) -> tuple[list[VsRecord], list[str]]:
    """Instance records and machine-level problems. vswhere first; state.json when it fails or is empty."""
    problems: list[str] = []
    exe = vswhere_path(host)
    if exe is None:
        problems.append("vswhere.exe not found (no Visual Studio Installer?); read the installer's state.json files")
    else:
        done = host.run([exe, *VSWHERE_ARGS], timeout=VSWHERE_TIMEOUT)
        try:
            if not done.ok and (done.start_error or done.timed_out):
                raise VswhereError(done.describe_failure())
            check_vswhere_output(done.stdout, done.returncode)
            records = list(parse_vswhere_json(done.stdout))
            if records:
                return newest_first(records), problems
            # vswhere returns [] with exit 0 when its COM class is not registered (docs/knowledge.md#vswhere).
            problems.append(
                "vswhere found no instance; checking the installer's state.json files in case its "
                "COM registration is broken"
            )
        except VswhereError as exc:
            problems.append(f"{exc}; falling back to the installer's state.json files")
    records, state_problems = read_state_files(host)
    return newest_first(records), problems + state_problems


def instances_dir(host: Host) -> str:
    setup = host.reg_values("HKLM\\SOFTWARE\\Microsoft\\VisualStudio\\Setup") or {}
    cache = setup.get("CachePath")
    if cache is not None and isinstance(cache.data, str) and cache.data:
        return join(host, cache.data, "_Instances")
    program_data = host.env.get("ProgramData") or "C:\\ProgramData"
    return join(host, program_data, "Microsoft", "VisualStudio", "Packages", "_Instances")


def read_state_files(host: Host) -> tuple[list[VsRecord], list[str]]:
    root = instances_dir(host)
    names, err = safe_listdir(host, root)
    problems = [err] if err else []
    records = []
    for name in names:
        text, err = safe_read_text(host, join(host, root, name, "state.json"))
        if err:
            problems.append(err)
        if text is None:
            continue
        try:
            records.append(parse_state_json(text, name))
        except VswhereError as exc:
            problems.append(f"{join(host, root, name, 'state.json')}: {exc}")
    return records, problems


def build_customizations_dir(host: Host, install_path: str, major: int | None) -> str | None:
    sub = build_customizations_subdir(major)
    return join(host, install_path, *sub) if sub else None


def probe_build_customizations(host: Host, folder: str) -> tuple[BuildCustomizations, str | None]:
    names, err = safe_listdir(host, folder)
    exists = host.is_dir(folder)
    cuda_files = tuple(n for n in names if _CUDA_FILE.match(n))
    versions = sorted({m.group(1) for n in cuda_files if (m := _CUDA_PROPS.match(n))}, key=Version.of)
    return BuildCustomizations(folder, exists, tuple(versions), cuda_files), err


def probe_toolsets(host: Host, install_path: str) -> tuple[tuple[Toolset, ...], str | None, list[str]]:
    problems: list[str] = []
    msvc = join(host, install_path, "VC", "Tools", "MSVC")
    names, err = safe_listdir(host, msvc)
    if err:
        problems.append(err)
    default_file = join(host, install_path, "VC", "Auxiliary", "Build", "Microsoft.VCToolsVersion.default.txt")
    text, err = safe_read_text(host, default_file)
    if err:
        problems.append(err)
    default = text.strip() if text and text.strip() else None
    toolsets = []
    for name in names:
        m = _TOOLSET_DIR.match(name)
        if not m:
            continue
        path = join(host, msvc, name)
        cl = join(host, path, "bin", "Hostx64", "x64", "cl.exe")
        toolsets.append(Toolset(name, path, msc_ver(name), host.exists(cl), name == default))
    toolsets.sort(key=lambda t: Version.of(t.version), reverse=True)
    if default and not any(t.version == default for t in toolsets):
        problems.append(
            f"Microsoft.VCToolsVersion.default.txt names {default}, but VC\\Tools\\MSVC\\{default} "
            "is missing (CMake will not use this instance)"
        )
    return tuple(toolsets), default, problems


@dataclass(frozen=True)
class _Folder:
    """What probe_instance finds in an instance's installation folder."""

    toolsets: tuple[Toolset, ...] = ()
    default: str | None = None
    vcvarsall: str | None = None
    vc_targets: str | None = None
    bc: BuildCustomizations | None = None
    problems: tuple[str, ...] = ()


def _probe_folder(host: Host, path: str, major: int | None) -> _Folder:
    """The toolsets, vcvarsall.bat and BuildCustomizations of an existing installation folder."""
    toolsets, default, problems = probe_toolsets(host, path)
    vc_targets: str | None = None
    bc: BuildCustomizations | None = None
    if not toolsets:
        problems.append(
            "no MSVC toolset in VC\\Tools\\MSVC: install the 'Desktop development with C++' "
            "workload (Microsoft.VisualStudio.Workload.VCTools)"
        )
    candidate = join(host, path, "VC", "Auxiliary", "Build", "vcvarsall.bat")
    vcvarsall = candidate if host.exists(candidate) else None
    if toolsets and vcvarsall is None:
        problems.append("VC\\Auxiliary\\Build\\vcvarsall.bat is missing")
    folder = build_customizations_dir(host, path, major)
    if folder:
        vc_targets = folder.rsplit("\\", 1)[0]
        bc, err = probe_build_customizations(host, folder)
        if err:
            problems.append(err)
    return _Folder(toolsets, default, vcvarsall, vc_targets, bc, tuple(problems))


def _record_problems(rec: VsRecord) -> list[str]:
    """What the installer's record itself says is wrong: incomplete, or too old."""
    problems = []
    if rec.is_complete is False and rec.source == "vswhere":
        problems.append(
            "the installer reports this instance as incomplete (repair or finish it in the Visual Studio Installer)"
        )
    if rec.major is not None and rec.major < 15:
        problems.append("Visual Studio 2015 or older: not supported by current CUDA toolkits")
    return problems


def probe_instance(host: Host, rec: VsRecord, sdks: tuple[str, ...]) -> VsInstance:
    path = rec.installation_path
    exists = bool(path) and host.is_dir(path)
    if exists:
        found = _probe_folder(host, path, rec.major)
    else:
        found = _Folder(problems=(f"installation folder {path or '(none)'} does not exist",))
    problems = (*rec.problems, *found.problems, *_record_problems(rec))
    toolsets, vc_targets = found.toolsets, found.vc_targets
    return VsInstance(
        instance_id=rec.instance_id,
        edition=rec.edition,
        product_id=rec.product_id,
        display_name=rec.display_name,
        version=rec.installation_version,
        major=rec.major,
        year=rec.year,
        path=path,
        is_complete=rec.is_complete,
        is_launchable=rec.is_launchable,
        is_prerelease=rec.is_prerelease,
        channel=rec.channel,
        channel_id=rec.channel_id,
        nickname=rec.nickname,
        source=rec.source,
        toolsets=toolsets,
        default_toolset=found.default,
        vcvarsall=found.vcvarsall,
        build_customizations=found.bc,
        sdks=sdks,
        problems=problems,
        is_reboot_required=rec.is_reboot_required,
        unusable=unusable_reasons(
            exists=exists,
            toolsets=toolsets,
            vc_targets=vc_targets,
            vc_targets_exist=vc_targets is not None and host.is_dir(vc_targets),
            sdks=sdks,
            is_complete=rec.is_complete,
            is_reboot_required=rec.is_reboot_required,
            major=rec.major,
        ),
    )


def discover_vs(host: Host, sdks: tuple[str, ...]) -> tuple[tuple[VsInstance, ...], tuple[str, ...]]:
    records, problems = find_records(host)
    return tuple(probe_instance(host, r, sdks) for r in records), tuple(problems)
