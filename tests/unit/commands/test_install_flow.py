"""`envmgr install llama-cpp-python [SPEC]` past its argument parsing: doctor's blocking findings on
recorded Windows machines (tests/machines), `--fix`, `--prebuilt-lib DIR`, the short report (text and
--json), a verify failure after install, and the bad inputs of issue 15 that test_verify.py lacked.

The llama_cpp packages here are hand-made fakes, as in test_verify.py (no CUDA or CPU-only build of
llama-cpp-python fits in a unit test): they report what the named situation reports at the level verify
reads (llama_supports_gpu_offload(), llama_print_system_info(), llama.cpp's log lines on stderr). The
build routes (built, cache hit, index) are tests/linux/test_install_flow_e2e.py.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import EMBEDDED_PYTHON, MACHINES, run_cli

# Its doctor fails F01 (no CUDA MSBuild integration: a recipe route) and F24 (no cuBLAS: no route), and
# nothing the prebuilt route checks (F17, F23).
VS2026 = str(MACHINES / "vs2026-vs2022.toml")

GPU = """
    import sys
    def llama_supports_gpu_offload():
        print("ggml_cuda_init: found 1 CUDA devices:", file=sys.stderr)
        print("  Device 0: NVIDIA H100 80GB HBM3, compute capability 9.0, VMM: yes", file=sys.stderr)
        return True
    def llama_print_system_info(): return b"CUDA : ARCHS = 900 | USE_GRAPHS = 1 | CPU : SSE3 = 1 |"
    class Llama:
        def __init__(self, **kw):
            print("load_tensors: offloaded 3/3 layers to GPU", file=sys.stderr)
        def tokenize(self, text): return [1, 2, 3]
        def generate(self, prompt, temp=0.0):
            while True:
                yield 7
        def detokenize(self, tokens): return b"x" * len(tokens)
    """
# A CUDA build on a machine without a usable GPU: llama.cpp's own message when no device is there.
NO_GPU = """
    import sys
    def llama_supports_gpu_offload():
        print("ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected", file=sys.stderr)
        return True
    def llama_print_system_info(): return b"CUDA : ARCHS = 900 | USE_GRAPHS = 1 | CPU : SSE3 = 1 |"
    class Llama:
        def __init__(self, **kw):
            print("load_tensors: offloaded 0/3 layers to GPU", file=sys.stderr)
            raise ValueError("this fake does not run models")
    """


# The fake llama_cpp reaches verify's child through PYTHONPATH, which the embeddable CPython ignores.
_full_python = pytest.mark.skipif(
    EMBEDDED_PYTHON,
    reason="the embeddable CPython ignores PYTHONPATH; verify's Windows path is tests/winpy/test_verify_windows.py",
)


def fake_llama(root: Path, source: str) -> Path:
    pkg = root / "site" / "llama_cpp"
    (pkg / "lib").mkdir(parents=True)
    for name in ("libllama.so", "libggml.so", "libggml-base.so", "libggml-cuda.so"):
        (pkg / "lib" / name).write_bytes(b"")
    (pkg / "__init__.py").write_text(textwrap.dedent(source).lstrip() + "\n__version__ = '0.0-fake'\n")
    return root / "site"


def lib_folder(root: Path, cuda: bool) -> Path:
    """A llama.cpp build folder as --prebuilt-lib sees it (names only: the fake package loads nothing)."""
    win = sys.platform == "win32"
    names = ["llama.dll", "ggml.dll"] if win else ["libllama.so", "libggml.so"]
    names += (["ggml-cuda.dll"] if win else ["libggml-cuda.so"]) if cuda else []
    folder = root / ("build-cuda" if cuda else "build-cpu")
    folder.mkdir()
    for name in names:
        (folder / name).write_bytes(b"")
    return folder


def install(tmp_path, *args, pythonpath=None, machine=VS2026):
    env = {
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "ENVMGR_WHEEL_INDEX": "",
    }
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return run_cli(*(("--machine", machine) if machine else ()), "install", *args, env=env)


def errors(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("envmgr: error:")]


# ---- doctor ----------------------------------------------------------------------------------------


def test_blocking_findings_stop_the_flow_with_their_fix(tmp_path):
    r = install(tmp_path, "llama-cpp-python")
    assert r.code == 1 and "Traceback" not in r.stderr
    assert errors(r.stderr) == ["envmgr: error: envmgr doctor found 2 blocking problem(s): F01, F24; nothing was built"]
    assert "  fix: envmgr fix-msbuild --vs" in r.stderr  # F01's own fix command
    assert "select the library components cublas_dev_13.0" in r.stderr  # F24's
    assert "add --fix to take the safe route for F01" in r.stderr
    assert not (tmp_path / "cache" / "wheels").exists() and r.stdout == ""


def test_fix_leaves_the_routable_finding_to_the_recipe_and_still_stops_on_the_rest(tmp_path):
    r = install(tmp_path, "--fix", "llama-cpp-python")
    assert r.code == 1
    assert errors(r.stderr) == ["envmgr: error: envmgr doctor found 1 blocking problem(s): F24; nothing was built"]
    assert "add --fix" not in r.stderr and not (tmp_path / "cache" / "wheels").exists()
    # --fix given after the package is the same flag (start_flow takes it from the pip arguments)
    assert errors(install(tmp_path, "llama-cpp-python", "--fix").stderr) == errors(r.stderr)


def test_sort_findings_on_the_recorded_machines_findings():
    """The split itself, on the real findings of the recorded machine: F01 has the recipe's no-admin
    generator route, F24 (a missing toolkit component) has none; F14-F20 describe the install the flow
    replaces; the prebuilt route compiles nothing and is stopped by the driver checks only."""
    from envmgr.commands.install_flow import RECIPE_ROUTES, sort_findings
    from envmgr.doctor.run import gather, run_checks
    from envmgr.host.recorded import load_machine
    from envmgr.snapshot.selectors import Selectors

    findings = run_checks(gather(load_machine(VS2026), Selectors()))
    ids = lambda fs: [f.id for f in fs]  # noqa: E731
    assert ids(sort_findings(findings, False, False)[0]) == ["F01", "F24"]
    blocking, routed = sort_findings(findings, True, False)
    assert ids(blocking) == ["F24"] and ids(routed) == ["F01"] and "no admin" in RECIPE_ROUTES["F01"]
    assert sort_findings(findings, False, True) == ([], [])


# ---- --prebuilt-lib -------------------------------------------------------------------------------


def test_prebuilt_folder_that_does_not_exist_is_exit_2_in_one_line(tmp_path):
    r = install(tmp_path, "--prebuilt-lib", str(tmp_path / "nope"), "llama-cpp-python")
    assert r.code == 2 and errors(r.stderr) == [f"envmgr: error: --prebuilt-lib {tmp_path / 'nope'}: no such folder"]
    assert "doctor" not in r.stderr and "Traceback" not in r.stderr  # refused before anything slow


def test_prebuilt_folder_without_the_cuda_backend_is_exit_1_f18(tmp_path):
    folder = lib_folder(tmp_path, cuda=False)
    r = install(tmp_path, "--prebuilt-lib", str(folder), "llama-cpp-python")
    assert r.code == 1 and len(errors(r.stderr)) == 1
    assert "is a CPU-only build of llama.cpp" in r.stderr and "(F18)" in r.stderr and "-DGGML_CUDA=on" in r.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    r = install(tmp_path, "--prebuilt-lib", str(empty), "llama-cpp-python")
    assert r.code == 2 and ("no libllama.so there" in r.stderr or "no llama.dll there" in r.stderr)


@_full_python
def test_prebuilt_report_text_names_the_route_the_gpu_and_the_layers(tmp_path):
    folder = lib_folder(tmp_path, cuda=True)
    r = install(tmp_path, "--prebuilt-lib", str(folder), "llama-cpp-python", pythonpath=fake_llama(tmp_path, GPU))
    assert r.code == 0, r.stderr
    report = r.stdout[r.stdout.index("envmgr install llama-cpp-python:") :].splitlines()
    assert report[0] == "envmgr install llama-cpp-python: recipe llama-cpp-python-prebuilt (from --prebuilt-lib)"
    assert f"  prebuilt library: {folder} (LLAMA_CPP_LIB_PATH)" in report
    assert "  GPU: ggml_cuda_init: found 1 CUDA devices:" in report and "  layers offloaded: 3/3" in report
    assert "the GPU did the work" in r.stdout and "NOT verified" not in r.stderr


@_full_python
def test_prebuilt_report_json(tmp_path):
    folder = lib_folder(tmp_path, cuda=True)
    r = install(
        tmp_path, "--json", "--prebuilt-lib", str(folder), "llama-cpp-python", pythonpath=fake_llama(tmp_path, GPU)
    )
    data = r.json()
    assert r.code == 0 and data["schema"] == 1 and data["ok"] is True
    assert (data["recipe"], data["recipe_from"], data["spec"]) == (
        "llama-cpp-python-prebuilt",
        "--prebuilt-lib",
        "llama-cpp-python",
    )
    assert data["wheel"] is None and data["prebuilt_lib"] == str(folder)
    assert data["layers_offloaded"] == "3/3" and "CUDA devices" in data["gpu"]
    assert set(data["seconds"]) == {"doctor", "verify"}
    assert data["verify"]["gpu_did_the_work"] is True and data["verify"]["offloaded"] == ["3/3"]


@_full_python
def test_a_verify_failure_after_install_says_so_and_exits_1(tmp_path):
    folder = lib_folder(tmp_path, cuda=True)
    site = fake_llama(tmp_path, NO_GPU)
    r = install(tmp_path, "--prebuilt-lib", str(folder), "llama-cpp-python", pythonpath=site)
    assert r.code == 1
    assert "envmgr: installed, but NOT verified on the GPU: F12: the backend sees no CUDA device" in r.stderr
    assert "NOT verified: F12" in r.stdout and "the GPU did the work" not in r.stdout
    data = install(tmp_path, "--json", "--prebuilt-lib", str(folder), "llama-cpp-python", pythonpath=site).json()
    assert data["ok"] is False and data["verify"]["failure"] == "F12" and data["layers_offloaded"] == "0/3"


# ---- `envmgr verify`: the bad input test_verify.py did not cover through the real child ------------


@_full_python
def test_verify_with_no_gpu_is_exit_1_f12_with_the_evidence(tmp_path):
    """This machine has no NVIDIA GPU (nvidia-smi sees none), so the evidence is this machine's own."""
    from envmgr.discover.gpu import discover_gpus
    from envmgr.host.live import LiveHost

    if discover_gpus(LiveHost())[0]:
        pytest.skip("a GPU is visible here: the no-GPU evidence cannot be this machine's")
    r = run_cli("verify", "--json", env={"PYTHONPATH": str(fake_llama(tmp_path, NO_GPU))})
    data = r.json()
    assert r.code == 1 and data["failure"] == "F12" and data["gpu_did_the_work"] is False
    step = next(s for s in data["steps"] if s["name"] == "devices")
    assert "ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected" in step["evidence"]
    assert "nvidia-smi: no NVIDIA GPU visible" in step["evidence"] and step["fix_command"] == "nvidia-smi"
    assert next(s for s in data["steps"] if s["name"] == "offload")["status"] == "skipped"


def test_verify_under_a_recorded_machine_is_refused(tmp_path):
    r = run_cli("--machine", VS2026, "verify")
    assert r.code == 2 and len(errors(r.stderr)) == 1 and "cannot replay a recorded machine" in r.stderr


@_full_python
def test_install_flow_verifies_on_this_machine_even_under_machine(tmp_path):
    """--machine describes the toolchain for doctor; pip and verify run here (a record cannot run Python)."""
    folder = lib_folder(tmp_path, cuda=True)
    r = install(
        tmp_path, "--json", "--prebuilt-lib", str(folder), "llama-cpp-python", pythonpath=fake_llama(tmp_path, GPU)
    )
    assert json.loads(r.stdout)["verify"]["python"] == sys.executable


def _documented_keys(heading: str) -> set[str]:
    """The top-level keys of the JSON example under heading in docs/json.md (two-space indented)."""
    import re

    from tests.conftest import ROOT

    doc = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    block = doc[doc.index(heading) :].split("```json", 1)[1].split("```", 1)[0]
    return set(re.findall(r'^  "(\w+)":', block, flags=re.M))


@_full_python
def test_docs_json_md_names_every_key_of_both_documents(tmp_path):
    folder = lib_folder(tmp_path, cuda=True)
    data = install(
        tmp_path, "--json", "--prebuilt-lib", str(folder), "llama-cpp-python", pythonpath=fake_llama(tmp_path, GPU)
    ).json()
    assert _documented_keys("## `envmgr install llama-cpp-python --json`") == set(data)
    assert _documented_keys("## `envmgr verify --json`") == set(data["verify"])
