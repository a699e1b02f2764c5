"""envmgr/discover/sdk.py: Windows SDKs found the way winsdk.bat finds them, on recorded machines."""

from __future__ import annotations

from envmgr.discover.sdk import discover_sdks, kits_root
from envmgr.host.recorded import RecordedHost, load_machine
from tests.conftest import MACHINES


def test_the_registry_names_the_kits_root_and_sdks_come_newest_first():
    host = load_machine(str(MACHINES / "vs2019-vs2022.toml"))
    assert kits_root(host) == "C:\\Program Files (x86)\\Windows Kits\\10\\"
    assert discover_sdks(host) == (("10.0.22621.0", "10.0.19041.0"), ())


def test_no_registry_value_falls_back_to_program_files_and_reports_a_partly_removed_sdk():
    root = "D:\\PF86\\Windows Kits\\10\\Include"
    host = RecordedHost(
        {
            "schema": 1,
            "platform": "windows",
            "env": {"ProgramFiles(x86)": "D:\\PF86"},
            "files": {f"{root}\\10.0.26100.0\\um\\winsdkver.h": "", f"{root}\\10.0.19041.0\\shared\\sdkddkver.h": ""},
            "dirs": [f"{root}\\wdf"],
        }
    )
    assert kits_root(host) == "D:\\PF86\\Windows Kits\\10"
    assert discover_sdks(host) == (
        ("10.0.26100.0",),
        ("Windows SDK 10.0.19041.0 is incomplete (Include\\10.0.19041.0\\um has no windows.h)",),
    )


def test_a_machine_without_kits_has_none():
    assert discover_sdks(load_machine(str(MACHINES / "buildtools-only.toml")))[0] == ()
