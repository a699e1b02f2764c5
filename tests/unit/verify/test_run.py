"""envmgr/verify/run.py: the child run in a plain process of the target Python and judged, on a hand-made
CPU-only llama_cpp (tests/fake_llama_cpp.py); the package names and the install command."""

from __future__ import annotations

import sys

import pytest

from envmgr.errors import UsageError
from envmgr.host.live import LiveHost
from envmgr.verify.run import CHILD, Verdict, canonical_package, install_command, verify
from tests.conftest import EMBEDDED_PYTHON
from tests.fake_llama_cpp import cpu_only_package


def test_llama_cpp_aliases_and_other_distribution_names():
    for alias in (None, "llama_cpp", "LLAMA-CPP", " llama_cpp_python "):
        assert canonical_package(alias) == "llama-cpp-python"
    assert canonical_package("stable-diffusion-cpp-python") == "stable-diffusion-cpp-python"
    for bad in ("../numpy", "a b", "-x", ""):
        with pytest.raises(UsageError, match="is not a distribution name"):
            canonical_package(bad)


def test_install_command_quotes_a_python_with_spaces():
    assert install_command(None) == "envmgr install llama-cpp-python"
    assert install_command("/usr/bin/python3") == "envmgr install llama-cpp-python --python /usr/bin/python3"
    assert (
        install_command("C:\\Program Files\\Python312\\python.exe")
        == 'envmgr install llama-cpp-python --python "C:\\Program Files\\Python312\\python.exe"'
    )
    assert CHILD.name == "child.py" and CHILD.is_file()


@pytest.mark.skipif(EMBEDDED_PYTHON, reason="the embeddable CPython ignores PYTHONPATH")
def test_a_cpu_only_build_is_f18_in_a_plain_process(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(cpu_only_package(tmp_path)))
    v = verify(LiveHost(), sys.executable, n_tokens=2)
    assert isinstance(v, Verdict) and not v.ok and v.proof == "" and v.environment == "plain"
    assert v.failure.name == "backend" and v.failure.failure == "F18"
    assert v.failure.fix_command == f"envmgr install llama-cpp-python --python {sys.executable}"
    assert [s.name for s in v.steps][:3] == ["package", "library", "backend"]
    assert v.run.offloaded == ((0, 3),)  # the fake's "offloaded 0/3 layers to GPU" on stderr
    assert v.model_bytes > 100_000 and v.seconds > 0


def test_a_python_that_cannot_start_is_usage(tmp_path):
    with pytest.raises(UsageError, match="cannot be run"):
        verify(LiveHost(), str(tmp_path / "no-python"))
