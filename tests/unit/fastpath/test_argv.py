"""envmgr/fastpath/argv.py: the few options the console script's fast path answers itself; anything else
is None (the full CLI answers)."""

from __future__ import annotations

import pytest

from envmgr.fastpath.argv import parse_options, selectors


def test_selectors_with_a_space_or_an_equals_sign():
    opts = parse_options(["--cuda", "12.4", "--vs=2022", "--arch", "x64"], with_format=False)
    assert opts == {"--cuda": "12.4", "--vs": "2022", "--arch": "x64"}
    assert selectors(opts) == {"vs": "2022", "toolset": None, "arch": "x64", "cuda": "12.4", "python": []}
    assert selectors({}) == {"vs": None, "toolset": None, "arch": "x64", "cuda": None, "python": []}


def test_export_takes_format_and_activate():
    got = parse_options(["--format", "fish", "--activate"], with_format=True)
    assert got == {"--format": "fish", "--activate": True}
    assert parse_options([], with_format=True) == {}
    assert parse_options(["--format", "sh"], with_format=False) is None  # only export has --format


@pytest.mark.parametrize(
    "args",
    [
        ["--cuda"],  # no value
        ["--cuda", "--vs"],  # an option where the value should be
        ["--cuda="],  # empty value
        ["--cuda", "12.4", "--cuda", "13.0"],  # given twice
        ["--python", "/usr/bin/python3"],  # an option the fast path does not answer
        ["--cuda", "/usr/local/cuda-12.4"],  # a folder: the full CLI resolves its real path before keying
        ["--cuda", "C:\\CUDA\\v12.4"],
        ["--format", "dotenv"],  # a format whose output is not stored
        ["--activate", "--activate"],
        ["extra"],
    ],
)
def test_anything_else_goes_to_the_full_cli(args):
    assert parse_options(args, with_format=True) is None
