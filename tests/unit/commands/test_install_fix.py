"""`envmgr install llama-cpp-python --fix` and F01: fix-msbuild's plan applied on the way to the build.

The machine is the classic recorded one (community-buildtools-cuda124: CUDA 12.4 integrated into VS
Community only, envmgr's choice Build Tools lacks it; cuBLAS installed, so F01 is doctor's only
failure), laid out as a writable Windows-like tree exactly as test_msbuild_apply.py does (its TreeHost:
the record's registry, environment and commands, real files). The build and pip install are replaced
by a fake install step (the build routes are tests/linux/test_install_flow_e2e.py); verify runs for
real on test_install_flow.py's fake llama_cpp, so the report is the flow's own.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from envmgr.commands.install_build import Installed
from envmgr.msbuild.store import Store
from tests.conftest import EMBEDDED_PYTHON, EXAMPLES, run_cli
from tests.unit.commands.test_install_flow import GPU, fake_llama
from tests.unit.msbuild.test_msbuild_apply import BT, EXT, NAMES, TreeHost, snapshot
from tests.unit.msbuild.test_msbuild_apply import cli_tree, tree  # noqa: F401 (fixtures)

MACHINE = str(EXAMPLES / "community-buildtools-cuda124.toml")
WHEEL = "llama_cpp_python-0.3.36-cp312-cp312-win_amd64.whl"

_full_python = pytest.mark.skipif(
    EMBEDDED_PYTHON,
    reason="the embeddable CPython ignores PYTHONPATH; verify's Windows path is tests/winpy/test_verify_windows.py",
)


@pytest.fixture
def builds(monkeypatch):
    """The install step, replaced: it records its calls and reports a wheel cache hit."""
    from envmgr.commands import install_build as wheels

    calls = []

    def fake(obj, pip_args, selection, recipe, options):
        calls.append((recipe.name, list(pip_args)))
        return Installed(0, "cache", WHEEL, f"C:\\cache\\{WHEEL}", 250.0, "d1g35t")

    monkeypatch.setattr(wheels, "install_wheel", fake)
    return calls


def install(tmp_path, *args, site=None, host=None):
    """`envmgr --machine MACHINE install ARGS`, or the same install on `host` given to the CLI."""
    env = {
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "ENVMGR_WHEEL_INDEX": "",
        "ENVMGR_DATA_DIR": str(tmp_path / "data"),
    }
    if site is not None:
        env["PYTHONPATH"] = str(site)
    where = () if host is not None else ("--machine", MACHINE)
    return run_cli(*where, "install", *args, env=env, host=host)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_recorded_machine_fails_f01_only():
    """cuBLAS is in its toolkits (F24 passes), so F01 is what stands between it and a build."""
    from envmgr.doctor.checks import FAIL
    from envmgr.doctor.run import gather, run_checks
    from envmgr.host.recorded import load_machine
    from envmgr.snapshot.selectors import Selectors

    findings = run_checks(gather(load_machine(MACHINE), Selectors()))
    assert [f.id for f in findings if f.status == FAIL] == ["F01"]
    assert next(f for f in findings if f.id == "F24").status == "ok"


@_full_python
def test_fix_applies_fix_msbuilds_plan_then_builds_and_reports_it(cli_tree, builds, tmp_path):  # noqa: F811
    before = snapshot(cli_tree, BT)
    r = install(tmp_path, "--fix", "--json", "llama-cpp-python", site=fake_llama(tmp_path, GPU), host=cli_tree)
    assert r.code == 0, r.stderr
    data = r.json()
    # the four files fix-msbuild would copy, byte-identical to the toolkit's, in one applied transaction
    after = snapshot(cli_tree, BT)
    assert set(after) == set(before) | set(NAMES)
    assert all(after[n] == sha(Path(cli_tree.unix_path(f"{EXT}\\{n}"))) for n in NAMES)
    [fix] = data["fixes"]
    assert (fix["id"], fix["action"], fix["undo"]) == ("F01", "copied", "envmgr fix-msbuild --undo")
    assert [(c["path"], c["action"]) for c in fix["applied"]["changes"]] == [(f"{BT}\\{n}", "create") for n in NAMES]
    manifest = json.loads(Path(fix["applied"]["manifest"]).read_text())
    assert manifest["state"] == "applied" and manifest["command"] == "apply"
    assert Store().last_applied()["id"] == fix["applied"]["run_id"]
    line = next(x for x in data["report"] if x.startswith("fixed F01: "))
    assert "copied 4 file(s) of CUDA 12.4's MSBuild integration into VS 2022 BuildTools" in line
    assert "undo with: envmgr fix-msbuild --undo" in line and "--fix: F01: copied 4 file(s)" in r.stderr
    # then the build, with the recipe the package names, and verify
    assert builds == [("llama-cpp-python", ["llama-cpp-python"])] and data["ok"] is True
    # doctor now passes F01 there, and fix-msbuild's own undo puts the folder back exactly
    assert run_cli("doctor", "--only", "F01", host=cli_tree).code == 0
    undone = run_cli("fix-msbuild", "--undo", "--yes", env={"ENVMGR_DATA_DIR": str(tmp_path / "data")}, host=cli_tree)
    assert undone.code == 0, undone.stderr
    assert snapshot(cli_tree, BT) == before


@_full_python
def test_fix_text_report_names_what_was_copied(cli_tree, builds, tmp_path):  # noqa: F811
    r = install(tmp_path, "--fix", "llama-cpp-python", site=fake_llama(tmp_path, GPU), host=cli_tree)
    assert r.code == 0, r.stderr
    report = r.stdout[r.stdout.index("envmgr install llama-cpp-python:") :].splitlines()
    assert any(x.startswith("  fixed F01: copied 4 file(s) of CUDA 12.4's MSBuild integration") for x in report)
    assert "  doctor: no blocking finding (CUDA 12.4, 1 GPU(s))" in report


def test_without_fix_f01_stops_the_flow_and_nothing_is_written(cli_tree, builds, tmp_path):  # noqa: F811
    before = snapshot(cli_tree, BT)
    r = install(tmp_path, "llama-cpp-python", host=cli_tree)
    assert r.code == 1 and "envmgr doctor found 1 blocking problem(s): F01; nothing was built" in r.stderr
    assert "add --fix to take the safe route for F01" in r.stderr
    assert snapshot(cli_tree, BT) == before and builds == [] and Store().manifests() == []


@_full_python
def test_fix_with_ninja_on_path_copies_nothing(cli_tree, builds, tmp_path, monkeypatch):  # noqa: F811
    ninja = "C:\\tools\\ninja"
    Path(cli_tree.unix_path(ninja)).mkdir(parents=True)
    Path(cli_tree.unix_path(f"{ninja}\\ninja.exe")).write_bytes(b"")
    env = {**cli_tree.record.env}
    env["PATH"] = f"{ninja};{env['PATH']}"
    monkeypatch.setattr(TreeHost, "env", property(lambda self: env))
    before = snapshot(cli_tree, BT)
    data = install(
        tmp_path, "--fix", "--json", "llama-cpp-python", site=fake_llama(tmp_path, GPU), host=cli_tree
    ).json()
    assert [(f["id"], f["action"]) for f in data["fixes"]] == [("F01", "ninja")]
    assert f"the recipe builds with Ninja ({ninja}\\ninja.exe)" in data["fixes"][0]["text"]
    assert snapshot(cli_tree, BT) == before and Store().manifests() == []


@_full_python
def test_fix_where_nothing_can_be_written_takes_the_recipes_no_admin_route(builds, tmp_path):
    """The plain recorded machine has no files to write (as a shell without administrator rights):
    the recipe's pinned Visual Studio generator with cuda=<toolkit> is the route, and it says why."""
    data = install(tmp_path, "--fix", "--json", "llama-cpp-python", site=fake_llama(tmp_path, GPU)).json()
    [fix] = data["fixes"]
    assert (fix["id"], fix["action"]) == ("F01", "recipe-route")
    assert "CMAKE_GENERATOR_TOOLSET cuda=<toolkit> (no admin)" in fix["text"]
    assert "not applied: recorded machines are for planning" in fix["text"]
    assert builds and data["ok"] is True


def test_fix_with_a_recipe_without_a_generator_route_stops_with_the_elevated_command(builds, tmp_path):
    recipes = tmp_path / "config" / "recipes"
    recipes.mkdir(parents=True)
    (recipes / "vs.toml").write_text(
        'schema = 1\nname = "vs-own"\ndescription = "t"\nkind = "cmake"\n'
        'cmake_args = ["-DGGML_CUDA=on"]\ngenerator = "Visual Studio 17 2022"\n'
    )
    r = install(tmp_path, "--fix", "--recipe", "vs-own", "llama-cpp-python", "llama-cpp-python==0.3.36")
    assert r.code == 1 and builds == []
    assert "envmgr doctor found 1 blocking problem(s): F01; nothing was built" in r.stderr
    assert "fix-msbuild's plan was not applied: recorded machines are for planning" in r.stderr
    assert f"copy CUDA 12.4.props -> {BT}" in r.stderr
    assert "run elevated: envmgr fix-msbuild --vs f7268007 --cuda 12.4" in r.stderr
    assert "add --fix" not in r.stderr


def test_decide_is_pure_reading(tree):  # noqa: F811
    """Deciding reads only: the copy waits until no other finding blocks (the flow calls apply later)."""
    from envmgr.commands import install_fix
    from envmgr.doctor.run import gather, run_checks
    from envmgr.recipes.recipe import get_recipe
    from envmgr.snapshot.selectors import Selectors

    before = snapshot(tree, BT)
    facts = gather(tree, Selectors())
    fix = install_fix.decide(facts, run_checks(facts), get_recipe("llama-cpp-python"))
    assert (fix.ids, fix.action) == (("F01",), install_fix.COPY)
    assert [c.name for c in fix.plan.copies] == list(NAMES)
    assert snapshot(tree, BT) == before


def test_fix_copies_nothing_while_another_finding_blocks(cli_tree, builds, tmp_path):  # noqa: F811
    """The same tree without cuBLAS's import library: F24 stops the flow, so F01's copy never starts."""
    Path(
        cli_tree.unix_path("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\lib\\x64\\cublas.lib")
    ).unlink()
    before = snapshot(cli_tree, BT)
    r = install(tmp_path, "--fix", "llama-cpp-python", host=cli_tree)
    assert r.code == 1 and "envmgr doctor found 1 blocking problem(s): F24; nothing was built" in r.stderr
    assert "--fix: F01" not in r.stderr and builds == []
    assert snapshot(cli_tree, BT) == before and Store().manifests() == []


@_full_python
def test_fix_when_the_chosen_instance_has_the_files_pins_it_and_copies_nothing(
    cli_tree,
    builds,
    tmp_path,  # noqa: F811
    monkeypatch,
):
    """This shell's VS170COMNTOOLS makes CMake alone pick Build Tools (F01); the build uses Community
    (--vs community), which has CUDA 12.4's files: the recipe's pinned instance is the whole fix."""
    env = {**cli_tree.record.env, "VS170COMNTOOLS": f"{BT.split('MSBuild')[0]}Common7\\Tools\\"}
    monkeypatch.setattr(TreeHost, "env", property(lambda self: env))
    before = snapshot(cli_tree, BT)
    data = install(
        tmp_path,
        "--fix",
        "--json",
        "--vs",
        "community",
        "llama-cpp-python",
        site=fake_llama(tmp_path, GPU),
        host=cli_tree,
    ).json()
    [fix] = data["fixes"]
    assert (fix["id"], fix["action"]) == ("F01", "recipe-route")
    assert "to VS 2022 Community 17.5.33530.505 (CMAKE_GENERATOR_INSTANCE), which has CUDA 12.4's files" in fix["text"]
    assert snapshot(cli_tree, BT) == before and Store().manifests() == []
