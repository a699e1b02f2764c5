"""F20 in the reporter's words (round 8, issue 23): a build's duration or stall in digits, words and other
languages, said in the sentence that names the build, in a title and the sentence after it, or just above pip's
build line; and what is no build's duration (a runtime hang, a stalled download, 'days ago')."""

from __future__ import annotations

import pytest

from envmgr.buildlog.read import stream_text
from tests.logtext import decisive, facts, train_text

SLOW = ("F20", "anchor:build-said-slow")


@pytest.mark.parametrize(
    "name",
    [
        # a title naming the compile and the next sentence giving the hours
        "logs/F20/mamba-663-how-long-compile-1.5-hours-not-done-prose.txt",
        # the same in Chinese: 'build' in the title, 几个小时 (a few hours) in the next sentence
        "logs/F20/vace-42-pip-install-stuck-for-hours-zh-en-prose.txt",
        # the install of a package whose install is its CUDA compile, said to be stuck
        "logs/F20/pytorch3d-958-colab-tutorial-install-more-than-1-hour-EXCERPT.txt",
        # the duration just above pip's own lines of the build (Running setup.py develop)
        "logs/F20/xformers-481-colab-pip-install-e-1-hour-10-minutes-EXCERPT.txt",
        # hours written '6h', in the sentence that names the compilation
        "logs/F20/flash-attention-1560-windows-rtx5090-6-hours-building-no-build-isolation.txt",
    ],
)
def test_a_builds_duration_in_the_reporters_words_is_f20(name, tmp_path):
    assert decisive(train_text(name), tmp_path) == SLOW


@pytest.mark.parametrize(
    "line",
    [
        "the build ran overnight and is still going",
        "Die Kompilierung dauert schon 3 Stunden",
        "сборка идёт уже 5 часов",
        "编译了3个小时还没好",
        "pip install xformers has been running for hours",
        "the wheel took two days on this laptop",
    ],
)
def test_durations_in_words_and_languages_said_of_a_build(line):
    assert facts(line + "\n").first("slow_build") is not None, line


@pytest.mark.parametrize(
    "line",
    [
        # a point in time, not a duration
        "Several days ago the build was fine, today it fails",
        # a download, not a build: torch is installed as a wheel
        "pip install torch took 2 hours on this connection",
        # a runtime hang
        "the server hangs for hours after loading the model",
    ],
)
def test_no_builds_duration(line):
    assert facts(line + "\n").first("slow_build") is None, line


@pytest.mark.parametrize(
    "name",
    [
        "logs/clean/vllm-39682-blackwell-ray-tp2-hangs-after-weight-loading-EXCERPT.txt",
        "logs/clean/llm-scaler-391-vllm-running-1-waiting-14-over-an-hour-EXCERPT.txt",
        "logs/clean/unsloth-2145-stuck-on-model-downloading-almost-an-hour-hf-prose.txt",
        # torch's own ninja-not-found fallback in a build that went on: no duration, no failure
        "logs/clean/scene-recognition-3d-5-pointnet2-ninja-not-found-distutils-fallback-built.txt",
    ],
)
def test_runtime_hangs_and_stalled_downloads_name_nothing(name, tmp_path):
    assert decisive(train_text(name), tmp_path) == (None, None)


def test_days_ago_is_no_duration_so_a_failed_mmcv_source_build_stays_f19(tmp_path):
    text = train_text("logs/F19/mmcv-1930-colab-mmcv-full-1.2.7-no-prebuilt-for-torch1.11-cu113.txt")
    assert decisive(text, tmp_path)[0] == "F19"


def test_a_small_logs_last_line_comes_with_the_lines_before_it(tmp_path):
    # the decoder holds the last bytes of a block back; they join that block's piece, not a piece of their own
    text = "How long does it take to compile\n\nIt has already spent me 1.5 hours but still not done.\n"
    path = tmp_path / "b.log"
    path.write_bytes(text.encode("utf-8"))  # as written, on Windows too (text mode would write CRLF)
    assert list(stream_text(path)) == [text]
