"""`envmgr doctor` against recorded machines: each check has a machine where it fires and one where it passes."""

from __future__ import annotations

import shutil
import sys

import pytest

from tests.conftest import EXAMPLES, MACHINES

DOCTOR = MACHINES / "doctor"
CLASSIC = str(EXAMPLES / "community-buildtools-cuda124.toml")


def doctor(cli, machine, *args):
    result = cli("--machine", str(machine), "doctor", "--json", *args)
    assert result.code in (0, 1), result.stderr
    data = result.json()
    assert data["exit_code"] == result.code
    return {c["id"]: c for c in data["checks"]}, data


def test_doctor_machine_files_match_their_builder():
    sys.path.insert(0, str(DOCTOR))
    try:
        import build_doctor_machines as b
    finally:
        sys.path.remove(str(DOCTOR))
    for path, text in b.render_all().items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name}: run build_doctor_machines.py"


def test_classic_fails_f01_with_buildtools_and_fix_msbuild(cli):
    result = cli("--machine", CLASSIC, "doctor")
    assert result.code == 1
    line = next(l for l in result.stdout.splitlines() if " F01 " in l)
    assert line.startswith("FAIL") and "BuildTools 17.14" in line
    assert "envmgr fix-msbuild --vs" in result.stdout and "--cuda 12.4" in result.stdout
    assert "no CUDA *.props" in result.stdout and "VS170COMNTOOLS" in result.stdout


def test_classic_f01_passes_on_an_edited_copy(cli, tmp_path):
    """The example machine with BuildTools given the CUDA 12.4 files (edited copy of the file)."""
    import tomlkit

    copy = tmp_path / "classic.toml"
    shutil.copy(CLASSIC, copy)
    doc = tomlkit.parse(copy.read_text(encoding="utf-8"))
    bc = "C:\\Program Files (x86)\\Microsoft Visual Studio\\2022\\BuildTools\\MSBuild\\Microsoft\\VC\\v170\\BuildCustomizations"
    for name in ("CUDA 12.4.props", "CUDA 12.4.targets", "CUDA 12.4.xml", "Nvda.Build.CudaTasks.v12.4.dll"):
        doc["files"][f"{bc}\\{name}"] = ""
    copy.write_text(tomlkit.dumps(doc), encoding="utf-8")
    checks, data = doctor(cli, copy, "--only", "F01")
    assert checks["F01"]["status"] == "ok" and data["exit_code"] == 0


def test_cmake_string_comparison_is_explained(cli):
    checks, _ = doctor(cli, CLASSIC, "--only", "F01")
    assert any("'17.5.33530.505' > '17.14.37027.9'" in e for e in checks["F01"]["evidence"])


def test_vs170comntools_pins_cmake_instance(cli, tmp_path):
    import tomlkit

    copy = tmp_path / "m.toml"
    doc = tomlkit.parse((DOCTOR / "classic-fixed.toml").read_text(encoding="utf-8"))
    doc["env"]["VS170COMNTOOLS"] = (
        "C:\\Program Files (x86)\\Microsoft Visual Studio\\2022\\BuildTools\\Common7\\Tools\\"
    )
    copy.write_text(tomlkit.dumps(doc), encoding="utf-8")
    checks, _ = doctor(cli, copy, "--only", "F01")
    assert "VS170COMNTOOLS points at" in checks["F01"]["evidence"][1]


def test_ninja_generator_passes_f01(cli, tmp_path):
    import tomlkit

    copy = tmp_path / "m.toml"
    doc = tomlkit.parse(open(CLASSIC, encoding="utf-8").read())
    doc["env"]["CMAKE_GENERATOR"] = "Ninja"
    copy.write_text(tomlkit.dumps(doc), encoding="utf-8")
    checks, _ = doctor(cli, copy, "--only", "F01,F02")
    assert checks["F01"]["status"] == "ok" and checks["F02"]["status"] == "ok"


# (check id, machine, extra args, status where it fires) and (machine, args) where it passes.
FIRES = [
    ("F02", MACHINES / "cuda-three-wrong-cuda-path.toml", ("--cuda", "12.4"), "warn"),
    ("F03", MACHINES / "buildtools-only.toml", (), "fail"),
    ("F03", DOCTOR / "classic-bad-env.toml", (), "fail"),  # 32-bit Python
    ("F04", CLASSIC, ("--vs", "buildtools", "--cuda", "11.8"), "fail"),
    ("F05", CLASSIC, ("--vs", "buildtools", "--cuda", "11.8"), "fail"),
    ("F06", DOCTOR / "classic-bad-env.toml", (), "fail"),
    ("F07", DOCTOR / "classic-bad-env.toml", (), "fail"),
    ("F08", MACHINES / "cuda-three-wrong-cuda-path.toml", (), "fail"),
    ("F09", DOCTOR / "classic-bad-env.toml", (), "fail"),
    ("F10", DOCTOR / "classic-bad-env.toml", (), "fail"),
    ("F11", DOCTOR / "classic-bad-env.toml", (), "warn"),
    ("F12", MACHINES / "buildtools-only-vctools.toml", (), "warn"),
    ("F13", DOCTOR / "classic-rtx5090-old-driver.toml", (), "fail"),
    ("F13", MACHINES / "linux-two-toolkits.toml", (), "fail"),
    ("F16", DOCTOR / "classic-bad-env.toml", (), "fail"),
    ("F17", DOCTOR / "classic-rtx5090-old-driver.toml", (), "fail"),
    ("F17", MACHINES / "linux-two-toolkits.toml", (), "fail"),
    ("F18", DOCTOR / "classic-llama-cpu.toml", (), "fail"),
    ("F19", DOCTOR / "classic-bad-env.toml", (), "warn"),
    ("F21", DOCTOR / "linux-gcc15-no-driver.toml", ("--cuda", "12.4"), "fail"),
    ("F22", DOCTOR / "linux-gcc15-no-driver.toml", (), "warn"),
    ("F23", DOCTOR / "linux-gcc15-no-driver.toml", (), "warn"),
]
PASSES = [
    ("F01", DOCTOR / "classic-fixed.toml", ()),
    ("F02", CLASSIC, ()),
    ("F03", DOCTOR / "classic-fixed.toml", ()),
    ("F04", CLASSIC, ()),
    ("F05", CLASSIC, ()),
    ("F06", CLASSIC, ()),
    ("F07", CLASSIC, ()),
    ("F08", CLASSIC, ()),
    ("F10", CLASSIC, ()),
    ("F11", CLASSIC, ()),
    ("F12", CLASSIC, ()),
    ("F13", CLASSIC, ()),
    ("F13", MACHINES / "linux-two-toolkits.toml", ("--cuda", "12.4")),
    ("F16", CLASSIC, ()),
    ("F17", CLASSIC, ()),
    ("F17", MACHINES / "linux-two-toolkits.toml", ("--cuda", "12.4")),
    ("F19", DOCTOR / "classic-fixed.toml", ()),
    ("F21", DOCTOR / "linux-gcc15-no-driver.toml", ()),
    ("F22", MACHINES / "linux-two-toolkits.toml", ()),
    ("F23", DOCTOR / "linux-with-driver.toml", ()),
]


@pytest.mark.parametrize(
    "cid,machine,args,status", FIRES, ids=[f"{c}-{m.name if hasattr(m, 'name') else 'classic'}" for c, m, *_ in FIRES]
)
def test_check_fires(cli, cid, machine, args, status):
    checks, data = doctor(cli, machine, *args)
    got = checks[cid]
    assert got["status"] == status, got
    assert got["evidence"] and got["fix"], got
    if status == "fail":
        assert data["exit_code"] == 1


@pytest.mark.parametrize("cid,machine,args", PASSES, ids=[f"{c}-{i}" for i, (c, *_) in enumerate(PASSES)])
def test_check_passes(cli, cid, machine, args):
    checks, _ = doctor(cli, machine, *args)
    assert checks[cid]["status"] == "ok", checks[cid]


def test_f09_passes_with_ggml_cuda(cli, tmp_path):
    import tomlkit

    copy = tmp_path / "m.toml"
    doc = tomlkit.parse(open(CLASSIC, encoding="utf-8").read())
    doc["env"]["CMAKE_ARGS"] = "-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=89"
    copy.write_text(tomlkit.dumps(doc), encoding="utf-8")
    checks, _ = doctor(cli, copy, "--only", "F09,F10,F12,F13,F20")
    assert {c["status"] for c in checks.values()} == {"ok"}, checks


def test_only_unknown_ids_are_listed(cli):
    result = cli("--machine", CLASSIC, "doctor", "--only", "F01,F99,X")
    assert result.code == 2
    assert "F99" in result.stderr and "F23" in result.stderr and "Traceback" not in result.stderr


def test_only_runs_just_those(cli):
    checks, _ = doctor(cli, CLASSIC, "--only", "f04, F15")
    assert set(checks) == {"F04", "F15"}


def test_linux_only_check_skipped_on_windows(cli):
    checks, _ = doctor(cli, CLASSIC, "--only", "F21")
    assert checks["F21"]["status"] == "skipped" and "linux" in checks["F21"]["summary"]


def test_json_shape(cli):
    _, data = doctor(cli, CLASSIC)
    assert data["schema"] == 1 and data["platform"] == "windows"
    assert set(data["counts"]) == {"ok", "warn", "fail", "skipped"}
    assert data["selection"]["cuda"] == "12.4.99"
    for c in data["checks"]:
        assert set(c) == {"id", "title", "status", "summary", "evidence", "fix", "fix_command"}
        assert c["status"] in ("ok", "warn", "fail", "skipped")
    assert [c["id"] for c in data["checks"]] == sorted(c["id"] for c in data["checks"])


def test_log_unreadable_is_one_line(cli, tmp_path):
    result = cli("doctor", "--log", str(tmp_path / "missing.log"))
    assert result.code == 2 and "Traceback" not in result.stderr
    assert len([l for l in result.stderr.splitlines() if l.strip()]) <= 3


def test_log_finds_f01(cli, tmp_path):
    log = tmp_path / "build.log"
    log.write_text("CMake Error at CMakeDetermineCompilerId.cmake:730 (message):\n  No CUDA toolset found.\n")
    result = cli("doctor", "--log", str(log), "--json")
    assert result.code == 1 and result.json()["matches"][0]["id"] == "F01"


def test_every_catalog_failure_is_found_by_a_check_that_fires_or_in_a_real_log(cli, tmp_path):
    """Each catalog id is diagnosed by something that runs: a check that fails or warns on a recorded
    machine (every machine file, the FIRES scenarios, and one with a 7-architecture CMAKE_ARGS for F20),
    or `doctor --log` on a real log of the corpus. A check that only explains why it cannot run
    (F14: always skipped, it needs a run of the package) counts for nothing here."""
    import tomlkit

    from envmgr.catalog import CATALOG
    from envmgr.buildlog.scan import scan_path
    from tests.conftest import CORPUS

    f20 = tmp_path / "f20.toml"
    doc = tomlkit.parse((DOCTOR / "classic-fixed.toml").read_text(encoding="utf-8"))
    doc["env"]["CMAKE_ARGS"] = "-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=50;61;70;75;80;86;89"
    f20.write_text(tomlkit.dumps(doc), encoding="utf-8")
    runs = {(m, ()) for m in [*MACHINES.glob("*.toml"), *DOCTOR.glob("*.toml"), CLASSIC, f20]}
    runs |= {(machine, args) for _, machine, args, _ in FIRES}
    fired = set()
    for machine, args in runs:
        checks, _ = doctor(cli, machine, *args)
        fired |= {cid for cid, c in checks.items() if c["status"] in ("fail", "warn")}
    logged = {m.id for p in CORPUS.iterdir() if p.suffix in (".txt", ".log") for m in scan_path(p).matches}
    # an id with no log among tests/corpus's own (F25, added with the diagnosis corpus): its TRAIN logs
    # (tests/corpus/logs/INDEX.tsv; held-out ones are read by bench/diagnosis.py only)
    for cid in set(CATALOG) - fired - logged:
        rows = [r.split("\t") for r in (CORPUS / "logs" / "INDEX.tsv").read_text(encoding="utf-8").splitlines()[1:]]
        train = [CORPUS / r[0] for r in rows if cid in r[1].split() and r[4] == "train"]
        logged |= {m.id for p in train if p.is_file() for m in scan_path(p).matches if m.id == cid}
    assert set(CATALOG) - fired - logged == set()
    assert "F14" in logged and "F20" in fired
