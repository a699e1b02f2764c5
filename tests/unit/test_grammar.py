"""A grammar that cannot be misread (issue 33, deliverable 3): envmgr's options mean the same wherever
they stand on the line, pip's own go after `--`, today's form keeps working with a note, a mistyped
option or command gets the suggestion a person would make. Audit N6 is here too."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from envmgr.cli.grammar import suggest
from envmgr.commands import install as install_cmd
from tests.conftest import run_cli

MACHINE = str(Path(__file__).resolve().parents[1] / "machines" / "community-buildtools-cuda124.toml")


@pytest.fixture
def env(tmp_path):
    (tmp_path / "srv").mkdir()
    return {"ENVMGR_CACHE_DIR": str(tmp_path / "cache"), "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
            "ENVMGR_DATA_DIR": str(tmp_path / "data"), "ENVMGR_WHEEL_INDEX": ""}


def dry(env, tmp_path, *words):
    return run_cli("--machine", MACHINE, "install", *words, env=env)


@pytest.mark.parametrize("n6_value", ["--prebuilt-index", "--prebuilt-lib", "--wheel-index=x --prebuilt-lib"])
def test_n6_flow_flags_after_the_package_refuse_an_empty_value(env, tmp_path, n6_value):
    """Audit N6: after the package, `--prebuilt-index ''` read the current folder as an index (exit 0) and
    `--prebuilt-lib ''` was ignored; before it, both were exit 2. Now the same refusal wherever they stand."""
    flag = n6_value.split()[-1]
    extra = n6_value.split()[:-1]
    after = dry(env, tmp_path, "llama-cpp-python", "--dry-run", "--json", *extra, flag, "")
    before = dry(env, tmp_path, *extra, flag, "", "llama-cpp-python", "--dry-run", "--json")
    assert after.code == before.code == 2
    assert after.stdout == ""
    assert f"error: {flag} needs" in after.stderr and after.stderr == before.stderr


def test_n6_a_trailing_flow_flag_without_its_value_is_not_passed_to_pip(env, tmp_path):
    r = dry(env, tmp_path, "llama-cpp-python", "--dry-run", "--prebuilt-index")
    assert r.code == 2 and "'--prebuilt-index' requires an argument" in r.stderr


def test_options_anywhere_mean_the_same(env, tmp_path):
    srv, py = str(tmp_path / "srv"), sys.executable
    first = dry(env, tmp_path, "--python", py, "llama-cpp-python", "--dry-run", "--json", "--prebuilt-index", srv)
    last = dry(env, tmp_path, "llama-cpp-python", "--dry-run", "--json", "--python", py, "--prebuilt-index", srv)
    mixed = dry(env, tmp_path, "--dry-run", "llama-cpp-python", "--prebuilt-index", srv, "--json", "--python", py)
    assert first.code == last.code == mixed.code == 0, last.stderr
    assert first.json() == last.json() == mixed.json()
    assert last.json()["spec"] == "llama-cpp-python"        # --python's value is not read as the SPEC
    assert last.json()["target_python"] == {"path": py, "why": "--python"}
    assert f"envmgr: target Python {py} (--python)" in last.stderr


@pytest.fixture
def seen(monkeypatch):
    """What install hands its routes (the flow, the recipe route): the words, after the grammar."""
    got: dict[str, object] = {}

    def flow(obj, args, *rest, **kw):
        got["flow"] = args
        return 0

    def recipe_route(obj, args, *rest, **kw):
        got["recipe"] = args

        class Done:
            code = 0
        return Done()

    monkeypatch.setattr(install_cmd, "start_flow", flow)
    monkeypatch.setattr(install_cmd, "install_wheel", recipe_route)
    return got


def test_pip_options_go_after_the_double_dash(seen, env):
    r = run_cli("install", "llama-cpp-python", "--python", sys.executable, "--", "--no-index", "--find-links", "w",
                env=env)
    assert r.code == 0, r.stderr
    assert seen["flow"] == ["llama-cpp-python", "--no-index", "--find-links", "w"]
    assert "pip options go after" not in r.stderr
    r = run_cli("install", "--recipe", "llama-cpp-python", "llama-cpp-python==0.3.36", "--python", sys.executable,
                "--", "--no-index", env=env)
    assert r.code == 0, r.stderr
    assert seen["recipe"] == ["--no-index", "llama-cpp-python==0.3.36"]    # the recipe route: SPEC last


def test_a_source_spec_stays_the_spec_with_pip_options_after_the_double_dash(seen, env):
    run_cli("install", "llama-cpp-python", "./x.tar.gz", "--python", sys.executable, "--", "--no-index", env=env)
    assert seen["flow"] == ["llama-cpp-python", "--no-index", "./x.tar.gz"]


def test_todays_form_still_works_with_a_note(seen, env):
    r = run_cli("install", "--recipe", "llama-cpp-python", "--no-index", "--find-links", "./wheels",
                "llama-cpp-python==0.3.36", "--python", sys.executable, env=env)
    assert r.code == 0, r.stderr
    assert seen["recipe"] == ["--no-index", "--find-links", "./wheels", "llama-cpp-python==0.3.36"]
    assert ("envmgr: note: pip options go after `--` (envmgr install SPEC -- --no-index --find-links); "
            "passing --no-index --find-links to pip") in r.stderr


def test_envmgrs_own_option_after_the_package_is_envmgrs(seen, env):
    run_cli("install", "llama-cpp-python", "--no-deps", "--python", sys.executable, env=env)
    assert seen["flow"] == ["llama-cpp-python"]       # not passed to pip: envmgr's --no-deps


@pytest.mark.parametrize(("word", "names", "want"), [
    ("--jsno", ["--vs", "--json", "--cuda"], "--json"),
    ("--json", ["--vs", "--toolset", "--arch", "--cuda", "--python", "--from"], None),   # click said --vs
    ("--cuad", ["--cuda", "--arch"], "--cuda"),
    ("--dry-rn", ["--dry-run", "-n"], "--dry-run"),
    ("lst", ["list", "install", "shell"], "list"),
    ("doctr", ["doctor", "export"], "doctor"),
    ("zzz", ["list", "doctor"], None),
])
def test_suggestions_use_edit_distance(word, names, want):
    assert suggest(word, names) == want


def test_did_you_mean_on_the_command_line(env):
    assert "Did you mean" not in run_cli("shell", "--json", env=env).stderr
    r = run_cli("list", "--jsno", env=env)
    assert r.code == 2 and "No such option '--jsno'. Did you mean '--json'?" in r.stderr
    r = run_cli("lst", env=env)
    assert r.code == 2 and "No such command 'lst'. Did you mean 'list'?" in r.stderr
    r = run_cli("--machin", "x", "list", env=env)
    assert r.code == 2 and "Did you mean '--machine'?" in r.stderr
