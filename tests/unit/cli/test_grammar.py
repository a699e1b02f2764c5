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

MACHINE = str(Path(__file__).resolve().parents[2] / "machines" / "community-buildtools-cuda124.toml")


@pytest.fixture
def env(tmp_path):
    (tmp_path / "srv").mkdir()
    return {
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "ENVMGR_DATA_DIR": str(tmp_path / "data"),
        "ENVMGR_WHEEL_INDEX": "",
    }


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
    assert last.json()["spec"] == "llama-cpp-python"  # --python's value is not read as the SPEC
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
        return 0

    monkeypatch.setattr(install_cmd, "start_flow", flow)
    monkeypatch.setattr(install_cmd, "recipe_route", recipe_route)
    return got


def test_pip_options_go_after_the_double_dash(seen, env):
    r = run_cli(
        "install", "llama-cpp-python", "--python", sys.executable, "--", "--no-index", "--find-links", "w", env=env
    )
    assert r.code == 0, r.stderr
    assert seen["flow"] == ["llama-cpp-python", "--no-index", "--find-links", "w"]
    assert "pip's options go after" not in r.stderr
    r = run_cli(
        "install",
        "--recipe",
        "llama-cpp-python",
        "llama-cpp-python==0.3.36",
        "--python",
        sys.executable,
        "--",
        "--no-index",
        env=env,
    )
    assert r.code == 0, r.stderr
    assert seen["recipe"] == ["--no-index", "llama-cpp-python==0.3.36"]  # the recipe route: SPEC last


def test_a_source_spec_stays_the_spec_with_pip_options_after_the_double_dash(seen, env):
    run_cli("install", "llama-cpp-python", "./x.tar.gz", "--python", sys.executable, "--", "--no-index", env=env)
    assert seen["flow"] == ["llama-cpp-python", "--no-index", "./x.tar.gz"]


def test_todays_form_still_works_with_a_note(seen, env):
    r = run_cli(
        "install",
        "--recipe",
        "llama-cpp-python",
        "--no-index",
        "--find-links",
        "./wheels",
        "llama-cpp-python==0.3.36",
        "--python",
        sys.executable,
        env=env,
    )
    assert r.code == 0, r.stderr
    assert seen["recipe"] == ["--no-index", "--find-links", "./wheels", "llama-cpp-python==0.3.36"]
    assert (
        "envmgr: note: pip's options go after `--`: envmgr install ... llama-cpp-python==0.3.36 -- --no-index "
        "--find-links ./wheels (passing --no-index --find-links ./wheels to pip; this form goes away in a later "
        "release)"
    ) in r.stderr
    assert r.stderr.count("note:") == 1


def test_envmgrs_own_option_after_the_package_is_envmgrs(seen, env):
    run_cli("install", "llama-cpp-python", "--no-deps", "--python", sys.executable, env=env)
    assert seen["flow"] == ["llama-cpp-python"]  # not passed to pip: envmgr's --no-deps


@pytest.mark.parametrize(
    ("word", "names", "want"),
    [
        ("--jsno", ["--vs", "--json", "--cuda"], "--json"),
        ("--json", ["--vs", "--toolset", "--arch", "--cuda", "--python", "--from"], None),  # click said --vs
        ("--cuad", ["--cuda", "--arch"], "--cuda"),
        ("--dry-rn", ["--dry-run", "-n"], "--dry-run"),
        ("lst", ["list", "install", "shell"], "list"),
        ("doctr", ["doctor", "export"], "doctor"),
        ("zzz", ["list", "doctor"], None),
    ],
)
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


LINUX = str(Path(__file__).resolve().parents[2] / "machines" / "linux-two-toolkits.toml")


def test_cuda_arch_and_its_old_spelling(env):
    new = run_cli(
        "--machine", LINUX, "export", "--recipe", "llama-cpp-python", "--cuda-arch", "86", "--format", "json", env=env
    )
    old = run_cli(
        "--machine", LINUX, "export", "--recipe", "llama-cpp-python", "--arch-list", "86", "--format", "json", env=env
    )
    assert new.code == old.code == 0, old.stderr
    assert new.stdout == old.stdout and "CMAKE_CUDA_ARCHITECTURES=86" in new.stdout
    assert "CUDA architectures 86 from --cuda-arch" in new.stderr
    assert "envmgr: note: --arch-list is now --cuda-arch" in old.stderr
    assert "note:" not in new.stderr


def test_pip_cuda_python_and_its_old_spelling_where_it_does_not_clash(env):
    new = run_cli("--machine", LINUX, "export", "--pip-cuda-python", "/nowhere/python", env=env)
    old = run_cli("--machine", LINUX, "export", "--python", "/nowhere/python", env=env)
    assert new.code == old.code == 2
    assert "--pip-cuda-python /nowhere/python: not a Python envmgr can run" in new.stderr
    assert old.stderr.startswith("envmgr: note: --python is now --pip-cuda-python\n")


def test_old_spellings_are_hidden_and_never_suggested(env):
    export_help = run_cli("export", "--help", env=env).stdout
    assert "--cuda-arch" in export_help and "--pip-cuda-python" in export_help
    assert "--arch-list" not in export_help and "--python" not in export_help.replace("--pip-cuda-python", "")
    assert "--python EXE" in run_cli("install", "--help", env=env).stdout  # the target, install's own
    assert "Did you mean '--arch-list'" not in run_cli("export", "--arch-lst", "86", env=env).stderr


def test_run_leaves_its_commands_words_alone():
    from envmgr.cli.grammar import renamed
    from envmgr.commands.run import command as run_command

    words = ["--arch-list", "86", "python", "--python", "x", "--arch-list"]
    out, notes = renamed(run_command, "run", words)
    assert out == ["--cuda-arch", "86", "python", "--python", "x", "--arch-list"]
    assert notes == ["envmgr: note: --arch-list is now --cuda-arch"]
    out, _ = renamed(run_command, "run", ["--python=/p", "--", "--python", "y"])
    assert out == ["--pip-cuda-python=/p", "--", "--python", "y"]


@pytest.mark.parametrize(
    ("words", "flag", "why"),
    [
        (["export", "--from", "{snap}", "--cuda", "12.4"], "--cuda", "with --from"),
        (["export", "--from", "{snap}", "--vs", "2022"], "--vs", "with --from"),
        (["export", "--from", "{snap}", "--arch", "x86"], "--arch", "with --from"),
        (["export", "--from", "{snap}", "--refresh"], "--refresh", "with --from"),
        (["run", "--from", "{snap}", "--toolset", "14.4", "--", "true"], "--toolset", "with --from"),
        (["install", "--prebuilt-lib", "{tmp}", "--rebuild", "llama-cpp-python"], "--rebuild", "with --prebuilt-lib"),
        (
            ["install", "--prebuilt-lib", "{tmp}", "--recipe", "x", "llama-cpp-python"],
            "--recipe",
            "with --prebuilt-lib",
        ),
        (
            ["install", "--recipe", "llama-cpp-python", "x.tar.gz", "--dry-run"],
            "--dry-run",
            "to `envmgr install --recipe",
        ),
        (
            ["install", "--recipe", "llama-cpp-python", "x.tar.gz", "--no-prebuilt"],
            "--no-prebuilt",
            "to `envmgr install --recipe",
        ),
        (["install", "--undo-dll-fix", "m.json", "--no-deps"], "--no-deps", "with --undo-dll-fix"),
        (["doctor", "--log", "{snap}", "--cuda", "12.4"], "--cuda", "with --log"),
        (["doctor", "--dll", "{snap}", "--vs", "2022"], "--vs", "with --dll"),
        (["doctor", "--log", "{snap}", "--python", "{snap}"], "--python", "with --log"),
        (["verify", "numpy", "--tokens", "3"], "--tokens", "to numpy"),
        (["fix-msbuild", "--undo", "--cuda", "12.4"], "--cuda", "with --undo"),
        (["fix-msbuild", "--export-route", "sh", "--check"], "--check", "with --export-route"),
    ],
)
def test_a_selector_that_cannot_apply_is_exit_2_with_one_line(env, tmp_path, words, flag, why):
    snap = tmp_path / "env.toml"
    snap.write_text("[envmgr]\nschema = 1\n")
    argv = [w.format(snap=snap, tmp=tmp_path) for w in words]
    target = ["--python", sys.executable] if words[0] in ("install", "verify") and "--undo-dll-fix" not in words else []
    r = run_cli(*argv, *target, env=env)
    assert r.code == 2 and r.stdout == ""
    assert f"envmgr: error: {flag} does not apply {why}" in r.stderr
    assert r.stderr.count("error:") == 1


def test_from_alone_and_default_arch_are_not_refused(env, tmp_path):
    r = run_cli("export", "--from", str(tmp_path / "none.toml"), env=env)
    assert "does not apply" not in r.stderr


@pytest.mark.parametrize(
    ("words", "same_as"),
    [
        (["deactivate", "--format", "pwsh"], ["deactivate", "--format", "ps1"]),
        (["deactivate", "--format", "bash"], ["deactivate", "--format", "sh"]),
        (["init", "ps1"], ["init", "powershell"]),
    ],
)
def test_a_shell_is_named_by_its_program_everywhere(env, words, same_as):
    active = {**env, "ENVMGR_ACTIVE": "x", "ENVMGR_RESTORE": ""}
    a, b = run_cli(*words, env=active), run_cli(*same_as, env=active)
    assert a.code == b.code == 0 and (a.stdout, a.stderr) == (b.stdout, b.stderr)


def test_export_format_takes_a_shells_name(env):
    a = run_cli("--machine", LINUX, "export", "--format", "bash", env=env)
    b = run_cli("--machine", LINUX, "export", "--format", "sh", env=env)
    assert a.code == b.code == 0 and a.stdout == b.stdout and "export " in a.stdout


def test_quiet_verbose_and_color(env, tmp_path):
    (tmp_path / "srv").mkdir(exist_ok=True)
    base = [
        "--machine",
        MACHINE,
        "install",
        "llama-cpp-python",
        "--dry-run",
        "--json",
        "--prebuilt-index",
        str(tmp_path / "srv"),
    ]
    plain = run_cli(*base, env={**env, "VIRTUAL_ENV": str(tmp_path / "gone")})
    quiet = run_cli("-q", *base, env={**env, "VIRTUAL_ENV": str(tmp_path / "gone")})
    loud = run_cli("-v", *base, env={**env, "VIRTUAL_ENV": str(tmp_path / "gone")})
    assert plain.code == quiet.code == loud.code == 0
    assert plain.json() == quiet.json() == loud.json()
    assert "envmgr: target Python" in plain.stderr and quiet.stderr == ""
    assert f"passed over: VIRTUAL_ENV={tmp_path / 'gone'}: no " in loud.stderr
    assert "passed over" not in plain.stderr
    assert run_cli("-q", "-v", "list", env=env).code == 2
    bad = ["--machine", str(tmp_path / "none.toml"), "list"]
    assert "\x1b[" in run_cli("--color", "always", *bad, env=env).stderr  # NO_COLOR=1 in run_cli
    assert "\x1b[" not in run_cli("--color", "never", *bad, env={**env, "FORCE_COLOR": "1"}).stderr
    assert "\x1b[" in run_cli(*bad, env={**env, "NO_COLOR": "", "FORCE_COLOR": "1"}).stderr
    assert "\x1b[" not in run_cli(*bad, env={**env, "NO_COLOR": "1", "FORCE_COLOR": "1"}).stderr


def test_doctor_python_is_for_this_machine_only(env, tmp_path):
    r = run_cli("--machine", MACHINE, "doctor", "--python", sys.executable, env=env)
    assert r.code == 2 and "doctor --python inspects a Python on this machine" in r.stderr


def test_todays_form_in_the_flow_names_the_users_words(seen, env):
    r = run_cli(
        "install",
        "llama-cpp-python",
        "--no-index",
        "--find-links",
        "w",
        "./x.tar.gz",
        "--python",
        sys.executable,
        env=env,
    )
    assert seen["flow"] == ["llama-cpp-python", "--no-index", "--find-links", "w", "./x.tar.gz"]
    assert "envmgr install ... ./x.tar.gz -- --no-index --find-links w (passing" in r.stderr


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("--dry-rn", "--dry-run"),
        ("--jsn", "--json"),
        ("--prebuilt-indx=x", "--prebuilt-index"),
        ("--no-prebuit", "--no-prebuilt"),
    ],
)
def test_a_mistyped_envmgr_option_after_the_package_is_not_passed_to_pip(seen, env, typo, meant):
    r = run_cli("install", "llama-cpp-python", typo, "--python", sys.executable, env=env)
    assert r.code == 2 and "flow" not in seen
    assert f"No such option '{typo.partition('=')[0]}'. Did you mean '{meant}'?" in r.stderr


def test_pips_own_options_near_envmgrs_still_reach_pip(seen, env):
    """--upgrade is near --pre, --no-index near --no-deps, --wheel-dir near --wheel-index: pip's, all of them."""
    r = run_cli(
        "install",
        "llama-cpp-python",
        "--upgrade",
        "--no-index",
        "--wheel-dir",
        "w",
        "--python",
        sys.executable,
        env=env,
    )
    assert r.code == 0, r.stderr
    assert seen["flow"] == ["llama-cpp-python", "--upgrade", "--no-index", "--wheel-dir", "w"]
