"""envmgr/commands/install_closure.py: where the target Python's llama_cpp\\lib is (asked of that Python
without importing llama_cpp), the closure check's platform gate, and `install --undo-dll-fix`."""

from __future__ import annotations

import sys
import sysconfig

import pytest

from envmgr.cli.main import Ctx
from envmgr.commands import install_closure
from envmgr.commands.install_flow import Report
from envmgr.host.live import LiveHost
from envmgr.wheels import closure
from tests.conftest import EMBEDDED_PYTHON
from tests.fake_llama_cpp import cpu_only_package


@pytest.mark.skipif(EMBEDDED_PYTHON, reason="the embeddable CPython ignores PYTHONPATH")
def test_lib_dir_finds_llama_cpp_without_importing_it(tmp_path, monkeypatch):
    site = cpu_only_package(tmp_path)
    (site / "llama_cpp" / "__init__.py").write_text("raise SystemExit('imported')\n")  # finding must not import
    monkeypatch.setenv("PYTHONPATH", str(site))
    lib, purelib = install_closure.lib_dir(LiveHost(), sys.executable)
    assert lib == str(site / "llama_cpp" / "lib") and purelib == sysconfig.get_paths()["purelib"]


def test_lib_dir_without_llama_cpp_is_empty(monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)
    assert install_closure.lib_dir(LiveHost(), sys.executable) == ("", "")


@pytest.mark.skipif(sys.platform == "win32", reason="the check itself runs on Windows")
def test_close_checks_only_on_windows():
    rep = Report("llama-cpp-python", "llama-cpp-python", "--recipe", "llama-cpp-python")
    install_closure.close(Ctx(host=LiveHost()), None, sys.executable, True, rep)
    assert rep.closure is None and rep.lines == []


def test_undo_dll_fix_removes_exactly_what_the_fix_added(tmp_path, capsys):
    src, lib = tmp_path / "bin", tmp_path / "llama_cpp" / "lib"
    src.mkdir()
    lib.mkdir(parents=True)
    (src / "cudart64_12.dll").write_bytes(b"MZ cudart")
    (lib / "llama.dll").write_bytes(b"MZ llama")
    copy = closure.Copy("cudart64_12.dll", str(src / "cudart64_12.dll"), str(lib / "cudart64_12.dll"))
    plan = closure.FixPlan((copy,), (), "copy cudart64_12.dll")
    _, manifest = closure.apply(plan, tmp_path / "manifests")
    assert install_closure.undo(str(manifest)) == 0
    assert sorted(p.name for p in lib.iterdir()) == ["llama.dll"]
    assert capsys.readouterr().err == f"envmgr: removed {lib / 'cudart64_12.dll'}\n"
