"""Unusable Visual Studio instances (issue 13 item 3), flagged the way node-gyp rejects them, on recorded
machines built from node-gyp's fixtures and the vswhere corpus (build_machines.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from envmgr.discover.vswhere import VsRecord

HERE = Path(__file__).resolve().parent


def listing(cli, name: str) -> dict:
    result = cli("--machine", str(HERE / f"{name}.toml"), "list", "--json")
    assert result.code == 0, result.stderr
    [vs] = result.json()["visual_studio"]
    return vs


def f03(cli, name: str) -> dict:
    result = cli("--machine", str(HERE / f"{name}.toml"), "doctor", "--json")
    return next(c for c in result.json()["checks"] if c["id"] == "F03")


def test_node_gyp_vs2019_buildtools_minimal_is_usable(cli):
    vs = listing(cli, "node-gyp-vs2019-buildtools-minimal")
    assert vs["usable"] is True and vs["unusable"] == [] and vs["problems"] == []
    assert vs["edition"] == "BuildTools" and vs["sdks"] == ["10.0.17134.0"]
    assert f03(cli, "node-gyp-vs2019-buildtools-minimal")["status"] == "ok"


def test_node_gyp_vs2022_arm64_only_has_no_x64_tools(cli):
    vs = listing(cli, "node-gyp-vs2022-buildtools-arm64-only")
    assert vs["usable"] is False and [t["has_cl_x64"] for t in vs["toolsets"]] == [False]
    [why] = vs["unusable"]
    assert "no x64 VC tools" in why and "VC.Tools.x86.x64" in why
    check = f03(cli, "node-gyp-vs2022-buildtools-arm64-only")
    assert check["status"] == "fail" and "no x64 VC tools" in check["evidence"][0] and "no x64" in check["fix"]


def test_vs2026_insiders_without_product_id_reads_edition_and_channel_from_display_name(cli):
    vs = listing(cli, "node-gyp-vs2026-insiders-reboot-pending")
    assert vs["product_id"] == "" and vs["channel_id"] == ""
    assert vs["edition"] == "Community" and vs["channel"] == "Insiders" and vs["year"] == "2026"
    assert vs["is_reboot_required"] is True
    [why] = vs["unusable"]
    assert "reboot" in why
    text = cli("--machine", str(HERE / "node-gyp-vs2026-insiders-reboot-pending.toml"), "list").stdout
    assert (
        "VS 2026 Community Insiders 18.3.11206.111 UNUSABLE" in text
        and "cannot build: the installer is waiting" in text
    )
    check = f03(cli, "node-gyp-vs2026-insiders-reboot-pending")
    assert check["status"] == "fail" and "reboot" in check["fix"]


def test_incomplete_vs2019_professional_from_vswhere_corpus(cli):
    vs = listing(cli, "vs2019-professional-incomplete")
    assert vs["is_complete"] is False and vs["toolsets"] and vs["usable"] is False
    assert vs["unusable"] == ["the install is incomplete (repair or finish it in the Visual Studio Installer)"]


def test_buildtools_without_vc_workload_has_no_vc_targets_no_tools_no_sdk(cli):
    vs = listing(cli, "buildtools-only")
    assert len(vs["unusable"]) == 3
    tools, targets, sdk = vs["unusable"]
    assert tools.startswith("no VC tools") and sdk.startswith("no Windows SDK")
    assert targets.startswith("no VC MSBuild targets (MSBuild\\Microsoft\\VC\\v170 is missing)")
    assert "BuildCustomizations" in targets


@pytest.mark.parametrize("name", ["community-buildtools-cuda124", "vs2019-vs2022", "vs2026-vs2022"])
def test_healthy_instances_stay_usable(cli, name):
    result = cli("--machine", str(HERE / f"{name}.toml"), "list", "--json")
    assert all(v["usable"] and v["unusable"] == [] for v in result.json()["visual_studio"])


@pytest.mark.parametrize(
    "display, edition, channel",
    [
        ("Visual Studio Community 2026 Insiders", "Community", "Insiders"),
        ("Visual Studio Build Tools 2026 Insiders", "BuildTools", "Insiders"),
        ("Visual Studio Enterprise 2022 Preview", "Enterprise", "Preview"),
        ("Visual Studio Professional 2019", "Professional", ""),
    ],
)
def test_edition_and_channel_from_display_name_when_product_id_is_absent(display, edition, channel):
    rec = VsRecord("1", "C:\\VS", "18.3.11206.111", display_name=display)
    assert (rec.edition, rec.channel) == (edition, channel)
    with_ids = VsRecord(
        "1",
        "C:\\VS",
        "18.3.1",
        product_id="Microsoft.VisualStudio.Product.Enterprise",
        display_name=display,
        channel_id="VisualStudio.18.Stable",
    )
    assert (with_ids.edition, with_ids.channel) == ("Enterprise", "Stable")
