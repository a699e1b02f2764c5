"""F19 (a CPU build or a source build where a prebuilt CUDA one was wanted) from what stays the same across
frameworks and installers (issue 23, round 8).

Every log is a TRAIN log of tests/corpus/logs (its source in its header), read and sometimes changed the way a
test of the rule needs (a line added, said at the change). Single lines quoted from public threads carry their
source; a line made here says so. No held-out log is read here.
"""

from __future__ import annotations

from envmgr.buildlog.facts import decide
from tests.logtext import decisive, facts, train_text


def test_paddlepaddle_saying_its_cpu_package_was_asked_for_the_gpu_is_f19(tmp_path):
    core = train_text("logs/F19/senta-69-paddle-cpu-version-cannot-use-gpu-zh-title.txt")
    assert decisive(core, tmp_path) == ("F19", "anchor:cpu-only-wheel")
    suite = train_text("logs/F19/paddleclas-268-nvidia-docker-paddlepaddle-cpu-version-beside-gpu-package.txt")
    assert decisive(suite, tmp_path) == ("F19", "anchor:cpu-only-wheel")
    # the core's words as a PARL log quotes them (https://github.com/PaddlePaddle/PARL/pull/299)
    parl = (
        "E0616 14:16:01.705137  1281 pybind.cc:1277] Cannot use GPU because you have installed CPU version "
        "PaddlePaddle."
    )
    assert [(d.id, d.rule) for d in decide(facts(parl))] == [("F19", "cpu-only-wheel")]
    # the model suites' check_cuda wording (a line made here after their message)
    made = "You can not set use_gpu = True in the model because you are using paddlepaddle-cpu."
    assert [(d.id, d.rule) for d in decide(facts(made))] == [("F19", "cpu-only-wheel")]
    # on a machine said to have no GPU the CPU package is the right one (a line added here)
    assert decisive(core + "\nI don't have a GPU on this machine.\n", tmp_path) == (None, None)


def test_condas_cpu_builds_of_pytorch_by_their_build_strings(tmp_path):
    plan = train_text("logs/F19/pytorch-23778-conda-pytorch-nightly-cudatoolkit-10.0-plan-cpu-only-py3.7_cpu_0.txt")
    assert decisive(plan, tmp_path) == ("F19", "anchor:cpu-only-wheel-file")
    assert facts(plan).first("cpu_wheel_file").value.endswith("py3.7_cpu_0")
    listed = train_text("logs/F19/pytorch-69202-conda-pytorch-1.9.0-cudatoolkit-11.3-cpu-only-py3.8_cpu_0.txt")
    assert decisive(listed, tmp_path) == ("F19", "anchor:cpu-only-wheel-file")
    # conda list's columns for the pytorch channel's mutex, and a conda-forge build string (lines made here)
    assert facts("pytorch-mutex             1.0                         cpu    pytorch").first("cpu_wheel_file")
    assert facts("  pytorch   conda-forge/linux-64::pytorch-2.1.0-cpu_mkl_py311h1234567_100").first("cpu_wheel_file")
    # the CUDA builds' strings are no CPU build (lines made here)
    for cuda in (
        "pytorch  1.9.0  py3.8_cuda11.1_cudnn8_0  pytorch",
        "pytorch-mutex  1.0  cuda  pytorch",
        "  pytorch   conda-forge/linux-64::pytorch-2.1.0-cuda118_py311h1234567_300",
    ):
        assert facts(cuda).first("cpu_wheel_file") is None, cuda


def test_the_cpu_build_said_to_come_instead_of_the_cuda_one(tmp_path):
    text = train_text("logs/F19/hoistformer-3-conda-pytorch-1.9.0-cudatoolkit-11.1-installs-cpu.txt")
    assert decisive(text, tmp_path) == ("F19", "anchor:cpu-only-wheel")
    assert "instead of cuda" in facts(text).first("cpu_torch_said").line
    nightly = train_text("logs/F19/pytorch-65338-conda-pytorch-nightly-conda-forge-installs-cpuonly.txt")
    assert "cpuonly version" in facts(nightly).first("cpu_torch_said").line


def test_a_failed_source_build_of_a_prebuilt_cuda_package_is_f19_only_where_nothing_says_why(tmp_path):
    text = train_text("logs/F19/mmcv-1930-colab-mmcv-full-1.2.7-no-prebuilt-for-torch1.11-cu113.txt")
    assert decisive(text, tmp_path) == ("F19", "anchor:cuda-package-build-failed")
    assert facts(text).values("wheel_failed") == ["mmcv-full"]
    # a cause in the build's output (a line added here: the shell finds no nvcc) names the failure instead
    assert decisive(text + "\n/bin/sh: 1: nvcc: not found\n", tmp_path)[0] == "F22"
    # pip 23's and 24's summaries name the package too (https://github.com/vllm-project/vllm/issues/17443)
    summary = (
        "pip._internal.exceptions.InstallationError: Failed to build installable wheels for some "
        "pyproject.toml based projects (xformers)"
    )
    assert facts(summary).values("wheel_failed") == ["xformers"]
    # pip's spinner ending in error (a train log cut before pip's summary): auto-gptq publishes CUDA wheels too
    gptq = train_text("logs/F19/autogptq-124-0.2.0-cuda-11.8-kaggle-building-wheel-for-auto-gptq-EXCERPT.txt")
    assert decisive(gptq, tmp_path) == ("F19", "anchor:cuda-package-build-failed")
    assert facts(gptq).values("wheel_failed") == ["auto-gptq"]
    # a package published as source only failing to build is outside the catalog (a line made here)
    assert decide(facts("  ERROR: Failed building wheel for pyaudio\nFailed to build pyaudio\n")) == []


def test_no_version_on_the_packages_own_wheel_page_is_f19_unless_pip_never_reached_it(tmp_path):
    text = train_text("logs/F19/detectron2-4901-colab-torch2.0-cu118-find-links-no-wheel-from-versions-none.txt")
    assert decisive(text, tmp_path) == ("F19", "anchor:own-wheel-index-unused")
    assert facts(text).values("no_distribution") == ["detectron2"]
    windows = train_text("logs/F19/detectron2-3510-win10-py3.9-cu111-torch1.9-find-links-linux-only-wheels.txt")
    assert decisive(windows, tmp_path) == ("F19", "anchor:own-wheel-index-unused")
    # pip's retries before it gives up (a line added here): the page was never read, so nothing says it lacks a wheel
    offline = text + (
        "\nWARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after "
        "connection broken by 'NewConnectionError': /detectron2/wheels/cu118/torch2.0/index.html\n"
    )
    assert decisive(offline, tmp_path) == (None, None)
    # another package missing beside that page (a line made here) is no evidence about the page
    other = (
        "Looking in links: https://dl.fbaipublicfiles.com/detectron2/wheels/cu118/torch2.0/index.html\n"
        "ERROR: No matching distribution found for pycocotools==9.9\n"
    )
    assert decide(facts(other)) == []


def test_ci_jobs_said_to_time_out_are_f20_but_a_timeout_setting_is_not(tmp_path):
    text = train_text("logs/F20/cccl-7670-msvc-cub-ctk13-ci-jobs-timeout-many-arch-families-prose.txt")
    assert decisive(text, tmp_path) == ("F20", "anchor:build-said-slow")
    # a workflow's setting (lines made here) reports no timeout
    for setting in (
        "  build-cuda:\n    timeout-minutes: 345\n",
        "ci: build with timeout: 60\n",
        "CI build timeout = 3600\n",
    ):
        assert facts(setting).first("slow_build") is None, setting
    # a download's timeout during an image build is the network's (clean train logs)
    for name in (
        "logs/clean/whisperlivekit-171-pip-timeout-download-pytorch-org-container-image-build.txt",
        "logs/clean/pytorch-docker-8-read-timeouts-building-locally-downloading-pytorch.txt",
        "logs/clean/nixl-1893-ci-triage-pip-read-timeout-torch-build-requires-aarch64-EXCERPT.txt",
    ):
        assert decisive(train_text(name), tmp_path) == (None, None), name
    assert facts("CI build failed: read timeout while fetching the toolkit\n").first("slow_build") is None  # made here


def test_a_cpu_build_asked_for_on_the_command_line_is_a_choice_until_cuda_is_asked_of_it(tmp_path):
    clean = train_text("logs/clean/uv-1497-uv-pip-install-torch-2.1.0-cpu-find-links-unsatisfiable-EXCERPT.txt")
    assert facts(clean).first("cpu_asked") is not None
    assert decisive(clean, tmp_path) == (None, None)
    # the program then asking that build for CUDA, in torch's own words (a line added here), is the wrong build
    asked = clean + "\nAssertionError: Torch not compiled with CUDA enabled\n"
    assert decisive(asked, tmp_path) == ("F19", "anchor:cpu-only-wheel")
    # a report of what conda installed, after the command's code span, asks for nothing (a train F19 log)
    nightly = train_text("logs/F19/pytorch-65338-conda-pytorch-nightly-conda-forge-installs-cpuonly.txt")
    assert facts(nightly).first("cpu_asked") is None


def test_paddles_own_gpu_package_words_on_a_cpu_machine_name_nothing(tmp_path):
    clean = train_text("logs/clean/paddle-30953-zh-run-check-on-cpu-only-machine-suggestions-EXCERPT.txt")
    assert decisive(clean, tmp_path) == (None, None)


def test_a_duration_is_the_builds_only_within_its_sentence(tmp_path):
    # a test hang capped at 30 minutes, with 'image build' in the next sentence (a clean train log)
    hang = train_text("logs/clean/cuda-quantum-5045-gpu-validation-test-hang-ran-6-hours-add-timeout.txt")
    assert decisive(hang, tmp_path) == (None, None)
    # the same words in one sentence are said of the build (a line made here)
    assert facts("The image build takes 30 minutes on the runner.").first("slow_build") is not None
    # builds said to be timing out in CI (a train log)
    cub = train_text("logs/F20/cccl-7198-cub-ci-builds-timing-out-prose.txt")
    assert decisive(cub, tmp_path) == ("F20", "anchor:build-said-slow")


def test_a_prebuilt_wheel_said_to_be_passed_over_is_f19(tmp_path):
    name = "logs/F19/miaai-3-windows-console-setup-skips-prebuilt-exllamav3-wheel-force-compiles-EXCERPT.txt"
    text = train_text(name)
    assert decisive(text, tmp_path) == ("F19", "anchor:prebuilt-wheel-skipped")
    # advice to take the prebuilt wheel, or a wheel rebuilt on purpose, passes nothing over (lines made here)
    for line in ("Use the prebuilt wheel instead of building from source.", "I rebuilt the wheel with MAX_JOBS=4."):
        assert facts(line).first("prebuilt_skipped") is None, line
