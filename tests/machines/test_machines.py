"""`envmgr --machine FILE list` against recorded machines built from real samples (build_machines.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from envmgr.knowledge import build_customizations_subdir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent.parent / "shared"


def _load_builder():
    spec = importlib.util.spec_from_file_location("build_machines", HERE / "build_machines.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("build_machines", module)
    spec.loader.exec_module(module)
    return module


bm = _load_builder()

PF, PF86 = "C:\\Program Files", "C:\\Program Files (x86)"
CUDA = f"{PF}\\NVIDIA GPU Computing Toolkit\\CUDA"
COMMUNITY = f"{PF}\\Microsoft Visual Studio\\2022\\Community"
BUILDTOOLS = f"{PF86}\\Microsoft Visual Studio\\2022\\BuildTools"
NO_MSVC = "no MSVC toolset in VC\\Tools\\MSVC"


def listing(cli, name: str) -> dict:
    result = cli("--machine", str(HERE / f"{name}.toml"), "list", "--json")
    assert result.code == 0, result.stderr
    return result.json()


def summary(vs: dict) -> tuple:
    bc = vs["build_customizations"]
    return (
        vs["instance_id"],
        vs["edition"],
        vs["version"],
        vs["year"],
        vs["channel"],
        vs["path"],
        [t["version"] for t in vs["toolsets"]],
        vs["default_toolset"],
        bc and bc["dir"],
        bc and bc["exists"],
        bc and bc["cuda_versions"],
    )


def bc_dir(path: str, major: int) -> str:
    """The product's rule (envmgr/knowledge.py, with its sources), not a copy of it."""
    return "\\".join((path, *build_customizations_subdir(major)))


def kit(short: str, full: str, sources: list[str], *, x64: bool = False) -> dict:
    root = f"{CUDA}\\v{short}"
    return {
        "version": full,
        "short": short,
        "path": root,
        "nvcc": f"{root}\\bin\\nvcc.exe",
        "sources": sources,
        "version_source": "nvcc --version",
        "bin_dirs": [f"{root}\\bin"] + ([f"{root}\\bin\\x64"] if x64 else []),
        "lib_dirs": [f"{root}\\lib\\x64"],
        "problems": [],
    }


def cuda_subset(kits: list[dict]) -> list[dict]:
    keys = ("version", "short", "path", "nvcc", "sources", "version_source", "bin_dirs", "lib_dirs", "problems")
    return [{k: c[k] for k in keys} for c in kits]


def gpus(d: dict) -> list[tuple]:
    return [
        (g["index"], g["name"], g["compute_cap"], g["compute_cap_source"], g["driver_version"], g["memory_mib"])
        for g in d["gpus"]
    ]


def env_sources(short: str, *, current: bool = False, on_path: bool = False) -> list[str]:
    tag = short.replace(".", "_")
    """`sources` in discovery's order: registry, process env, machine env (registry), folders, PATH."""
    out = [f"registry v{short}"] + (["CUDA_PATH"] if current else []) + [f"CUDA_PATH_V{tag}"]
    out += (["machine env CUDA_PATH"] if current else []) + [f"machine env CUDA_PATH_V{tag}", "default folder"]
    return out + (["nvcc on PATH"] if on_path else [])


# ---- one test per machine -----------------------------------------------------------------------


def test_buildtools_only_has_no_msvc(cli):
    d = listing(cli, "buildtools-only")
    assert d["platform"] == "windows"
    [vs] = d["visual_studio"]
    assert summary(vs) == (
        "f7268007",
        "BuildTools",
        "17.14.37027.9",
        "2022",
        "Release",
        BUILDTOOLS,
        [],
        None,
        bc_dir(BUILDTOOLS, 17),
        False,
        [],
    )
    assert vs["display_name"] == "Visual Studio Build Tools 2022"
    assert vs["source"] == "vswhere" and vs["is_complete"] is True and vs["vcvarsall"] is None
    assert len(vs["problems"]) == 1 and NO_MSVC in vs["problems"][0]
    assert "Microsoft.VisualStudio.Workload.VCTools" in vs["problems"][0]
    assert d["cuda"] == [] and d["gpus"] == [] and d["windows_sdks"] == [] and d["problems"] == []


def test_buildtools_only_with_vctools_and_cuda124(cli):
    d = listing(cli, "buildtools-only-vctools")
    [vs] = d["visual_studio"]
    assert summary(vs) == (
        "2c33f8c6",
        "BuildTools",
        "17.13.35931.197",
        "2022",
        "Release",
        BUILDTOOLS,
        ["14.43.34808"],
        "14.43.34808",
        bc_dir(BUILDTOOLS, 17),
        True,
        ["12.4"],
    )
    assert vs["toolsets"][0]["msc_ver"] == 1943 and vs["toolsets"][0]["has_cl_x64"] is True
    assert vs["vcvarsall"] == f"{BUILDTOOLS}\\VC\\Auxiliary\\Build\\vcvarsall.bat"
    assert vs["build_customizations"]["files"] == [
        "CUDA 12.4.props",
        "CUDA 12.4.targets",
        "CUDA 12.4.xml",
        "Nvda.Build.CudaTasks.v12.4.dll",
    ]
    assert vs["problems"] == [] and vs["sdks"] == ["10.0.22621.0"]
    assert cuda_subset(d["cuda"]) == [kit("12.4", "12.4.99", env_sources("12.4", current=True, on_path=True))]
    assert d["gpus"] == [] and d["problems"] == []


def test_classic_community_and_buildtools_only_community_has_cuda(cli):
    d = listing(cli, "community-buildtools-cuda124")
    assert [summary(v) for v in d["visual_studio"]] == [
        (
            "f7268007",
            "BuildTools",
            "17.14.37027.9",
            "2022",
            "Release",
            BUILDTOOLS,
            ["14.44.35207"],
            "14.44.35207",
            bc_dir(BUILDTOOLS, 17),
            True,
            [],
        ),
        (
            "491ec752",
            "Community",
            "17.5.33530.505",
            "2022",
            "Release",
            COMMUNITY,
            ["14.35.32215"],
            "14.35.32215",
            bc_dir(COMMUNITY, 17),
            True,
            ["11.8", "12.4"],
        ),
    ]
    build_tools, community = d["visual_studio"]
    assert build_tools["build_customizations"]["files"] == []
    assert community["build_customizations"]["files"] == [
        "CUDA 11.8.props",
        "CUDA 11.8.targets",
        "CUDA 11.8.xml",
        "CUDA 12.4.props",
        "CUDA 12.4.targets",
        "CUDA 12.4.xml",
        "Nvda.Build.CudaTasks.v11.8.dll",
        "Nvda.Build.CudaTasks.v12.4.dll",
    ]
    assert [t["msc_ver"] for v in d["visual_studio"] for t in v["toolsets"]] == [1944, 1935]
    assert all(v["problems"] == [] and v["sdks"] == ["10.0.22621.0"] for v in d["visual_studio"])
    assert cuda_subset(d["cuda"]) == [
        kit("12.4", "12.4.99", env_sources("12.4", current=True, on_path=True)),
        kit("11.8", "11.8.89", env_sources("11.8")),
    ]
    assert [len(c["msbuild_extensions"]) for c in d["cuda"]] == [4, 4]
    assert gpus(d) == [(0, "NVIDIA GeForce RTX 4070 SUPER", "8.9", "nvidia-smi", "576.80", 12282)]
    assert d["windows_sdks"] == ["10.0.22621.0"] and d["problems"] == []


def test_classic_text_output_shows_both_instances_and_no_cuda_for_buildtools(cli):
    result = cli("--machine", str(HERE / "community-buildtools-cuda124.toml"), "list")
    assert result.code == 0
    lines = result.stdout.splitlines()
    assert any("VS 2022 BuildTools 17.14.37027.9" in ln and "[f7268007]" in ln for ln in lines)
    assert any("VS 2022 Community 17.5.33530.505" in ln and "[491ec752]" in ln for ln in lines)
    bc_lines = [ln for ln in lines if "BuildCustomizations:" in ln]
    assert len(bc_lines) == 2
    assert "no CUDA" in bc_lines[0] and BUILDTOOLS in bc_lines[0]
    assert "11.8, 12.4" in bc_lines[1] and COMMUNITY in bc_lines[1]
    assert "NVIDIA GeForce RTX 4070 SUPER: sm_89" in result.stdout


def test_vs2019_and_vs2022_each_with_its_own_buildcustomizations(cli):
    d = listing(cli, "vs2019-vs2022")
    vs2019 = f"{PF86}\\Microsoft Visual Studio\\2019\\Community"
    assert [summary(v) for v in d["visual_studio"]] == [
        (
            "491ec752",
            "Community",
            "17.5.33530.505",
            "2022",
            "Release",
            COMMUNITY,
            ["14.35.32215"],
            "14.35.32215",
            bc_dir(COMMUNITY, 17),
            True,
            ["12.4"],
        ),
        (
            "1897ac53",
            "Community",
            "16.11.32510.428",
            "2019",
            "Release",
            vs2019,
            ["14.29.30133"],
            "14.29.30133",
            bc_dir(vs2019, 16),
            True,
            ["11.8", "12.4"],
        ),
    ]
    assert d["visual_studio"][1]["build_customizations"]["dir"].endswith("\\v160\\BuildCustomizations")
    assert d["windows_sdks"] == ["10.0.22621.0", "10.0.19041.0"]
    assert all(v["problems"] == [] for v in d["visual_studio"])
    assert [c["version"] for c in d["cuda"]] == ["12.4.99", "11.8.89"]
    assert gpus(d) == [(0, "NVIDIA GeForce RTX 3080", "8.6", "nvidia-smi", "576.80", 10240)]


def test_vs2026_insiders_beside_vs2022_with_cuda13(cli):
    d = listing(cli, "vs2026-vs2022")
    vs26 = f"{PF}\\Microsoft Visual Studio\\18\\Insiders"
    assert [summary(v) for v in d["visual_studio"]] == [
        (
            "5d2b0a7e",
            "Community",
            "18.3.11206.111",
            "2026",
            "Insiders",
            vs26,
            ["14.50.35717"],
            "14.50.35717",
            bc_dir(vs26, 18),
            True,
            [],
        ),
        (
            "491ec752",
            "Community",
            "17.5.33530.505",
            "2022",
            "Release",
            COMMUNITY,
            ["14.35.32215"],
            "14.35.32215",
            bc_dir(COMMUNITY, 17),
            True,
            ["13.0"],
        ),
    ]
    insiders, vs2022 = d["visual_studio"]
    assert insiders["is_prerelease"] is True and insiders["channel_id"] == "VisualStudio.18.Insiders"
    assert insiders["major"] == 18 and insiders["toolsets"][0]["msc_ver"] == 1950
    assert insiders["build_customizations"]["dir"].endswith("\\v180\\BuildCustomizations")
    assert vs2022["build_customizations"]["files"] == [
        "CUDA 13.0.Version.props",
        "CUDA 13.0.props",
        "CUDA 13.0.targets",
        "CUDA 13.0.xml",
        "Nvda.Build.CudaTasks.v13.0.dll",
    ]
    assert cuda_subset(d["cuda"]) == [kit("13.0", "13.0.88", env_sources("13.0", current=True, on_path=True), x64=True)]
    assert len(d["cuda"][0]["msbuild_extensions"]) == 5
    assert d["windows_sdks"] == ["10.0.26100.0", "10.0.22621.0"]
    assert gpus(d) == [(0, "NVIDIA GeForce RTX 4060 Ti", "8.9", "nvidia-smi", "596.36", 16380)]


def test_three_toolkits_cuda_path_points_at_the_old_one(cli):
    d = listing(cli, "cuda-three-wrong-cuda-path")
    [vs] = d["visual_studio"]
    assert summary(vs) == (
        "491ec752",
        "Community",
        "17.5.33530.505",
        "2022",
        "Release",
        COMMUNITY,
        ["14.35.32215"],
        "14.35.32215",
        bc_dir(COMMUNITY, 17),
        True,
        ["11.8", "12.4", "13.0"],
    )
    assert cuda_subset(d["cuda"]) == [
        kit("13.0", "13.0.88", env_sources("13.0"), x64=True),
        kit("12.4", "12.4.99", env_sources("12.4")),
        kit("11.8", "11.8.89", env_sources("11.8", current=True, on_path=True)),
    ]
    # CUDA_PATH (and the first nvcc on PATH) name v11.8, not the 12.4 a build would want.
    assert [c["short"] for c in d["cuda"] if "CUDA_PATH" in c["sources"]] == ["11.8"]
    assert [c["short"] for c in d["cuda"] if "nvcc on PATH" in c["sources"]] == ["11.8"]


def test_no_vswhere_reads_state_json(cli):
    d = listing(cli, "no-vswhere-state-json")
    assert [summary(v) for v in d["visual_studio"]] == [
        (
            "4",
            "Enterprise",
            "15.0.26117",
            "2017",
            "Release",
            "C:\\VS\\Enterprise",
            ["14.10.25017"],
            "14.10.25017",
            bc_dir("C:\\VS\\Enterprise", 15),
            True,
            [],
        ),
        (
            "2",
            "BuildTools",
            "15.0.26117",
            "2017",
            "Release",
            "C:\\BuildTools",
            [],
            None,
            bc_dir("C:\\BuildTools", 15),
            False,
            [],
        ),
    ]
    enterprise, build_tools = d["visual_studio"]
    assert [v["source"] for v in d["visual_studio"]] == ["state.json", "state.json"]
    assert enterprise["nickname"] == "Enterprise" and enterprise["is_complete"] is False
    assert enterprise["display_name"] == "Visual Studio Enterprise 2017"
    assert any("1 failed package" in p for p in enterprise["problems"])
    assert all(NO_MSVC not in p for p in enterprise["problems"])
    assert len(build_tools["problems"]) == 1 and NO_MSVC in build_tools["problems"][0]
    assert len(d["problems"]) == 1 and "vswhere.exe not found" in d["problems"][0]
    assert "state.json" in d["problems"][0]
    assert d["windows_sdks"] == ["10.0.14393.0"] and d["cuda"] == [] and d["gpus"] == []


def test_failing_vswhere_falls_back_to_state_json(cli):
    d = listing(cli, "vswhere-failing")
    [vs] = d["visual_studio"]
    assert summary(vs) == (
        "5",
        "Enterprise",
        "15.3.26612.0",
        "2017",
        "Preview",
        "C:\\VS\\Preview",
        ["14.11.25503"],
        "14.11.25503",
        bc_dir("C:\\VS\\Preview", 15),
        True,
        [],
    )
    assert vs["source"] == "state.json" and vs["is_prerelease"] is True and vs["nickname"] == "Preview"
    assert vs["problems"] == []
    [problem] = d["problems"]
    assert "Error 0x80004005: Unspecified error" in problem and "state.json" in problem


def test_linux_two_toolkits(cli):
    d = listing(cli, "linux-two-toolkits")
    assert d["platform"] == "linux" and d["visual_studio"] == [] and d["windows_sdks"] == []
    keys = ("version", "short", "path", "nvcc", "sources", "version_source", "bin_dirs", "lib_dirs", "problems")
    assert [{k: c[k] for k in keys} for c in d["cuda"]] == [
        {
            "version": "13.0.88",
            "short": "13.0",
            "path": "/usr/local/cuda-13.0",
            "nvcc": "/usr/local/cuda-13.0/bin/nvcc",
            "sources": ["/usr/local", "/usr/local/cuda", "nvcc on PATH"],
            "version_source": "nvcc --version",
            "bin_dirs": ["/usr/local/cuda-13.0/bin"],
            "lib_dirs": ["/usr/local/cuda-13.0/targets/x86_64-linux/lib"],
            "problems": [],
        },
        {
            "version": "12.4.1",
            "short": "12.4",
            "path": "/usr/local/cuda-12.4",
            "nvcc": "/usr/local/cuda-12.4/bin/nvcc",
            "sources": ["/usr/local"],
            "version_source": "version.json",
            "bin_dirs": ["/usr/local/cuda-12.4/bin"],
            "lib_dirs": ["/usr/local/cuda-12.4/targets/x86_64-linux/lib"],
            "problems": [],
        },
    ]
    assert [(c["name"], c["path"], c["version"], c["major"]) for c in d["host_compilers"]] == [
        ("gcc", "/usr/bin/gcc", "13.3.0", 13),
        ("gcc-12", "/usr/bin/gcc-12", "12.3.0", 12),
        ("gcc-13", "/usr/bin/gcc-13", "13.3.0", 13),
        ("g++", "/usr/bin/g++", "13.3.0", 13),
        ("g++-12", "/usr/bin/g++-12", "12.3.0", 12),
        ("g++-13", "/usr/bin/g++-13", "13.3.0", 13),
    ]
    assert gpus(d) == [
        (0, "NVIDIA TITAN V", "7.0", "nvidia-smi", "570.86.15", 12288),
        (1, "NVIDIA RTX 5880 Ada Generation", "8.9", "nvidia-smi", "570.86.15", 49140),
    ]
    assert d["problems"] == []


ALL = sorted(p.stem for p in HERE.glob("*.toml"))


@pytest.mark.parametrize("name", ALL)
def test_text_listing_works_on_every_machine(cli, name):
    result = cli("--machine", str(HERE / f"{name}.toml"), "list")
    assert result.code == 0 and "CUDA toolkits (" in result.stdout and "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize("name", ALL)
def test_recording_a_recorded_machine_lists_the_same_inventory(cli, name, tmp_path):
    out = tmp_path / "again.toml"
    result = cli("--machine", str(HERE / f"{name}.toml"), "record", "-o", str(out))
    assert result.code == 0, result.stderr
    assert run_list(cli, str(out)) == listing(cli, name)


# ---- the files themselves -------------------------------------------------------------------------


def test_build_machines_reproduces_the_committed_files():
    rendered = bm.render_all()
    assert len(rendered) == len(bm.MACHINES) + 1
    for path, text in rendered.items():
        assert path.exists(), f"{path} is missing: run python3 tests/machines/build_machines.py"
        assert path.read_bytes() == text.encode("utf-8"), f"{path} is stale: run tests/machines/build_machines.py"
    assert bm.EXAMPLE.read_bytes() == (HERE / "community-buildtools-cuda124.toml").read_bytes()


@pytest.mark.parametrize("path", sorted(HERE.glob("*.toml")), ids=lambda p: p.stem)
def test_machine_files_are_self_contained_and_say_where_they_come_from(path):
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    meta = data["meta"]
    assert meta["description"] and meta["sources"] and meta["composed"]

    def no_from(value):
        if isinstance(value, dict):
            assert "from" not in value, f"{path.name} is not self-contained"
            for v in value.values():
                no_from(v)
        elif isinstance(value, list):
            for v in value:
                no_from(v)

    no_from(data)
    for line in meta["sources"]:
        if line.startswith("corpus/"):
            name = line.split(":", 1)[0][len("corpus/") :]
            assert (HERE.parent / "corpus" / name).is_file(), name


def test_corpus_copies_are_byte_exact():
    if not SHARED.is_dir():
        pytest.skip("the shared corpus is not next to this checkout")
    for name in bm.SOURCES:
        original = SHARED / "corpus" / name
        if not original.exists():
            original = SHARED / "research-corpus" / name
        assert (HERE.parent / "corpus" / name).read_bytes() == original.read_bytes(), name


# ---- bad input: each becomes a listed problem, exit 0, never a traceback ---------------------------


def write(tmp_path: Path, m) -> str:
    path = tmp_path / f"{m.name}.toml"
    path.write_text(bm.render(m), encoding="utf-8")
    return str(path)


def run_list(cli, path: str) -> dict:
    result = cli("--machine", path, "list", "--json")
    assert result.code == 0, result.stderr
    return result.json()


def set_stdout(m, program: str, **fields) -> None:
    [cmd] = [c for c in m.commands if c["argv"][0] == program]
    cmd.update(fields)


def test_malformed_vswhere_json_is_a_machine_problem(cli, tmp_path):
    m = bm.community_buildtools_cuda124()
    set_stdout(m, bm.VSWHERE, stdout='[\r\n  {\r\n    "instanceId": \r\n')
    d = run_list(cli, write(tmp_path, m))
    assert d["visual_studio"] == []
    assert any("malformed JSON" in p and "state.json" in p for p in d["problems"])
    assert [c["short"] for c in d["cuda"]] == ["12.4", "11.8"]  # the rest of the machine is still listed


def test_cut_short_vswhere_json_keeps_what_it_can(cli, tmp_path):
    """The real 17.13.6 excerpt, pasted prompt and truncation note included, as vswhere's whole output."""
    m = bm.buildtools_only_vctools()
    set_stdout(m, bm.VSWHERE, stdout=bm.sample("vswhere-json-products-star-vs2022-buildtools-17.13.6-EXCERPT.txt"))
    d = run_list(cli, write(tmp_path, m))
    [vs] = d["visual_studio"]
    assert (vs["instance_id"], vs["edition"], vs["version"], vs["path"]) == (
        "2c33f8c6",
        "BuildTools",
        "17.13.35931.197",
        BUILDTOOLS,
    )
    assert vs["default_toolset"] == "14.43.34808"
    assert any("cut short" in p for p in vs["problems"])


def test_registry_installdir_of_the_wrong_type_is_a_problem_on_that_toolkit(cli, tmp_path):
    m = bm.community_buildtools_cuda124()
    m.reg(f"{bm.CUDA_REG}\\v12.4", "InstallDir", "REG_DWORD", 1)
    d = run_list(cli, write(tmp_path, m))
    by_short = {c["short"]: c for c in d["cuda"]}
    assert by_short["12.4"]["version"] == "12.4.99"
    assert [p for p in by_short["12.4"]["problems"] if "InstallDir is REG_DWORD, expected REG_SZ" in p]
    assert by_short["11.8"]["problems"] == []


def test_nvcc_that_times_out_is_a_problem_and_the_folder_names_the_version(cli, tmp_path):
    m = bm.community_buildtools_cuda124()
    set_stdout(m, f"{CUDA}\\v11.8\\bin\\nvcc.exe", stdout="", returncode=-1, timed_out=True)
    d = run_list(cli, write(tmp_path, m))
    by_short = {c["short"]: c for c in d["cuda"]}
    assert (by_short["11.8"]["version"], by_short["11.8"]["version_source"]) == ("11.8", "folder name")
    assert [p for p in by_short["11.8"]["problems"] if "nvcc --version failed" in p and "did not finish in time" in p]
    assert by_short["12.4"]["problems"] == [] and by_short["12.4"]["version"] == "12.4.99"


def test_nvidia_smi_that_times_out_is_a_gpu_problem(cli, tmp_path):
    m = bm.community_buildtools_cuda124()
    set_stdout(m, bm.SMI_WIN, stdout="", returncode=-1, timed_out=True)
    d = run_list(cli, write(tmp_path, m))
    assert d["gpus"] == []
    assert any("nvidia-smi failed" in p for p in d["problems"])


def test_vswhere_output_with_crlf_line_ends_lists_the_same_instances(cli, tmp_path):
    """A real pipe from vswhere gives CRLF (facts §1.5); the stored samples have LF."""
    m = bm.community_buildtools_cuda124()
    [cmd] = [c for c in m.commands if c["argv"][0] == bm.VSWHERE]
    cmd["stdout"] = bm.crlf(cmd["stdout"])
    d = run_list(cli, write(tmp_path, m))
    assert d == listing(cli, "community-buildtools-cuda124")


EXAMPLE_CLASSIC = HERE.parent.parent / "examples" / "machines" / "community-buildtools-cuda124.toml"


def test_export_of_a_record_without_a_vcvars_capture_says_what_to_do(cli):
    result = cli("--machine", str(EXAMPLE_CLASSIC), "export")
    assert result.code == 2
    assert "holds no vcvars capture" in result.stderr and "--from env.toml" in result.stderr


@pytest.mark.parametrize("command", [["run", "--", "true"], ["shell"]])
def test_run_and_shell_refuse_a_machine_record(cli, command):
    result = cli("--machine", str(EXAMPLE_CLASSIC), *command)
    assert result.code == 2 and "starts programs on this machine" in result.stderr
