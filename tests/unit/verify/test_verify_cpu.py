"""verify's `cpu` step (verify/cpuvariant.py, issue 37): which ggml CPU variant loaded, by ggml's own log line
(`load_backend: loaded CPU backend from <path>`, GGML_LOG_INFO in ggml/src/ggml-backend-reg.cpp), else the
variants the package carries and the one ggml's rule takes on this CPU as the target Python reads it.

The llama_cpp packages are hand-made fakes, as in test_install_flow.py: their lib folder holds empty files
named as a GGML_BACKEND_DL build names its CPU variants, and they print what such a build prints.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from envmgr.verify.analyze import OK, WARN
from envmgr.verify.cpuvariant import cpu_step, loaded_variant
from envmgr.wheels import cpucode
from tests.conftest import run_cli
from tests.unit.commands.test_install_flow import GPU, _full_python

HASWELL = cpucode.Cpu(frozenset({"sse4_2", "avx", "avx2", "fma", "f16c", "bmi2"}), "test")
FILES = ["ggml-base.dll", "ggml-cpu-haswell.dll", "ggml-cpu-skylakex.dll", "ggml-cpu-x64.dll", "ggml-cuda.dll"]


def test_ggml_s_own_line_names_the_variant_that_loaded():
    log = (
        "load_backend: loaded CUDA backend from C:\\v\\llama_cpp\\lib\\ggml-cuda.dll\n"
        "load_backend: loaded CPU backend from C:\\v\\llama_cpp\\lib\\ggml-cpu-haswell.dll\r\n"
    )
    assert loaded_variant(log) == (
        "haswell",
        "load_backend: loaded CPU backend from C:\\v\\llama_cpp\\lib\\ggml-cpu-haswell.dll",
    )
    step = cpu_step(log, FILES, cpucode.UNKNOWN)
    assert step is not None and step.status == OK and step.summary == "ggml loaded the CPU variant haswell"
    assert step.evidence[1] == "carries ggml-cpu variants x64 haswell skylakex"


def test_without_the_line_the_variant_ggml_would_take_here_and_a_cpu_none_runs_on():
    step = cpu_step("", FILES, HASWELL)
    assert step is not None and step.status == OK
    assert step.summary.startswith("this CPU would take ggml-cpu-haswell by ggml's order")
    old = cpu_step(
        "",
        ["ggml-cpu-haswell.dll", "ggml-cpu-skylakex.dll"],
        cpucode.Cpu(frozenset({"sse4_2", "avx"}), "the target Python"),
    )
    assert old is not None and old.status == WARN
    assert old.summary.startswith("none of the ggml-cpu variants runs on this CPU: the lowest, haswell, needs F16C")
    assert cpu_step("", ["libggml-cpu.so", "libggml-cuda.so"], HASWELL) is None  # no variants: no step


@_full_python
def test_verify_reports_the_variant_from_the_log_or_from_this_cpu(tmp_path):
    site = tmp_path / "site"
    lib = site / "llama_cpp" / "lib"
    lib.mkdir(parents=True)
    for name in ("libllama.so", "libggml.so", "libggml-cuda.so", "libggml-cpu-haswell.so", "libggml-cpu-skylakex.so"):
        (lib / name).write_bytes(b"")
    said = f'print("load_backend: loaded CPU backend from {lib}/libggml-cpu-skylakex.so", file=sys.stderr)\n'
    env = {"ENVMGR_CACHE_DIR": str(tmp_path / "c"), "ENVMGR_CONFIG_DIR": str(tmp_path / "cfg"), "PYTHONPATH": str(site)}
    source = textwrap.dedent(GPU).lstrip() + "__version__ = '0.0-fake'\n"
    for log_line in (said, ""):
        (site / "llama_cpp" / "__init__.py").write_text(source.replace("import sys\n", "import sys\n" + log_line, 1))
        doc = json.loads(run_cli("verify", "--json", env=env).stdout)
        step = next(s for s in doc["steps"] if s["name"] == "cpu")
        if log_line:
            assert step["status"] == "ok" and step["summary"] == "ggml loaded the CPU variant skylakex"
        else:
            out = subprocess.run(
                [sys.executable, "-c", cpucode.CPU_SCRIPT], capture_output=True, text=True, check=True
            ).stdout
            here = cpucode.ggml_choice(("haswell", "skylakex"), cpucode.parse_cpu(json.loads(out), "here"))
            if here:
                assert step["summary"].startswith(f"this CPU would take ggml-cpu-{here} by ggml's order")
            else:
                assert step["status"] == "warn" and "none of the ggml-cpu variants runs" in step["summary"]
            assert Path(sys.executable).name in " ".join(step["evidence"])
