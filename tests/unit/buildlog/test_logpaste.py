"""Logs as users paste them (issue 23 deliverable 2): the real corpus logs, changed the way a paste in an
issue, a web page or a Python program changes them, give the same catalog ids as the logs themselves.

Each change is one a real paste shows (the corpus helpers' logs in tests/corpus/logs carry them: `> `
quotes, fences, CI timestamps); the failure text itself is never invented here.
"""

from __future__ import annotations

import html
import random
import sys
from pathlib import Path

import pytest

from envmgr.buildlog.clean import repair_line, strip_batch, unmojibake
from tests.unit.buildlog.test_logscan import LOGS, log, scan, summary

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from pasteforms import word_wrap

RU = "python3.6-import-torch-_C-dll-load-failed-russian-windows-esrgan-EXCERPT.txt"
ZH = "python-import-pycuda-dll-load-failed-while-importing-_driver-chinese-windows-EXCERPT.txt"
ZH_MSB = "vs2017-error-list-msb4019-cuda10.0-props-not-found-chinese-EXCERPT.txt"
F04 = "msbuild-cuda11.8-host_config-unsupported-msvc14.40-vs2022-buildtools-llama-cpp-python-EXCERPT.txt"
F01 = "cmake-no-cuda-toolset-found-vs2019-cmake3.24.txt"
F08 = "torch-cpp_extension-detected-cuda12.1-mismatches-pytorch11.7-pip-groundingdino-EXCERPT.txt"
SOME = (
    F04,
    F01,
    F08,
    ZH_MSB,
    "python-import-llama_cpp-winerror3-stale-cuda_path.txt",
    "cmake-llama.cpp-llama_cuda-deprecated-then-cuda-not-found-linux-EXCERPT.txt",
    "nvcc-stl1002-yvals_core-msvc14.42-vscode-cmake-tools-EXCERPT.txt",
)


@pytest.mark.parametrize("name", SOME)
def test_markdown_fence_and_quote(name):
    # an issue comment: the log inside a fence, the whole comment quoted in a reply ("> > ")
    quoted = "\n".join("> > " + l for l in ["```text", *log(name).split("\n"), "```"])
    assert summary(scan(quoted).matches) == tuple((i, n + 1) for i, n in LOGS[name][0])


@pytest.mark.parametrize("name", SOME)
def test_html_entities(name):
    # a log copied from a web page's source (or an API that escapes): &lt; &gt; &quot; &#39; &amp;
    escaped = html.escape(log(name), quote=True)
    assert summary(scan(escaped).matches) == LOGS[name][0]


@pytest.mark.parametrize("name", SOME)
def test_ci_timestamps(name):
    # GitHub Actions' raw log puts an ISO timestamp before every line; docker BuildKit "#7 12.3 ", compose
    # the service name (as in the corpus's nextcloud log)
    for prefix in (
        "2024-05-01T10:11:12.1234567Z ",
        "#12 41.27 ",
        "[2024-05-01 10:11:12,345] ",
        "context_chat_backend-1  | ",
    ):
        stamped = "\n".join(prefix + l for l in log(name).split("\n"))
        assert summary(scan(stamped).matches) == LOGS[name][0]


@pytest.mark.parametrize("codec", ["cp1251", "cp866"])
def test_russian_mojibake_is_repaired(codec):
    # UTF-8 bytes shown through a Russian code page (a console, an editor): the text comes back
    text = log(RU)
    shown = (
        text.encode("utf-8").decode(codec, errors="strict")
        if codec == "cp866"
        else "".join(c.encode("utf-8").decode("cp1251", errors="replace") if not c.isascii() else c for c in text)
    )
    if codec == "cp1251":
        assert "Операционная" not in shown
    line = next(l for l in shown.split("\n") if "DLL load failed" in l)
    assert "Операционная система" in unmojibake(line) or codec == "cp1251"
    assert summary(scan(shown).matches) == LOGS[RU][0]


def test_chinese_gbk_mojibake_is_repaired():
    line = next(l for l in log(ZH).split("\n") if "DLL load failed" in l)
    shown = line.encode("utf-8").decode("gbk", errors="ignore")
    assert "找不到" not in shown
    assert unmojibake(shown) == line[:-1]  # the last character's odd byte was dropped by the GBK decode
    # MSB4019 in a Chinese Error List seen through GBK: its “…” quotes come back and F01 reads the path
    msb = log(ZH_MSB)
    shown = msb.encode("utf-8").decode("gbk", errors="ignore")
    found = scan(shown).matches
    assert summary(found) == LOGS[ZH_MSB][0] and found[0].details["cuda"] == "10.0"


def test_cp1252_mojibake_of_quotes():
    line = "MSBuild: “C:\\Program Files\\CUDA 12.4.props” not found"
    # Windows shows the bytes cp1252 leaves undefined (0x9D of ”) as the C1 character of the same number
    shown = "".join(bytes([b]).decode("cp1252", errors="ignore") or chr(b) for b in line.encode("utf-8"))
    assert "“" not in shown and unmojibake(shown) == line
    # real text in a code page's own letters is not touched
    for real in ("Операционная система не может запустить %1.", "找不到指定的程序。", "Código de error", "Größe"):
        assert unmojibake(real) == real


@pytest.mark.parametrize("name", SOME)
def test_python_bytes_repr_of_the_whole_log(name):
    # a program printed the captured output as bytes (subprocess stdout): one line b'...\r\n...'
    text = log(name).replace("\n", "\r\n")
    one = repr(text.encode("utf-8"))
    assert "\n" not in one
    found = scan(one).matches
    assert sorted(m.id for m in found) == sorted(i for i, _ in LOGS[name][0])
    assert all(m.line_no == 1 for m in found)


def test_literal_newlines_and_windows_paths():
    # "\n" written literally splits lines; a path with \n in it (C:\new\nvcc) does not
    assert repair_line("first line.\\nsecond line") == ["first line.", "second line"]
    assert repair_line("C:\\new\\nvcc\\bin\\nvcc.exe") == ["C:\\new\\nvcc\\bin\\nvcc.exe"]
    assert repair_line("b'a\\r\\nC:\\\\CUDA\\\\v12.4\\\\bin\\\\nvcc.exe'") == ["b'a", "C:\\CUDA\\v12.4\\bin\\nvcc.exe'"]


def test_strip_keeps_the_line_count():
    lines = ["```", "> 2024-05-01T10:11:12Z -- ok", "[build] No CUDA toolset found.", "~~~", "plain"]
    assert strip_batch(lines) == ["", "-- ok", "No CUDA toolset found.", "", "plain"]
    assert strip_batch(["1>C:\\x.cu(1): error", "  2>done"]) == ["1>C:\\x.cu(1): error", "  2>done"]


def _hard_wrap(text: str, width: int) -> str:
    """What a console, an e-mail client or a forum does to a long line: cut every `width` characters."""
    return "\n".join(
        piece
        for line in text.split("\n")
        for piece in ([line] if len(line) <= width else [line[i : i + width] for i in range(0, len(line), width)])
    )


WRAPPED = (
    "llama.cpp-cuda-error-209-no-kernel-image-ggml-cuda-EXCERPT.txt",  # one line cut: no width
    "msbuild-imported-project-cuda-props-not-found-vs2022.txt",  # cuts that fell before a space
    "llama-server-libcublas.so.11-cannot-open-shared-object-llama.cpp-EXCERPT.txt",
    "python-import-llama_cpp-winerror3-stale-cuda_path.txt",
    "slurm-step-cancelled-due-to-time-limit-cuda-compile-trilinos-panzer-EXCERPT.txt",
    "torch-cpp_extension-g++9.3-greater-than-maximum-cuda10.2-deep-hough-EXCERPT.txt",
    F04,
)


@pytest.mark.parametrize("width", [80, 90])
@pytest.mark.parametrize("name", WRAPPED)
def test_hard_wrapped_paste_names_the_same_cause(name, width):
    # a paste cut at a column: one or two long lines are too few for the wrap width, and a cut that fell
    # just before a space keeps that space when the pieces are joined
    wrapped = _hard_wrap(log(name), width)
    assert any(len(line) == width for line in wrapped.split("\n"))
    found = scan(wrapped)
    assert found.decisive is not None and found.decisive.id == LOGS[name][0][0][0]


def _word_wrap(text: str, width: int) -> str:
    """What an editor or a mail client does to a long line: break it at the last space before `width` (a word
    longer than the width is cut): bench/pasteforms.py's form, the one the paste-forms benchmark measures."""
    return word_wrap(width)(text, random.Random(0))


@pytest.mark.parametrize("width", [80, 100])
@pytest.mark.parametrize("name", WRAPPED[1:])
def test_word_wrapped_paste_names_the_same_cause(name, width):
    # broken at spaces, lines of many lengths: no wrap width; a line is joined to the next where that line's first
    # word would not have fitted after it
    wrapped = _word_wrap(log(name), width)
    found = scan(wrapped)
    assert found.decisive is not None and found.decisive.id == LOGS[name][0][0][0]
