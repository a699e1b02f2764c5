"""`envmgr install llama-cpp-python` end to end on Windows CPython (under Wine): the prebuilt route from a
folder of wheels, pip into a second Windows Python, then the CUDA DLL closure before "done".

The wheel is llama-cpp-python-shaped: llama_cpp\\__init__.py is test_verify_windows.py's stand-in for
llama_cpp 0.3.x's loader (winmode=0, its lib folder first on PATH, CUDA_PATH's bin as an ignored DLL
directory) and llama_cpp\\lib\\llama.dll is ctransformers 0.2.27's MSVC-built CUDA DLL (it imports
cudart64_12.dll and cublas64_12.dll, carries sm_52/61/70 cubins and compute_70 PTX). The wheel does not
bundle the CUDA DLLs, as the published Windows wheels do not. The machine facts (GPU, driver) are the
recorded community-buildtools-cuda124 (RTX 4070 SUPER, 8.9, driver 576.80: the wheel runs there through
PTX JIT); the CUDA 12.9 toolkit is NVIDIA's real DLLs (tests/setup/fetch-dll-oracle.sh) in a `v12.9`
folder named by CUDA_PATH only, not on PATH: the published-wheel situation of facts/failures F15.
pip is the test runner's own (pure Python), put on the target's ._pth (the embeddable build has none).
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pip
import pytest

from tests.conftest import MACHINES
from tests.winpy.conftest import WinPython, windows_path
from tests.winpy.test_dll_oracle import CT, dlls  # noqa: F401  (the DLLs fixture)
from tests.winpy.test_verify_windows import FAKE_INIT

pytestmark = [pytest.mark.wine, pytest.mark.winpy]
MACHINE = MACHINES / "community-buildtools-cuda124.toml"
VERSION = "0.3.16"
TAG = "py3-none-win_amd64"
CUDA_DLLS = ("cublas64_12.dll", "cublasLt64_12.dll", "cudart64_12.dll")
# The library loads for real when NVIDIA's cudart answers from inside the target process.
PROBE = (
    "import ctypes, pathlib, llama_cpp\nv = ctypes.c_int()\n"
    "lib = pathlib.Path(llama_cpp.__file__).parent / 'lib'\n"
    "ctypes.CDLL(str(lib / 'cudart64_12.dll')).cudaRuntimeGetVersion(ctypes.byref(v))\nprint(v.value)\n"
)


def make_wheel(folder: Path, dll: bytes) -> Path:
    info = f"llama_cpp_python-{VERSION}.dist-info"
    files = {
        "llama_cpp/__init__.py": FAKE_INIT.encode(),
        "llama_cpp/lib/llama.dll": dll,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: llama_cpp_python\nVersion: {VERSION}\n".encode(),
        f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: scikit-build-core\nRoot-Is-Purelib: false\nTag: {TAG}\n".encode(),
    }
    folder.mkdir(parents=True)
    path = folder / f"llama_cpp_python-{VERSION}-{TAG}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        zf.writestr(f"{info}/RECORD", "".join(f"{n},,\n" for n in files) + f"{info}/RECORD,,\n")
    return path


def target_with_pip(winpy, folder: Path) -> Path:
    """A second Windows Python whose site-packages is its own Lib\\site-packages (where pip installs) and
    which finds pip on its ._pth; the stdlib stays in the first one's folder."""
    home = winpy.exe.parent
    site, tools = folder / "Lib" / "site-packages", folder / "tools"
    site.mkdir(parents=True)
    shutil.copytree(Path(pip.__file__).parent, tools / "pip", ignore=shutil.ignore_patterns("__pycache__"))
    for f in home.iterdir():
        if f.suffix.lower() in (".exe", ".dll"):
            shutil.copy2(f, folder / f.name)
    pth = next(home.glob("python3*._pth"))
    lines = [ln for ln in pth.read_text().splitlines() if ln.strip() and not ln.startswith("Z:")]
    absolute = [ln if ln.startswith("import") else windows_path(home / ln.replace("\\", "/")) for ln in lines]
    (folder / pth.name).write_text("\r\n".join([windows_path(site), windows_path(tools), *absolute]) + "\r\n")
    return folder / "python.exe"


@pytest.fixture
def setup(winpy, dlls, tmp_path):  # noqa: F811
    make_wheel(tmp_path / "wheels" / "cu121", (dlls["base"] / CT).read_bytes())
    toolkit = tmp_path / "NVIDIA GPU Computing Toolkit" / "CUDA" / "v12.9"
    (toolkit / "bin").mkdir(parents=True)
    (toolkit / "lib" / "x64").mkdir(parents=True)
    for name in CUDA_DLLS:
        shutil.copy2(dlls["base"] / "cuda-12.9" / "bin" / name, toolkit / "bin" / name)
    env = {
        "ENVMGR_CACHE_DIR": windows_path(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": windows_path(tmp_path / "cfg"),
        "ENVMGR_DATA_DIR": windows_path(tmp_path / "data"),
        "ENVMGR_WHEEL_INDEX": "",
        "CUDA_PATH": windows_path(toolkit),
    }
    return target_with_pip(winpy, tmp_path / "py"), env, toolkit


def install(winpy, python: Path, env: dict, tmp_path: Path, *flags: str) -> tuple[int, dict, str]:
    done = winpy.envmgr(
        "--machine",
        windows_path(MACHINE),
        "install",
        "--prebuilt-index",
        windows_path(tmp_path / "wheels" / "cu121"),
        "--python",
        windows_path(python),
        "--json",
        *flags,
        "llama-cpp-python",
        env=env,
        timeout=600,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout), done.stderr


def test_install_finds_the_closure_missing_fixes_it_with_fix_and_undo_restores(winpy, setup, tmp_path):
    python, env, toolkit = setup
    code, doc, err = install(winpy, python, env, tmp_path)
    # The prebuilt wheel was chosen and pip installed it into the target Python, nothing built.
    assert doc["wheel"]["origin"] == "prebuilt" and doc["wheel"]["runs"] == "ptx-jit", doc["wheel"]
    closure = doc["dll_closure"]
    assert closure["checked"] == ["llama.dll"], closure
    assert sorted(n.lower() for n in closure["missing"]) == ["cublas64_12.dll", "cudart64_12.dll"]
    assert any("is not on PATH" in w for w in closure["why"]), closure["why"]
    assert f"copy {windows_path(toolkit / 'bin')}\\cudart64_12.dll into" in closure["fix"], closure["fix"]
    assert closure["fixed"] == [] and doc["fixes"] == [] and "add --fix to apply it" in err
    # Without --fix nothing was copied, and verify's plain process fails the load for the same DLLs: exit 1.
    steps = {s["name"]: s for s in doc["verify"]["steps"]}
    assert code == 1 and doc["ok"] is False and steps["library"]["failure"] == "F15", steps["library"]
    assert doc["verify"]["environment"] == "plain"
    assert sorted(p.name for p in closure_lib(tmp_path).iterdir()) == ["llama.dll"]
    assert plain_load(winpy, python, env) is None

    code, doc, err = install(winpy, python, env, tmp_path, "--fix")
    closure = doc["dll_closure"]
    assert sorted(n.lower() for n in closure["fixed"]) == ["cublas64_12.dll", "cublaslt64_12.dll", "cudart64_12.dll"]
    assert closure["missing_after"] == [] and closure["undo"].startswith("envmgr install --undo-dll-fix ")
    [item] = [f for f in doc["fixes"] if f["action"] == "dll-copied"]  # beside doctor's recipe routes
    assert item["id"] == "F15" and item["action"] == "dll-copied" and item["undo"] == closure["undo"]
    # The real loader in a plain process of the target Python now loads llama.dll; cudart 12.9 answers.
    assert plain_load(winpy, python, env) == 12090
    library = {s["name"]: s for s in doc["verify"]["steps"]}["library"]
    assert library["status"] == "ok" and "Failed to load shared library" not in json.dumps(library), library

    done = winpy.envmgr("install", "--undo-dll-fix", closure["manifest"], env=env)
    assert done.returncode == 0 and done.stderr.count("envmgr: removed ") == 3, done.stderr
    assert plain_load(winpy, python, env) is None


def closure_lib(tmp_path: Path) -> Path:
    return tmp_path / "py" / "Lib" / "site-packages" / "llama_cpp" / "lib"


def plain_load(winpy, python: Path, env: dict) -> int | None:
    """cudaRuntimeGetVersion from a plain process of the target Python after `import llama_cpp`; None when
    the import fails (the library did not load)."""
    done = WinPython(python, winpy.prefix).run("-c", PROBE, env={"CUDA_PATH": env["CUDA_PATH"]})
    if done.returncode != 0:
        assert "Failed to load shared library" in done.stderr, done.stderr
        return None
    return int(done.stdout.strip().splitlines()[-1])
