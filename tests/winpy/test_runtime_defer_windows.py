"""Two copies of Intel's OpenMP runtime in one Windows process, before and after envmgr's fix, by the real loader
(issue 37): Windows CPython under Wine. mingw builds the runtime twice (each copy counts its users in its own
static): the app's libiomp5md.dll, loaded by path as torch loads torch\\lib\\*.dll, and the package's bundled,
delvewheel-style libiomp5md-1a2b3c4d.dll, which the package loads by path. Before: K32EnumProcessModules lists
both and each runtime has one user; envmgr names both paths and the fix. The fix (envmgr/wheels/defer.py, run by
the same Windows CPython: os.link is CreateHardLinkW) links the package's copy to the app's; after: one module,
one runtime with two users, the package alone still loads; undo restores both copies.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from envmgr.verify.report import parse_run
from envmgr.verify.runtimes import runtimes_step
from tests.conftest import ROOT, need
from tests.winpy.conftest import WinPython, windows_path
from tests.winpy.test_verify_windows import target_python

pytestmark = [pytest.mark.wine, pytest.mark.winpy]

MINGW = "x86_64-w64-mingw32-gcc"
CHILD = ROOT / "envmgr" / "verify" / "child.py"
FIX = ROOT / "tests" / "winpy" / "defer_fix.py"
RUNTIME = (
    "static int users;\n__declspec(dllexport) int omp_get_max_threads(void) { return 1; }\n"
    "__declspec(dllexport) int omp_users(void) { return ++users; }\n"
)
LLAMA = """
import ctypes, pathlib
_omp = ctypes.CDLL(str(pathlib.Path(__file__).parent / "lib" / "libiomp5md-1a2b3c4d.dll"))
def users(): return _omp.omp_users()
__version__ = "0.0-fake"
"""
PROBE = """
import sys, json
sys.path.insert(0, {verify!r})
{first}import llama_cpp, child_after
print(json.dumps([llama_cpp.users(), [m for m in child_after.loaded_modules() if "libiomp5" in m.lower()]]))
"""


def dll(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "omp.c").write_text(RUNTIME)
    subprocess.run([MINGW, "-shared", "-o", str(folder / name), str(folder / "omp.c")], check=True)
    return folder / name


def probe(py: WinPython, first: str) -> tuple[int, list[str]]:
    code = PROBE.format(verify=windows_path(ROOT / "envmgr" / "verify"), first=first)
    done = py.run("-c", code, timeout=300)
    assert done.returncode == 0, done.stderr
    users, modules = json.loads(done.stdout.strip().splitlines()[-1])
    return users, sorted(m.lower() for m in modules)


def fix(winpy: WinPython, *args: str) -> dict:
    done = winpy.run(windows_path(FIX), *args, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_two_intel_openmp_copies_become_one_after_the_fix_and_two_again_after_undo(winpy, tmp_path):
    need(shutil.which(MINGW) is not None, f"needs {MINGW} (apt install gcc-mingw-w64-x86-64)")
    app_omp = dll(tmp_path / "app" / "torch" / "lib", "libiomp5md.dll")
    lib = tmp_path / "site" / "llama_cpp" / "lib"
    own = dll(lib, "libiomp5md-1a2b3c4d.dll")
    (lib.parent / "__init__.py").write_text(LLAMA)
    (tmp_path / "site" / "myapp.py").write_text(
        f"import ctypes\n_omp = ctypes.CDLL({windows_path(app_omp)!r})\nassert _omp.omp_users() == 1\n"
    )
    py = WinPython(target_python(winpy, tmp_path / "py", tmp_path / "site"), winpy.prefix)
    both = sorted([windows_path(app_omp).lower(), windows_path(own).lower()])

    # before: two runtimes, one user each
    assert probe(py, "import myapp; ") == (1, both)
    done = py.run(windows_path(CHILD), "Z:\\no-model.gguf", "1", "myapp", timeout=300)
    run = parse_run(done.stdout, done.stderr, done.returncode)
    modules = run.get("runtimes")["modules"]
    step = runtimes_step(run.get("runtimes"), "llama_cpp", run.log, [windows_path(lib)])
    assert step is not None and step.status == "warn" and step.fix_command == "envmgr verify --after ... --fix"
    said = f"make the package's intel openmp defer to the app's: {windows_path(own).lower()}"
    assert step.fix.lower().startswith(said)

    listed = tmp_path / "modules.json"
    listed.write_text(json.dumps(modules))
    out = fix(winpy, windows_path(listed), windows_path(lib), windows_path(tmp_path / "manifests"))
    assert [[p.lower() for p in plan[:2]] for plan in out["plans"]] == [
        [windows_path(own).lower(), windows_path(app_omp).lower()]
    ]
    assert len(out["applied"]) == 1 and "(hard link; the original is" in out["applied"][0], out
    assert own.stat().st_ino == app_omp.stat().st_ino

    # after: the loader maps the app's file once; the package is its runtime's second user; alone it loads
    assert probe(py, "import myapp; ") == (2, [windows_path(app_omp).lower()])
    assert probe(py, "") == (1, [windows_path(own).lower()])

    undo = fix(winpy, "--undo", out["manifest"])
    assert [u.lower() for u in undo["undo"]] == [f"restored {windows_path(own).lower()}"]
    assert own.stat().st_ino != app_omp.stat().st_ino
    assert probe(py, "import myapp; ") == (1, both)
