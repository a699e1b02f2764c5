"""envmgr/doctor/checks_linux.py: F21 (gcc vs nvcc), F22 (which nvcc), F23 (libcuda and the runtime libraries),
called directly on the facts of recorded Linux machines (tests/machines/doctor/build_doctor_machines.py)."""

from __future__ import annotations

from envmgr.doctor.checks import FAIL, OK, WARN
from envmgr.doctor.checks_linux import f21, f22, f23, host_cxx
from envmgr.doctor.run import gather
from envmgr.host.envview import with_env
from envmgr.host.recorded import load_machine
from envmgr.snapshot.selectors import Selectors
from tests.conftest import MACHINES

GCC15 = str(MACHINES / "doctor" / "linux-gcc15-no-driver.toml")
DRIVER = str(MACHINES / "doctor" / "linux-with-driver.toml")


def test_f21_gcc15_is_too_new_for_cuda_12_4_and_an_older_gxx_is_offered():
    facts = gather(load_machine(GCC15), Selectors(cuda="12.4"))
    how, cc = host_cxx(facts)
    assert how == "g++ on PATH" and (cc.path, cc.major) == ("/usr/bin/g++", 15)
    got = f21(facts)
    assert got.status == FAIL and got.summary == (
        "unsupported GNU version: g++ 15.2.0 is newer than CUDA 12.4 accepts (gcc <= 13)"
    )
    assert got.fix == "set CUDAHOSTCXX=/usr/bin/g++-13 (envmgr shell does)"
    assert got.fix_command == "envmgr shell --cuda 12.4"
    assert f21(gather(load_machine(GCC15), Selectors())).status == OK  # CUDA 13.0 takes gcc 15


def test_f21_follows_cudahostcxx():
    host = load_machine(GCC15)
    facts = gather(with_env(host, {**host.env, "CUDAHOSTCXX": "/usr/bin/g++-13"}), Selectors(cuda="12.4"))
    how, cc = host_cxx(facts)
    assert how == "CUDAHOSTCXX=/usr/bin/g++-13" and cc.major == 13
    assert f21(facts).status == OK


def test_f22_and_f23_without_nvcc_on_path_and_without_a_driver():
    facts = gather(load_machine(GCC15), Selectors())
    nvcc = f22(facts)
    assert nvcc.status == WARN and nvcc.summary == "no nvcc on PATH (CUDA_HOME is set, but CMake does not read it)"
    assert nvcc.fix_command == "envmgr shell --cuda 13.0"
    lib = f23(facts)
    assert lib.status == WARN and lib.summary.startswith("no libcuda.so.1 (no NVIDIA driver here)")


def test_f22_and_f23_pass_where_nvcc_and_the_driver_are():
    facts = gather(load_machine(DRIVER), Selectors())
    assert (f22(facts).status, f22(facts).summary) == (OK, "nvcc on PATH is CUDA 13.0")
    found = f23(facts)
    assert (found.status, found.summary) == (OK, "libcuda.so.1 is available")
    assert found.evidence[0].startswith("ld.so.cache: libcuda.so.1 => ")
