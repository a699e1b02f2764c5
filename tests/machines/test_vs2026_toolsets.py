"""Machines with Visual Studio 2026 and a CUDA older than 13.2 (issue 38): the v143 14.44 toolset inside
VS 2026 is chosen and captured with -vcvars_ver, and where no accepted toolset is installed, doctor and
the selection error name the installer component and the vs_installer command line that adds it."""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest

from envmgr.discover import discover
from envmgr.discover.limits import read_limits
from envmgr.host.recorded import load_machine
from envmgr.knowledge import host_limits, toolset_component
from envmgr.snapshot.select import Selectors, choose
from tests.conftest import MACHINES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RUNNER = str(MACHINES / "windows-latest-vs2026.toml")
LAPTOP = str(MACHINES / "vs2026-laptop-no-v143.toml")
BESIDE = str(MACHINES / "vs2026-beside-vs2022.toml")
ENTERPRISE = "C:\\Program Files\\Microsoft Visual Studio\\18\\Enterprise"
COMMUNITY = "C:\\Program Files\\Microsoft Visual Studio\\18\\Community"
V143 = "Microsoft.VisualStudio.Component.VC.14.44.17.14.x86.x64"
INSTALLER = "C:\\Program Files (x86)\\Microsoft Visual Studio\\Installer\\vs_installer.exe"
ADD_V143 = f'"{INSTALLER}" modify --installPath "{COMMUNITY}" --add {V143}'


def checks(cli, machine: str, *args: str) -> dict:
    got = cli("--machine", machine, "doctor", "--json", *args)
    assert got.stdout, got.stderr
    return {c["id"]: c for c in got.json()["checks"]} | {"selection": got.json()["selection"]}


def test_runner_lists_both_toolsets_inside_vs2026(cli):
    got = cli("--machine", RUNNER, "list", "--json")
    assert got.code == 0, got.stderr
    (vs,) = got.json()["visual_studio"]
    assert (vs["path"], vs["year"], vs["edition"]) == (ENTERPRISE, "2026", "Enterprise")
    assert [t["version"] for t in vs["toolsets"]] == ["14.50.35717", "14.44.35207"]
    assert vs["default_toolset"] == "14.50.35717"


def test_runner_export_captures_the_v143_toolset_with_vcvars_ver(cli):
    # The record answers only the vcvarsall call with -vcvars_ver=14.44.35207 (its script digest).
    got = cli("--machine", RUNNER, "export", "--format", "toml")
    assert got.code == 0, got.stderr
    snap = tomllib.loads(got.stdout)
    assert snap["summary"]["toolset"] == "14.44.35207"
    assert snap["identity"]["vcvars_args"] == "x64 -vcvars_ver=14.44.35207"
    assert snap["summary"]["vs_path"] == ENTERPRISE
    (note,) = [n for n in snap["notes"] if n.startswith("using MSVC")]
    assert "inside VS 2026 Enterprise" in note and "14.50.35717 rejected" in note
    assert "-vcvars_ver=14.44.35207" in note
    assert "using MSVC 14.44.35207 inside VS 2026" in got.stderr  # the reason line, said once


def test_runner_export_github_writes_the_v143_environment(cli):
    got = cli("--machine", RUNNER, "export", "--format", "github")
    assert got.code == 0, got.stderr
    env = got.stdout.split("# >>> GITHUB_ENV", 1)[1]
    assert f"VCToolsInstallDir={ENTERPRISE}\\VC\\Tools\\MSVC\\14.44.35207\\" in env
    assert "CUDA_PATH=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.8" in env


def test_runner_doctor_warns_about_the_default_and_names_the_pin(cli):
    got = checks(cli, RUNNER)
    assert got["selection"]["toolset"] == "14.44.35207"
    f04 = got["F04"]
    assert f04["status"] == "warn" and "MSVC 14.44.35207 works" in f04["summary"]
    assert f04["fix_command"] == "envmgr shell --toolset 14.44 --cuda 12.8"
    assert got["F05"]["status"] == "ok"


def test_laptop_without_v143_names_the_component_and_installer_command(cli):
    got = checks(cli, LAPTOP)
    f04, f05 = got["F04"], got["F05"]
    assert f04["status"] == "fail" and f05["status"] == "fail"
    assert V143 in f04["fix"] and f04["fix_command"] == ADD_V143
    assert "-vcvars_ver=14.44" in f04["fix"] and "CUDA 13.2 or newer" in f04["fix"]
    assert f05["fix_command"] == ADD_V143
    assert any("-allow-unsupported-compiler would not help" in e and "STL1002" in e for e in f04["evidence"])
    for c in (f04, f05):  # never offered where the STL gate fails anyway
        assert "-allow-unsupported-compiler" not in (c["fix"] + c["fix_command"])


def test_laptop_export_fails_with_the_component_in_the_remedy(cli):
    got = cli("--machine", LAPTOP, "export")
    assert got.code == 3 and got.stdout == ""
    assert "no MSVC toolset of VS 2026 Community" in got.stderr and "works with CUDA 12.8" in got.stderr
    assert V143 in got.stderr and ADD_V143 in got.stderr
    assert "Traceback" not in got.stderr


def test_toolset_component_is_the_newest_pinnable_toolset_the_cuda_accepts():
    v145 = "Microsoft.VisualStudio.Component.VC.14.50.18.0.x86.x64"
    assert toolset_component("13.2", host_limits("13.2")) == ("14.50", v145)
    assert toolset_component("12.8", host_limits("12.8")) == ("14.44", V143)
    # CUDA 12.2: nvcc stops at 14.39 and no pinnable component in the table is that old.
    assert toolset_component("12.2", host_limits("12.2")) is None


@pytest.mark.parametrize(
    ("cuda", "vs", "toolset"),
    [
        ("13.1", "VS 2022 BuildTools 17.14.37027.9", "14.44.35207"),
        ("12.8", "VS 2022 BuildTools 17.14.37027.9", "14.44.35207"),
    ],
)
def test_vs2026_beside_vs2022_takes_the_accepted_toolset_of_either(cli, cuda, vs, toolset):
    got = cli("--machine", BESIDE, "doctor", "--json", "--cuda", cuda)
    sel = got.json()["selection"]
    assert (sel["vs"], sel["toolset"], sel["error"]) == (vs, toolset, None)
    f04 = {c["id"]: c for c in got.json()["checks"]}["F04"]
    assert f04["status"] == "ok"


def test_the_newest_accepted_toolset_of_any_instance_wins_over_the_newest_instance():
    # VS 2026 holding 14.50 and an older v143 (14.43) beside VS 2022 with 14.44: CUDA 12.8 rejects 14.50,
    # and 14.44 (in the older instance) is newer than 14.43 (in the newer one).
    host = load_machine(BESIDE)
    inv = discover(host)
    vs26, vs22 = inv.visual_studio
    new = vs26.toolsets[0]
    old = replace(
        new, version="14.43.34808", path=new.path.replace("14.50.35717", "14.43.34808"), msc_ver=1943, is_default=False
    )
    inv = replace(inv, visual_studio=(replace(vs26, toolsets=(*vs26.toolsets, old)), vs22))
    choice = choose(inv, Selectors(cuda="12.8"), read_limits(host, inv))
    assert (choice.vs.year, choice.toolset.version) == ("2022", "14.44.35207")
    # Both hold 14.44: the tie goes to the newest instance, VS 2026.
    same = replace(old, version="14.44.35207", path=old.path.replace("14.43.34808", "14.44.35207"), msc_ver=1944)
    inv = replace(inv, visual_studio=(replace(vs26, toolsets=(*vs26.toolsets, same)), vs22))
    choice = choose(inv, Selectors(cuda="12.8"), read_limits(host, inv))
    assert (choice.vs.year, choice.toolset.version) == ("2026", "14.44.35207")
    assert any("inside VS 2026 Community" in n and "-vcvars_ver=14.44.35207" in n for n in choice.notes)


def test_runner_export_json_carries_the_reason(cli):
    got = cli("--machine", RUNNER, "export", "--format", "json")
    assert got.code == 0, got.stderr
    doc = got.json()
    assert doc["identity"]["vcvars_args"] == "x64 -vcvars_ver=14.44.35207"
    assert any(
        n.startswith("using MSVC 14.44.35207 inside VS 2026 Enterprise") and "14.50.35717 rejected" in n
        for n in doc["notes"]
    )


def test_f01_does_not_claim_the_vs2022_vcvars_steers_the_vs2026_generator(cli):
    # Before: "CMake would pick BuildTools 17.14 because envmgr selects it and its vcvars sets VS180COMNTOOLS".
    f01 = checks(cli, BESIDE, "--cuda", "13.1")["F01"]
    text = "\n".join(f01["evidence"])
    assert "VS180COMNTOOLS" not in text
    assert "the VS 18 generator does not use it (its vcvars sets VS170COMNTOOLS)" in text
