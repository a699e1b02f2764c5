"""envmgr/verify/child.py and child_after.py: the scripts the TARGET Python runs. They are run here as verify
runs them (`python child.py MODEL N_TOKENS AFTER`, verify/run.py), once from a copy outside envmgr under
`python -I -S` (standard library only, child_after found beside it by path), and imported directly: both are
importable modules whose import runs nothing (child.py loads child_after.py from its own folder)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from envmgr.verify import child, child_after
from envmgr.verify.gguf import write_tiny_llama
from envmgr.verify.report import TAG, parse_run
from envmgr.verify.run import CHILD
from tests.conftest import EMBEDDED_PYTHON
from tests.fake_llama_cpp import cpu_only_package


def _run(script, args, env_extra, tmp_path, *flags):
    model = tmp_path / "tiny.gguf"
    write_tiny_llama(model)
    env = {"PATH": "/usr/bin:/bin", "SYSTEMROOT": "C:\\Windows", **env_extra}
    done = subprocess.run(
        [sys.executable, *flags, str(script), str(model), *args], capture_output=True, text=True, env=env, timeout=120
    )
    return done, parse_run(done.stdout, done.stderr, done.returncode)


@pytest.mark.skipif(EMBEDDED_PYTHON, reason="the embeddable CPython ignores PYTHONPATH")
def test_the_child_reports_every_stage_of_a_cpu_only_build(tmp_path):
    site = cpu_only_package(tmp_path)
    done, run = _run(CHILD, ["2", "json"], {"PYTHONPATH": str(site)}, tmp_path)
    assert done.returncode == 0, done.stderr
    assert all(line.startswith(TAG) for line in done.stdout.splitlines())
    assert run.order == (
        "package",
        "after",
        "import",
        "runtimes",
        "backend",
        "devices",
        "libraries",
        "model_error",
        "libraries",
        "done",
    )
    pkg = run.get("package")
    assert pkg["found"] is True
    assert pkg["lib_files"] == ["libggml-base.so", "libggml-cpu.so", "libggml.so", "libllama.so"]
    after = run.records("after")[0]
    assert after["module"] == "json" and after["ok"] is True and after["file"].endswith("json/__init__.py")
    assert run.get("import")["ok"] is True and run.get("import")["version"] == "0.0-fake"
    assert run.get("backend") == {
        "stage": "backend",
        "gpu_offload": False,
        "system_info": "CPU : SSE3 = 1 | AVX2 = 1 |",
    }
    assert run.get("model_error")["error_type"] == "ValueError"
    assert "offloaded 0/3 layers to GPU" in run.log  # llama.cpp's log: stderr, kept whole
    assert run.get("runtimes")["pid"] > 0 and isinstance(run.get("runtimes")["modules"], list)


def test_a_copy_outside_envmgr_runs_on_the_standard_library_alone(tmp_path):
    for name in ("child.py", "child_after.py"):
        shutil.copy(CHILD.with_name(name), tmp_path / name)
    done, run = _run(tmp_path / "child.py", ["1", "no_such_module_envmgr"], {}, tmp_path, "-I", "-S")
    assert done.returncode == 0, done.stderr
    assert "envmgr" not in done.stderr
    assert run.get("package")["found"] is False and run.order == ("package",)  # no llama_cpp without site


def test_child_after_lists_this_process_and_imports_the_apps_modules_in_order():
    assert child_after.after_modules(" torch, ,numpy ") == ["torch", "numpy"] and child_after.after_modules(None) == []
    if sys.platform.startswith("linux"):
        mods = child_after.loaded_modules()
        assert mods and all(m.startswith("/") for m in mods) and len(mods) == len(set(mods))
    said = []
    ok = child_after.import_after(["json", "no_such_module_envmgr", "csv"], lambda stage, **d: said.append((stage, d)))
    assert ok is False and [d["module"] for _, d in said] == ["json", "no_such_module_envmgr"]
    assert said[0][1]["ok"] is True and said[1][1] == {
        "module": "no_such_module_envmgr",
        "ok": False,
        "error_type": "ModuleNotFoundError",
        "error": "No module named 'no_such_module_envmgr'",
    }


def test_child_emits_one_tagged_json_line_per_stage(capsys):
    child.emit("backend", gpu_offload=True)
    child_after.emit_runtimes(child.emit)
    out = capsys.readouterr().out
    first, second = out.splitlines()
    assert first == TAG + json.dumps({"gpu_offload": True, "stage": "backend"})
    assert json.loads(second[len(TAG) :])["pid"] > 0
    run = parse_run(out, "", 0)
    assert run.order == ("backend", "runtimes") and run.get("backend")["gpu_offload"] is True


@pytest.mark.skipif(EMBEDDED_PYTHON, reason="the embeddable CPython ignores PYTHONPATH")
def test_a_package_whose_import_fails_still_gets_its_module_list(tmp_path):
    """The reuse check (binaries/winreuse.py) needs the process's modules exactly when the package's DLL
    failed to bind ([WinError 127] after the app's copy): the child lists them after a failed import too."""
    site = tmp_path / "site"
    (site / "llama_cpp").mkdir(parents=True)
    (site / "llama_cpp" / "__init__.py").write_text(
        "raise OSError(127, 'The specified procedure could not be found')\n"
    )
    done, run = _run(CHILD, ["1", "json"], {"PYTHONPATH": str(site)}, tmp_path)
    assert done.returncode == 0, done.stderr
    assert run.order == ("package", "after", "import", "runtimes")
    assert run.get("import")["ok"] is False and run.get("import")["error_type"] == "OSError"
    assert isinstance(run.get("runtimes")["modules"], list) and run.get("runtimes")["modules"]
