"""verify --after on Windows, for real (issue 37, deliverable 2): Windows CPython (under Wine) runs verify's
own child script (envmgr/verify/child.py of this checkout, by path: the shared interpreter's envmgr may be
another checkout's) with an app module that loads a mingw-built DLL named as Intel's OpenMP runtime
(libiomp5md.dll) and a hand-made llama_cpp that loads another named as LLVM's (libomp140.x86_64.dll).
The child lists the process's modules with K32EnumProcessModules; the parent's judgement names both paths.
Without --after only llama_cpp's runtime is in the process."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from envmgr.binaries.runtimes import duplicates
from envmgr.verify.report import parse_run
from envmgr.verify.runtimes import after_step, runtimes_step
from tests.conftest import need
from tests.winpy.conftest import WinPython, windows_path
from tests.winpy.test_verify_windows import target_python

pytestmark = [pytest.mark.wine, pytest.mark.winpy]

CHILD = Path(__file__).resolve().parents[2] / "envmgr" / "verify" / "child.py"
MINGW = "x86_64-w64-mingw32-gcc"
LLAMA = """
import ctypes, pathlib
_omp = ctypes.CDLL(str(pathlib.Path(__file__).parent / "lib" / "libomp140.x86_64.dll"))
__version__ = "0.0-fake"
"""


def dll(folder: Path, name: str) -> Path:
    src = folder / f"{name}.c"
    src.write_text("__declspec(dllexport) int omp_get_max_threads(void) { return 1; }\n")
    subprocess.run([MINGW, "-shared", "-o", str(folder / name), str(src)], check=True)
    return folder / name


def test_after_the_app_the_child_lists_both_openmp_dlls_and_verify_names_them(winpy, tmp_path):
    need(shutil.which(MINGW) is not None, f"needs {MINGW} (apt install gcc-mingw-w64-x86-64)")
    native = tmp_path / "native"
    native.mkdir()
    iomp = dll(native, "libiomp5md.dll")
    site = tmp_path / "site"
    (site / "llama_cpp" / "lib").mkdir(parents=True)
    llvm = dll(site / "llama_cpp" / "lib", "libomp140.x86_64.dll")
    (site / "llama_cpp" / "__init__.py").write_text(LLAMA)
    (site / "myapp.py").write_text(f"import ctypes\n_omp = ctypes.CDLL({windows_path(iomp)!r})\n")
    py = WinPython(target_python(winpy, tmp_path / "py", site), winpy.prefix)

    done = py.run(windows_path(CHILD), "Z:\\no-model.gguf", "1", "myapp", timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    run = parse_run(done.stdout, done.stderr, done.returncode)
    step = after_step(run.records("after"), ("myapp",), "python.exe")
    assert step is not None and step.status == "ok", done.stdout
    assert any(e.strip().lower().endswith("libiomp5md.dll") for e in step.evidence), step.evidence
    modules = run.get("runtimes")["modules"]
    assert any(m.lower().endswith("\\kernel32.dll") for m in modules)  # the process's own modules, listed
    (dup,) = duplicates(modules)
    assert dup.what == ("Intel OpenMP", "LLVM OpenMP") or dup.what == ("LLVM OpenMP", "Intel OpenMP")
    assert {p.lower().replace("/", "\\") for p in dup.paths} == {windows_path(iomp).lower(), windows_path(llvm).lower()}
    rt = runtimes_step(run.get("runtimes"), "llama_cpp")
    assert rt is not None and rt.status == "warn" and "libiomp5md.dll" in rt.evidence[0].lower()

    plain = parse_run(*_out(py.run(windows_path(CHILD), "Z:\\no-model.gguf", "1", timeout=300)))
    assert plain.records("after") == [] and duplicates(plain.get("runtimes")["modules"]) == ()


def _out(done: subprocess.CompletedProcess) -> tuple[str, str, int]:
    return done.stdout, done.stderr, done.returncode
