"""envmgr/binaries/winloader.py: the Windows loader's search order per way of loading a DLL, on a recorded
Windows machine (hand-made here: only the folders the order names matter)."""

from __future__ import annotations

import pytest

from envmgr.binaries.winloader import LOADERS, loader_model
from envmgr.host.recorded import RecordedHost

LIB = "C:\\Python312\\Lib\\site-packages\\llama_cpp\\lib"
CUDA = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4"


def _host(**env: str) -> RecordedHost:
    return RecordedHost(
        {
            "schema": 1,
            "platform": "windows",
            "env": {"SystemRoot": "C:\\Windows", "PATH": f'"{CUDA}\\bin"; C:\\Tools ;;', **env},
            "dirs": [f"{CUDA}\\bin", f"{CUDA}\\lib", LIB],
        }
    )


def test_ctypes_searches_the_dll_folder_and_added_folders_but_not_path():
    m = loader_model(_host(), "ctypes", LIB, "C:\\Python312\\python.exe", (f"{CUDA}\\bin",))
    assert m.dirs == (
        (LIB, "the DLL's own folder"),
        ("C:\\Python312", "the application (python.exe) folder"),
        (f"{CUDA}\\bin", "os.add_dll_directory 1"),
        ("C:\\Windows\\System32", "System32"),
    )
    assert "PATH is not searched" in m.description and m.blocked == "" and m.ignored == ()


def test_winmode0_searches_path_with_quotes_and_blanks_cleaned_and_ignores_added_folders():
    m = loader_model(_host(), "winmode0", LIB, None, (f"{CUDA}\\bin",))
    assert [d for d, _ in m.dirs] == ["C:\\Windows\\System32", "C:\\Windows", f"{CUDA}\\bin", "C:\\Tools"]
    assert m.dirs[2][1] == "PATH entry 1" and m.ignored == (f"{CUDA}\\bin",)


def test_llama_cpp_prepends_its_lib_and_a_stale_cuda_path_blocks_the_load():
    ok = loader_model(_host(CUDA_PATH=CUDA), "llama_cpp", LIB, "C:\\Python312\\python.exe")
    assert ok.dirs[3] == (LIB, "llama_cpp's own PATH prepend") and ok.blocked == ""
    stale = loader_model(_host(CUDA_PATH="C:\\CUDA\\v11.8"), "llama_cpp", LIB, None)
    assert stale.blocked == (
        "os.add_dll_directory(CUDA_PATH\\bin) raises [WinError 3] before any DLL is loaded: "
        "C:\\CUDA\\v11.8\\bin does not exist (F16)"
    )


def test_an_unknown_loader_is_a_programming_error():
    assert LOADERS == ("llama_cpp", "ctypes", "winmode0")
    with pytest.raises(ValueError):
        loader_model(_host(), "dlopen", LIB, None)
