"""`envmgr verify --after MODULE` (issue 37, deliverable 2) with real shared libraries and the real child:
two tiny libraries built here by gcc and named as two OpenMP runtimes (Intel's libiomp5.so, GNU's
libgomp.so.1), an "app" module that loads one through ctypes, and a package that loads the other.

Imported after the app, in one process, verify names both paths; without --after only the package's
runtime is loaded and nothing is flagged. Run for both verifiers: llama-cpp-python's (a hand-made
llama_cpp package, as tests/unit/verify/test_verify.py makes them) and any distribution's (a dist-info laid
out as pip writes it).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or shutil.which("gcc") is None, reason="gcc and ELF shared libraries"
)

LLAMA = """
    import ctypes, os
    _omp = ctypes.CDLL(os.path.join(os.path.dirname(__file__), "lib", "libgomp.so.1"))
    def llama_supports_gpu_offload(): return False
    def llama_print_system_info(): return b"CPU : SSE3 = 1 | AVX2 = 1 | OPENMP = 1 |"
    __version__ = "0.0-fake"
    """


def shared(folder: Path, name: str) -> Path:
    src = folder / "omp.c"
    src.write_text("int omp_get_max_threads(void) { return 1; }\n")
    out = folder / name
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(src)], check=True)
    return out


@pytest.fixture
def layout(tmp_path):
    """(PYTHONPATH for the child, the app's Intel OpenMP, the llama_cpp package's GNU OpenMP)."""
    native = tmp_path / "native"
    native.mkdir()
    iomp = shared(native, "libiomp5.so")
    app = tmp_path / "app"
    app.mkdir()
    (app / "myapp.py").write_text(f"import ctypes\n_omp = ctypes.CDLL({str(iomp)!r})\n")
    (app / "broken_app.py").write_text("raise RuntimeError('the app needs a licence server')\n")
    lib = tmp_path / "site" / "llama_cpp" / "lib"
    lib.mkdir(parents=True)
    gomp = shared(lib, "libgomp.so.1")
    for name in ("libllama.so", "libggml.so", "libggml-base.so"):
        (lib / name).write_bytes(b"")
    (lib.parent / "__init__.py").write_text(textwrap.dedent(LLAMA).lstrip())
    return f"{tmp_path / 'site'}:{app}", iomp, gomp


def verify(pythonpath: str, *args: str):
    out = run_cli("verify", *args, "--json", env={"PYTHONPATH": pythonpath})
    return out.code, json.loads(out.stdout), out


def steps(doc) -> dict:
    return {s["name"]: s for s in doc["steps"]}


def test_llama_cpp_after_the_app_names_both_openmp_runtimes(layout):
    path, iomp, gomp = layout
    code, doc, _ = verify(path, "--after", "myapp")
    s = steps(doc)
    assert code == 1 and doc["failure"] == "F18"  # the fake is a CPU build: its own truth, unchanged
    assert doc["steps"][0]["name"] == "after" and s["after"]["status"] == "ok"
    assert any(str(iomp) in e for e in s["after"]["evidence"])
    assert s["runtimes"]["status"] == "warn" and s["runtimes"]["summary"].endswith("OpenMP")
    line = s["runtimes"]["evidence"][0]
    assert str(iomp) in line and str(gomp) in line and "Intel OpenMP" in line and "GNU OpenMP" in line
    assert "KMP_DUPLICATE_LIB_OK" in s["runtimes"]["fix"]
    (dup,) = doc["duplicate_runtimes"]
    assert dup["family"] == "OpenMP" and sorted(dup["paths"]) == sorted([str(iomp), str(gomp)])
    assert [a["module"] for a in doc["after"]] == ["myapp"] and doc["after"][0]["ok"] is True
    assert doc["child"]["stages"][:3] == ["package", "after", "import"] and "runtimes" in doc["child"]["stages"]


def test_llama_cpp_without_after_has_one_runtime_and_no_duplicate(layout):
    path, iomp, gomp = layout
    code, doc, _ = verify(path)
    s = steps(doc)
    assert "after" not in s and doc["after"] == [] and doc["duplicate_runtimes"] == []
    assert s["runtimes"]["status"] == "ok" and str(iomp) not in json.dumps(doc)


def test_the_text_report_names_both_paths_and_the_fix(layout):
    path, iomp, gomp = layout
    out = run_cli("verify", "--after", "myapp", env={"PYTHONPATH": path})
    assert out.code == 1 and "Traceback" not in out.stdout + out.stderr
    assert "WARN    runtimes: duplicate runtimes in one process: OpenMP" in out.stdout
    assert f"Intel OpenMP: {iomp}" in out.stdout and f"GNU OpenMP: {gomp}" in out.stdout
    assert "fix: load one OpenMP runtime" in out.stdout


@pytest.mark.parametrize(
    "module,error",
    [("no_such_app_module", "ModuleNotFoundError"), ("broken_app", "RuntimeError: the app needs a licence server")],
)
def test_an_after_module_that_does_not_import_is_one_failed_step_exit_1(layout, module, error):
    path, _, _ = layout
    code, doc, out = verify(path, "--after", f"myapp,{module}")
    assert code == 1 and doc["ok"] is False and "Traceback" not in out.stdout + out.stderr
    (step,) = doc["steps"]
    assert (
        step["name"] == "after"
        and step["status"] == "fail"
        and f"--after {module}: cannot import it" in step["summary"]
        and error in step["summary"]
    )
    assert "import" not in doc["child"]["stages"]  # the package is not imported after a failed app module
    assert [(a["module"], a["ok"]) for a in doc["after"]] == [("myapp", True), (module, False)]


def test_a_bad_module_name_is_usage_exit_2_with_no_document(layout):
    path, _, _ = layout
    out = run_cli("verify", "--after", "myapp,", "--json", env={"PYTHONPATH": path})
    assert out.code == 2 and out.stdout == "" and "is not a module name" in out.stderr


def test_any_package_after_the_app_names_both_runtimes(layout, tmp_path):
    path, iomp, _ = layout
    site = tmp_path / "site2"
    pkg = site / "omppkg"
    pkg.mkdir(parents=True)
    gomp = shared(pkg, "libgomp.so.1")
    (pkg / "__init__.py").write_text("")
    dist = site / "omppkg-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: omppkg\nVersion: 1.0\n")
    (dist / "top_level.txt").write_text("omppkg\n")
    (dist / "RECORD").write_text("omppkg/__init__.py,,\nomppkg/libgomp.so.1,,\nomppkg-1.0.dist-info/RECORD,,\n")
    both = f"{site}:{path}"
    code, doc, _ = verify(both, "omppkg", "--after", "myapp")
    s = steps(doc)
    assert code == 1 and s["after"]["status"] == "ok" and s["runtimes"]["status"] == "warn"
    assert sorted(doc["duplicate_runtimes"][0]["paths"]) == sorted([str(iomp), str(gomp)])
    code, doc, _ = verify(both, "omppkg")
    assert steps(doc)["runtimes"]["status"] == "ok" and doc["duplicate_runtimes"] == []


def test_doctor_dll_names_two_openmp_runtimes_its_resolution_would_load(tmp_path):
    """doctor --dll loads nothing: the same judgement over the files its ELF resolution finds. A library that
    NEEDS an Intel and a GNU OpenMP (RUNPATH $ORIGIN, both next to it) is flagged with both paths; its
    load verdict (exit 0: everything resolves) is unchanged."""
    lib = tmp_path / "lib"
    lib.mkdir()
    for soname in ("libiomp5.so", "libgomp.so.1"):
        (lib / f"{soname}.c").write_text("int omp_get_max_threads(void){return 1;}\n")
        subprocess.run(
            ["gcc", "-shared", "-fPIC", "-o", str(lib / soname), f"-Wl,-soname,{soname}", str(lib / f"{soname}.c")],
            check=True,
        )
    (lib / "pkg.c").write_text("int omp_get_max_threads(void); int f(void){return omp_get_max_threads();}\n")
    target = lib / "libpkg.so"
    subprocess.run(
        [
            "gcc",
            "-shared",
            "-fPIC",
            "-o",
            str(target),
            str(lib / "pkg.c"),
            f"-L{lib}",
            "-Wl,--no-as-needed",
            "-l:libiomp5.so",
            "-l:libgomp.so.1",
            "-Wl,-rpath,$ORIGIN",
        ],
        check=True,
    )
    out = run_cli("doctor", "--dll", str(target), "--json", env={"LD_LIBRARY_PATH": ""})
    data = json.loads(out.stdout)
    assert out.code == 0 and data["loads"] is True
    (dup,) = data["duplicate_runtimes"]
    assert dup["family"] == "OpenMP" and dup["paths"] == [str(lib / "libiomp5.so"), str(lib / "libgomp.so.1")]
    text = run_cli("doctor", "--dll", str(target), env={"LD_LIBRARY_PATH": ""})
    assert (
        f"DUPLICATE RUNTIMES: two OpenMP runtimes in one process: Intel OpenMP: {lib / 'libiomp5.so'}" in text.stdout
        and "KMP_DUPLICATE_LIB_OK" in text.stdout
    )
    single = lib / "libone.so"
    subprocess.run(
        [
            "gcc",
            "-shared",
            "-fPIC",
            "-o",
            str(single),
            str(lib / "pkg.c"),
            f"-L{lib}",
            "-l:libgomp.so.1",
            "-Wl,-rpath,$ORIGIN",
        ],
        check=True,
    )
    assert json.loads(run_cli("doctor", "--dll", str(single), "--json").stdout)["duplicate_runtimes"] == []


def test_intels_abort_after_the_app_fails_the_runtimes_step_with_its_line(tmp_path):
    """HAND-MADE abort: a llama_cpp whose import prints libiomp5's message and aborts, as the real runtime
    does when another OpenMP is initialised (no Intel OpenMP build is on this machine)."""
    pkg = tmp_path / "site" / "llama_cpp"
    (pkg / "lib").mkdir(parents=True)
    (pkg / "lib" / "libllama.so").write_bytes(b"")
    (pkg / "__init__.py").write_text(
        "import os\nos.write(2, b'OMP: Error #15: Initializing libiomp5.so, but found libgomp.so.1 already "
        "initialized.\\n')\nos.abort()\n"
    )
    (tmp_path / "app.py").write_text("")
    code, doc, _ = verify(f"{tmp_path / 'site'}:{tmp_path}", "--after", "app")
    s = steps(doc)
    assert code == 1 and s["after"]["status"] == "ok" and "SIGABRT" in s["library"]["summary"]
    assert "after the --after modules" in s["library"]["summary"]
    assert s["runtimes"]["status"] == "fail" and "already initialized" in s["runtimes"]["evidence"][0]
