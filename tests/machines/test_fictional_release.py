"""A CUDA and an MSVC that do not exist yet (CUDA 13.9, MSVC 14.60) are one edit each in
envmgr.knowledge: with a row for each, `list`, selection, `doctor` and `fix-msbuild` follow.

The machine is vs2026-vs2022.toml (built from real samples) with every CUDA 13.0 renamed 13.9 and
VS 2026's MSVC 14.50 renamed 14.60: hand-made, because no sample of an unreleased toolchain exists.
Its host_config.h is a placeholder, so the knowledge base's table is what nvcc's limits come from.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
import tomlkit

from envmgr import knowledge
from envmgr.knowledge import CudaRelease, MsvcRelease

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
VS2026 = "C:\\Program Files\\Microsoft Visual Studio\\18\\Insiders"
V180 = f"{VS2026}\\MSBuild\\Microsoft\\VC\\v180\\BuildCustomizations"
CUDA139 = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v13.9"
RENAMES = (("13.0", "13.9"), ("13_0", "13_9"), ("14.50.35717", "14.60.36010"), ("14.50", "14.60"))


def _rename(value):
    if isinstance(value, str):
        for old, new in RENAMES:
            value = value.replace(old, new)
        return value
    if isinstance(value, dict):
        return {_rename(k): _rename(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename(v) for v in value]
    return value


@pytest.fixture
def machine(tmp_path) -> str:
    data = tomllib.loads((HERE / "vs2026-vs2022.toml").read_text(encoding="utf-8"))
    path = tmp_path / "cuda13.9-msvc14.60.toml"
    path.write_text(tomlkit.dumps(_rename(data)), encoding="utf-8")
    return str(path)


@pytest.fixture
def fictional_release(monkeypatch):
    """The one edit a maintainer makes: a row for CUDA 13.9 and a row for MSVC 14.60."""
    newest = knowledge.CUDA_RELEASES[0]
    cuda = dataclasses.replace(newest, since="13.9", msc_max_excl=1970, source="fictional: test fixture")
    msvc = MsvcRelease("14.60", "13.9", "fictional: test fixture")
    monkeypatch.setattr(knowledge, "CUDA_RELEASES", (cuda, *knowledge.CUDA_RELEASES))
    monkeypatch.setattr(knowledge, "MSVC_RELEASES", (msvc, *knowledge.MSVC_RELEASES))
    assert isinstance(cuda, CudaRelease)


def _choice(path: str, **selectors):
    from envmgr.discover import discover
    from envmgr.discover.limits import read_limits
    from envmgr.host.recorded import load_machine
    from envmgr.snapshot.select import Selectors, choose

    host = load_machine(path)
    inv = discover(host)
    return choose(inv, Selectors(**selectors), read_limits(host, inv))


def _doctor(cli, path: str) -> dict:
    result = cli("--machine", path, "doctor", "--json", "--vs", "2026", "--cuda", "13.9", "--only", "F04,F05")
    return {c["id"]: (c["status"], c["summary"]) for c in result.json()["checks"]}


def _v180_pair(cli, path: str) -> dict:
    result = cli("--machine", path, "fix-msbuild", "--dry-run", "--json")
    assert result.code == 0, result.stderr
    return next(p for p in result.json()["pairs"] if p["folder"] == V180)


def test_without_the_rows_the_new_msvc_is_refused(cli, machine):
    """The control: CUDA 13.9 inherits 13.2's limits (_MSC_VER < 1960), so MSVC 14.60 is refused."""
    from envmgr.errors import NoMatchError

    with pytest.raises(NoMatchError):
        _choice(machine, vs="2026", cuda="13.9")
    assert _doctor(cli, machine)["F04"][0] == "fail"
    assert _v180_pair(cli, machine)["status"] == "unsupported"


def test_list_follows(cli, machine, fictional_release):
    data = cli("--machine", machine, "list", "--json").json()
    kit = next(k for k in data["cuda"] if k["short"] == "13.9")
    assert kit["path"] == CUDA139 and kit["problems"] == []
    vs = next(v for v in data["visual_studio"] if v["path"] == VS2026)
    assert vs["year"] == "2026" and vs["build_customizations"]["dir"] == V180
    assert [(t["version"], t["msc_ver"]) for t in vs["toolsets"]] == [("14.60.36010", 1960)]


def test_selection_follows(machine, fictional_release):
    choice = _choice(machine, vs="2026", cuda="13.9")
    assert (choice.vs.path, choice.toolset.version, choice.cuda.short) == (VS2026, "14.60.36010", "13.9")
    assert _choice(machine).toolset.version == "14.60.36010"  # unpinned: the newest VS now works


def test_doctor_follows(cli, machine, fictional_release):
    found = _doctor(cli, machine)
    assert found["F04"] == ("ok", "MSVC 14.60.36010 is accepted by CUDA 13.9")
    assert found["F05"] == ("ok", "CUDA 13.9 satisfies the STL's CUDA 13.9 minimum")  # the MSVC row


def test_fix_msbuild_follows(cli, machine, fictional_release):
    pair = _v180_pair(cli, machine)
    assert pair["status"] == "work" and pair["cuda"]["version"] == "13.9"
    assert [f["name"] for f in pair["files"]] == list(knowledge.integration_names("13.9"))
    assert len(pair["files"]) == 5 and all(f["status"] == "missing" for f in pair["files"])
