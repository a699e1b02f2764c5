"""verify --after names a soname the package reused from the app (issue 37; the H100 run's torch case, in small):
gcc builds two libx.so.1 of one soname, the app's (its own folder, symbol versions X_1.0 and X_2.0, x_which()
returns 2) and the package's (next to its libpkg.so, RUNPATH $ORIGIN, X_1.0 only, returns 1). The real loader
proves the reuse: in one process, after the app, libpkg.so's x_which() is the app's copy and /proc/self/maps
holds only the app's libx; alone, the package's own copy loads. envmgr names it with both paths and versions.
"""

from __future__ import annotations

import json
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

LLAMA = """
    import ctypes, os
    _pkg = ctypes.CDLL(os.path.join(os.path.dirname(__file__), "lib", "libpkg.so"))
    def which(): return _pkg.pkg_which()
    def llama_supports_gpu_offload(): return False
    def llama_print_system_info(): return b"CPU : SSE3 = 1 |"
    __version__ = "0.0-fake"
    """


def libx(folder: Path, which: int, versions: tuple[str, ...]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "x.c").write_text(f"int x_which(void) {{ return {which}; }}\n")
    nodes = "".join(
        f"{v} {{ global: x_which; }};\n" if i == 0 else f"{v} {{ }} {versions[i - 1]};\n"
        for i, v in enumerate(versions)
    )
    (folder / "x.map").write_text(nodes)
    out = folder / "libx.so.1"
    subprocess.run(
        [
            "gcc",
            "-shared",
            "-fPIC",
            "-o",
            str(out),
            str(folder / "x.c"),
            "-Wl,-soname,libx.so.1",
            f"-Wl,--version-script={folder / 'x.map'}",
        ],
        check=True,
    )
    return out


@pytest.fixture
def layout(tmp_path):
    """(PYTHONPATH, the app's libx.so.1, the package's libx.so.1, the package's libpkg.so)."""
    app_lib = libx(tmp_path / "app" / "native", 2, ("X_1.0", "X_2.0"))
    lib = tmp_path / "site" / "llama_cpp" / "lib"
    own = libx(lib, 1, ("X_1.0",))
    native_package(lib, "libx.so.1", "int x_which(void); int pkg_which(void) { return x_which(); }\n", LLAMA)
    (tmp_path / "app" / "myapp.py").write_text(f"import ctypes\n_x = ctypes.CDLL({str(app_lib)!r})\n")
    return f"{tmp_path / 'site'}:{tmp_path / 'app'}", app_lib, own, lib / "libpkg.so"


def real_loader(pythonpath: str, first: str) -> tuple[int, list[str]]:
    """(which copy libpkg.so's x_which bound to, every libx.so.1 the process maps), by the real loader."""
    code = (
        f"{first}import llama_cpp, json; print(json.dumps([llama_cpp.which(), [l.split()[-1] for l in "
        "open('/proc/self/maps') if l.rstrip().endswith('/libx.so.1')]]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": pythonpath, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    which, maps = json.loads(done.stdout)
    return which, sorted(set(maps))


def test_the_real_loader_binds_the_package_to_the_apps_copy_of_the_soname(layout):
    path, app_lib, own, _ = layout
    assert real_loader(path, "") == (1, [str(own)])  # alone: its own copy, by RUNPATH $ORIGIN
    assert real_loader(path, "import myapp; ") == (2, [str(app_lib)])  # after the app: the app's, one copy only


def test_verify_after_the_app_names_the_reused_soname_with_both_copies_and_versions(layout):
    path, app_lib, own, pkg = layout
    out = run_cli("verify", "--after", "myapp", "--json", env={"PYTHONPATH": path, "LD_LIBRARY_PATH": ""})
    doc = json.loads(out.stdout)
    steps = {s["name"]: s for s in doc["steps"]}
    assert steps["runtimes"]["status"] == "ok"  # one libx by path: no duplicate to see
    reuse = steps["reuse"]
    assert reuse["status"] == "warn" and "app's copy of libx.so.1" in reuse["summary"]
    (line,) = reuse["evidence"]
    assert f"libpkg.so needs libx.so.1: reused the app's copy {app_lib}" in line and str(own) in line
    assert "loaded by import myapp" in line and f"RUNPATH {pkg.parent}" in line
    (found,) = doc["reused_libraries"]
    assert found["mapped"] == str(app_lib) and found["alone"] == str(own) and found["importer"] == str(pkg)
    assert found["mapped_version"].endswith("X_2.0") and found["alone_version"].endswith("X_1.0")
    assert f"LD_LIBRARY_PATH={app_lib.parent} envmgr verify" in reuse["fix"]
    text = run_cli("verify", "--after", "myapp", env={"PYTHONPATH": path, "LD_LIBRARY_PATH": ""}).stdout
    assert "WARN    reuse: llama_cpp runs with the app's copy of libx.so.1" in text


def test_without_after_or_with_the_same_copy_nothing_is_reused(layout, tmp_path):
    path, app_lib, own, _ = layout
    doc = json.loads(run_cli("verify", "--json", env={"PYTHONPATH": path}).stdout)
    assert "reuse" not in {s["name"] for s in doc["steps"]} and doc["reused_libraries"] == []
    (tmp_path / "app" / "sameapp.py").write_text(f"import ctypes\n_x = ctypes.CDLL({str(own)!r})\n")
    doc = json.loads(run_cli("verify", "--after", "sameapp", "--json", env={"PYTHONPATH": path}).stdout)
    assert doc["reused_libraries"] == [] and "reuse" not in {s["name"] for s in doc["steps"]}


def test_a_copy_reached_through_its_symbolic_link_is_named_by_its_real_file(layout):
    """/proc/self/maps names the real file (a toolkit's libcudart.so.13 is a link to libcudart.so.13.0.88): the
    app's copy here is libx.so.1.2.3 behind libx.so.1, and that real name is the version shown."""
    path, app_lib, own, _ = layout
    real = app_lib.with_name("libx.so.1.2.3")
    app_lib.rename(real)
    app_lib.symlink_to(real.name)
    assert real_loader(path, "import myapp; ") == (2, [])  # the maps line ends in libx.so.1.2.3
    doc = json.loads(
        run_cli("verify", "--after", "myapp", "--json", env={"PYTHONPATH": path, "LD_LIBRARY_PATH": ""}).stdout
    )
    (found,) = doc["reused_libraries"]
    assert found["mapped"] == str(real) and found["mapped_version"].startswith("libx.so.1.2.3, ")
    assert found["alone"] == str(own)


# A package whose model load calls into libx (as llama.cpp's model load calls into OpenMP and cuBLAS): with the
# app's copy of libx bound, the call is the app's; CRASHING_APP's copy dereferences NULL (a real SIGSEGV).
RUNS_MODEL = (
    LLAMA
    + """
    class Llama:
        def __init__(self, **kw):
            import os
            if os.environ.get("FAKE_APP_BREAKS_IT") == "1":  # the app's own state, not its copy of libx
                ctypes.string_at(0)
            self.which = _pkg.pkg_which()
        def tokenize(self, text): return [1, 2]
        def generate(self, tokens, temp=0.0):
            while True:
                yield self.which
        def detokenize(self, tokens): return b"x" * len(tokens)
    """
)


def crashing_libx(folder: Path) -> Path:
    """The app's libx.so.1 with the package's symbol version, whose x_which() dereferences NULL."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "x.c").write_text("int x_which(void) { volatile int *p = 0; return *p; }\n")
    (folder / "x.map").write_text("X_1.0 { global: x_which; };\n")
    out = folder / "libx.so.1"
    cmd = ["gcc", "-shared", "-fPIC", "-o", str(out), str(folder / "x.c"), "-Wl,-soname,libx.so.1"]
    subprocess.run([*cmd, f"-Wl,--version-script={folder / 'x.map'}"], check=True)
    return out


def model_package(tmp_path: Path, app_source: str, app_lib: Path) -> str:
    lib = tmp_path / "site" / "llama_cpp" / "lib"
    libx(lib, 1, ("X_1.0",))
    native_package(lib, "libx.so.1", "int x_which(void); int pkg_which(void) { return x_which(); }\n", RUNS_MODEL)
    (tmp_path / "app" / "myapp.py").write_text(f"import ctypes\n_x = ctypes.CDLL({str(app_lib)!r})\n{app_source}")
    return f"{tmp_path / 'site'}:{tmp_path / 'app'}"


def _verify_after(path: str) -> dict:
    out = run_cli("verify", "--after", "myapp", "--json", env={"PYTHONPATH": path, "LD_LIBRARY_PATH": ""})
    assert out.code == 1, out.stderr
    return {s["name"]: s for s in json.loads(out.stdout)["steps"]}


def test_a_crash_that_follows_the_apps_copy_of_a_soname_is_shown_by_the_package_alone_with_that_copy(tmp_path):
    app_lib = crashing_libx(tmp_path / "app" / "native")
    path = model_package(tmp_path, "", app_lib)
    steps = _verify_after(path)
    # the fake is a CPU-only build: its backend fails alone too and keeps its own fix; the run itself crashed
    assert steps["backend"]["status"] == "fail" and "see `alone`" not in steps["backend"]["fix"]
    assert "SIGSEGV" in steps["offload"]["summary"]
    alone = steps["alone"]
    assert alone["status"] == "fail" and "follows those copies" in alone["summary"]
    assert alone["evidence"][0] == "the same child without --after: runs the model (8 tokens generated)"
    assert "app's copies of libx.so.1 first on LD_LIBRARY_PATH: fails too (" in alone["evidence"][1]
    assert "SIGSEGV" in alone["evidence"][1]


def test_a_crash_from_the_apps_other_doings_clears_its_copies_and_says_to_keep_the_package_apart(tmp_path):
    app_lib = libx(tmp_path / "app" / "native", 2, ("X_1.0", "X_2.0"))  # a working copy, reused
    path = model_package(tmp_path, "import os\nos.environ['FAKE_APP_BREAKS_IT'] = '1'\n", app_lib)
    steps = _verify_after(path)
    assert steps["reuse"]["status"] == "warn"
    alone = steps["alone"]
    assert alone["status"] == "fail" and "copies of libx.so.1 are not the cause" in alone["summary"]
    assert alone["evidence"][1].endswith("first on LD_LIBRARY_PATH: runs the model (8 tokens generated)")
    assert "process of its own" in alone["fix"]
