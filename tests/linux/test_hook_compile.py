"""The hook's round trip with this machine's real CUDA 13.0 (issue 38): a venv's Python, started with no
CUDA in its environment (as from a desktop shortcut), compiles a CUDA extension in process the way
torch.utils.cpp_extension.load does (find the toolkit from CUDA_HOME/CUDA_PATH, else nvcc on PATH; run
nvcc; import the result). It fails without the hook, passes with it, and `hook remove` leaves the venv
byte for byte as it was."""

from __future__ import annotations

import json
import subprocess
import venv
from pathlib import Path

import pytest

from envmgr.hook import plan
from tests.conftest import run_cli
from tests.unit.hook.test_hook import tree_hashes

pytestmark = [pytest.mark.linux, pytest.mark.slow]

# HAND-MADE stand-in for torch.utils.cpp_extension.load (torch is not installed here): its
# _find_cuda_home (CUDA_HOME or CUDA_PATH, else `which nvcc`), then nvcc on the source with Python's
# headers, then the module imported from the built file. torch would go on to try /usr/local/cuda,
# which exists on this machine; that fall-back is left out because what is tested is what the running
# process's environment holds.
LOAD_LIKE = r"""
import importlib.util, os, shutil, subprocess, sys, sysconfig
home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
if home is None:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        sys.exit("no CUDA_HOME, no CUDA_PATH and no nvcc on PATH")
    home = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
build, source = sys.argv[1], sys.argv[2]
out = os.path.join(build, "hookext" + sysconfig.get_config_var("EXT_SUFFIX"))
subprocess.check_call([os.path.join(home, "bin", "nvcc"), "-shared", "-Xcompiler", "-fPIC",
                       "-I", sysconfig.get_paths()["include"], source, "-o", out])
spec = importlib.util.spec_from_file_location("hookext", out)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print("cuda runtime", module.runtime_version())
"""

EXTENSION = r"""
#include <Python.h>
#include <cuda_runtime.h>
__global__ void nothing() {}
static PyObject *runtime_version(PyObject *, PyObject *) {
    int v = 0;
    cudaRuntimeGetVersion(&v);
    return PyLong_FromLong(v);
}
static PyMethodDef methods[] = {{"runtime_version", runtime_version, METH_NOARGS, ""}, {nullptr, nullptr, 0, nullptr}};
static PyModuleDef def = {PyModuleDef_HEAD_INIT, "hookext", nullptr, -1, methods};
PyMODINIT_FUNC PyInit_hookext(void) { return PyModule_Create(&def); }
"""


def _desktop_env() -> dict[str, str]:
    """What a Python started from a desktop shortcut has: no toolkit variables, the system's PATH."""
    import os

    keep = ("HOME", "LANG", "TMPDIR", "ENVMGR_CACHE_DIR", "ENVMGR_CONFIG_DIR", "ENVMGR_DATA_DIR")
    return {**{k: os.environ[k] for k in keep if k in os.environ}, "PATH": "/usr/bin:/bin"}


def test_a_hooked_venv_compiles_and_loads_a_cuda_extension_in_process(tmp_path, cuda_13_0):
    root = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(root)
    python = root / "bin" / "python"
    before = tree_hashes(root)
    (tmp_path / "hookext.cu").write_text(EXTENSION, encoding="utf-8")
    (tmp_path / "load_like.py").write_text(LOAD_LIKE, encoding="utf-8")
    build = tmp_path / "build"
    build.mkdir()

    def load() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(python), str(tmp_path / "load_like.py"), str(build), str(tmp_path / "hookext.cu")],
            capture_output=True,
            text=True,
            env=_desktop_env(),
            timeout=300,
        )

    bare = load()
    assert bare.returncode != 0 and "no nvcc on PATH" in bare.stderr

    done = run_cli("hook", "install", "--python", str(python), "--cuda", "13.0", "--json")
    assert done.code == 0, done.stderr
    installed = json.loads(done.stdout)
    assert installed["selectors"]["cuda"] == "13.0" and installed["snapshot"]["origin"] == "captured"
    hooked = load()
    assert hooked.returncode == 0, hooked.stdout + hooked.stderr
    assert hooked.stdout.strip() == "cuda runtime 13000"

    status = run_cli("hook", "status", "--python", str(python), "--json")
    assert status.code == 0, status.stdout
    assert json.loads(status.stdout)["snapshot"]["state"] == "current"

    assert run_cli("hook", "remove", "--python", str(python)).code == 0
    assert not any(root.rglob(f"{plan.MODULE}*"))
    assert tree_hashes(root) == before
    assert load().returncode != 0
