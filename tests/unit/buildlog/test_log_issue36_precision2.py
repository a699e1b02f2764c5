"""Precision rules of issue 36's second round (cohort 2026-12-07d scored as train): what F15/F23/F24 need beyond
their words.

Every log here is COMPOSED for the test in the tool's own words (the message the tool prints, with made-up paths
and names around it); none is a copy of a cohort log.
"""

from __future__ import annotations

from envmgr.buildlog.rules.loader import separate_only
from tests.logtext import decisive


def test_a_cudnn_or_tensorrt_library_alone_names_no_catalog_id(tmp_path):
    # CTranslate2's loader words (its own "Could not load library X. Error: <dlerror>"), made-up library versions
    so = "Could not load library {lib}. Error: {lib}: cannot open shared object file: No such file or directory\n"
    assert decisive(so.format(lib="libcudnn_cnn_infer.so.8"), tmp_path) == (None, None)
    # the toolkit's own runtime library in the same words stays F23
    assert decisive(so.format(lib="libcublasLt.so.12"), tmp_path)[0] == "F23"
    # CPython's loader words on Windows (os.add_dll_directory / ctypes), and TensorRT's trtexec
    dll = "FileNotFoundError: Could not find module 'C:\\app\\lib\\{dll}' (or one of its dependencies).\n"
    assert decisive(dll.format(dll="cudnn_ops64_9.dll"), tmp_path) == (None, None)
    assert decisive(dll.format(dll="cublas64_12.dll"), tmp_path)[0] == "F15"
    assert decisive("[E] Uncaught exception: Unable to open library: nvinfer_plugin_10.dll\n", tmp_path) == (
        None,
        None,
    )
    # torch's loader words with Windows' code, cuDNN's DLL the only one named
    torch = 'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\v\\torch\\lib\\{d}"\n'
    assert decisive(torch.format(d="cudnn_adv_infer64_8.dll"), tmp_path) == (None, None)
    assert decisive(torch.format(d="c10_cuda.dll"), tmp_path)[0] == "F15"


def test_separate_only_needs_every_library_named_to_be_cudnn_or_tensorrt():
    assert separate_only("cannot open libcudnn.so.9 and libnvinfer.so.10")
    assert not separate_only("cannot open libcudnn.so.9 and libcudart.so.12")
    assert not separate_only("no library on this line")
    assert separate_only("Could not locate zlibwapi.dll. Please make sure it is in your library path!")


def test_a_dll_tracer_line_is_no_load_failure(tmp_path):
    # a loader trace (one "LoadLibrary <path>" line per DLL loaded, as DLL tracers print them) beside a compiler error
    log = (
        "main.c\n"
        "C:\\tmp\\x\\main.c(3): fatal error C1083: Cannot open include file: 'Python.h': No such file or directory,\n"
        "LoadLibrary C:\\Windows\\System32\\apphelp.dll\n"
        "LoadLibrary C:\\Windows\\System32\\DriverStore\\FileRepository\\nv.inf_amd64_1\\nvcuda64.dll\n"
        "LoadLibrary C:\\Windows\\System32\\shlwapi.dll\n"
    )
    assert decisive(log, tmp_path)[0] != "F15"
    # LoadLibrary's failure words still count
    failed = "LoadLibrary failed with error 126 for nvcuda.dll\n"
    assert decisive(failed, tmp_path)[0] == "F15"
