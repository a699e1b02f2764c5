"""`envmgr verify` on Windows, for real: Windows CPython (under Wine) imports a llama_cpp whose library
is an MSVC-built CUDA DLL (ctransformers 0.2.27's, under llama.dll's name: it imports cudart64_12.dll and
cublas64_12.dll as a CUDA build of llama.dll does) with NVIDIA's real DLLs present or not. The load is
done by the real Windows loader in verify's child; verify must say it failed and name exactly the DLLs
the loader could not find (issue 15, item 4)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.winpy.conftest import windows_path
from tests.winpy.test_dll_oracle import CT, dlls  # noqa: F401  (the DLLs fixture)

pytestmark = [pytest.mark.wine, pytest.mark.winpy]

# HAND-MADE stand-in for llama_cpp 0.3.x's loader (llama_cpp/_ctypes_extensions.py, as
# tests/winpy/dll_probe.py does it): the lib folder goes on PATH and is added, CUDA_PATH's bin and lib are
# added as DLL directories, then the library is loaded with winmode=0 (RTLD_GLOBAL is 0 on
# Windows), and a load failure becomes the RuntimeError users see.
FAKE_INIT = """
import ctypes, os, pathlib
_lib = pathlib.Path(__file__).parent / "lib" / "llama.dll"
os.add_dll_directory(str(_lib.parent))
os.environ["PATH"] = str(_lib.parent) + os.pathsep + os.environ["PATH"]
if "CUDA_PATH" in os.environ:
    os.add_dll_directory(os.path.join(os.environ["CUDA_PATH"], "bin"))
    os.add_dll_directory(os.path.join(os.environ["CUDA_PATH"], "lib"))
try:
    _cdll = ctypes.CDLL(str(_lib), winmode=0)
except Exception as e:
    raise RuntimeError(f"Failed to load shared library '{_lib}': {e}")
__version__ = "0.3.36-fake"
"""


def fake_llama_cpp(root: Path, dll: bytes) -> Path:
    pkg = root / "llama_cpp"
    (pkg / "lib").mkdir(parents=True)
    (pkg / "lib" / "llama.dll").write_bytes(dll)
    (pkg / "__init__.py").write_text(FAKE_INIT, encoding="utf-8")
    return root


def target_python(winpy, folder: Path, site: Path) -> Path:
    """A second Windows Python whose sys.path holds `site`: the embeddable build's ._pth file replaces
    sys.path and makes it ignore PYTHONPATH, so the target gets its own python.exe and ._pth (the stdlib
    and extension modules stay in the original folder)."""
    import shutil

    home = winpy.exe.parent
    folder.mkdir(parents=True)
    for f in home.iterdir():
        if f.suffix.lower() in (".exe", ".dll"):
            shutil.copy2(f, folder / f.name)
    pth = next(home.glob("python3*._pth"))
    lines = [ln for ln in pth.read_text().splitlines() if ln.strip()]
    absolute = [ln if ln.startswith(("import", "Z:")) else windows_path(home / ln.replace("\\", "/")) for ln in lines]
    (folder / pth.name).write_text("\r\n".join([windows_path(site), *absolute]) + "\r\n")
    return folder / "python.exe"


# As the DLL oracle measured (docs/doctor.md): llama_cpp's winmode=0 load ignores the DLL directories it
# adds for CUDA_PATH, so only CUDA_PATH\bin on PATH makes the library load.
CASES = [
    ("no-cuda", None, False, {"cudart64_12.dll", "cublas64_12.dll"}),
    ("cuda-path-not-on-path", "cuda-12.9", False, {"cudart64_12.dll", "cublas64_12.dll"}),
    ("cuda-path-bin-on-path", "cuda-12.9", True, set()),
]


@pytest.mark.parametrize("case,cuda_path,bin_on_path,missing", CASES, ids=[c[0] for c in CASES])
def test_verify_names_the_dlls_the_windows_loader_could_not_find(
    winpy,
    dlls,
    tmp_path,
    case,
    cuda_path,  # noqa: F811
    bin_on_path,
    missing,
):
    site = fake_llama_cpp(tmp_path / "site", (dlls["base"] / CT).read_bytes())
    python = target_python(winpy, tmp_path / "py", site)
    env = {}
    if cuda_path:
        env["CUDA_PATH"] = windows_path(dlls["base"] / cuda_path)
        if bin_on_path:
            env["WINEPATH"] = env["CUDA_PATH"] + "\\bin"  # Wine puts WINEPATH first in the Windows PATH
    done = winpy.envmgr("verify", "--python", windows_path(python), "--json", env=env, timeout=300)
    assert "Traceback" not in done.stderr
    data = json.loads(done.stdout)
    assert done.returncode == 1 and data["gpu_did_the_work"] is False, done.stdout
    steps = {step["name"]: step for step in data["steps"]}
    assert steps["package"]["status"] == "ok", steps["package"]  # the target Python found the package
    text = json.dumps(steps["library"])
    if missing:
        # The real loader failed in verify's child, and verify names exactly the DLLs it could not find.
        assert steps["library"]["status"] == "fail" and steps["library"]["failure"] == "F15", text
        assert "Failed to load shared library" in text, text
        named = {m.lower() for m in re.findall(r"missing: ([\w.]+\.dll)", text)}
        assert named == missing, text
        assert steps["library"]["fix_command"].startswith("envmgr doctor --dll ")
    else:
        # Loaded for real; the fake has no llama API, so verify fails later, and names no missing DLL.
        assert "Failed to load shared library" not in text and "missing:" not in text, text
