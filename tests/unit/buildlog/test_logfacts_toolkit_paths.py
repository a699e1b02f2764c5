"""F22/F24 anchors learned from TRAIN logs of tests/corpus/logs (issue 23, round 8): which nvcc ran, a compiler
variable that expanded to nothing, and CCCL headers at any depth.

The logs named here are train logs (their source in their header); the single lines are written in the format the
tool prints (said at each). No held-out log is read here.
"""

from __future__ import annotations

import pytest

from tests.logtext import decisive, facts, scan, train_text

CCV = "logs/F22/ccv-198-empty-nvcc-in-config.mk-sh-runs-cu-file-EXCERPT.txt"
LLAMAFILE = "logs/F22/llamafile-56-usr-bin-nvcc-native-and-compute_86-not-defined.txt"
TINY_CUDA_NN = "logs/F22/tiny-cuda-nn-383-cmake-picks-usr-bin-nvcc-distro-toolkit-EXCERPT.txt"
RELION = "logs/F24/relion-96-cuda5.0-thrust-system-cuda-headers-missing-EXCERPT.txt"


def test_a_cuda_source_run_by_the_shell_is_an_empty_compiler_variable(tmp_path):
    # make ran "$(NVCC) x.cu ..." with NVCC empty: dash executed the .cu file (liuliu/ccv #198)
    assert decisive(train_text(CCV), tmp_path) == ("F22", "anchor:cuda-source-run-by-shell")
    assert facts(train_text(CCV)).first("cu_as_script").value == "cuda/cwc_convnet.cu"


@pytest.mark.parametrize(
    "line",
    [
        "kernels/add.cu: 3: kernels/add.cu: __global__: not found",  # dash: "<script>: <line>: <script>: <msg>"
        "src/nms_kernel.cu: line 12: extern: command not found",  # bash: "<script>: line <n>: <msg>"
    ],
)
def test_both_shells_words_for_a_cuda_source_run_as_a_script(line):
    assert facts(line).first("cu_as_script") is not None


@pytest.mark.parametrize(
    "line",
    [
        "src/nms_kernel.cu:12:10: fatal error: thrust/sort.h: No such file or directory",  # gcc's format
        'src/nms_kernel.cu(12): error: identifier "foo" is undefined',  # nvcc's format
        "/bin/sh: 1: nvcc: not found",  # a missing nvcc (other rule)
    ],
)
def test_compiler_messages_on_a_cuda_source_are_not_the_shell_running_it(line):
    assert facts(line).first("cu_as_script") is None


@pytest.mark.parametrize("name, group", [(LLAMAFILE, "nvcc_run"), (TINY_CUDA_NN, "nvcc_id")])
def test_the_distribution_nvcc_that_failed_is_named(tmp_path, name, group):
    found = scan(train_text(name), tmp_path).decisive
    assert found is not None and found.id == "F22"
    assert found.details["signature"] == "distro-nvcc-failed" and found.details[group] == "/usr/bin/nvcc"


@pytest.mark.parametrize(
    "text",
    [
        # CMake's identification that worked prints the same "Compiler:" line (CMakeOutput.log)
        'Compiling the CUDA compiler identification source file "CMakeCUDACompilerId.cu" succeeded.\n'
        "Compiler: /usr/bin/nvcc\nBuild flags:\n",
        # NVIDIA's own toolkit's nvcc failing is not the distribution's
        "/usr/local/cuda-12.2/bin/nvcc: returned nonzero exit status\n",
    ],
)
def test_a_distro_nvcc_that_did_not_fail_or_a_toolkit_nvcc_is_not_f22(tmp_path, text):
    assert decisive(text, tmp_path) == (None, None)


def test_a_cccl_header_missing_at_any_depth_is_a_missing_component(tmp_path):
    # CUDA 5.0's Thrust has no thrust/system/cuda/vector.h (3dem/relion #96)
    found = scan(train_text(RELION), tmp_path).decisive
    assert found is not None and found.id == "F24"
    assert found.details["header"] == "thrust/system/cuda/vector.h" and found.details["component"] == "cccl"
    # gcc's format for a CUB header below cub/ (the same component)
    line = "x.cu:4:10: fatal error: cub/device/device_radix_sort.cuh: No such file or directory\n"
    assert decisive(line, tmp_path)[0] == "F24"


LIVOX = "logs/F24/livox-calib-59-zh-ld-cannot-find-lCUDA-cublas-imported-target-names.txt"


def test_a_cuda_target_name_handed_to_the_linker_is_a_missing_component(tmp_path):
    # zh ld (Livox-SDK/livox_camera_lidar_calibration #59): the token is the same in every locale
    assert decisive(train_text(LIVOX), tmp_path)[0] == "F24"
    assert facts(train_text(LIVOX)).values("component_missing")[:2] == ["cublas", "cudart"]
    # ld's English words on the same token (binutils: "cannot find -l<name>")
    assert decisive("/usr/bin/ld: cannot find -lCUDA::cusolver: No such file or directory\n", tmp_path)[0] == "F24"
