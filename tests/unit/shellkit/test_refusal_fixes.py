"""A format's refusal names, as its fix, only formats that hold the same environment (audit M2: sh's fix
said "fish or ps1" for a name with '=' and a value with NUL, which both refuse too). The claim is
checked the way a user would act on it: the suggested format renders the environment. Pure: runs in
the Windows-CPython tier too."""

from __future__ import annotations

import re

import pytest

from envmgr.shellkit import FORMATS, UnrepresentableValue, render
from envmgr.snapshot.envdelta import SET, EnvDelta, VarOp

CASES = [("A=B", "x"), ("X", "a\0b"), ("A B", "x"), ("X", "a\nb"), ("ProgramFiles(x86)", "C:\\P"), ("X", "")]


def _delta(fmt: str, name: str, value: str) -> EnvDelta:
    return EnvDelta("windows" if fmt == "cmd" else "linux", (VarOp(name, SET, value),))


@pytest.mark.parametrize("name,value", CASES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_the_fix_names_only_formats_that_hold_it(fmt, name, value):
    delta = _delta(fmt, name, value)
    try:
        render(delta, fmt, {})
        return
    except UnrepresentableValue as exc:
        remedy = exc.remedy
    suggested = re.match(r"export this environment as (.+?) instead", remedy)
    if suggested is None:
        assert "cannot hold it either" in remedy, remedy
        return
    for other in suggested.group(1).split(" or "):
        render(delta, other, {})  # raises if the suggestion is wrong


def test_a_name_with_a_space_suggests_ps1_not_fish():
    with pytest.raises(UnrepresentableValue) as err:
        render(_delta("sh", "A B", "x"), "sh", {})
    assert err.value.remedy == "export this environment as ps1 instead"


def test_nul_suggests_no_format():
    with pytest.raises(UnrepresentableValue) as err:
        render(_delta("sh", "X", "a\0b"), "sh", {})
    assert err.value.remedy.startswith("fish and ps1 cannot hold it either")
