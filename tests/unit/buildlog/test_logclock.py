"""F20 from time the log itself measured (issue 23): the stamps loggers and CI services put before lines
(envmgr/buildlog/clock.py), read before logclean cuts them, and the build tools' own totals (logfacts
`build_elapsed`).

The stamp formats are the services' and tools' own (GitHub Actions/Azure Pipelines ISO with T and 7 fraction digits,
ISO with a space as Python's logging writes it, GitLab runner 17's ISO plus stream flag, GitLab's section markers in
Unix seconds, journald/syslog, a bracketed time of day); the compile lines are CMake's, ninja's, nvcc's and pip's;
the times are filled in here. The fit log named is a TRAIN log of tests/corpus/logs (its source in its header). No
held-out or dev log is read here.
"""

from __future__ import annotations

import pytest

from envmgr.buildlog.clock import Clock
from envmgr.buildlog.facts import _duration
from tests.logtext import decisive, facts, train_text

UNIQUE_CU = "logs/F20/pytorch-92852-nightly-conda-cuda-timeout-unique.cu-29-minutes-timestamps-EXCERPT.txt"
COMPILE = "[ 93%] Building CUDA object caffe2/CMakeFiles/torch_cuda.dir/native/cuda/Unique.cu.o"
AFTER = "[ 93%] Linking CXX shared library ../lib/libtorch_cuda.so"

# (stamp of the compile line, stamp of the line after it) in each format, 25 minutes apart
FORMATS = {
    "actions": ("2023-01-20T08:54:22.9080065Z ", "2023-01-20T09:19:22.1000000Z "),
    "iso-space": ("2023-01-20 08:54:22,123 ", "2023-01-20 09:19:22,456 "),
    "bracketed-iso": ("[2023-01-20T08:54:22+01:00] ", "[2023-01-20T09:19:22+01:00] "),
    "gitlab": ("2023-01-20T08:54:22.123456Z 00O ", "2023-01-20T09:19:22.654321Z 00O "),
    "journald": ("Jan 20 08:54:22 ci-host builder[812]: ", "Jan 20 09:19:22 ci-host builder[812]: "),
    "time-of-day": ("[08:54:22] ", "[09:19:22] "),
    "past-midnight": ("[23:54:22] ", "[00:19:22] "),
}


def _clock(text: str) -> Clock:
    clock = Clock()
    clock.feed(text.split("\n"))
    return clock.finish()


def _log(first: str, second: str, compile_line: str = COMPILE, after: str = AFTER) -> str:
    return f"-- Configuring done\n{first}{compile_line}\n{second}{after}\n"


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_each_stamp_format_times_the_compile_step(fmt):
    gap = _clock(_log(*FORMATS[fmt])).longest
    assert gap is not None and gap.seconds == pytest.approx(25 * 60, abs=1) and not gap.failed
    assert gap.line_no == 2 and "Unique.cu.o" in gap.line


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_25_minute_cuda_object_names_f20_in_each_format(fmt, tmp_path):
    assert decisive(_log(*FORMATS[fmt]), tmp_path) == ("F20", "anchor:compile-step-long")


@pytest.mark.parametrize("fmt", ["actions", "journald", "time-of-day"])
def test_stamps_in_the_other_order_time_no_step(fmt, tmp_path):
    first, second = FORMATS[fmt]
    clock = _clock(_log(second, first))
    assert not clock.ordered and (clock.longest is None or clock.longest.seconds == 0)
    assert decisive(_log(second, first), tmp_path) == (None, None)


@pytest.mark.parametrize(
    "compile_line",
    [
        "/usr/local/cuda/bin/nvcc -c reduce_kernels.cu -o reduce_kernels.o -gencode arch=compute_80,code=sm_80",
        "[12/49] Building CUDA object CMakeFiles/ggml-cuda.dir/mmq.cu.o",
        "Building wheel for torch-scatter (setup.py): started",
        "cl.exe /c /nologo /O2 /MD kernel.cpp",
    ],
)
def test_compile_steps_of_each_tool_are_timed(compile_line, tmp_path):
    text = _log(*FORMATS["actions"], compile_line=compile_line, after="[13/49] Linking CUDA shared library")
    assert decisive(text, tmp_path) == ("F20", "anchor:compile-step-long")


@pytest.mark.parametrize(
    "after",
    [
        "Killed",
        "nvcc error   : 'cicc' died due to signal 9 (Kill signal)",
        "FAILED: CMakeFiles/torch_cuda.dir/native/cuda/Unique.cu.o",
        "c++: fatal error: Killed signal terminated program cc1plus",
    ],
)
def test_a_long_gap_that_ends_in_a_failure_is_not_f20(after, tmp_path):
    text = _log(*FORMATS["actions"], after=after)
    gap = _clock(text).longest
    assert gap is not None and gap.failed
    found, signature = decisive(text, tmp_path)
    assert found != "F20", signature


def test_a_short_step_or_a_long_gap_after_no_compile_names_nothing(tmp_path):
    assert decisive(_log("2023-01-20T08:54:22Z ", "2023-01-20T09:02:22Z "), tmp_path) == (None, None)
    text = _log(*FORMATS["actions"], compile_line="Waiting for a runner to pick up this job...")
    assert decisive(text, tmp_path) == (None, None)


def _steps(stamps: list[str], end: str) -> str:
    lines = [f"{s} [{i}/900] Building CXX object CMakeFiles/torch.dir/op{i}.cpp.o" for i, s in enumerate(stamps)]
    return "\n".join([*lines, end]) + "\n"


def test_a_stamped_build_spanning_hours_names_f20_unless_it_ends_failed(tmp_path):
    stamps = [f"2019-11-19T{h:02d}:{m:02d}:00.0000000Z" for h in range(8, 12) for m in range(0, 60, 15)]
    ok = _steps(stamps, '2019-11-19T11:55:00.0000000Z -- Install configuration: "Release"')
    assert _clock(ok).span == pytest.approx(3 * 3600 + 55 * 60) and _clock(ok).longest.seconds == 15 * 60
    assert decisive(ok, tmp_path) == ("F20", "anchor:build-span-long")
    failed = _steps(stamps, "2019-11-19T11:55:00.0000000Z ##[error]Process completed with exit code 1.")
    assert decisive(failed, tmp_path) != ("F20", "anchor:build-span-long")
    short = _steps(stamps[:4], '2019-11-19T08:55:00.0000000Z -- Install configuration: "Release"')
    assert decisive(short, tmp_path) == (None, None)


def test_gitlab_sections_give_the_span_in_unix_seconds():
    text = (
        "section_start:1700000000:step_script\n[1/2] Building CUDA object a.cu.o\nsection_end:1700009000:step_script\n"
    )
    clock = _clock(text)
    assert clock.span == 9000 and clock.ordered and clock.longest is None  # the compile line has no stamp


@pytest.mark.parametrize(
    "line, seconds",
    [
        ("Time Elapsed 02:05:31.44", 7531.0),
        ("INFO: Elapsed time: 8123.456s, Critical Path: 7000.12s", 8123.456),
        ("Prepared 1 package in 125m 03s", 7503.0),
        ("    Finished `release` profile [optimized] target(s) in 130m 00s", 7800.0),
        ("Summary: 3 packages finished [2h 5min 1s]", 7501.0),
    ],
)
def test_a_build_tools_own_total_of_hours_names_f20(line, seconds, tmp_path):
    text = f"Starting >>> kernels\n{line}\n"
    assert decisive(text, tmp_path) == ("F20", "anchor:build-elapsed-long")
    assert _duration(facts(text).facts["build_elapsed"][0].value) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "text",
    [
        "Build succeeded.\n    0 Warning(s)\n    0 Error(s)\n\nTime Elapsed 00:03:12.51\n",
        "Prepared 12 packages in 2m 05s\n",
        "Build FAILED.\n    1 Error(s)\n\nTime Elapsed 02:31:12.51\n",
    ],
)
def test_short_totals_or_a_failed_build_name_no_f20(text, tmp_path):
    assert decisive(text, tmp_path)[0] != "F20"


def test_the_fit_log_unique_cu_29_minutes_names_f20(tmp_path):
    assert decisive(train_text(UNIQUE_CU), tmp_path) == ("F20", "anchor:compile-step-long")
