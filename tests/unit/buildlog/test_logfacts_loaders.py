"""F15/F23 from the loaders' own words in runtimes the corpus lacked before (issue 23, round 8).

The logs are TRAIN logs of tests/corpus/logs (their source in their header); no held-out log is read here.
"""

from __future__ import annotations

import pytest

from envmgr.buildlog.facts import decide
from tests.logtext import decisive, facts, train_text

# Paddle's dynamic loader names the library and Windows' error number in its own words: "(error code is 126)"
PADDLE = [
    "logs/F15/paddle-34566-run-check-cudnn64_7-error-code-126-zh.txt",
    "logs/F15/video-subtitle-extractor-45-paddle-cudnn64_8-error-code-126-quoted.txt",
    "logs/F15/paddleocr-11230-paddle-cudnn64_8-error-code-126-cuda11.8-zh-EXCERPT.txt",
]


@pytest.mark.parametrize("name", PADDLE)
def test_paddle_loader_error_code_is_windows_126(name, tmp_path):
    assert "126" in facts(train_text(name)).values("winerr")
    # the library is cuDNN's: a product outside the CUDA toolkit, no catalog id since issue 36's second precision
    # round (loader.separate_only)
    assert decisive(train_text(name), tmp_path)[0] is None


def test_error_code_words_need_a_loader_number():
    # another number after the same words is no loader error (an HTTP or an exit code)
    assert facts("request failed (error code is 404)\n").values("winerr") == []
    assert facts("(error code is 127)\n").values("winerr") == ["127"]


# TensorRT's loader names its own DLLs (nvinfer*, in trtexec's "Unable to open library: X.dll")
TENSORRT = [
    "logs/F15/depth-anything-tensorrt-19-trtexec-unable-to-open-nvinfer_plugin.dll.txt",
    "logs/F15/tensorrt-4159-trtexec-unable-to-open-nvinfer_plugin_10.dll.txt",
]


@pytest.mark.parametrize("name", TENSORRT)
def test_tensorrt_dll_unable_to_open(name, tmp_path):
    assert any(v.lower().startswith("nvinfer") for v in facts(train_text(name)).values("cuda_dll"))
    # TensorRT's own DLL: outside the CUDA toolkit, no catalog id (loader.separate_only, issue 36)
    assert decisive(train_text(name), tmp_path)[0] is None


def test_a_dll_named_first_without_a_reason_is_read_again_where_its_line_says_missing():
    # the depth-anything-tensorrt log names the DLL in prose first ("`nvinfer_plugin.dll` cannot be open"), then
    # quotes the loader's line: both lines are kept, the second one decides
    text = (
        "the `nvinfer_plugin.dll` cannot be open\n\n"
        "Uncaught exception detected: Unable to open library: nvinfer_plugin.dll\n"
    )
    lines = [f.line_no for f in facts(text).facts["cuda_dll"]]
    assert lines == [1, 3]


def test_a_dll_repeated_on_many_lines_keeps_a_bounded_number():
    text = "".join(f"Successfully opened dynamic library cudart64_110.dll ({i})\n" for i in range(50))
    assert len(facts(text).facts["cuda_dll"]) == 3


# a toolkit runtime library missing on Linux, in the loader's words, from runtimes the corpus lacked (jaxlib's cuSOLVER,
# WasmEdge's GGML plugin)
SHARED_OBJECTS = [
    ("logs/F23/jax-602-import-jax-libcusolver.so.9.0-EXCERPT.txt", "libcusolver.so.9.0"),
    ("logs/F23/llamaedge-19-wasmedge-load-library-failed-libcudart.so.12.txt", "libcudart.so.12"),
]


@pytest.mark.parametrize(("name", "lib"), SHARED_OBJECTS)
def test_toolkit_shared_object_missing(name, lib, tmp_path):
    assert lib in facts(train_text(name)).values("cuda_so")
    assert decisive(train_text(name), tmp_path)[0] == "F23"


def test_a_toolkit_library_opened_is_no_failure():
    text = (
        "I tensorflow/stream_executor/platform/default/dso_loader.cc:49] Successfully opened dynamic library "
        "libcusolver.so.10\n"
    )
    assert facts(text).values("cuda_so") == ["libcusolver.so.10"]
    assert decide(facts(text)) == []
