"""verify's ggml smoke test (envmgr/verify/child_any.py) against a real ggml: PyPI's pywhispercpp 1.5.1
manylinux wheel (CPU build; it ships whisper.cpp's libggml.so, libggml-base.so, libggml-cpu.so 0.13.1).

The probe is chosen by what a library exports (ggml's backend registry), not by the package's name, and
it computes [1,2,3,4] + [1,2,3,4] through the library's own ggml on a chosen device. Here no CUDA device
exists, so the probe is asked for the CPU device: the same calls (ggml_init by value, tensors, graph,
backend buffer, compute) that run on CUDA0 on the GPU machine. The child in the venv then reports the
wheel's devices with no CUDA one, and the judge names that F18 (it runs on the CPU).
"""

from __future__ import annotations

import json
import subprocess
import venv
from pathlib import Path

import pytest

from envmgr.verify import child_any
from envmgr.verify.anyjudge import AnyInputs, _smoke
from envmgr.verify.report import ChildRun, parse_run
from tests.conftest import need

pytestmark = [pytest.mark.linux]
CHILD = Path(child_any.__file__)
SPEC = "pywhispercpp==1.5.1"


@pytest.fixture(scope="module")
def whisper_python(tmp_path_factory) -> str:
    where = tmp_path_factory.mktemp("ggml") / "venv"
    venv.EnvBuilder(with_pip=True).create(where)
    py = str(where / "bin" / "python")
    done = subprocess.run(
        [py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", "--only-binary=:all:", SPEC],
        capture_output=True,
        text=True,
    )
    need(done.returncode == 0, f"pip could not install {SPEC}: {done.stderr[-300:]}")
    return py


def test_the_probe_computes_through_the_wheels_own_ggml(whisper_python):
    script = (
        f"import sys, json, glob, os; sys.path.insert(0, {str(CHILD.parent)!r}); import child_any as c; "
        "import pywhispercpp, _pywhispercpp; site = os.path.dirname(_pywhispercpp.__file__); "
        "libs = sorted(glob.glob(os.path.join(site, '*.so*'))); path, g = c.ggml_api(libs); "
        "print(json.dumps(c.smoke_ggml(path, g, want='CPU')))"
    )
    done = subprocess.run([whisper_python, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-800:]
    info = json.loads(done.stdout.strip().splitlines()[-1])
    assert info["kind"] == "ggml" and info["computed_on"] == "CPU"
    assert any(d.startswith("CPU: ") for d in info["devices"])
    assert info["status"] == 0 and info["result"] == [2.0, 4.0, 6.0, 8.0]


def test_the_child_reports_no_cuda_device_and_the_judge_says_cpu(whisper_python):
    done = subprocess.run([whisper_python, str(CHILD), "pywhispercpp"], capture_output=True, text=True, timeout=120)
    run = parse_run(done.stdout, done.stderr, done.returncode, False)
    smoke = run.get("smoke")
    assert smoke.get("ok") and smoke.get("kind") == "ggml", done.stdout[-800:]
    assert smoke.get("library", "").endswith(".so") and "computed_on" not in smoke
    assert [d.split(":")[0] for d in smoke["devices"]] == ["CPU"]
    step = _smoke(AnyInputs(run, "pywhispercpp"))
    assert step.status == "fail" and step.failure == "F18" and "no CUDA one" in step.summary


def _judged(rec: dict) -> tuple[str, str, str]:
    step = _smoke(AnyInputs(ChildRun({"smoke": {"ok": True, "kind": "ggml", **rec}}, ("smoke",), "", 0), "p"))
    return step.status, step.failure, step.summary


def test_the_judge_on_ggml_records():
    devices = ["CPU: Xeon", "CUDA0: NVIDIA H100 80GB HBM3"]
    assert _judged({"devices": devices, "computed_on": "CUDA0", "status": 0, "result": [2.0, 4.0, 6.0, 8.0]})[0] == "ok"
    assert (
        "ran on the GPU"
        in _judged({"devices": devices, "computed_on": "CUDA0", "status": 0, "result": [2.0, 4.0, 6.0, 8.0]})[2]
    )
    status, failure, summary = _judged(
        {"devices": devices, "computed_on": "CUDA0", "status": 1, "result": [0.0, 0.0, 0.0, 0.0]}
    )
    assert status == "fail" and "status 1" in summary and failure == ""


def test_the_probe_is_standard_library_only():
    # the child runs in the target Python, which may lack envmgr
    source = CHILD.read_text()
    assert "import envmgr" not in source and "from envmgr" not in source
