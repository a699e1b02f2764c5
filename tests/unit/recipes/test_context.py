"""envmgr/recipes/context.py: what a recipe reads from the machine, through the Host: recorded machines
(tests/machines) and the snapshot `export` makes of them."""

from __future__ import annotations

import pytest

from envmgr.host.recorded import load_machine
from envmgr.recipes.context import gather, with_recipe
from envmgr.recipes.recipe import get_recipe
from envmgr.snapshot.envdelta import EnvDelta
from envmgr.snapshot.form import Snapshot, from_toml
from tests.conftest import MACHINES

LINUX = str(MACHINES / "linux-two-toolkits.toml")
CLASSIC = str(MACHINES / "community-buildtools-cuda124.toml")
NO_OPTIONS = {"arch_list": None, "allow_unsupported": False, "params": ()}


@pytest.fixture
def linux(cli):
    made = cli("--machine", LINUX, "export", "--format", "toml")
    assert made.code == 0, made.stderr
    return load_machine(LINUX), from_toml(made.stdout, "export")


def test_gather_reads_the_snapshot_the_gpus_and_the_host(linux):
    host, snap = linux
    ctx = gather(host, snap, snap.delta.apply(host.env), **NO_OPTIONS)
    assert (ctx.platform, ctx.cuda_short, ctx.cuda_path) == ("linux", "13.0", "/usr/local/cuda-13.0")
    assert ctx.nvcc == "/usr/local/cuda-13.0/bin/nvcc"  # the snapshot's CUDACXX
    assert ctx.gpu_caps == ("7.0", "8.9")  # the recorded nvidia-smi
    assert ctx.ninja is None and ctx.cpu_count == host.cpu_count and ctx.vs_major is None


def test_an_arch_list_skips_the_gpu_probe_and_lib_path_is_listed(linux):
    host, snap = linux
    lib = "/usr/local/cuda-13.0/targets/x86_64-linux/lib"
    ctx = gather(host, snap, host.env, arch_list="86", allow_unsupported=True, params=(("lib_path", lib),))
    assert ctx.gpu_caps == () and ctx.arch_list == "86" and ctx.allow_unsupported_compiler
    assert ctx.lib_files == ("libcudart.so.13",)
    gone = gather(host, snap, host.env, arch_list="86", allow_unsupported=False, params=(("lib_path", "/nope"),))
    assert gone.lib_files == ()


def test_with_recipe_adds_the_recipes_variables_to_the_snapshot(linux):
    host, snap = linux
    delta, notes = with_recipe(host, snap, get_recipe("llama-cpp-python"), host.env, **NO_OPTIONS)
    ops = {(op.name, op.op): op.value for op in delta.ops}
    assert ops[("CMAKE_ARGS", "set")] == "-DGGML_CUDA=on '-DCMAKE_CUDA_ARCHITECTURES=70-real;89-real'"
    assert ops[("PATH", "prepend")] == ("/usr/local/cuda-13.0/bin",) and ("LLAMA_CUBLAS", "unset") in ops
    assert notes == ("CUDA architectures 70-real;89-real from the GPUs found",)


@pytest.mark.parametrize(
    ("vs", "has_props"),
    [
        ("C:\\Program Files\\Microsoft Visual Studio\\2022\\Community", True),
        ("C:\\Program Files (x86)\\Microsoft Visual Studio\\2022\\BuildTools", False),
    ],
)
def test_cuda_in_build_customizations_is_read_from_the_instance(vs, has_props):
    # the snapshot is hand-made (a Windows one needs a vcvars capture this record lacks); the machine is recorded
    host = load_machine(CLASSIC)
    snap = Snapshot(
        "windows",
        EnvDelta("windows", ()),
        summary=(("vs_path", vs), ("vs_major", "17"), ("cuda_short", "12.4"), ("toolset", "14.44.35207")),
    )
    ctx = gather(
        host,
        snap,
        {"PATH": "C:\\Windows", "TEMP": "C:\\Temp", "SystemDrive": "D:"},
        arch_list="89",
        allow_unsupported=False,
        params=(),
    )
    assert ctx.cuda_in_build_customizations is has_props
    assert (ctx.vs_major, ctx.toolset, ctx.temp, ctx.system_drive) == (17, "14.44.35207", "C:\\Temp", "D:")
