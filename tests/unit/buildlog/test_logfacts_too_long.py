"""F20 in the reporter's words (round 9, issue 23): a build said to take too long ("takes too long", "taking so
long"), in the sentence that names the build; the same words said of something else are no build's duration.
Train (fit) logs of tests/corpus/logs, their source in their header; short lines written here say so."""

from __future__ import annotations

import pytest

from tests.logtext import decisive, facts, train_text

SLOW = ("F20", "anchor:build-said-slow")


@pytest.mark.parametrize(
    "name",
    [
        # "Installing mmcv-full is taking too long." above mim's log of the source archive it took
        "logs/F20/internimage-267-dgx-a100-mim-install-mmcv-full-1.5.0-taking-too-long-EXCERPT.txt",
        # "the compile takes too long (20+ min on my machine ...)"
        "logs/F20/paddle-5413-compile-takes-20-min-ccache-nvcc-same-time-EXCERPT.txt",
    ],
)
def test_a_build_said_to_take_too_long_is_f20(name, tmp_path):
    assert decisive(train_text(name), tmp_path) == SLOW


@pytest.mark.parametrize(
    "line",
    [
        "The build took way too long on the laptop, so I stopped it.",
        "Why is the compilation taking so long?",
    ],
)
def test_too_long_in_the_builds_sentence(line):
    assert facts(line + "\n").first("slow_build") is not None


@pytest.mark.parametrize(
    "line",
    [
        # the words said of a path, a test run or a download, not of the build
        "fatal error C1083: Cannot open include file: the file name is too long",
        "The test takes too long to finish on the runner.",
        "Downloading the model takes so long here.",
    ],
)
def test_too_long_said_of_something_else_is_no_slow_build(line):
    assert facts(line + "\n").first("slow_build") is None
