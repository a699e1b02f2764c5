"""The target Python's wheel tags (wheels/pytags.py, commands/install_prebuilt.target_tags): its own
sys_tags() when it can give them, else derived from the facts its standard library reports.

WIN313 is what Windows CPython 3.13.0 (python.org's embeddable build, under Wine 8) printed for
pytags.FACTS_SCRIPT on 2026-11-25, followed by what Wine wrote to stdout when that Python's own
packaging.tags.sys_tags() died (platform's WMI query calls propsys.VariantToString, unimplemented in Wine 8).
The Windows rows end to end are tests/winpy/test_target_tags_windows.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence

from packaging import tags

from envmgr.commands.install_prebuilt import target_tags
from envmgr.host.base import Completed
from envmgr.host.envview import with_env
from envmgr.host.live import LiveHost
from envmgr.wheels import pytags

WIN313 = (
    '{"platform": "win-amd64", "impl": "cpython", "version": [3, 13], "soabi": "cp313-win_amd64", '
    '"nogil": false, "debug": false, "libc": ""}\r\nUnhandled exception: unimplemented function '
    "propsys.dll.VariantToString called in 64-bit code (0x0000007b013d7e).\nRegister dump:\n"
)


def facts_of(python: str) -> dict:
    done = subprocess.run([python, "-c", pytags.FACTS_SCRIPT], capture_output=True, text=True, timeout=60)
    return json.loads(done.stdout.splitlines()[0])


def test_derived_tags_are_this_interpreters_own_sys_tags():
    """The derivation, checked against packaging's own answer for the Python running the test."""
    assert set(pytags.derived(facts_of(sys.executable))) == {str(t) for t in tags.sys_tags()}


def test_a_windows_313_is_judged_as_313_whatever_runs_envmgr():
    found, words = pytags.accepted(json.loads(WIN313.splitlines()[0]), None, "its own packaging.tags did not answer")
    assert found[0] == "cp313-cp313-win_amd64" and words.startswith("cp313 on win_amd64 (tags derived")
    assert {"cp313-abi3-win_amd64", "cp32-abi3-win_amd64", "py3-none-win_amd64", "py3-none-any"} <= set(found)
    assert not any(t.startswith(("cp311-cp311", "cp312-cp312")) for t in found)  # abi3 of 3.2+ fits, those do not
    assert not any("linux" in t or "macosx" in t for t in found)


def test_free_threaded_and_linux_glibc_facts():
    facts = {"platform": "linux-x86_64", "impl": "cpython", "version": [3, 13], "nogil": True, "libc": "glibc 2.28"}
    found = set(pytags.derived(facts))
    assert "cp313-cp313t-manylinux_2_28_x86_64" in found and "cp313-cp313t-manylinux2014_x86_64" in found
    assert "cp313-cp313-manylinux_2_28_x86_64" not in found  # a GIL build's ABI does not fit
    assert not any("manylinux_2_29" in t for t in found)  # newer than its glibc


class _Answers:
    """The Host seam answering the target Python's child run as the recorded 3.13 did."""

    platform = "windows"
    env: Mapping[str, str] = {}

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        encoding: str | None = "utf-8",
    ) -> Completed:
        assert argv[1:2] == ["-c"] and timeout <= 60
        return Completed(tuple(argv), -2147483392 & 0xFFFFFFFF, WIN313)


def test_target_tags_survive_a_target_that_dies_after_its_facts():
    found, words = target_tags(with_env(_Answers(), {}), "C:\\Py313\\python.exe")  # type: ignore[arg-type]
    assert found[0] == "cp313-cp313-win_amd64"
    assert words == (
        "cp313 on win_amd64 (tags derived from its version and platform: its own packaging.tags did "
        "not answer: exit code 2147483904)"
    )


def test_target_tags_of_a_live_python_are_its_own():
    found, words = target_tags(LiveHost(), sys.executable)
    assert set(found) == {str(t) for t in tags.sys_tags()} and "derived" not in words
