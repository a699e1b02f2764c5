"""A DLL name reused from the app, by the real Windows loader (issue 37): Windows CPython under Wine runs verify's
child (envmgr/verify/child.py of this checkout) with mingw-built DLLs from tests/pesyms_build.py. The app module
loads its own older libfoo.dll (file version 1.0.0.0, foo_old only) by full path, as torch loads torch\\lib\\*.dll;
a hand-made llama_cpp loads its DLL as llama_cpp 0.3.x does (its lib folder first on PATH, winmode=0) and calls
it at import. That DLL imports libfoo.dll by name, and the package's own newer copy (1.2.0.0) lies next to it.

The loader uses a loaded module of the same base name wherever it came from, so after the app the package binds
to the app's copy: the importer that needs foo_new fails (Windows: [WinError 127] at load; Wine 8 binds the
missing import to a stub and the call dies with "unimplemented function libfoo.dll.foo_new", docs/doctor.md),
alone it imports and runs; envmgr's `reuse` step fails naming the app's copy, foo_new and the package's copy.
An importer that needs only foo_old imports either way, and the step warns (another copy) instead of failing.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from envmgr.host.wine import WineHost
from envmgr.verify.report import ChildRun, parse_run
from envmgr.verify.runtimes import package_roots, reuse_found, reuse_step
from tests import pesyms_build
from tests.conftest import ROOT
from tests.winpy.conftest import WinPython, windows_path
from tests.winpy.test_verify_windows import target_python

pytestmark = [pytest.mark.wine, pytest.mark.winpy]

CHILD = ROOT / "envmgr" / "verify" / "child.py"
LLAMA = """
import ctypes, os, pathlib
_dir = pathlib.Path(__file__).parent / "lib"
os.environ["PATH"] = str(_dir) + os.pathsep + os.environ.get("PATH", "")
_lib = ctypes.CDLL(str(_dir / "{importer}.dll"), winmode=0)
USED = _lib.use()
__version__ = "0.0-fake"
"""
_UNIMPLEMENTED = re.compile(r"unimplemented function (\S+)\.(\S+?),? aborting")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return pesyms_build.built_or_skip(tmp_path_factory, "reuse")


def layout(winpy, built: Path, tmp: Path, importer: str) -> tuple[WinPython, Path, Path]:
    """The app's old libfoo.dll in app\\, llama_cpp\\lib with `importer` and the package's new libfoo.dll."""
    app = tmp / "app" / "libfoo.dll"
    lib = tmp / "site" / "llama_cpp" / "lib"
    for folder in (app.parent, lib):
        folder.mkdir(parents=True)
    shutil.copyfile(built / "old" / "libfoo.dll", app)
    shutil.copyfile(built / "new" / "libfoo.dll", lib / "libfoo.dll")
    shutil.copyfile(built / "pkg" / f"{importer}.dll", lib / f"{importer}.dll")
    (lib.parent / "__init__.py").write_text(LLAMA.format(importer=importer))
    (tmp / "site" / "myapp.py").write_text(f"import ctypes\n_foo = ctypes.CDLL({windows_path(app)!r})\n")
    return WinPython(target_python(winpy, tmp / "py", tmp / "site"), winpy.prefix), app, lib


def child(py: WinPython, *after: str) -> tuple[ChildRun, str]:
    done = py.run(windows_path(CHILD), "Z:\\no-model.gguf", "1", *after, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    return parse_run(done.stdout, done.stderr, done.returncode), done.stderr


def judged(winpy, run: ChildRun):
    host = WineHost(str(winpy.prefix.path))
    found = reuse_found(host, run, package_roots(run), ("myapp",), "llama_cpp")
    return found, reuse_step(found, "llama_cpp")


def test_after_the_app_the_import_fails_on_the_apps_copy_and_verify_names_the_missing_function(winpy, built, tmp_path):
    py, app, lib = layout(winpy, built, tmp_path, "imp_name")
    alone, _ = child(py)
    assert alone.get("import").get("ok") is True, alone.get("import")  # the package alone: its own copy

    run, stderr = child(py, "myapp")
    imported = run.get("import")
    assert imported.get("ok") is False, imported
    # Windows: [WinError 127] at load; Wine 8: the stub's call fails and Wine's message names DLL.FUNCTION
    assert imported.get("winerror") == 127 or ("libfoo.dll", "foo_new") in _UNIMPLEMENTED.findall(stderr), stderr
    modules = [m.lower() for m in run.get("runtimes")["modules"]]  # the record is there when the import failed
    assert windows_path(app).lower() in modules and windows_path(lib / "libfoo.dll").lower() not in modules

    (found,), step = judged(winpy, run)
    assert found.soname.lower() == "libfoo.dll" and found.by == "myapp" and found.missing == ("foo_new",)
    assert found.mapped.lower() == windows_path(app).lower()
    assert found.alone.lower() == windows_path(lib / "libfoo.dll").lower()
    assert found.how == "llama_cpp's own PATH prepend"
    assert "file version 1.0.0.0" in found.mapped_version and "file version 1.2.0.0" in found.alone_version
    assert step is not None and step.status == "fail", step
    assert "foo_new" in step.summary and windows_path(lib / "libfoo.dll").lower() in step.summary.lower()
    assert "lacks foo_new" in step.evidence[0] and "[WinError 127]" in step.evidence[0]
    assert f'ctypes.WinDLL(r"{windows_path(lib / "libfoo.dll")}")'.lower() in step.fix.lower()
    assert "never copy dlls into system32" in step.fix.lower()


def test_an_app_copy_with_every_function_is_reported_as_another_copy_not_a_failure(winpy, built, tmp_path):
    py, app, lib = layout(winpy, built, tmp_path, "imp_ok")
    run, _ = child(py, "myapp")
    assert run.get("import").get("ok") is True, run.get("import")  # foo_old: the app's copy has it
    modules = [m.lower() for m in run.get("runtimes")["modules"]]
    assert windows_path(app).lower() in modules and windows_path(lib / "libfoo.dll").lower() not in modules

    (found,), step = judged(winpy, run)
    assert (found.mapped.lower(), found.alone.lower()) == (
        windows_path(app).lower(),
        windows_path(lib / "libfoo.dll").lower(),
    )
    assert found.missing == () and "file version 1.0.0.0" in found.mapped_version
    assert step is not None and step.status == "warn", step
    assert "libfoo.dll" in step.summary and "[WinError 127]" not in step.evidence[0]

    plain, _ = child(py)  # without --after: nothing of the app in the process, nothing reused
    assert judged(winpy, plain) == ((), None)


def test_the_fix_in_words_works_the_packages_copy_loaded_first_by_full_path(winpy, built, tmp_path):
    """verify's fix, by the loader: the package's copy loaded by full path before the app's import is the
    libfoo.dll the package binds to, and it imports after the app. A plain script, not the child: measured under
    Wine 8, listing the modules (K32EnumProcessModules, GetModuleFileNameW: the child does it after each --after
    module) between the two loads makes the package bind to the copy loaded last instead (likely ntdll's
    cached_modref, its one-entry cache of the module last looked up); Windows keeps a hash table in load order."""
    py, app, lib = layout(winpy, built, tmp_path, "imp_name")
    (tmp_path / "site" / "ownfirst.py").write_text(
        f"import ctypes\n_own = ctypes.WinDLL({windows_path(lib / 'libfoo.dll')!r})\n"
    )
    fixed = py.run("-c", "import ownfirst, myapp, llama_cpp; print(llama_cpp.USED)", timeout=300)
    assert fixed.returncode == 0 and fixed.stdout.split() == ["2"], fixed.stderr  # foo_new ran
    broken = py.run("-c", "import myapp, llama_cpp; print(llama_cpp.USED)", timeout=300)
    assert broken.returncode != 0 and "Traceback" in broken.stderr
    assert "WinError 127" in broken.stderr or ("libfoo.dll", "foo_new") in _UNIMPLEMENTED.findall(broken.stderr)


def test_envmgr_verify_after_run_by_windows_python_reports_the_reuse_in_json(winpy, built, tmp_path):
    """The whole command, run by the same Windows CPython the package lives in (verify's child, the live host's
    K32EnumProcessModules list, llama_cpp's loader model): `reused_libraries` in the JSON and the failed step."""
    py, app, lib = layout(winpy, built, tmp_path, "imp_name")
    done = py.envmgr("verify", "--after", "myapp", "--json", timeout=600)
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    (reused,) = data["reused_libraries"]
    assert reused["missing_functions"] == ["foo_new"] and reused["loaded_by"] == "myapp"
    assert reused["mapped"].lower() == windows_path(app).lower()
    assert reused["alone"].lower() == windows_path(lib / "libfoo.dll").lower()
    assert "1.0.0.0" in reused["mapped_version"] and "1.2.0.0" in reused["alone_version"]
    step = next(s for s in data["steps"] if s["name"] == "reuse")
    assert step["status"] == "fail" and "foo_new" in step["summary"]
