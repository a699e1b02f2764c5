"""Round-8 precision (issue 23): TensorFlow's CUDA-library probe warning on a machine with no GPU to use (not F15)
and a CI time limit a test run hit (not F20).

Every log is a TRAIN log of tests/corpus/logs (its source in its header), read and sometimes changed the way a test
of the rule needs (a line added or replaced, said at the change). No held-out log is read here.
"""

from __future__ import annotations

from tests.logtext import decisive, scan, train_text

TF_NO_GPU = "logs/clean/lightweight_mmm-23-tf-cudart64_110-warning-no-gpu-runs-fine-prose.txt"
TF_RTX = "logs/F15/master-thesis-7-tf-windows-cudart64_110-not-found-rtx4060-EXCERPT.txt"
TF_GPU_CHOSEN = "logs/F15/koboldai-15-tf-cudart64_110-not-found-cuda10.2-quoted-EXCERPT.txt"
TESTS_HANG = "logs/clean/cuopt-pr1779-ci-pytest-step-time-limit-two-tests-hang-prose.txt"


def test_tensorflows_cudart_probe_alone_is_a_cpu_machines_start(tmp_path):
    text = train_text(TF_NO_GPU)
    assert scan(text, tmp_path).matches == ()
    # the same warning where the log shows the GPU (a device line added here, as TF prints it): F15
    gpu = text + "\nFound device 0 with properties: name: NVIDIA GeForce RTX 3060 computeCapability: 8.6\n"
    assert decisive(gpu, tmp_path)[0] == "F15"


def test_tensorflows_probe_stays_f15_where_a_gpu_is_there_or_chosen(tmp_path):
    assert decisive(train_text(TF_RTX), tmp_path)[0] == "F15"  # TF finds the RTX 4060 later
    assert decisive(train_text(TF_GPU_CHOSEN), tmp_path)[0] == "F15"  # "not using my GPU", GPU mode chosen


def test_a_time_limit_a_test_run_hit_is_not_a_long_build(tmp_path):
    text = train_text(TESTS_HANG)
    assert scan(text, tmp_path).matches == ()
    # a CI service's own limit line (GitLab's words; the job's name holds "test"): F20 as before
    gitlab = "ERROR: Job failed: execution took longer than 1h0m0s seconds\n"
    assert decisive(gitlab, tmp_path) == ("F20", "anchor:time-limit")
    named = "The job 'build-and-test' has exceeded the maximum execution time of 360 minutes.\n"
    assert decisive(named, tmp_path)[0] == "F20"
