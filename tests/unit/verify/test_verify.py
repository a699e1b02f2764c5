"""`envmgr verify`: the GGUF writer against the `gguf` package's reader, the child's reports parsed and judged,
and the bad inputs of issue 15 end to end through the real child process.

The fake `llama_cpp` packages below are hand-made (no CPU-only or crashing build of llama-cpp-python fits in
a unit test): they behave the way the named situations do at the level verify looks at (import outcome,
llama_supports_gpu_offload(), the lib folder's files, how the process ends). The GPU run of the real
package is tests/gpu/verify_proof.sh (bench/results).
"""

from __future__ import annotations

import json
import struct
import sys
import textwrap
from pathlib import Path

import pytest

from envmgr.verify import gguf
from envmgr.verify.analyze import FAIL, OK, Inputs, analyze, passed
from envmgr.verify.report import TAG, death, parse_run
from tests.conftest import EMBEDDED_PYTHON


# ---- the GGUF writer ----------------------------------------------------------------------------


def test_tiny_llama_header_and_layout():
    data = gguf.tiny_llama()
    magic, version, n_tensors, n_kv = struct.unpack_from("<4sIQQ", data)
    assert (magic, version) == (b"GGUF", 3)
    spec = gguf.TinyLlama()
    assert n_tensors == 3 + 9 * spec.n_layer and n_kv == 20
    assert gguf.tiny_llama() == data  # deterministic


def test_the_gguf_package_reads_what_we_write(tmp_path):
    reader_mod = pytest.importorskip("gguf", reason="the gguf package (PyPI) is the reference reader")
    path = tmp_path / "tiny.gguf"
    gguf.write_tiny_llama(path)
    r = reader_mod.GGUFReader(str(path))
    assert r.fields["general.architecture"].contents() == "llama"
    assert r.fields["llama.block_count"].contents() == 2
    assert r.fields["llama.attention.layer_norm_rms_epsilon"].contents() == pytest.approx(1e-5)
    tokens = r.fields["tokenizer.ggml.tokens"].contents()
    assert tokens[:3] == ["<unk>", "<s>", "</s>"] and tokens[3] == "<0x00>"
    assert r.fields["tokenizer.ggml.token_type"].contents()[:4] == [2, 3, 3, 6]
    by_name = {t.name: t for t in r.tensors}
    emb, q = by_name["token_embd.weight"], by_name["blk.1.attn_q.weight"]
    assert list(emb.shape) == [128, len(tokens)] and emb.tensor_type.name == "F32"
    assert list(q.shape) == [128, 128] and q.tensor_type.name == "F16"
    assert by_name["blk.0.ffn_down.weight"].data.shape == (128, 256)  # numpy order: (rows, cols)
    assert float(by_name["output_norm.weight"].data.min()) == 1.0
    assert 0.01 < float(abs(q.data.astype("float32")).mean()) < 0.03


def test_gguf_strings_and_padding():
    out = gguf.gguf_bytes([("a", gguf.STRING, "é")], [gguf.Tensor("t", (3,), gguf.GGML_F32, b"\0" * 12)])
    assert b"\x02\x00\x00\x00\x00\x00\x00\x00\xc3\xa9" in out
    assert len(out) % gguf.ALIGNMENT == 0 and out.endswith(b"\0" * 12 + b"\0" * 20)


# ---- parsing and judging the child's report (hand-made logs in llama.cpp's formats) ---------------

GPU_LOG = textwrap.dedent("""\
    ggml_cuda_init: found 1 CUDA devices (Total VRAM: 81079 MiB):
      Device 0: NVIDIA H100 80GB HBM3, compute capability 9.0, VMM: yes, VRAM: 81079 MiB
    load_tensors: offloading output layer to GPU
    load_tensors: offloaded 3/3 layers to GPU
    load_tensors:        CUDA0 model buffer size =     0.83 MiB
    """)


def records(*recs) -> str:
    return "".join(TAG + json.dumps(r) + "\n" for r in recs)


PKG = {
    "stage": "package",
    "found": True,
    "python": "/v/bin/python",
    "version": "3.12.3",
    "dist_version": "0.3.36",
    "package_dir": "/v/site/llama_cpp",
    "lib_dir": "/v/site/llama_cpp/lib",
    "lib_files": ["libggml-base.so", "libggml-cpu.so", "libggml-cuda.so", "libggml.so", "libllama.so"],
}
IMPORT = {"stage": "import", "ok": True, "lib_path": "/v/site/llama_cpp/lib/libllama.so", "libraries": []}
BACKEND = {
    "stage": "backend",
    "gpu_offload": True,
    "system_info": "CUDA : ARCHS = 900 | USE_GRAPHS = 1 | PEER_MAX_BATCH_SIZE = 128 | CPU : SSE3 = 1 |",
}
DEVICES = {
    "stage": "devices",
    "available": True,
    "devices": [
        {"index": 0, "name": "CUDA0", "description": "NVIDIA H100 80GB HBM3", "type": 1, "memory_total": 85017362432},
        {"index": 1, "name": "CPU", "description": "Intel Xeon", "type": 0},
    ],
}
DONE = [
    {"stage": "loaded", "load_seconds": 0.4},
    {"stage": "generated", "tokens": list(range(8)), "gen_seconds": 0.02},
    {"stage": "done"},
]


class G:  # a Gpu as discovery gives it
    def __init__(self, cc="9.0"):
        self.index, self.name, self.compute_cap, self.driver_version = 0, "NVIDIA H100 80GB HBM3", cc, "580.1"


def judge(stdout, stderr="", rc=0, gpus=(G(),), **kw):
    return analyze(
        Inputs(parse_run(stdout, stderr, rc), "/v/bin/python", "envmgr install llama-cpp-python", tuple(gpus), **kw)
    )


def by(steps):
    return {s.name: s for s in steps}


def test_a_gpu_run_passes_with_the_offload_counted():
    steps = judge(records(PKG, IMPORT, BACKEND, DEVICES, *DONE), GPU_LOG)
    assert passed(steps), steps
    s = by(steps)
    assert s["offload"].summary.startswith("offloaded 3/3 layers to GPU")
    assert s["archs"].status == OK and "sm_90" in s["archs"].summary
    assert "NVIDIA H100" in s["devices"].summary


def test_cpu_build_is_f18_with_the_install_command():
    pkg = {**PKG, "lib_files": ["libggml-base.so", "libggml-cpu.so", "libggml.so", "libllama.so"]}
    backend = {"stage": "backend", "gpu_offload": False, "system_info": "CPU : SSE3 = 1 | AVX = 1 |"}
    steps = judge(
        records(pkg, IMPORT, backend, {"stage": "devices", "devices": [{"name": "CPU"}]}, *DONE),
        "load_tensors: offloaded 0/3 layers to GPU\n",
    )
    assert not passed(steps)
    b = by(steps)["backend"]
    assert (b.status, b.failure, b.fix_command) == (FAIL, "F18", "envmgr install llama-cpp-python")
    assert "llama.cpp: offloaded 0/3 layers to GPU" in by(steps)["offload"].evidence


def test_cpu_build_whose_model_run_crashes_still_says_f18_first():
    # As on the H200 (bench/results/2026-11-23-verify-gpu-h200.md): the CPU-only wheel's child died with
    # SIGSEGV while loading the tiny model; the verdict is F18, and the crash is reported, not hidden.
    pkg = {**PKG, "lib_files": ["libggml-base.so", "libggml-cpu.so", "libggml.so", "libllama.so"]}
    backend = {"stage": "backend", "gpu_offload": False, "system_info": "CPU : SSE3 = 1 |"}
    steps = judge(
        records(
            pkg,
            IMPORT,
            backend,
            {"stage": "devices", "devices": [{"name": "CPU"}]},
            {"stage": "libraries", "libraries": []},
        ),
        "print_info: n_layer_all = 2\n",
        rc=-11,
    )
    assert [s.failure for s in steps if s.status == FAIL] == ["F18"]
    assert "SIGSEGV" in by(steps)["offload"].summary


def test_wrong_architecture_is_f14():
    backend = {**BACKEND, "system_info": "CUDA : ARCHS = 1000,1200 | USE_GRAPHS = 1 |"}
    s = by(judge(records(PKG, IMPORT, backend, DEVICES, *DONE), GPU_LOG))["archs"]
    assert (s.status, s.failure) == (FAIL, "F14") and "9.0" in s.summary
    # Older archs only: the list does not say whether PTX was embedded; the model run decides.
    backend = {**BACKEND, "system_info": "CUDA : ARCHS = 860,890 | USE_GRAPHS = 1 |"}
    s = by(judge(records(PKG, IMPORT, backend, DEVICES, *DONE), GPU_LOG))["archs"]
    assert (s.status, s.failure) == ("warn", "F14")
    s = by(judge(records(PKG, IMPORT, backend, DEVICES, *DONE), GPU_LOG, gpus=(G("8.9"),)))["archs"]
    assert s.status == OK


def test_no_kernel_image_at_run_time_is_f14():
    log = GPU_LOG + "CUDA error: no kernel image is available for execution on the device\n"
    s = by(judge(records(PKG, IMPORT, BACKEND, DEVICES), log, rc=-6))["offload"]
    assert (s.status, s.failure) == (FAIL, "F14")


def test_no_gpu_is_f12_with_nvidia_smi_evidence_and_driver_too_old_is_f17():
    devices = {"stage": "devices", "available": True, "devices": [{"name": "CPU", "description": "x"}]}
    log = "ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected\n"
    steps = judge(records(PKG, IMPORT, BACKEND, devices, *DONE), log, gpus=())
    d = by(steps)["devices"]
    assert (d.status, d.failure) == (FAIL, "F12") and "nvidia-smi: no NVIDIA GPU visible" in d.evidence
    assert by(steps)["offload"].status == "skipped" and not passed(steps)
    log = "ggml_cuda_init: failed to initialize CUDA: CUDA driver version is insufficient for CUDA runtime version\n"
    assert by(judge(records(PKG, IMPORT, BACKEND, devices, *DONE), log))["devices"].failure == "F17"


def test_partial_offload_and_missing_tokens_fail():
    log = GPU_LOG.replace("3/3", "1/3")
    assert by(judge(records(PKG, IMPORT, BACKEND, DEVICES, *DONE), log))["offload"].failure == "F18"
    few = [DONE[0], {"stage": "generated", "tokens": [1, 2]}, DONE[2]]
    assert "2 of 8 tokens" in by(judge(records(PKG, IMPORT, BACKEND, DEVICES, *few), GPU_LOG))["offload"].summary


def test_import_failures_name_their_catalog_entry():
    def lib(err, **kw):
        rec = {"stage": "import", "ok": False, "error_type": "RuntimeError", "error": err}
        return by(judge(records(PKG, rec), **kw))["library"]

    s = lib(
        "Failed to load shared library 'C:\\\\x\\\\llama.dll': Could not find module 'C:\\\\x\\\\llama.dll' "
        "(or one of its dependencies).",
        dll_evidence=("missing: cudart64_12.dll (not in any searched folder)", "loader: llama_cpp"),
        dll_command="envmgr doctor --dll C:\\x\\llama.dll",
    )
    assert (
        s.failure == "F15"
        and "cudart64_12.dll not found" in s.summary
        and s.fix_command.startswith("envmgr doctor --dll")
    )
    assert lib("[WinError 3] The system cannot find the path specified: 'C:\\\\CUDA\\\\v11.2\\\\bin'").failure == "F16"
    assert lib("libcublas.so.13: cannot open shared object file: No such file or directory").failure == "F23"


# A negative return code is a POSIX signal; Windows' signal module numbers them otherwise (SIGABRT = 22).
_posix = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signal numbers")


@pytest.mark.parametrize(
    "rc,words",
    [
        pytest.param(-11, "SIGSEGV", marks=_posix),
        pytest.param(-6, "SIGABRT", marks=_posix),
        (0xC0000005, "access violation"),
        (3221225781, "DLL was not found"),
    ],
)
def test_death_in_words(rc, words):
    assert words in death(rc)


def test_not_installed_and_silent_child():
    s = by(judge(records({"stage": "package", "found": False, "python": "/p", "version": "3.12"})))["package"]
    assert s.status == FAIL and "not installed" in s.summary and s.fix_command == "envmgr install llama-cpp-python"
    s = judge("", "Traceback ...\nSyntaxError", rc=1)[0]
    assert s.status == FAIL and "reported nothing" in s.summary


# ---- the command, through the real child process, on hand-made llama_cpp packages ---------------------

FAKES = {
    "cpu": """
        def llama_supports_gpu_offload(): return False
        def llama_print_system_info(): return b"CPU : SSE3 = 1 | AVX2 = 1 |"
        class Llama:
            def __init__(self, **kw):
                import sys
                print("load_tensors: offloaded 0/3 layers to GPU", file=sys.stderr)
                raise ValueError("this fake does not run models")
        """,
    "segv": """
        import os, signal
        os.kill(os.getpid(), signal.SIGSEGV)
        """,
    "abort_in_cuda_init": """
        def llama_supports_gpu_offload():   # the first call that registers the backends (CUDA init)
            import os, sys
            print("ggml_cuda_init: found 1 CUDA devices:", file=sys.stderr)
            sys.stderr.flush()
            os.abort()
        """,
    # A build whose library resolves only through an envmgr environment's variables (the recipe's CUDA
    # lib folder): in the user's own plain shell the load fails as a missing libcudart does.
    "needs_recipe_env": """
        import os
        if "/opt/recipe-cuda/lib64" not in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep):
            raise RuntimeError("Failed to load shared library 'libllama.so': libcudart.so.12: cannot open "
                               "shared object file: No such file or directory")
        def llama_supports_gpu_offload(): return False
        def llama_print_system_info(): return b"CPU : SSE3 = 1 | AVX2 = 1 |"
        """,
}


def fake_package(root: Path, kind: str) -> Path:
    pkg = root / kind / "llama_cpp"
    (pkg / "lib").mkdir(parents=True)
    for name in ("libllama.so", "libggml.so", "libggml-base.so", "libggml-cpu.so"):
        (pkg / "lib" / name).write_bytes(b"")
    (pkg / "__init__.py").write_text(textwrap.dedent(FAKES[kind]).lstrip() + "\n__version__ = '0.0-fake'\n")
    return root / kind


def cli(run_envmgr, *args):
    return run_envmgr("verify", *args)


_full_python = pytest.mark.skipif(
    EMBEDDED_PYTHON,
    reason="the embeddable CPython ignores PYTHONPATH and cannot "
    "make a venv; verify's Windows path has a target Python of its own in "
    "tests/winpy/test_verify_windows.py",
)


@pytest.fixture
def run_envmgr(monkeypatch):
    from click.testing import CliRunner

    from envmgr.cli.main import cli as group

    def go(*args, pythonpath=None):
        monkeypatch.setenv("NO_COLOR", "1")
        if pythonpath is not None:
            monkeypatch.setenv("PYTHONPATH", str(pythonpath))
        res = CliRunner().invoke(group, list(args), catch_exceptions=False)
        return res.exit_code, res.stdout

    return go


@_full_python
def test_cli_cpu_only_install_is_exit_1_f18(run_envmgr, tmp_path):
    code, out = run_envmgr("verify", "--json", pythonpath=fake_package(tmp_path, "cpu"))
    data = json.loads(out)
    assert code == 1 and data["failure"] == "F18" and data["gpu_did_the_work"] is False
    step = next(s for s in data["steps"] if s["name"] == "backend")
    assert step["fix_command"].startswith("envmgr install llama-cpp-python")


@_full_python
def test_cli_verifies_in_a_plain_process_without_the_active_envmgr_environment(run_envmgr, tmp_path, monkeypatch):
    """Run inside an activated envmgr environment (ENVMGR_ACTIVE/ENVMGR_RESTORE as `envmgr shell` sets them,
    the recipe's LD_LIBRARY_PATH among its changes), verify's child is a plain process: the activation is
    left out, so a library that loads only through it fails, as it would in a new terminal. --inherit-env
    keeps envmgr's environment: the same package then imports (and is judged CPU-only, its next truth)."""
    monkeypatch.setenv("ENVMGR_ACTIVE", "cuda-12.4")
    monkeypatch.setenv("ENVMGR_RESTORE", json.dumps({"LD_LIBRARY_PATH": None}))
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/recipe-cuda/lib64")
    site = fake_package(tmp_path, "needs_recipe_env")
    code, out = run_envmgr("verify", "--json", pythonpath=site)
    plain = json.loads(out)
    library = next(s for s in plain["steps"] if s["name"] == "library")
    assert code == 1 and plain["environment"] == "plain" and library["status"] == FAIL
    assert "libcudart.so.12" in json.dumps(library)
    code, out = run_envmgr("verify", "--json", "--inherit-env", pythonpath=site)
    inherited = json.loads(out)
    assert code == 1 and inherited["environment"] == "inherited" and inherited["failure"] == "F18"
    assert next(s for s in inherited["steps"] if s["name"] == "library")["status"] == OK
    code, out = run_envmgr("verify", pythonpath=site)
    assert "a plain process (the active envmgr environment cuda-12.4 left out)" in out.splitlines()[0]


@pytest.mark.parametrize("kind,signal_name", [("segv", "SIGSEGV"), ("abort_in_cuda_init", "SIGABRT")])
def test_cli_a_library_that_crashes_is_exit_1_with_the_signal(run_envmgr, tmp_path, kind, signal_name):
    if sys.platform == "win32":
        pytest.skip("POSIX signals")
    code, out = run_envmgr("verify", pythonpath=fake_package(tmp_path, kind))
    assert code == 1 and signal_name in out and "Traceback" not in out
    if kind == "segv":
        assert "while importing llama_cpp" in out
    else:
        assert "while asking the backend" in out and "ggml_cuda_init: found 1 CUDA devices" in out


@_full_python
def test_cli_not_installed_is_exit_1_with_the_install_command(run_envmgr, tmp_path):
    import subprocess
    import venv

    venv.create(tmp_path / "v", with_pip=False)  # a Python that surely has no llama_cpp
    py = next(p for p in (tmp_path / "v" / "bin" / "python", tmp_path / "v" / "Scripts" / "python.exe") if p.exists())
    code, out = run_envmgr("verify", "--python", str(py), pythonpath="")
    assert code == 1 and "not installed" in out and f"envmgr install llama-cpp-python --python {py}" in out


def test_cli_bad_python_and_a_name_that_is_no_distribution_are_exit_2(run_envmgr, tmp_path):
    """Issue 21: any installed distribution is verified now (`verify numpy` answers, exit 1: CPU-only);
    a name no distribution can have is bad usage."""
    from envmgr.cli.main import main

    for args in (["verify", "--python", str(tmp_path / "nope" / "python")], ["verify", "../numpy"], ["verify", "a b"]):
        with pytest.raises(SystemExit) as exc:
            main(args)
        assert exc.value.code == 2


# ---- `envmgr install llama-cpp-python [SPEC]`: which calls take the flow, and what SPEC is ---------


def test_install_flow_grammar():
    from envmgr.commands.install_flow import flow_package, split_args

    assert flow_package(None, ["llama-cpp-python"], None) == "llama-cpp-python"
    assert flow_package(None, ["llama_cpp_python==0.3.36"], None) == "llama-cpp-python"
    assert flow_package("llama-cpp-python", ["llama-cpp-python==0.3.36"], None) is None  # the old form
    assert flow_package(None, ["--no-index", "x.tar.gz"], None) is None
    assert flow_package(None, ["numpy"], None) is None
    assert flow_package(None, [], "/opt/llama/build/bin") == "llama-cpp-python"
    pkg = "llama-cpp-python"
    assert split_args(pkg, [pkg]) == ([], pkg)
    assert split_args(pkg, [pkg, "./llama_cpp_python-0.3.36.tar.gz"]) == ([], "./llama_cpp_python-0.3.36.tar.gz")
    assert split_args(pkg, [pkg, "--no-index", "--find-links", "w", "s.tar.gz"]) == (
        ["--no-index", "--find-links", "w"],
        "s.tar.gz",
    )
    assert split_args(pkg, [pkg, "--find-links", "w"]) == (["--find-links", "w"], pkg)
    assert split_args(pkg, ["llama-cpp-python==0.3.36"]) == ([], "llama-cpp-python==0.3.36")
