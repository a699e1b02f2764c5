"""envmgr/verify/render.py: the verdict as text and as JSON (docs/json.md `verify`), from a child's records
(written here in child.py's own format) and the steps analyze.py gives."""

from __future__ import annotations

import json

from envmgr.verify.analyze import FAIL, OK, SKIPPED, Step
from envmgr.verify.render import SCHEMA, render_verdict, verdict_json
from envmgr.verify.report import TAG, parse_run
from envmgr.verify.run import Verdict

PY = "/home/u/.venv/bin/python"


def _run():
    recs = [
        {"stage": "package", "found": True},
        {
            "stage": "after",
            "module": "torch",
            "ok": True,
            "version": "2.5.1",
            "file": "/t/torch/__init__.py",
            "libraries": ["/t/libgomp.so.1"],
        },
        {"stage": "runtimes", "modules": ["/t/libgomp.so.1", "/l/libiomp5.so"]},
        {"stage": "done"},
    ]
    log = "load_tensors: offloaded 3/3 layers to GPU\n"
    return parse_run("".join(TAG + json.dumps(r) + "\n" for r in recs), log, 0)


def _plain(text: str, *styles: str) -> str:
    return text


def _painted(text: str, *styles: str) -> str:
    return f"<{','.join(styles)}>{text}</>"


GOOD = (
    Step("package", OK, "llama-cpp-python 0.3.16", ("python 3.12.4", "a", "b", "c")),
    Step("offload", OK, "3/3 layers on the GPU"),
)
BAD = (
    Step("package", OK, "llama-cpp-python 0.3.16"),
    Step(
        "backend",
        FAIL,
        "a CPU-only build",
        ("e1", "e2", "e3", "e4"),
        "F18",
        "rebuild with CUDA",
        "envmgr install llama-cpp-python",
    ),
    Step("offload", SKIPPED, "nothing can be offloaded"),
)


def test_json_carries_steps_child_after_records_and_duplicate_runtimes():
    v = Verdict("llama-cpp-python", PY, BAD, _run(), 911072, 1.234, "plain", "a plain process")
    data = verdict_json(v)
    assert data["schema"] == SCHEMA and data["ok"] is False and data["gpu_did_the_work"] is False
    assert data["failure"] == "F18" and data["proof"] is None and data["seconds"] == 1.23
    assert data["steps"][1] == {
        "name": "backend",
        "status": FAIL,
        "summary": "a CPU-only build",
        "evidence": ["e1", "e2", "e3", "e4"],
        "failure": "F18",
        "fix": "rebuild with CUDA",
        "fix_command": "envmgr install llama-cpp-python",
    }
    assert data["steps"][0]["failure"] is None and data["offloaded"] == ["3/3"]
    assert data["child"] == {"exit_code": 0, "timed_out": False, "stages": ["package", "after", "runtimes", "done"]}
    assert data["after"] == [
        {
            "module": "torch",
            "ok": True,
            "version": "2.5.1",
            "file": "/t/torch/__init__.py",
            "libraries": ["/t/libgomp.so.1"],
            "error": None,
        }
    ]
    dup = data["duplicate_runtimes"]
    assert [(d["family"], d["what"], d["paths"]) for d in dup] == [
        ("OpenMP", ["GNU OpenMP", "Intel OpenMP"], ["/t/libgomp.so.1", "/l/libiomp5.so"])
    ]
    json.dumps(data)


def test_text_shows_a_failure_with_all_its_evidence_and_its_fix():
    v = Verdict("llama-cpp-python", PY, BAD, _run(), 1, 2.0, "plain", "a plain process")
    text = render_verdict(v, _plain)
    assert text.splitlines() == [
        f"envmgr verify llama-cpp-python ({PY}, a plain process)",
        "OK      package: llama-cpp-python 0.3.16",
        "FAIL    backend [F18]: a CPU-only build",
        "          - e1",
        "          - e2",
        "          - e3",
        "          - e4",
        "          fix: rebuild with CUDA",
        "          run: envmgr install llama-cpp-python",
        "SKIPPED offload: nothing can be offloaded",
        "NOT verified: F18: a CPU-only build",
    ]
    assert "<red,bold>FAIL   </>" in render_verdict(v, _painted)


def test_text_of_a_pass_shows_three_lines_of_evidence_and_the_time():
    v = Verdict("llama-cpp-python", PY, GOOD, _run(), 1, 2.04)
    assert v.ok and v.proof == "ran"
    lines = render_verdict(v, _plain).splitlines()
    assert lines[0] == f"envmgr verify llama-cpp-python ({PY})"
    assert lines[2:5] == ["          - python 3.12.4", "          - a", "          - b"]
    assert lines[-1] == "the GPU did the work (2.0 s)"
    assert render_verdict(v, _painted).splitlines()[-1] == "<green,bold>the GPU did the work</> (2.0 s)"
