"""Two copies of one OpenMP runtime in one process, before and after envmgr's fix, by the real loader (issue 37).

gcc builds a GNU-OpenMP-like runtime twice: the app's libgomp.so.1 (its own folder, loaded by path as torch's
torch/lib/libgomp.so.1 is) and the package's bundled copy under an auditwheel-style name, libgomp-a34b3233.so.1,
that the package's libpkg.so NEEDS (RUNPATH $ORIGIN). Each copy counts its initialisations in its own static,
so the process itself says how many runtimes it runs. Before: after the app, /proc/self/maps holds both and
`verify --after myapp` names both paths and the fix; `verify --after myapp --fix` links the package's copy to
the app's; after: the real loader maps one file and one runtime counts both users, the package alone still
loads (from its own path, now the app's file), verify is clean; `--undo-fix MANIFEST` restores the original.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.fake_llama_cpp import native_package

pytestmark = [
    pytest.mark.linux,
    pytest.mark.skipif(sys.platform != "linux" or shutil.which("gcc") is None, reason="gcc and ELF shared libraries"),
]

RUNTIME = """
static int users;
int omp_get_max_threads(void) { return 1; }
int omp_users(void) { return ++users; }
"""
VERSIONS = "GOMP_1.0 { global: omp_get_max_threads; omp_users; };\nGOMP_4.0 { } GOMP_1.0;\n"
LLAMA = """
    import ctypes, os
    _pkg = ctypes.CDLL(os.path.join(os.path.dirname(__file__), "lib", "libpkg.so"))
    def users(): return _pkg.pkg_users()
    def llama_supports_gpu_offload(): return False
    def llama_print_system_info(): return b"CPU : SSE3 = 1 | OPENMP = 1 |"
    __version__ = "0.0-fake"
    """


def runtime(folder: Path, name: str, versions: str = VERSIONS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "omp.c").write_text(RUNTIME)
    (folder / "omp.map").write_text(versions)
    subprocess.run(
        [
            "gcc",
            "-shared",
            "-fPIC",
            "-o",
            str(folder / name),
            str(folder / "omp.c"),
            f"-Wl,-soname,{name}",
            f"-Wl,--version-script={folder / 'omp.map'}",
        ],
        check=True,
    )
    return folder / name


@pytest.fixture
def layout(tmp_path):
    app_omp = runtime(tmp_path / "app" / "torchlike" / "lib", "libgomp.so.1")
    lib = tmp_path / "site" / "llama_cpp" / "lib"
    own = runtime(lib, "libgomp-a34b3233.so.1")
    native_package(
        lib, "libgomp-a34b3233.so.1", "int omp_users(void); int pkg_users(void) { return omp_users(); }\n", LLAMA
    )
    (tmp_path / "app" / "myapp.py").write_text(
        f"import ctypes\n_omp = ctypes.CDLL({str(app_omp)!r})\nassert _omp.omp_users() == 1\n"
    )
    return f"{tmp_path / 'site'}:{tmp_path / 'app'}", app_omp, own


def real_loader(pythonpath: str, first: str) -> tuple[int, list[str]]:
    """(the package's runtime's count once the package used it, the OpenMP files the process maps)."""
    code = (
        f"{first}import llama_cpp, json; print(json.dumps([llama_cpp.users(), [l.split()[-1] for l in "
        "open('/proc/self/maps') if '/libgomp' in l]]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": pythonpath, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    users, maps = json.loads(done.stdout)
    return users, sorted(set(maps))


def verify(pythonpath: str, *args: str) -> tuple[int, dict]:
    out = run_cli("verify", *args, "--json", env={"PYTHONPATH": pythonpath, "LD_LIBRARY_PATH": ""})
    assert "Traceback" not in out.stderr, out.stderr
    return out.code, json.loads(out.stdout)


def steps(doc: dict) -> dict:
    return {s["name"]: s for s in doc["steps"]}


def test_before_two_runtimes_envmgr_links_the_package_copy_after_one_and_undo_restores(layout):
    path, app_omp, own = layout
    original = own.read_bytes()
    # before: two runtimes in the app's process (each counts its own first user), one alone
    assert real_loader(path, "import myapp; ") == (1, sorted([str(app_omp), str(own)]))
    assert real_loader(path, "") == (1, [str(own)])
    _, doc = verify(path, "--after", "myapp")
    rt = steps(doc)["runtimes"]
    assert rt["status"] == "warn" and str(app_omp) in rt["evidence"][0] and str(own) in rt["evidence"][0]
    assert rt["fix"].startswith(f"make the package's GNU OpenMP defer to the app's: {own} becomes a link to {app_omp}")
    assert rt["fix_command"] == "envmgr verify --after ... --fix"

    _, fixed = verify(path, "--after", "myapp", "--fix")
    fix = fixed["fix"]
    assert fix["applied"] == [f"{own} -> {app_omp} (hard link; the original is {own}.envmgr-orig)"], fix
    manifest = fix["manifest"]
    assert Path(manifest).is_file() and fix["undo"] == f"envmgr verify --undo-fix {manifest}"
    assert os.path.samefile(own, app_omp)

    # after: the real loader maps the app's file once, and the package is the runtime's second user
    assert real_loader(path, "import myapp; ") == (2, [str(app_omp)])
    assert real_loader(path, "") == (1, [str(own)])  # alone: loads, from its own path
    code, doc = verify(path, "--after", "myapp")
    assert steps(doc)["runtimes"]["status"] == "ok" and doc["duplicate_runtimes"] == []

    undo = run_cli("verify", "--undo-fix", manifest)
    assert undo.code == 0 and undo.stdout.strip() == f"restored {own}"
    assert own.read_bytes() == original and not os.path.samefile(own, app_omp)
    assert real_loader(path, "import myapp; ") == (1, sorted([str(app_omp), str(own)]))
    again = run_cli("verify", "--undo-fix", manifest)
    assert again.code == 0 and "skipped" in again.stdout


def test_the_fix_leaves_a_copy_the_apps_runtime_cannot_stand_in_for(layout):
    """The app's runtime lacks a symbol version the package's defines (GOMP_5.0): no link, both stay."""
    path, app_omp, own = layout
    runtime(own.parent, own.name, VERSIONS + "GOMP_5.0 { } GOMP_4.0;\n")
    _, fixed = verify(path, "--after", "myapp", "--fix")
    assert fixed["fix"]["manifest"] is None and not os.path.samefile(own, app_omp)
    assert fixed["fix"]["applied"] == [f"{own}: left as it is ({app_omp} lacks GOMP_5.0 of {own})"]


def test_fix_needs_after_and_a_bad_manifest_is_one_line(layout, tmp_path):
    path, _, _ = layout
    out = run_cli("verify", "--fix", env={"PYTHONPATH": path})
    assert out.code == 2 and "--fix needs --after" in out.stderr
    bad = tmp_path / "m.json"
    bad.write_text('{"schema": 1, "added": []}')
    out = run_cli("verify", "--undo-fix", str(bad))
    assert out.code == 2 and "not an envmgr runtime-defer manifest" in out.stderr and "Traceback" not in out.stderr
