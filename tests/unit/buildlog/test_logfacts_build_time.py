"""F20 from how long a build's steps took, as the tools print it (issue 23): the shell's report of a compile the
reporter timed (`time nvcc ...`).

The lines below are in the shells' own formats (bash's `time` keyword: "real\\t0m22.238s" after the command's output;
zsh's: "<command>  1.40s user 1.29s system 12% cpu 22.238 total" on one line), the times filled in here. The log
named is a TRAIN log of tests/corpus/logs (its source in its header). No held-out log is read here.
"""

from __future__ import annotations

import pytest

from envmgr.buildlog.facts import _seconds, timed_long
from tests.logtext import decisive, facts, train_text

TCE_WRAPPER = "logs/F20/trilinos-10816-vortex-tce-nvcc-wrapper-slow-compile-times-EXCERPT.txt"


def _bash(seconds: str, cmd: str = "nvcc -x cu dummy.cpp") -> str:
    return f"[user@host ~]$ time {cmd}\n\nreal\t{seconds}\nuser\t0m1.402s\nsys\t0m1.290s\n"


@pytest.mark.parametrize(
    "value, seconds", [("0m22.238", 22.238), ("1m0.170", 60.17), ("22.238", 22.238), ("1:02.5", 62.5), ("", 0.0)]
)
def test_seconds_reads_bash_and_zsh_times(value, seconds):
    assert _seconds(value) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "text",
    [
        _bash("0m22.238s"),
        _bash("7m26.400s", "/usr/local/cuda/bin/nvcc -arch sm_30 -I/tmp/thrust compile_time.cu"),
        "% time nvcc -c kernel.cu -o kernel.o\n"
        "nvcc -c kernel.cu -o kernel.o  14.20s user 0.80s system 98% cpu 15.231 total\n",
    ],
)
def test_a_long_timed_nvcc_names_f20(text, tmp_path):
    assert decisive(text, tmp_path) == ("F20", "anchor:compile-timed-long")


@pytest.mark.parametrize(
    "text",
    [
        _bash("0m3.815s"),  # nvcc's own cost on a small file: no slowness shown
        "$ time make -j8\n\nreal\t12m3.000s\nuser\t80m0.000s\nsys\t1m0.000s\n",  # a timed make: not one nvcc call
        "time nvcc -x cu dummy.cpp\n" + "x\n" * 6 + "real\t0m22.238s\n",  # `real` too far below the command
    ],
)
def test_short_or_other_timed_commands_name_nothing(text, tmp_path):
    assert timed_long(facts(text).facts.get("timed_compile", ())) is None
    assert decisive(text, tmp_path) == (None, None)


def test_wrapper_log_is_named_by_its_slowest_timed_compile(tmp_path):
    text = train_text(TCE_WRAPPER)
    found = timed_long(facts(text).facts.get("timed_compile", ()))
    assert found is not None and _seconds(found.value) > 20
    assert decisive(text, tmp_path) == ("F20", "anchor:compile-timed-long")
