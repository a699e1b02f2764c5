"""`envmgr --machine FILE fix-msbuild` on recorded machines: planning only (a record has no files to write)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import EXAMPLES

HERE = Path(__file__).resolve().parent
CLASSIC = EXAMPLES / "community-buildtools-cuda124.toml"
PF, PF86 = "C:\\Program Files", "C:\\Program Files (x86)"
BT_V170 = f"{PF86}\\Microsoft Visual Studio\\2022\\BuildTools\\MSBuild\\Microsoft\\VC\\v170\\BuildCustomizations"
EXT124 = f"{PF}\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\extras\\visual_studio_integration\\MSBuildExtensions"
NAMES = ["CUDA 12.4.props", "CUDA 12.4.targets", "CUDA 12.4.xml", "Nvda.Build.CudaTasks.v12.4.dll"]


def machine(name: str) -> str:
    return str(HERE / f"{name}.toml")


def plan(cli, path: str, *args: str) -> dict:
    result = cli("--machine", path, "fix-msbuild", "--dry-run", "--json", *args)
    assert result.code == 0, result.stderr
    return result.json()


@pytest.mark.parametrize("path", [str(CLASSIC), machine("community-buildtools-cuda124")])
def test_classic_machine_plans_exactly_the_four_copies_into_buildtools(cli, path):
    data = plan(cli, path)
    copies = [
        (p["folder"], f["name"], f["status"], f["source"])
        for p in data["pairs"]
        for f in p["files"]
        if p["status"] == "work" and f["status"] in ("missing", "stale")
    ]
    assert copies == [(BT_V170, n, "missing", f"{EXT124}\\{n}") for n in NAMES]
    assert data["summary"] == {"copy": 4, "missing": 4, "stale": 0, "unknown": 0, "orphan": 0, "skipped_pairs": 1}
    community = [p for p in data["pairs"] if p["vs"]["instance_id"] == "491ec752"]
    assert [(p["cuda"]["version"], p["status"]) for p in community] == [("12.4", "ok"), ("11.8", "ok")]
    skipped = [p for p in data["pairs"] if p["status"] == "unsupported"]
    assert [(p["vs"]["instance_id"], p["cuda"]["version"]) for p in skipped] == [("f7268007", "11.8")]
    assert "MSVC 14.44.35207" in skipped[0]["reason"]
    route = data["routes"][0]
    assert route["env"] == {
        "CMAKE_GENERATOR": "Visual Studio 17 2022",
        "CMAKE_GENERATOR_INSTANCE": f"{PF86}\\Microsoft Visual Studio\\2022\\BuildTools",
        "CMAKE_GENERATOR_PLATFORM": "x64",
        "CMAKE_GENERATOR_TOOLSET": f"cuda={PF}\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4",
    }
    assert route["shell"] == "envmgr shell --vs f7268007 --cuda 12.4"


def test_classic_machine_dry_run_text(cli):
    result = cli("--machine", str(CLASSIC), "fix-msbuild", "--dry-run")
    assert result.code == 0, result.stderr
    out = result.stdout
    assert out.startswith("fix-msbuild plan: 4 file(s) to copy\n")
    bt, community = out.split("VS 2022 Community")
    assert BT_V170 in bt and all(f"missing  {n}" in bt for n in NAMES)
    assert "missing" not in community and "copy" not in community


def test_check_exits_1_and_apply_is_refused_on_a_record(cli):
    check = cli("--machine", str(CLASSIC), "fix-msbuild", "--check")
    assert check.code == 1 and "4 CUDA integration file(s) missing or stale" in check.stderr
    applied = cli("--machine", str(CLASSIC), "fix-msbuild", "--yes")
    assert applied.code == 2 and "recorded machines are for planning" in applied.stderr


def test_selectors_narrow_the_plan(cli):
    data = plan(cli, str(CLASSIC), "--vs", "community", "--cuda", "12.4")
    assert [
        (p["vs"]["edition"] if "edition" in p["vs"] else p["vs"]["instance_id"], p["status"]) for p in data["pairs"]
    ] == [("491ec752", "ok")]
    nothing = cli("--machine", str(CLASSIC), "fix-msbuild", "--vs", "community", "--check")
    assert nothing.code == 0


def test_vs2026_with_cuda_13_0_is_flagged_not_copied(cli):
    data = plan(cli, machine("vs2026-vs2022"))
    v180 = [p for p in data["pairs"] if p["vs"]["major"] == 18]
    assert [(p["cuda"]["version"], p["status"]) for p in v180] == [("13.0", "unsupported")]
    assert "13.2" in v180[0]["reason"]
    assert data["summary"]["copy"] == 0
    vs2022 = [p for p in data["pairs"] if p["vs"]["major"] == 17]
    assert vs2022[0]["status"] == "ok" and len(vs2022[0]["files"]) == 5  # CUDA 13.x ships 5 files


def test_vs2019_vs2022_plans_cuda_11_8_into_vs2022(cli):
    data = plan(cli, machine("vs2019-vs2022"))
    work = [(p["vs"]["major"], p["cuda"]["version"], len(p["files"])) for p in data["pairs"] if p["status"] == "work"]
    assert work == [(17, "11.8", 4)]


def test_export_route_prints_a_script(cli):
    result = cli("--machine", str(CLASSIC), "fix-msbuild", "--export-route", "cmd")
    assert result.code == 0, result.stderr
    assert 'set "CMAKE_GENERATOR=Visual Studio 17 2022"' in result.stdout or "CMAKE_GENERATOR=" in result.stdout
    assert "cuda=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4" in result.stdout


def test_not_windows_points_at_machine(cli):
    result = cli("--machine", machine("linux-two-toolkits"), "fix-msbuild", "--dry-run")
    assert result.code == 2
    assert "fix-msbuild is a Windows repair" in result.stderr and "--machine FILE" in result.stderr


def test_no_vs_with_cpp_tools_exits_3(cli):
    result = cli("--machine", machine("buildtools-only"), "fix-msbuild", "--dry-run")
    assert result.code == 3 and "no Visual Studio instance with C++ tools" in result.stderr


def test_no_matching_cuda_exits_3(cli):
    result = cli("--machine", str(CLASSIC), "fix-msbuild", "--dry-run", "--cuda", "13.0")
    assert result.code == 3 and "no CUDA toolkit matches --cuda 13.0" in result.stderr
    assert "CUDA 12.4.99" in result.stderr
