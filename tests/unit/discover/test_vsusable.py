"""envmgr/discover/vsusable.py: why a Visual Studio instance cannot build, node-gyp's rules, pure."""

from __future__ import annotations

from envmgr.discover.model import Toolset
from envmgr.discover.vsusable import unusable_reasons

VS = "C:\\Program Files\\Microsoft Visual Studio\\2022\\BuildTools"
X64 = Toolset("14.44.35207", f"{VS}\\VC\\Tools\\MSVC\\14.44.35207", 1944, True, True)
ARM64_ONLY = Toolset("14.44.35207", f"{VS}\\VC\\Tools\\MSVC\\14.44.35207", 1944, False)
TARGETS = f"{VS}\\MSBuild\\Microsoft\\VC\\v170"
GOOD = {
    "exists": True,
    "toolsets": (X64,),
    "vc_targets": TARGETS,
    "vc_targets_exist": True,
    "sdks": ("10.0.22621.0",),
    "is_complete": True,
    "is_reboot_required": False,
    "major": 17,
}


def test_a_complete_instance_has_no_reason():
    assert unusable_reasons(**GOOD) == ()
    assert (
        unusable_reasons(**{**GOOD, "vc_targets": None, "is_complete": None, "is_reboot_required": None, "major": None})
        == ()
    )


def test_a_missing_folder_is_the_only_reason():
    assert unusable_reasons(**{**GOOD, "exists": False, "toolsets": ()}) == ("its installation folder does not exist",)


def test_each_gap_names_what_to_install():
    assert unusable_reasons(**{**GOOD, "toolsets": ()})[0].startswith("no VC tools (VC\\Tools\\MSVC is empty)")
    arm = unusable_reasons(**{**GOOD, "toolsets": (ARM64_ONLY,)})
    assert len(arm) == 1 and "Microsoft.VisualStudio.Component.VC.Tools.x86.x64" in arm[0]
    many = unusable_reasons(
        **{**GOOD, "vc_targets_exist": False, "sdks": (), "is_complete": False, "is_reboot_required": True, "major": 14}
    )
    assert [r.split(" (")[0].split(":")[0] for r in many] == [
        "no VC MSBuild targets",
        "no Windows SDK",
        "the install is incomplete",
        "the installer is waiting for a reboot",
        "Visual Studio 2015 or older",
    ]
    assert "(MSBuild\\Microsoft\\VC\\v170 is missing)" in many[0]
