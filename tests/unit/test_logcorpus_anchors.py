"""The anchors of doctor/logfacts.py hold when a train log is pasted another way (issue 23 items 1 and 2).

Every case is a real train log of tests/corpus/logs (its source in its header), changed the way users
paste logs: a Python bytes repr, a JSON string, typographic quotes, a CI service's annotation prefix. What
the scan names must not change. No held-out log is read here (bench/diagnosis.py alone measures those).
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from envmgr.doctor.logfacts import unfinished
from envmgr.doctor.logscan import scan_path
from tests.conftest import CORPUS

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from corpus_index import INDEX, load_index, read_log  # noqa: E402

ROWS = {e.file: e for e in load_index()} if INDEX.is_file() else {}


def train_text(name: str) -> str:
    e = ROWS[name]
    assert e.split == "train"
    return read_log(CORPUS / name, e.origin).decode("utf-8")


def named(text: str, tmp_path: Path) -> str | None:
    path = tmp_path / "build.log"
    path.write_bytes(text.encode("utf-8"))
    found = scan_path(path)
    return found.decisive.id if found.decisive else None


PASTES = {
    # repr() of the captured bytes: both quote kinds in the text, so repr escapes \' (nvcc quotes the arch)
    "bytes-repr": lambda t: repr(t.encode("utf-8")),
    # a JSON string: \" around CMake's "native", Chinese text as \uXXXX
    "json-string": lambda t: json.dumps(t),
    # typographic quotes (a web page's, an editor's or a localised console's) around nvcc's arch and CMake's value
    "smart-quotes": lambda t: re.sub(r'"([^"\n]*)"', "\u201c\\1\u201d", re.sub(r"'([^'\n]*)'", "\u2018\\1\u2019", t)),
    # Azure Pipelines / GitHub Actions: a timestamp and an annotation before every line
    "ci-annotation": lambda t: "\n".join(f"2024-05-01T10:00:00.1234567Z ##[error]{line}" if line.strip() else line
                                         for line in t.split("\n")),
}
CASES = [
    ("nvcc-fatal-unsupported-gpu-architecture-compute_120a-pip-EXCERPT.txt", "bytes-repr"),
    ("logs/F12/pixtrack-docker-build-cuda_architectures-native-no-gpu.txt", "json-string"),
    ("logs/F03/instant-ngp-985-vs2019-no-windows-sdk-corecrt-h-compileridcuda-zh.txt", "json-string"),
    ("logs/F08/dect-1-detected-cuda-12.1-vs-torch-11.8.txt", "ci-annotation"),
    ("nvcc-fatal-unsupported-gpu-architecture-compute_20-findcuda-make-BPA-EXCERPT.txt", "smart-quotes"),
    ("logs/F12/pixtrack-docker-build-cuda_architectures-native-no-gpu.txt", "smart-quotes"),
]


@pytest.mark.parametrize(("name", "paste"), CASES)
def test_a_pasted_train_log_names_the_same_cause(name, paste, tmp_path):
    if name not in ROWS:
        pytest.skip(f"{name} is not in the corpus index")
    text = train_text(name)
    expect = ROWS[name].expect
    assert named(text, tmp_path) in expect
    assert named(PASTES[paste](text), tmp_path) in expect


SPINNER = "logs/F20/hip-ad-requirements-flash-attn-building-wheel-never-finishes.txt"


def test_a_log_that_ends_inside_a_wheel_build_is_f20_until_the_build_ends(tmp_path):
    text = train_text(SPINNER)
    assert named(text, tmp_path) == "F20"
    lines = list(enumerate(text.rstrip("\n").split("\n"), 1))
    last = unfinished(lines)
    assert last is not None and "Building wheel for flash-attn" in last.line
    # the same build, finished or failed: no longer a build that ran on
    done = lines + [(len(lines) + 1, "  Building wheel for flash-attn (setup.py) ... done")]
    failed = lines + [(len(lines) + 1, "  error: subprocess-exited-with-error")]
    assert unfinished(done) is None and unfinished(failed) is None


def test_no_cuda_device_is_cpu_fallback_and_a_driver_reason_is_f17(tmp_path):
    cortex = "logs/F18/cortex.cpp-cuda-init-no-device-cpu-buffers-iso-timestamps.txt"
    text = train_text(cortex)
    assert named(text, tmp_path) == "F18"
    # the same ggml line with a driver reason (the runtime's cudaErrorInsufficientDriver text) is F17
    driver = text.replace("no CUDA-capable device is detected",
                          "CUDA driver version is insufficient for CUDA runtime version")
    assert named(driver, tmp_path) == "F17"
