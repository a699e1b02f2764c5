"""verify --after and duplicate runtimes (issue 37, deliverable 2), the pure parts: the judgement over a
process's module list (verify/runtimes.py), the `after` step from the child's records, the --after
argument, and the child's in-process module lister (verify/child_after.py) called directly, so the
Windows-CPython tier runs EnumProcessModules for real.

The module lists are hand-made in the shapes the child reports (/proc/self/maps paths; Windows
GetModuleFileNameW paths), with the file names torch, llama.cpp and Intel's wheels ship.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from envmgr.binaries.runtimes import duplicates
from envmgr.commands.verify import after_modules
from envmgr.errors import UsageError
from envmgr.verify.analyze import FAIL, OK, WARN
from envmgr.verify.runtimes import after_step, framed, runtimes_step

CHILD_AFTER = Path(__file__).resolve().parents[3] / "envmgr" / "verify" / "child_after.py"
SITE = r"C:\Users\me\app\.venv\Lib\site-packages"


def child_after():
    """The worktree's child_after.py by path (the Windows tier's interpreter may import another checkout's
    envmgr; the child is a plain script anyway)."""
    spec = importlib.util.spec_from_file_location("child_after_under_test", CHILD_AFTER)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_intel_and_llvm_openmp_on_windows_are_named_with_both_paths():
    mods = [
        r"C:\Python311\python.exe",
        SITE + r"\torch\lib\libiomp5md.dll",
        r"C:\Windows\System32\KERNEL32.DLL",
        SITE + r"\llama_cpp\lib\libomp140.x86_64.dll",
        SITE + r"\llama_cpp\lib\llama.dll",
    ]
    (d,) = duplicates(mods)
    assert d.family == "OpenMP" and d.what == ("Intel OpenMP", "LLVM OpenMP")
    assert d.paths == (mods[1], mods[3])
    assert mods[1] in d.line and mods[3] in d.line and "KMP_DUPLICATE_LIB_OK" in d.fix and "last resort" in d.fix


def test_gnu_and_intel_openmp_on_linux_including_a_repaired_wheels_renamed_copy():
    mods = ["/usr/bin/python3.11", "/v/site/torch/lib/libgomp-a34b3233.so.1", "/opt/intel/lib/libiomp5.so"]
    (d,) = duplicates(mods)
    assert d.what == ("GNU OpenMP", "Intel OpenMP") and d.paths == tuple(mods[1:])


def test_msvc_openmp_counts_and_one_runtime_alone_is_no_duplicate():
    assert [d.what for d in duplicates([r"C:\W\System32\VCOMP140.DLL", SITE + r"\x\libiomp5md.dll"])] == [
        ("MSVC OpenMP", "Intel OpenMP")
    ]
    assert duplicates(["/usr/lib/x86_64-linux-gnu/libgomp.so.1", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"]) == ()
    # the same file listed twice (two mappings, a case difference on Windows) is one runtime
    assert duplicates([r"C:\A\libiomp5md.dll", r"c:\a\LIBIOMP5MD.DLL"]) == ()


def test_cuda_runtime_and_cublas_of_two_majors():
    mods = [
        SITE + r"\torch\lib\cudart64_12.dll",
        SITE + r"\torch\lib\cublas64_12.dll",
        SITE + r"\llama_cpp\lib\cudart64_13.dll",
        SITE + r"\llama_cpp\lib\cublas64_13.dll",
        SITE + r"\llama_cpp\lib\cublasLt64_13.dll",
    ]
    found = {d.family: d for d in duplicates(mods)}
    assert set(found) == {"CUDA runtime", "cuBLAS"}
    assert found["CUDA runtime"].what == ("CUDA runtime 12", "CUDA runtime 13")
    assert found["CUDA runtime"].paths == (mods[0], mods[2]) and found["cuBLAS"].paths == (mods[1], mods[3])
    assert "torch.version.cuda" in found["cuBLAS"].fix


def test_linux_cuda_majors_and_one_major_twice_is_not_flagged():
    (d,) = duplicates(["/v/nvidia/cuda_runtime/lib/libcudart.so.12", "/v/llama_cpp/lib/libcudart.so.13.0.96"])
    assert d.what == ("CUDA runtime 12", "CUDA runtime 13")
    assert duplicates(["/a/libcudart.so.12", "/b/libcudart.so.12.4.127"]) == ()


def test_runtimes_step_warns_with_the_fix_and_is_ok_without_duplicates():
    step = runtimes_step({"modules": ["/a/libiomp5.so", "/b/libgomp.so.1"]}, "llama_cpp")
    assert step is not None and step.status == WARN and step.summary.endswith("OpenMP")
    assert (
        step.evidence
        == ("two OpenMP runtimes in one process: Intel OpenMP: /a/libiomp5.so; GNU OpenMP: /b/libgomp.so.1",)
        and "KMP_DUPLICATE_LIB_OK" in step.fix
    )
    ok = runtimes_step({"modules": ["/b/libgomp.so.1"]}, "llama_cpp")
    assert ok is not None and ok.status == OK and "llama_cpp" in ok.summary
    assert runtimes_step({}, "llama_cpp") is None  # the child died before the package was imported


def test_after_step_names_what_each_module_loaded_and_the_one_that_failed():
    recs = [
        {
            "stage": "after",
            "module": "torch",
            "ok": True,
            "version": "2.9.1",
            "file": "/v/torch/__init__.py",
            "libraries": ["/v/torch/lib/libtorch_cpu.so", "/v/torch/lib/libgomp-a34b3233.so.1"],
            "library_count": 2,
        }
    ]
    step = after_step(recs, ("torch",), "/v/bin/python")
    assert step is not None and step.status == OK and "torch" in step.summary
    assert step.evidence == (
        "torch 2.9.1 (/v/torch/__init__.py) loaded 2 shared libraries",
        "  /v/torch/lib/libgomp-a34b3233.so.1",
    )
    bad = recs + [
        {
            "stage": "after",
            "module": "nosuch",
            "ok": False,
            "error_type": "ModuleNotFoundError",
            "error": "No module named 'nosuch'",
        }
    ]
    step = after_step(bad, ("torch", "nosuch"), "/v/bin/python")
    assert step is not None and step.status == FAIL
    assert (
        step.summary
        == ("--after nosuch: cannot import it in /v/bin/python: ModuleNotFoundError: No module named 'nosuch'")
        and "not imported" in step.fix
    )
    died = after_step(recs, ("torch", "app"), "/v/bin/python", "was killed by SIGABRT (signal 6)")
    assert (
        died is not None
        and died.status == FAIL
        and died.summary == "--after: the child Python was killed by SIGABRT (signal 6) while importing app"
    )
    assert after_step([], (), "/v/bin/python") is None


def test_framed_puts_after_first_and_runtimes_last():
    a, r = after_step([{"module": "m", "ok": True}], ("m",), "py"), runtimes_step({"modules": []}, "p")
    assert a is not None and r is not None
    assert [s.name for s in framed((r,), a, r)] == ["after", "runtimes", "runtimes"]
    assert framed((), None, None) == ()


def test_the_after_argument():
    assert after_modules(None) == ()
    assert after_modules("torch, numpy,torch,app.models") == ("torch", "numpy", "app.models")
    for bad in ("", "torch,", "a b", "1abc", "torch;rm"):
        with pytest.raises(UsageError) as err:
            after_modules(bad)
        assert err.value.exit_code == 2 and "--after torch,numpy" in err.value.remedy


def test_the_childs_module_lister_lists_this_process():
    """Run in this interpreter (under Wine's Windows CPython in the Windows tier: EnumProcessModules)."""
    ca = child_after()
    mods = ca.loaded_modules()
    names = {os.path.basename(p).lower() for p in mods}
    assert len(mods) == len(set(mods)) and all(os.path.isabs(p) for p in mods)
    if sys.platform == "win32":
        assert "kernel32.dll" in names and "ntdll.dll" in names
        assert any(n.startswith("python3") and n.endswith(".dll") for n in names)
    else:
        assert any(n.startswith("libc.so") or n.startswith("libc-") for n in names)
    assert ca.after_modules(" torch, ,numpy ") == ["torch", "numpy"]


def test_the_childs_import_after_reports_new_libraries_and_stops_at_a_failure():
    ca = child_after()
    seen = []
    ok = ca.import_after(["json", "envmgr_no_such_module_37"], lambda stage, **d: seen.append({"stage": stage, **d}))
    assert ok is False and [r["module"] for r in seen] == ["json", "envmgr_no_such_module_37"]
    assert seen[0]["ok"] is True and isinstance(seen[0]["libraries"], list)
    assert seen[1]["ok"] is False and seen[1]["error_type"] == "ModuleNotFoundError"


def test_intels_abort_in_the_log_is_a_failed_runtimes_step_even_without_a_module_list():
    log = (
        "OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already initialized.\n"
        "OMP: Hint This means that multiple copies of the OpenMP runtime have been linked into the program.\n"
    )
    step = runtimes_step({}, "llama_cpp", log)
    assert step is not None and step.status == FAIL and "aborted" in step.summary
    assert (
        step.evidence == ("OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already initialized.",)
        and "KMP_DUPLICATE_LIB_OK" in step.fix
    )
    assert runtimes_step({}, "llama_cpp", "OMP: Info #276: omp_set_nested routine deprecated") is None


def test_the_defer_fix_is_planned_only_for_the_packages_copy_of_a_runtime_the_app_loaded_too():
    from envmgr.wheels import defer

    site = "/v/site"
    same = duplicates([f"{site}/torch/lib/libgomp.so.1", f"{site}/llama_cpp/lib/libgomp-a34b3233.so.1"])
    (d,) = defer.plan(same, [f"{site}/llama_cpp/lib"])
    assert (d.package_copy, d.app_copy, d.what) == (
        f"{site}/llama_cpp/lib/libgomp-a34b3233.so.1",
        f"{site}/torch/lib/libgomp.so.1",
        "GNU OpenMP",
    )
    assert defer.plan(same, [f"{site}/other"]) == ()  # neither copy is the package's
    mixed = duplicates([f"{site}/torch/lib/libiomp5.so", f"{site}/llama_cpp/lib/libgomp.so.1"])
    assert defer.plan(mixed, [f"{site}/llama_cpp/lib"]) == ()  # GNU cannot stand in for Intel
    win = duplicates([SITE + r"\torch\lib\libiomp5md.dll", SITE + r"\llama_cpp\lib\libiomp5md-1a2b3c4d.dll"])
    (w,) = defer.plan(win, [SITE.lower() + r"\LLAMA_CPP\lib"])
    assert w.package_copy.endswith("libiomp5md-1a2b3c4d.dll") and w.app_copy.endswith(r"torch\lib\libiomp5md.dll")
    step = runtimes_step({"modules": list(same[0].paths)}, "llama_cpp", "", [f"{site}/llama_cpp/lib"])
    assert step is not None and step.fix.startswith("make the package's GNU OpenMP defer to the app's")
    assert "KMP_DUPLICATE_LIB_OK" in step.fix and step.fix_command == "envmgr verify --after ... --fix"


def _win_reused(missing: tuple[str, ...]):
    from envmgr.binaries.reuse import Reused

    return Reused(
        "libomp140.x86_64.dll",
        SITE + r"\llama_cpp\lib\ggml-cpu.dll",
        SITE + r"\torch\lib\libomp140.x86_64.dll",
        SITE + r"\llama_cpp\lib\libomp140.x86_64.dll",
        "the DLL's own folder",
        "libomp140.x86_64.dll, 800,000 bytes, file version 20.1.0.0",
        "libomp140.x86_64.dll, 900,000 bytes, file version 21.1.0.0",
        "torch",
        missing,
    )


def test_the_windows_reuse_step_fails_when_the_apps_copy_lacks_a_function_and_warns_otherwise():
    from envmgr.verify.runtimes import reuse_step

    fail = reuse_step((_win_reused(("__kmpc_dispatch_deinit",)),), "llama_cpp")
    assert fail is not None and fail.status == FAIL
    assert "libomp140.x86_64.dll lacks __kmpc_dispatch_deinit ([WinError 127])" in fail.summary
    assert SITE + r"\llama_cpp\lib\libomp140.x86_64.dll" in fail.summary
    assert fail.evidence[0].endswith("the app's copy lacks __kmpc_dispatch_deinit: the import fails ([WinError 127])")
    assert f'ctypes.WinDLL(r"{SITE}\\llama_cpp\\lib\\libomp140.x86_64.dll")' in fail.fix
    assert "Never copy DLLs into System32" in fail.fix and "LD_LIBRARY_PATH" not in fail.fix
    warn = reuse_step((_win_reused(()),), "llama_cpp")
    assert warn is not None and warn.status == WARN and "lacks" not in warn.evidence[0]
    assert "app's copy of libomp140.x86_64.dll" in warn.summary and "20.1.0.0" in warn.evidence[0]
    assert reuse_step((), "llama_cpp") is None


def test_reuse_found_reads_windows_records_only_with_after():
    from envmgr.host.base import WINDOWS
    from envmgr.verify.report import parse_run
    from envmgr.verify.runtimes import reuse_found

    class Host:  # nothing in the package's folder: every read is refused
        platform = WINDOWS
        env = {"SystemRoot": "C:\\Windows"}

        def listdir(self, path):
            raise OSError(path)

        def exists(self, path):
            return False

    lines = [
        {"stage": "package", "found": True, "python": "C:\\py\\python.exe", "lib_dir": SITE + r"\llama_cpp\lib"},
        {"stage": "after", "module": "torch", "ok": True, "libraries": [SITE + r"\torch\lib\x.dll"]},
        {"stage": "runtimes", "modules": ["C:\\py\\python.exe", SITE + r"\torch\lib\x.dll"]},
    ]
    run = parse_run("".join(f"ENVMGR-VERIFY {json.dumps(r)}\n" for r in lines), "", 0)
    assert reuse_found(Host(), run, [SITE + r"\llama_cpp\lib"], ("torch",)) == ()
    assert reuse_found(Host(), run, [SITE + r"\llama_cpp\lib"], ()) == ()


def _child(returncode: int, tokens: int = 0):
    from envmgr.verify.report import parse_run

    recs = [{"stage": "package", "found": True}] + ([{"stage": "generated", "tokens": [1] * tokens}] if tokens else [])
    return parse_run("".join(f"ENVMGR-VERIFY {json.dumps(r)}\n" for r in recs), "", returncode)


def _reused_gomp():
    from envmgr.binaries.reuse import Reused

    return (
        Reused(
            "libgomp.so.1",
            "/v/llama_cpp/lib/libggml-cpu.so.0",
            "/v/torch/lib/libgomp.so.1",
            "/lib/x86_64-linux-gnu/libgomp.so.1",
            "ld.so.cache",
            "libgomp.so.1, GOMP_5.0",
            "libgomp.so.1.0.0, GOMP_5.1.2",
            "torch",
        ),
    )


def test_the_alone_step_says_whether_a_failure_after_the_app_follows_the_app_and_its_copies():
    from envmgr.verify.runtimes import alone_step

    ok, crash = _child(0, tokens=8), _child(-11)
    # alone passes, the app's copies alone pass: something else the app does (the H100 torch case's shape)
    s = alone_step(("torch",), "llama_cpp", ok, ok, _reused_gomp())
    assert s.status == FAIL and "runs the model alone and fails only with torch imported first" in s.summary
    assert "copies of libgomp.so.1 are not the cause" in s.summary
    assert s.evidence == (
        "the same child without --after: runs the model (8 tokens generated)",
        "without --after, the app's copies of libgomp.so.1 first on LD_LIBRARY_PATH: runs the model (8 tokens generated)",
    )
    assert "process of its own" in s.fix and "--after torch --json" in s.fix
    # the app's copies make it fail alone: the failure follows them
    s = alone_step(("torch",), "llama_cpp", ok, crash, _reused_gomp())
    assert s.status == FAIL and "follows those copies" in s.summary and "SIGSEGV" in s.evidence[1]
    assert "against the app's release of libgomp.so.1" in s.fix
    # no reuse to try: alone passes
    s = alone_step(("torch", "numpy"), "llama_cpp", ok, None, ())
    assert s.status == FAIL and s.summary.endswith("fails only with torch, numpy imported first")
    assert len(s.evidence) == 1
    # fails alone too: not the app's doing
    s = alone_step(("torch",), "llama_cpp", crash, None, ())
    assert s.status == WARN and "the app is not the cause" in s.summary and "fails too (" in s.evidence[0]
    # exit 0 without tokens is no pass
    assert alone_step(("torch",), "llama_cpp", _child(0), None, ()).status == WARN
