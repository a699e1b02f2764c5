"""envmgr/files/schema.py: the shape of every file envmgr reads, one InputFileError line in TOML's words.
The real files pass (every recorded machine, every shipped recipe, a snapshot `export` wrote); each kind of
mistake, made in a copy of one, is named with its field."""

from __future__ import annotations

import copy
import sys

import pytest

from envmgr.errors import InputFileError
from envmgr.files.schema import (
    MACHINE,
    RECIPE,
    SNAPSHOT,
    Hex,
    Int,
    List,
    Str,
    check,
    check_env,
    check_version,
    describe,
)
from envmgr.host import dirs
from tests.conftest import MACHINES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RECIPES = sorted(dirs.shipped("templates", "recipes").glob("*.toml"))


def _machine(name: str = "linux-two-toolkits.toml") -> dict:
    return tomllib.loads((MACHINES / name).read_text(encoding="utf-8"))


def _refused(data, spec, message: str) -> None:
    with pytest.raises(InputFileError) as caught:
        check(data, spec, "m.toml", "machine record", "fix it")
    assert caught.value.message == message and caught.value.remedy == "fix it"


@pytest.mark.parametrize("path", sorted(MACHINES.glob("*.toml")), ids=lambda p: p.name)
def test_every_recorded_machine_has_the_machine_shape(path):
    check(tomllib.loads(path.read_text(encoding="utf-8")), MACHINE, path.name, "machine record", "")


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.name)
def test_every_shipped_recipe_has_the_recipe_shape(path):
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    check_version(data, (1,), path.name, "recipe", "")
    check(data, RECIPE, path.name, "recipe", "")


def test_an_exported_snapshot_has_the_snapshot_shape(cli):
    made = cli("--machine", str(MACHINES / "linux-two-toolkits.toml"), "export", "--format", "toml")
    data = tomllib.loads(made.stdout)
    check(data, SNAPSHOT, "env.toml", "snapshot", "")
    check_env(data["env"], [], "env", "linux", "env.toml", "snapshot", "")


def test_each_mistake_names_its_field():
    data = _machine()
    wrong = copy.deepcopy(data)
    wrong["commands"][0]["returncode"] = "0"
    _refused(wrong, MACHINE, "m.toml: 'commands[0].returncode' must be an integer, not a string (\"0\")")
    wrong = copy.deepcopy(data)
    wrong["color"] = 1
    assert (
        "allowed: commands, dirs, env, files"
        in pytest.raises(InputFileError, check, wrong, MACHINE, "m.toml", "machine record", "").value.message
    )
    wrong = copy.deepcopy(data)
    del wrong["schema"]
    _refused(wrong, MACHINE, "m.toml: 'schema' is missing; it must be an integer")
    wrong = copy.deepcopy(data)
    wrong["files"]["/usr/local/cuda-13.0/bin/nvcc"] = {"hex": "zz"}
    _refused(
        wrong,
        MACHINE,
        'm.toml: \'files."/usr/local/cuda-13.0/bin/nvcc".hex\' must be a string of hex digits, not a string ("zz")',
    )
    _refused({}, MACHINE, "m.toml: the machine record is empty")


def test_versions_are_checked_before_the_shape():
    check_version({"schema": 1}, (1,), "m.toml", "machine record", "")
    for data, said in (
        ({"schema": 2}, "m.toml: machine record schema 2 is not one this envmgr reads (it reads 1)"),
        ({"schema": True}, "m.toml: machine record schema a boolean (true) is not one this envmgr reads (it reads 1)"),
        ({"platform": "linux"}, "m.toml: the machine record has no 'schema' key"),
    ):
        with pytest.raises(InputFileError) as caught:
            check_version(data, (1,), "m.toml", "machine record", "")
        assert caught.value.message == said


def test_environment_entries_no_environment_can_hold():
    def refused(env, names=(), platform="linux"):
        with pytest.raises(InputFileError) as caught:
            check_env(env, list(names), "env", platform, "s.toml", "snapshot", "")
        return caught.value.message

    assert refused({"PATH": {"prepend": ["/a:/b"]}}) == (
        "s.toml: 'env.PATH.prepend[0]': \"/a:/b\" holds ':', the path-list separator, so it would be split into "
        "two entries: give each one as its own list item"
    )
    assert "it has both set and prepend" in refused({"X": {"set": "1", "prepend": ["/a"]}})
    assert refused({"A=B": "1"}) == "s.toml: 'env' holds \"A=B\": a variable name cannot hold U+003D (EQUALS SIGN)"
    assert refused({}, names=["\x01"]).endswith(
        'holds "\\u0001": a variable name cannot hold U+0001 (a control character)'
    )
    assert "U+0000 (NUL)" in refused({"X": "a\0b"})
    check_env({"Path": {"prepend": ["C:\\a:b"]}}, [], "env", "windows", "s.toml", "snapshot", "")  # ':' is fine there


def test_values_described_in_tomls_words():
    assert [describe(v) for v in (True, 5, 1.5, "", "yes", "x" * 50, [], [1, 2], {})] == [
        "a boolean (true)",
        "an integer (5)",
        "a number (1.5)",
        "an empty string",
        'a string ("yes")',
        f'a string ("{"x" * 37}...")',
        "an empty list",
        "a list of 2 item(s)",
        "a table",
    ]
    assert List(Int()).expected == "a list of integers"
    assert List(Str(), non_empty=True).expected == "a non-empty list of strings"
    assert Hex().accepts("00ff") and not Hex().accepts("0g") and not Int().accepts(True)
