"""F18 or F19 by cause (issue 23, docs/doctor.md "F18 or F19: the rule"): a prebuilt package the installer took
without CUDA is F19; a build made here without CUDA, or a CUDA build the run leaves on the CPU, is F18.

Logs are TRAIN logs of tests/corpus/logs (their sources in their headers); a line made here says so. No dev or
held-out log is read here.
"""

from __future__ import annotations

from tests.logtext import decisive, facts, train_text

# onnxruntime's warning (onnxruntime/python/onnxruntime_inference_collection.py) with the CPU package's provider list
NOT_AVAILABLE = (
    "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names."
    "Available providers: 'AzureExecutionProvider, CPUExecutionProvider'"
)


def test_onnxruntime_without_its_cuda_provider_is_the_cpu_package_f19(tmp_path):
    # the CPU package beside onnxruntime-gpu, and the CPU package alone under InsightFace (two train logs)
    for name in (
        "logs/F19/onnxruntime-23736-cuda12.4-cudnn9-provider-not-available-both-packages-EXCERPT.txt",
        "logs/F19/latentsync-225-onnxruntime-cuda-provider-not-available-applied-cpu-EXCERPT.txt",
    ):
        text = train_text(name)
        assert facts(text).first("cpu_wheel") is not None and facts(text).first("cpu_only") is None
    # the first shows the GPU (its CUDA and cuDNN), F19; the second shows none: a machine without a GPU prints the
    # same warning, no id since issue 36's second precision round (wheels._cpu_wheel)
    both = train_text("logs/F19/onnxruntime-23736-cuda12.4-cudnn9-provider-not-available-both-packages-EXCERPT.txt")
    assert decisive(both, tmp_path) == ("F19", "anchor:cpu-only-wheel")
    alone = train_text("logs/F19/latentsync-225-onnxruntime-cuda-provider-not-available-applied-cpu-EXCERPT.txt")
    assert decisive(alone, tmp_path) == (None, None)
    assert facts(NOT_AVAILABLE).first("cpu_wheel") is not None
    # the same warning from a machine said to have no GPU (a line added here): the CPU package is the right one
    assert decisive(NOT_AVAILABLE + "\nI don't have a GPU on this machine.\n", tmp_path) == (None, None)


def test_onnxruntime_retrying_on_the_cpu_after_its_cuda_provider_failed_stays_a_run_fact():
    # onnxruntime-gpu lists its CUDA provider and fails to create it (missing libraries): not a package choice
    # (the retry line as onnxruntime_inference_collection.py words it; made here)
    fs = facts(
        "EP Error when using ['CUDAExecutionProvider', 'CPUExecutionProvider']\n"
        "Falling back to ['CPUExecutionProvider'] and retrying."
    )
    assert fs.first("cpu_only") is not None and fs.first("cpu_wheel") is None
