"""F19 from a framework's own probe of its build (TensorFlow's is_built_with_cuda(), PaddlePaddle's
is_compiled_with_cuda(), torch.version.cuda) and from uv's words for a CUDA wheel with no build for this platform
(issue 23, round 9).

Every log is a FIT log of tests/corpus/logs (its source in its header); single lines quoted from public threads
carry their source; a line made here says so. No held-out or dev log is read here.
"""

from __future__ import annotations

from envmgr.buildlog.facts import decide
from tests.logtext import decisive, facts, train_text


def test_tensorflows_build_probe_answering_false_is_f19(tmp_path):
    # the answer on the next line (a REPL), and under the label it was printed with
    repl = train_text("logs/F19/tensorflow-62080-win10-tf-2.14-gtx960m-is-built-with-cuda-false-EXCERPT.txt")
    assert decisive(repl, tmp_path) == ("F19", "anchor:build-without-cuda")
    label = train_text("logs/F19/tensorflow-68236-win10-tf-2.16.1-rtx4070-is-built-with-cuda-false-EXCERPT.txt")
    assert decisive(label, tmp_path) == ("F19", "anchor:build-without-cuda")
    assert facts(label).first("build_without_cuda").line.strip() == "Is TensorFlow built with CUDA?: False"
    # the answer as a comment on the probe's line
    kernel = train_text(
        "logs/F19/studio-lab-275-sagemaker-kernel-tensorflow-not-built-with-cuda-torch-sees-gpu-EXCERPT.txt"
    )
    assert decisive(kernel, tmp_path) == ("F19", "anchor:build-without-cuda")


def test_the_other_frameworks_probes_and_their_true_answers(tmp_path):
    # lines made here after each framework's probe
    for line in (
        "print(paddle.device.is_compiled_with_cuda())\nFalse",
        ">>> torch.version.cuda\n>>> None",
        "torch.backends.cuda.is_built() # False",
        "{'is_cuda_build': False, 'is_rocm_build': False}",
    ):
        assert [(d.id, d.rule) for d in decide(facts(line))] == [("F19", "build-without-cuda")], line
    # a CUDA build answers otherwise (lines made here)
    for line in (
        "print(tf.test.is_built_with_cuda())\nTrue",
        ">>> torch.version.cuda\n'12.1'",
        "Is TensorFlow built with CUDA?: True",
        "{'is_cuda_build': True}",
    ):
        assert facts(line).first("build_without_cuda") is None, line


def test_a_build_without_cuda_asked_for_or_on_a_machine_without_gpu_is_no_failure(tmp_path):
    probe = "print(tf.test.is_built_with_cuda())\nFalse\n"
    # the reporter's machine has no GPU (a line made here): the CPU build is the right one
    assert decisive(probe + "I don't have a GPU on this laptop.\n", tmp_path) == (None, None)
    # the CPU build asked for on the install line (a line made here)
    assert decisive(
        "pip install torch --index-url https://download.pytorch.org/whl/cpu\n>>> torch.version.cuda\n>>> None\n",
        tmp_path,
    ) == (None, None)


def test_uvs_words_for_a_cuda_wheel_without_a_build_for_this_platform(tmp_path):
    title = train_text("logs/F19/verifiers-553-uv-macos-arm64-torch-2.8.0-cu128-only-linux-windows-wheels-title.txt")
    assert decisive(title, tmp_path) == ("F19", "anchor:wheel-tags-mismatch")
    assert facts(title).values("wheel_tags") == ["torch"]
    # uv's error line for the same case (a line made here after uv's wording, astral-sh/uv#15936 for a non-CUDA one)
    err = (
        "error: Distribution `torch==2.8.0+cu128 @ registry+https://download.pytorch.org/whl/cu128` can't be "
        "installed because it doesn't have a source distribution or wheel for the current platform"
    )
    assert [(d.id, d.rule) for d in decide(facts(err))] == [("F19", "wheel-tags-mismatch")]
    # a package without CUDA builds in uv's same words is outside the catalog (astral-sh/uv#15936)
    kaleido = (
        "hint: You're on Windows (`win_amd64`), but `kaleido` (v0.2.1.post1) only has wheels for the following "
        "platform: `manylinux2014_armv7l`; consider adding your platform to `tool.uv.required-environments`"
    )
    assert facts(kaleido).values("wheel_tags") == ["kaleido"]
    assert decide(facts(kaleido)) == []
