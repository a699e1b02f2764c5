"""Discovery's Windows code paths, run for real under Wine: the registry through Wine's reg.exe,
NVIDIA's real nvcc.exe, the installer's state.json, and a vswhere.exe built here (see conftest)."""

from __future__ import annotations

import pytest

from envmgr.discover.cudaparse import parse_nvcc_version
from envmgr.discover.vs import VSWHERE_ARGS
from envmgr.host.wine import WineHost
from tests.conftest import CORPUS, run_cli
from tests.wine.conftest import BUILDTOOLS_TOOLSET, CUDA_DIR, CUDA_KEY, STATE_ID

pytestmark = pytest.mark.wine

NVCC = CUDA_DIR + "\\bin\\nvcc.exe"
FLUTTER_VSWHERE = "vswhere-json-vs2022-community-17.5.4-flutter-fixture.json"


def listing(prefix) -> dict:
    result = run_cli("--wine-prefix", str(prefix.path), "list", "--json")
    assert result.code == 0, result.stderr
    return result.json()


def kit(data: dict, path: str) -> dict:
    found = [k for k in data["cuda"] if k["path"].lower() == path.lower()]
    assert len(found) == 1, [k["path"] for k in data["cuda"]]
    return found[0]


def test_cuda_found_through_registry_machine_env_and_nvcc(wine_prefix):
    rc, out, _ = wine_prefix.wine(NVCC, "--version")
    assert rc == 0
    expected = parse_nvcc_version(out)
    assert expected is not None and expected.full.startswith("13.2.")

    data = listing(wine_prefix)
    assert data["platform"] == "windows"
    cuda = kit(data, CUDA_DIR)
    assert cuda["path"] == CUDA_DIR
    assert cuda["version"] == expected.full
    assert cuda["short"] == "13.2"
    assert cuda["version_source"] == "nvcc --version"
    assert cuda["nvcc"] == NVCC
    assert "registry v13.2" in cuda["sources"]
    assert "machine env CUDA_PATH_V13_2" in cuda["sources"]
    assert cuda["problems"] == []


def test_registry_installdir_of_the_wrong_type_is_a_problem(wine_prefix):
    wine_prefix.reg("add", f"{CUDA_KEY}\\v12.9", "/v", "InstallDir", "/t", "REG_DWORD", "/d", "1", "/f")
    try:
        data = listing(wine_prefix)
    finally:
        wine_prefix.reg("delete", f"{CUDA_KEY}\\v12.9", "/f")
    broken = kit(data, "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.9")
    assert any("InstallDir is REG_DWORD" in p for p in broken["problems"]), broken["problems"]
    assert kit(data, CUDA_DIR)["version"].startswith("13.2.")  # the healthy one is still listed


def test_without_vswhere_the_state_json_instance_is_found(wine_prefix):
    data = listing(wine_prefix)
    assert any("vswhere.exe not found" in p for p in data["problems"]), data["problems"]
    (vs,) = data["visual_studio"]
    assert vs["instance_id"] == STATE_ID
    assert vs["source"] == "state.json"
    assert vs["path"] == "C:\\BuildTools"
    assert vs["version"] == "15.0.26117"
    assert vs["edition"] == "BuildTools"
    assert vs["display_name"] == "Visual Studio Build Tools 2017"
    assert [t["version"] for t in vs["toolsets"]] == [BUILDTOOLS_TOOLSET]
    assert vs["default_toolset"] == BUILDTOOLS_TOOLSET
    assert vs["toolsets"][0]["msc_ver"] == 1916


def test_vswhere_runs_under_wine(wine_prefix, fake_vswhere):
    fake_vswhere.answer((CORPUS / FLUTTER_VSWHERE).read_bytes())
    data = listing(wine_prefix)
    assert fake_vswhere.argv() == list(VSWHERE_ARGS)  # the program really ran, with discovery's argv
    assert [vs["instance_id"] for vs in data["visual_studio"]] == ["491ec752"]
    vs = data["visual_studio"][0]
    assert vs["source"] == "vswhere"
    assert vs["version"] == "17.5.33530.505"
    assert vs["path"] == "C:\\Program Files\\Microsoft Visual Studio\\2022\\Community"
    assert not any("vswhere" in p for p in data["problems"]), data["problems"]


def test_vswhere_error_with_exit_0_falls_back_to_state_json(wine_prefix, fake_vswhere):
    # vswhere prints its parameter errors on stdout and can exit 0 (facts/windows.md §1).
    fake_vswhere.answer(b"Error 0x57: Unknown parameter: foo\r\n", 0)
    data = listing(wine_prefix)
    assert fake_vswhere.argv() == list(VSWHERE_ARGS)
    assert any("Error 0x57: Unknown parameter: foo" in p and "state.json" in p for p in data["problems"]), data[
        "problems"
    ]
    assert [(vs["instance_id"], vs["source"]) for vs in data["visual_studio"]] == [(STATE_ID, "state.json")]


def test_vswhere_failing_exit_code_is_a_problem(wine_prefix, fake_vswhere):
    fake_vswhere.answer(b"", 87)
    data = listing(wine_prefix)
    assert any("exited with 87" in p for p in data["problems"]), data["problems"]
    assert [vs["source"] for vs in data["visual_studio"]] == ["state.json"]


def test_wine_host_maps_paths_registry_and_environment(wine_prefix):
    host = WineHost(str(wine_prefix.path))
    assert host.exists(NVCC.upper())  # case-insensitive, as on Windows
    assert host.realpath(NVCC.lower()) == NVCC  # the names' real case back
    assert host.is_dir("z:\\") and host.realpath("Z:\\usr") == "Z:\\usr"
    assert host.realpath("Z:" + str(wine_prefix.drive_c).replace("/", "\\")) == "C:\\"  # via Z:, back as C:
    assert host.which("nvcc") is None and host.which("cmd") == "C:\\windows\\system32\\cmd.exe"
    assert host.env["programfiles(x86)"] == "C:\\Program Files (x86)"
    assert host.env["CUDA_PATH_V13_2"] == CUDA_DIR  # machine environment from the registry
    assert "system32" in host.env["PATH"].lower()
    assert host.reg_subkeys(CUDA_KEY) == ["v13.2"]
    assert host.reg_values(CUDA_KEY + "\\v13.2")["InstallDir"].data == CUDA_DIR + "\\"
    assert host.reg_values(CUDA_KEY + "\\nope") is None
    done = host.run([NVCC, "--version"], timeout=60)
    assert done.ok and "release 13.2" in done.stdout
    missing = host.run(["C:\\nope\\x.exe"], timeout=60)
    assert missing.returncode == 127 and missing.start_error
    slow = host.run(["cmd", "/c", "ping", "-n", "30", "127.0.0.1"], timeout=1.5)
    assert slow.timed_out
