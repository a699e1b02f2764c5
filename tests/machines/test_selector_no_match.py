"""A selector that matches nothing is exit 3 on every command, JSON included (issue 11 item 4).

`envmgr doctor --cuda 99.9` used to print "checking for nothing ... 0 failed" and exit 0. doctor
still diagnoses a choice that exists but does not work together (a toolset nvcc refuses, a VS
without CUDA's MSBuild files): that is a finding, not exit 3.
"""

from __future__ import annotations

import pytest

from tests.conftest import EXAMPLES, run_cli

WINDOWS = str(EXAMPLES / "community-buildtools-cuda124.toml")
NO_MATCH = [("--cuda", "99.9"), ("--cuda", "C:\\nowhere\\CUDA\\v12.4"), ("--vs", "nosuch"), ("--toolset", "14.99")]
COMMANDS = [
    ("doctor",),
    ("doctor", "--json"),
    ("doctor", "--only", "F01"),
    ("export",),
    ("export", "--format", "json"),
    ("install", "--recipe", "llama-cpp-python", "SEL", "llama-cpp-python"),
]


def _with(command, selector) -> list[str]:
    """The selector where the command takes it: before `--` (run) or the package (install)."""
    args = list(command)
    at = args.index("SEL") if "SEL" in args else args.index("--") if "--" in args else len(args)
    args[at : at + (args[at : at + 1] == ["SEL"])] = list(selector)
    return args


@pytest.mark.parametrize("selector", NO_MATCH, ids=lambda s: " ".join(s))
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_recorded_windows_machine(command, selector):
    got = run_cli("--machine", WINDOWS, *_with(command, selector))
    assert got.code == 3, (got.code, got.stdout[-300:], got.stderr)
    assert "Traceback" not in got.stderr and got.stderr.startswith("envmgr: error: no ")
    assert got.stdout == ""  # no half report: the error and the candidates are on stderr


@pytest.mark.parametrize("selector", [("--cuda", "99.9"), ("--vs", "nosuch")], ids=" ".join)
def test_fix_msbuild(selector):
    got = run_cli("--machine", WINDOWS, "fix-msbuild", "--dry-run", "--json", *selector)
    assert got.code == 3 and "Traceback" not in got.stderr


def test_doctor_lists_the_candidates():
    got = run_cli("--machine", WINDOWS, "doctor", "--toolset", "14.99")
    assert got.code == 3
    assert "14.44.35207" in got.stderr and "14.35.32215" in got.stderr and "fix:" in got.stderr


@pytest.mark.parametrize(
    "selector", [("--vs", "community", "--toolset", "14.44"), ("--cuda", "11.8", "--vs", "community")], ids=" ".join
)
def test_doctor_still_diagnoses_a_pair_that_exists(selector):
    # Both exist on the machine; whether they work together is what doctor reports (exit 0/1, never 3).
    if selector[1] == "community" and selector[-1] == "14.44":
        # 14.44 is BuildTools' toolset, not Community's: that is a selector naming nothing in Community.
        assert run_cli("--machine", WINDOWS, "doctor", *selector).code == 3
        return
    got = run_cli("--machine", WINDOWS, "doctor", "--json", *selector)
    assert got.code in (0, 1), got.stderr
    assert got.json()["selection"]["cuda"] == "11.8.89"


def test_doctor_with_an_unknown_arch_is_bad_usage():
    got = run_cli("--machine", WINDOWS, "doctor", "--arch", "sparc")
    assert got.code == 2 and "unknown --arch sparc" in got.stderr


@pytest.mark.posix
@pytest.mark.parametrize(
    "command",
    [
        ("doctor",),
        ("doctor", "--json"),
        ("export", "--format", "json"),
        ("run", "--", "true"),
        ("shell",),
        ("install", "--recipe", "llama-cpp-python", "SEL", "llama-cpp-python"),
    ],
    ids=" ".join,
)
def test_this_machine(command, tmp_path):
    got = run_cli(*_with(command, ("--cuda", "99.9")), env={"ENVMGR_CACHE_DIR": str(tmp_path)})
    assert got.code == 3, (got.code, got.stderr)
    assert "no CUDA toolkit matches --cuda 99.9" in got.stderr and "Traceback" not in got.stderr
