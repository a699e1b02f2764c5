"""The prebuilt pick judges tags by the TARGET Python, not by the one running envmgr: envmgr runs in Windows
CPython 3.11 (under Wine), `--python` is Windows CPython 3.13 (tests/setup/windows-python.sh 3.13), the
machine facts are a record (--machine). A folder of wheels holds the same llama-cpp-python wheel tagged
cp311 and cp313 (llama.dll is ctransformers 0.2.27's MSVC CUDA DLL, as in test_install_closure_windows.py):
the cp313 one is chosen, the cp311 one refused for its tags. The target is the 3.13 embeddable build as
shipped (no packaging, no pip), so its tags are derived by envmgr from what its standard library says
(wheels/pytags.py). The 3.13 of windows-python.sh with packaging is not used: under Wine 8 its own
sys_tags() kills the process (platform's WMI query, propsys.VariantToString unimplemented), Wine's crash
handling then sometimes outlived envmgr's 180 s here; that path (facts line, then a crash) is
tests/unit/wheels/test_pytags.py's, and a target's own sys_tags() is checked there on Linux.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from tests.conftest import MACHINES
from tests.winpy.conftest import WinPython, build_interpreter, windows_path
from tests.winpy.test_dll_oracle import CT, dlls  # noqa: F401  (the DLLs fixture)

pytestmark = [pytest.mark.wine, pytest.mark.winpy]
MACHINE = MACHINES / "community-buildtools-cuda124.toml"


def wheel(folder: Path, tag: str, dll: bytes) -> str:
    name = f"llama_cpp_python-0.3.16-{tag}.whl"
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / name, "w") as zf:
        zf.writestr("llama_cpp/__init__.py", "")
        zf.writestr("llama_cpp/lib/llama.dll", dll)
    return name


def bare(home: Path, folder: Path) -> Path:
    """The 3.13 interpreter with only its standard library on sys.path (its ._pth names no site-packages)."""
    folder.mkdir()
    for f in home.iterdir():
        if f.suffix.lower() in (".exe", ".dll"):
            shutil.copy2(f, folder / f.name)
    pth = next(home.glob("python3*._pth"))
    (folder / pth.name).write_text(
        "\r\n".join(
            [windows_path(home / pth.name.replace("._pth", ".zip")), windows_path(home), windows_path(home / "Lib")]
        )
        + "\r\n"
    )
    return folder / "python.exe"


@pytest.fixture(scope="module")
def py313() -> Path:
    return build_interpreter("3.13")


def plan(winpy, python: Path, index: Path, tmp_path: Path) -> dict:
    env = {
        "ENVMGR_CACHE_DIR": windows_path(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": windows_path(tmp_path / "cfg"),
        "ENVMGR_WHEEL_INDEX": "",
    }
    done = winpy.envmgr(
        "--machine",
        windows_path(MACHINE),
        "install",
        "--prebuilt-index",
        windows_path(index),
        "--python",
        windows_path(python),
        "--dry-run",
        "--json",
        "llama-cpp-python",
        env=env,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


def test_the_pick_uses_the_target_pythons_tags(winpy, dlls, py313, tmp_path):  # noqa: F811
    here = winpy.run("-c", "import sys; print(sys.version_info[:2])")
    assert here.stdout.strip() == "(3, 11)", here.stdout  # envmgr itself runs in 3.11
    index = tmp_path / "cu121"
    dll = (dlls["base"] / CT).read_bytes()
    old, new = wheel(index, "cp311-cp311-win_amd64", dll), wheel(index, "cp313-cp313-win_amd64", dll)
    for target, words in ((bare(py313.parent, tmp_path / "bare313"), "cp313 on win_amd64 (tags derived"),):
        assert (
            WinPython(target, winpy.prefix).run("-c", "import sys; print(sys.version_info[:2])").stdout.strip()
            == "(3, 13)"
        )
        doc = plan(winpy, target, index, tmp_path)
        assert doc["prebuilt"]["machine"]["python"].startswith(words), doc["prebuilt"]["machine"]
        verdicts = {c["file"]: c for c in doc["prebuilt"]["candidates"]}
        assert verdicts[new]["verdict"] == "chosen", verdicts[new]
        assert (
            verdicts[old]["verdict"] == "refused"
            and "do not fit the target Python (cp313 on win_amd64" in verdicts[old]["reason"]
        ), verdicts[old]
