"""Why a Visual Studio instance cannot build CUDA/C++ code, the way node-gyp rejects instances.

node-gyp's lib/find-visualstudio.js keeps an instance only when it has the VC MSBuild targets
(`Microsoft.VisualStudio.VC.MSBuild.Base`), a VC toolset for the host and a Windows SDK, and logs the
reason for each one it drops. vswhere does not list packages unless asked, so the same questions are
answered from the instance's files: `VC\\Tools\\MSVC\\*\\bin\\Hostx64\\x64\\cl.exe`, the VCTargets
folder (`MSBuild\\Microsoft\\VC\\v170`, where BuildCustomizations lives) and the machine's SDKs.
Pure: discovery passes in what it found.
"""

from __future__ import annotations

from envmgr.discover.model import Toolset


def unusable_reasons(
    *,
    exists: bool,
    toolsets: tuple[Toolset, ...],
    vc_targets: str | None,
    vc_targets_exist: bool,
    sdks: tuple[str, ...],
    is_complete: bool | None,
    is_reboot_required: bool | None,
    major: int | None,
) -> tuple[str, ...]:
    """Short reasons, empty when the instance can build; each names what to install or do."""
    if not exists:
        return ("its installation folder does not exist",)
    out = []
    if not toolsets:
        out.append("no VC tools (VC\\Tools\\MSVC is empty): add the 'Desktop development with C++' workload")
    elif not any(t.has_cl_x64 for t in toolsets):
        out.append(
            "no x64 VC tools (no bin\\Hostx64\\x64\\cl.exe in any MSVC toolset, e.g. ARM64-only): "
            "add 'MSVC ... x64/x86 build tools' (Microsoft.VisualStudio.Component.VC.Tools.x86.x64)"
        )
    if vc_targets is not None and not vc_targets_exist:
        short = "\\".join(vc_targets.split("\\")[-4:])
        out.append(
            f"no VC MSBuild targets ({short} is missing), so no BuildCustomizations folder can "
            "exist for CUDA: add the 'Desktop development with C++' workload"
        )
    if not sdks:
        out.append(
            "no Windows SDK (no Windows Kits\\10\\Include\\10.*\\um\\windows.h): add a Windows 10/11 SDK component"
        )
    if is_complete is False:
        out.append("the install is incomplete (repair or finish it in the Visual Studio Installer)")
    if is_reboot_required is True:
        out.append("the installer is waiting for a reboot: restart Windows before building")
    if major is not None and major < 15:
        out.append("Visual Studio 2015 or older: not supported by current CUDA toolkits")
    return tuple(out)
