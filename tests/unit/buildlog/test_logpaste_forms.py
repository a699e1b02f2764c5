"""Paste forms that bench/pasteforms.py found breaking fit logs (issue 23 deliverable 2), each fixed for its general
reason: a CI log cut by a console (prefixed lines and unprefixed pieces), GitLab's FF_TIMESTAMPS stream marks,
journald's prefix. Real train logs (fit part) go through the bench's own form functions, written as bytes."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from envmgr.buildlog.clean import repair_line, strip_batch
from tests.logtext import decisive, train_text

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from pasteforms import FORMS

STAMP = "2024-05-01T12:00:00.1234567Z "


def _cut(line: str, width: int) -> list[str]:
    return [line[i : i + width] for i in range(0, len(line), width)]


def test_prefixed_lines_cut_by_a_console_are_joined_back():
    # a GitHub Actions log shown in a 50-column console: the prefixed line's rest sits on lines without the prefix
    long = STAMP + "CMake Error at CMakeLists.txt:12 (enable_language): No CUDA toolset found."
    lines = [STAMP + "-- C compiler: GNU 11", *_cut(long, 50), STAMP + "-- done"]
    assert len(lines) == 5 and all(len(piece) <= 50 for piece in lines)
    out = strip_batch(lines)
    assert out == [
        "-- C compiler: GNU 11",
        "CMake Error at CMakeLists.txt:12 (enable_language): No CUDA toolset found.",
        "",
        "",
        "-- done",
    ]


def test_unprefixed_lines_after_a_short_line_stay():
    # a logger that wrote a traceback as one message: its lines carry no prefix, but nothing was cut
    lines = [
        "[2024-05-01 10:11:12,345] ERROR import failed",
        "Traceback (most recent call last):",
        '  File "x.py", line 1, in <module>',
        "[2024-05-01 10:11:13,000] INFO done",
    ]
    assert strip_batch(lines) == ["ERROR import failed", *lines[1:3], "INFO done"]


def test_gitlab_stream_marks_and_journald_prefix_are_cut():
    lines = [
        "2024-05-30T14:30:00.123456Z 00O Running with gitlab-runner 17.0.0",
        "2024-05-30T14:30:00.223456Z 01E nvcc fatal   : Unsupported gpu architecture 'compute_120'",
        "2024-05-30T14:30:00.323456Z 01E+-- continued",
    ]
    assert strip_batch(lines) == [
        "Running with gitlab-runner 17.0.0",
        "nvcc fatal   : Unsupported gpu architecture 'compute_120'",
        "-- continued",
    ]
    syslog = [
        "May 01 12:00:00 buildhost pip[4242]: error: subprocess-exited-with-error",
        "Nov  3 09:05:01 gpu-node-7 ollama[812]: CUDA driver version is insufficient",
    ]
    assert strip_batch(syslog) == ["error: subprocess-exited-with-error", "CUDA driver version is insufficient"]


# fit logs the forms broke before the fixes (bench/results/2026-11-26-pasteforms.md)
CASES = [
    ("logs/F08/dolly-deepspeed-installed-cuda9.1-vs-torch11.8.txt", "actions+wrap100", "F08"),
    ("logs/F23/llama.cpp-server-cuda-docker-libcuda.so.1.txt", "actions+wrap100", "F23"),
    ("logs/F06/maskrcnn-benchmark-1042-vs2019-could-not-set-up-vcvars64.txt", "buildkit+wrap80", "F06"),
    ("logs/F24/oneflow-conda-env-cuda-cublas_static-target-not-found-EXCERPT.txt", "gitlab", "F24"),
    ("logs/F03/khiops-56-vscode-cmake-prefix-cl-not-full-path-after-vs-update.txt", "journald", "F03"),
    # one physical line of many logical ones: matches and facts ordered by place, not by line number
    ("logs/F12/nvidia-docker-797-scenereco-caffe-build-all-known-archs-no-kernel-image.txt", "json", "F12"),
    ("logs/F12/nvidia-docker-797-scenereco-caffe-build-all-known-archs-no-kernel-image.txt", "repr", "F12"),
    ("logs/clean/flash-attention-559-wheel-url-remote-end-closed-connection.txt", "json", None),
    ("logs/clean/flash-attention-847-bdist-wheel-guessing-wheel-url-connection-reset.txt", "repr", None),
    # a JSON string of prose: `\n` before a letter is a line break where every backslash is an escape
    ("logs/F19/twin4build-167-windows-pip-default-torch-2.14.0-cpu-cuda-available-false-EXCERPT.txt", "json", "F19"),
    ("logs/F20/tensorrt-llm-2469-build_wheel-h100-more-than-2-hours-EXCERPT.txt", "json", "F20"),
]


@pytest.mark.parametrize(("name", "form", "fid"), CASES)
def test_fit_log_in_a_paste_form_keeps_its_cause(name, form, fid, tmp_path):
    text = train_text(name).replace("\r\n", "\n")
    assert decisive(text, tmp_path)[0] == fid
    shown = FORMS[form](text, random.Random(23))
    assert shown != text
    assert decisive(shown, tmp_path)[0] == fid


def test_a_json_string_of_prose_splits_before_letters_but_a_path_stays():
    # json.dumps of "```\\ntorch ...\\nbuild slow": every backslash an escape, two certain breaks
    assert repair_line('"```\\ntorch 2.1+cpu\\n\\nbuild slow\\n"') == ['"```', "torch 2.1+cpu", "", "build slow", '"']
    # a Windows path keeps its \\n: one certain break only, and a backslash no string literal writes (\\P)
    assert repair_line("C:\\new\\nvcc\\bin\\nvcc.exe") == ["C:\\new\\nvcc\\bin\\nvcc.exe"]
    assert repair_line("x.\\n\\nC:\\Program Files\\nvcc") == ["x.", "", "C:\\Program Files\\nvcc"]
