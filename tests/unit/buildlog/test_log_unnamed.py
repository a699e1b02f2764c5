"""Where `doctor --log` names no catalog id it says why and what to do (unnamed.explain): a stop outside the catalog
(each kind of unnamed.OUTSIDE), a log ending in its build's success, a log cut while pip still built, a paste of words
only, or none of these. Stop lines are the tools' own messages (each named where it is written); the words-only
paste is composed here (no corpus log is read). The reason never comes with a match, and the --json stays valid.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from envmgr.cli.main import cli
from envmgr.buildlog.report import render_scan, scan_json
from envmgr.buildlog.scan import scan_path
from envmgr.buildlog.unnamed import OUTSIDE, outside_kind
from tests import logtext

PIP = "Collecting llama-cpp-python\n  Downloading llama_cpp_python-0.2.90.tar.gz (63.8 MB)\n"

OUTSIDE_STOPS = [
    # CPython's strerror for ENOSPC, as pip prints the OSError it stops on
    ("disk_full", PIP + "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device\n"),
    # torch's caching allocator raising torch.OutOfMemoryError
    (
        "gpu_memory",
        'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n'
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n",
    ),
    # pip's collector when urllib3 gives up on a host
    (
        "network",
        "Could not fetch URL https://pypi.org/simple/torch/: There was a problem confirming the ssl "
        "certificate: HTTPSConnectionPool(host='pypi.org', port=443): Max retries exceeded with url: "
        "/simple/torch/ - skipping\n",
    ),
    # pip's Requires-Python check
    ("requires_python", "ERROR: Package 'vllm' requires a different Python: 3.12.9 not in '<=3.12,>=3.9'\n"),
    # CMake's add_subdirectory on a folder without its list file
    (
        "submodule",
        "CMake Error at CMakeLists.txt:25 (add_subdirectory):\n  The source directory\n\n"
        "    /src/llama-cpp-python/vendor/llama.cpp\n\n  does not contain a CMakeLists.txt file.\n",
    ),
    # CPython's parser
    ("python_syntax", '  File "setup.py", line 8\n    print "hello"\n          ^\nSyntaxError: invalid syntax\n'),
    # CPython's import system
    (
        "python_module",
        'Traceback (most recent call last):\n  File "run.py", line 1, in <module>\n'
        "ModuleNotFoundError: No module named 'einops'\n",
    ),
]


def _scan(text: str, tmp_path: Path):
    return logtext.scan(text, tmp_path)


def test_every_outside_kind_has_a_case_here():
    assert {k for k, _ in OUTSIDE_STOPS} == {o.kind for o in OUTSIDE}


@pytest.mark.parametrize(("kind", "text"), OUTSIDE_STOPS, ids=[k for k, _ in OUTSIDE_STOPS])
def test_an_outside_stop_is_named_by_kind_with_its_advice(kind, text, tmp_path: Path):
    found = _scan(text, tmp_path)
    assert found.matches == ()
    why = found.unnamed
    assert why is not None and (why.reason, why.kind) == ("outside", kind)
    advice = next(o.advice for o in OUTSIDE if o.kind == kind)
    assert why.advice == advice
    assert why.line_no is not None and outside_kind(text.split("\n")[why.line_no - 1]).kind == kind


def test_a_log_cut_before_its_tool_said_how_it_ended(tmp_path: Path):
    # CMake's configure and ninja's first steps, cut there (pip's own spinner as the last line is F20's question)
    text = (
        "-- The CXX compiler identification is GNU 11.4.0\n-- Configuring done (1.2s)\n"
        "-- Generating done (0.1s)\n[1/80] Building CXX object src/CMakeFiles/llama.dir/llama.cpp.o\n"
    )
    why = _scan(text, tmp_path).unnamed
    assert why is not None and why.reason == "unfinished" and why.line_no == 4
    assert "envmgr doctor --log build.log" in why.advice and "2>&1" in why.advice


def test_a_log_ending_in_success(tmp_path: Path):
    text = PIP + "Successfully built llama-cpp-python\nSuccessfully installed llama-cpp-python-0.2.90\n"
    why = _scan(text, tmp_path).unnamed
    assert why is not None and why.reason == "succeeded" and why.line_no == 4


def test_a_paste_of_words_only(tmp_path: Path):
    text = (
        "Hello, I tried to install the package with the CUDA flag on my laptop.\n"
        "It takes a very long time and then nothing seems to work at all.\n"
        "Could you please tell me what I am doing wrong here?\n"
    )
    why = _scan(text, tmp_path).unnamed
    assert why is not None and why.reason == "no_output" and why.line_no is None
    assert "pip install -v" in why.advice


def test_words_around_a_program_line_are_output(tmp_path: Path):
    text = (
        "Hello, I tried to install the package with the CUDA flag on my laptop.\n"
        "nvcc warning : The 'compute_35' architecture is deprecated\nerror: build stopped\n"
    )
    why = _scan(text, tmp_path).unnamed
    assert why is not None and why.reason == "unknown"


def test_no_reason_where_an_id_is_named(tmp_path: Path):
    text = "nvcc fatal   : Unsupported gpu architecture 'compute_89'\n" + OUTSIDE_STOPS[0][1]
    found = _scan(text, tmp_path)
    assert found.matches and found.unnamed is None
    assert scan_json(found, "build.log")["unnamed"] is None
    assert "why:" not in render_scan(found, lambda s, *styles: s).split("\n")[0]


def test_text_says_why_and_what_to_do(tmp_path: Path):
    found = _scan(OUTSIDE_STOPS[0][1], tmp_path)
    text = render_scan(found, lambda s, *styles: s)
    lines = text.splitlines()
    assert lines[0] == "no known failure signature found in the log (3 lines)"
    assert lines[1].strip().startswith("why:") and "disk" in lines[1]
    assert lines[2].strip().startswith("line 3:") and "[Errno 28]" in lines[2]
    assert lines[3].strip().startswith("do:") and "TMP" in lines[3]


@pytest.mark.parametrize(("kind", "text"), OUTSIDE_STOPS[:2], ids=[k for k, _ in OUTSIDE_STOPS[:2]])
def test_the_json_document_is_valid_and_carries_the_reason(kind, text, tmp_path: Path):
    log = tmp_path / "build.log"
    log.write_bytes(text.encode("utf-8"))
    result = CliRunner().invoke(cli, ["doctor", "--log", str(log), "--json"])
    assert result.exit_code == 0
    doc = json.loads(result.output)
    assert doc["decisive"] is None and doc["matches"] == []
    assert set(doc["unnamed"]) == {"reason", "kind", "title", "line_no", "line", "advice", "vetoed", "first_failure"}
    assert (doc["unnamed"]["reason"], doc["unnamed"]["kind"]) == ("outside", kind)
    assert doc["unnamed"] == scan_json(scan_path(log), str(log))["unnamed"]


def test_no_color_keeps_the_text_plain(tmp_path: Path):
    log = tmp_path / "build.log"
    log.write_bytes(OUTSIDE_STOPS[0][1].encode("utf-8"))
    result = CliRunner(env={"NO_COLOR": "1"}).invoke(cli, ["doctor", "--log", str(log)])
    assert result.exit_code == 0 and "\x1b[" not in result.output and "  do:" in result.output


# CPython's OSError text for Windows' ERROR_ACCESS_DENIED as pip prints it (a DLL held by a running Python), and the
# German system message for the same error (FormatMessage) as a pip run on a German Windows shows it
PERMISSION = [
    "Installing collected packages: llama-cpp-python\nERROR: Could not install packages due to an OSError: "
    "[WinError 5] Access is denied: 'C:\\\\Python311\\\\Lib\\\\site-packages\\\\llama_cpp\\\\lib\\\\llama.dll'\n"
    "Check the permissions.\n",
    "Installing collected packages: torch\nERROR: Could not install packages due to an OSError: [WinError 5] "
    "Zugriff verweigert: 'C:\\\\Python311\\\\Lib\\\\site-packages\\\\torch\\\\lib\\\\c10.dll'\n",
    PIP + "ERROR: Could not install packages due to an OSError: [Errno 13] Permission denied: "
    "'/usr/lib/python3/dist-packages/numpy'\n",
]


@pytest.mark.parametrize("text", PERMISSION, ids=["en-winerror5", "de-winerror5", "errno13"])
def test_a_permission_refused_in_the_last_lines_is_told_with_its_advice(text, tmp_path: Path):
    found = _scan(text, tmp_path)
    assert found.matches == ()
    why = found.unnamed
    assert why is not None and (why.reason, why.kind) == ("outside", "permission")
    assert "Python" in why.advice and why.line_no == text.count("\n", 0, text.index("ERROR")) + 1


def test_a_permission_refused_early_in_a_long_log_is_not_the_reason(tmp_path: Path):
    # a `find` warning at the start, then 200 lines of a build that show no outcome
    text = "find: '/root/.cache': Permission denied\n" + "".join(
        f"[{i}/900] Building CUDA object x{i}.o\n" for i in range(200)
    )
    why = _scan(text, tmp_path).unnamed
    assert why is not None and why.kind != "permission"


def test_a_permission_line_changes_no_named_cause(tmp_path: Path):
    # nvcc's own message names F07's cause; a permission line after it is not the reason and adds no id
    text = (
        "CMake Error at CMakeLists.txt:3 (project):\n  No CMAKE_CUDA_COMPILER could be found.\n"
        "rm: cannot remove 'build/CMakeCache.txt': Permission denied\n"
    )
    found = _scan(text, tmp_path)
    assert found.matches and found.unnamed is None
