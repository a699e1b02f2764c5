"""F18 (runs on the CPU) and F19 (the wrong wheel) from facts that hold across tools and wording (issue 23).

Every log is a TRAIN log of tests/corpus/logs (its source in its header), read and sometimes changed the way a
test of the rule needs (a line added or replaced, said at the change). Single lines quoted from public threads
carry their source; a line made here says so. No held-out log is read here (bench/diagnosis.py alone measures
those).
"""

from __future__ import annotations

from envmgr.buildlog.facts import decide
from tests.logtext import decisive, facts, scan, train_text


def test_a_cpu_torch_on_a_machine_said_to_have_no_gpu_is_no_wrong_wheel(tmp_path):
    clean = train_text("logs/clean/b-neuralrgbd-no-gpu-cpu-torch-script-assumes-cuda.txt")
    assert facts(clean).first("no_gpu_said") is not None
    assert scan(clean, tmp_path).matches == ()
    # the same message with nothing said of the machine (a train F19 log) stays F19
    f19 = train_text("logs/F19/pytorch-30664-miniconda-torch-not-compiled-with-cuda.txt")
    assert decisive(f19, tmp_path) == ("F19", "anchor:cpu-only-wheel")
    assert decisive(f19 + "\nI don't have a GPU on this laptop.\n", tmp_path) == (None, None)
    assert decisive(f19 + "\nI don\u2019t have a GPU on this laptop.\n", tmp_path) == (None, None)


def test_pip_skipping_every_torch_wheel_for_its_tags_is_f19_until_one_is_taken(tmp_path):
    name = "logs/F19/pytorch-34798-pip-verbose-none-of-the-wheel-tags-match-torch-1.4.0-EXCERPT.txt"
    text = train_text(name)
    assert decisive(text, tmp_path) == ("F19", "anchor:wheel-tags-mismatch")
    assert facts(text).values("wheel_tags") == ["torch"]
    # pip then taking a torch wheel (a line added here): the skipped ones were only other platforms'
    taken = text + "\n  Downloading torch-1.4.0-cp37-cp37m-manylinux1_x86_64.whl (753.4 MB)\n"
    assert decisive(taken, tmp_path) == (None, None)


def test_pip_wheel_tag_lines_in_newer_and_refusing_words():
    # pip >= 20.3's wording, from https://github.com/AutoGPTQ/AutoGPTQ/issues/562 (hash and index cut)
    skipped = (
        "  Skipping link: none of the wheel's tags (cp37-cp37m-win_amd64) are compatible (run pip debug "
        "--verbose to show compatible tags): https://pypi.tuna.tsinghua.edu.cn/packages/bc/7e/bb31de04449a/"
        "torch-1.8.0-cp37-cp37m-win_amd64.whl#sha256=c87c7b0f"
    )
    assert facts(skipped).values("wheel_tags") == ["torch"]
    # pip refusing the wheel it was given, from https://github.com/jhc13/taggui/issues/34
    refused = "ERROR: torch-2.1.2+cu121-cp311-cp311-win_amd64.whl is not a supported wheel on this platform."
    fs = facts(refused)
    assert [(d.id, d.rule) for d in decide(fs)] == [("F19", "wheel-tags-mismatch")]
    # a refused wheel with no CUDA in it (a line made here) is outside the catalog
    assert (
        decide(facts("ERROR: PyAudio-0.2.11-cp37-cp37m-win_amd64.whl is not a supported wheel on this platform.")) == []
    )


def test_a_cuda_package_sdist_taken_is_f19_and_a_build_still_running_is_f20(tmp_path):
    name = "logs/F19/xformers-1161-comfyui-portable-torch2.5.1-cu124-xformers-0.0.28.post3-sdist-EXCERPT.txt"
    text = train_text(name)
    assert decisive(text, tmp_path) == ("F19", "anchor:cuda-package-sdist")
    assert facts(text).values("sdist_fetched") == ["xformers"]
    # the build then shown still running (pip's spinner, a line added here): how long it takes is the question
    running = text.rstrip("\n") + "\n  Building wheel for xformers (setup.py) ... |\n"
    assert decisive(running, tmp_path)[0] == "F20"
    # an sdist of a package published as source only (a clean train log: pyo) is no evidence
    pyo = train_text("logs/clean/b-pyo-pip-sdist-winerror3-win64dlls-not-cuda-EXCERPT.txt")
    assert facts(pyo).values("sdist_fetched") == ["pyo"] and scan(pyo, tmp_path).matches == ()


def test_a_cuda_run_without_a_layer_count_is_f18(tmp_path):
    b547 = train_text("logs/F18/llama.cpp-b547-cublas-build-no-ngl-cpu-only-EXCERPT.txt")
    assert decisive(b547, tmp_path) == ("F18", "anchor:gpu-asked-no-layers")
    # the same run given layers (-ngl 40 added here) names nothing
    assert decisive(b547.replace("-n 1024 -p", "-ngl 40 -n 1024 -p"), tmp_path) == (None, None)
    kobold = train_text("logs/F18/koboldcpp-723-linux-usecublas-no-gpulayers-runs-on-cpu-prose.txt")
    assert decisive(kobold, tmp_path) == ("F18", "anchor:gpu-asked-no-layers")
    # a layer count of 0 is the same cause, said outright
    assert decisive(kobold.replace("--usecublas \n", "--usecublas --gpulayers 0\n"), tmp_path) == (
        "F18",
        "anchor:zero-gpu-layers",
    )


def test_ggml_capability_reports_without_a_gpu_backend(tmp_path):
    ollama = train_text("logs/F18/ollama-9035-0.5.7-manual-install-runners-cpu-only-device-context-2-EXCERPT.txt")
    assert facts(ollama).first("cpu_only") is not None
    # a system_info line of a build without CUDA (whisper.cpp's words; the line and the -ngl run are made here,
    # no train log holds one) names F18 where the run wanted the GPU, nothing in a run meant for the CPU
    info = (
        "system_info: n_threads = 4 / 8 | AVX = 1 | AVX2 = 1 | FMA = 1 | NEON = 0 | METAL = 0 | F16C = 1 | "
        "CUDA = 0 | COREML = 0 | OPENVINO = 0"
    )
    assert [d.rule for d in decide(facts(info))] == []
    assert [d.rule for d in decide(facts("./llama-cli -m model.gguf -ngl 99\n" + info))] == ["cuda-not-in-build"]
    # the clean train log that loads a CPU backend next to its CUDA one wanted no layers: no F18
    clean = train_text("logs/clean/b-ollama-cuda-visible-devices-minus1-cpu-only-intended.txt")
    assert facts(clean).values("backend_loaded") == ["CUDA", "CPU"] and scan(clean, tmp_path).matches == ()


def test_cpu_builds_named_in_their_own_words(tmp_path):
    bnb = train_text("logs/F19/deepke-windows-bitsandbytes-libbitsandbytes_cpu-EXCERPT.txt")
    assert "compiled without GPU support" in bnb
    assert decisive(bnb.replace("libbitsandbytes_cpu", "libbitsandbytes"), tmp_path)[0] == "F19"
    twin = train_text("logs/F19/twin4build-167-windows-pip-default-torch-2.14.0-cpu-cuda-available-false-EXCERPT.txt")
    assert decisive(twin, tmp_path) == ("F19", "anchor:cpu-only-wheel-file")
    # pip's other lines for the same +cpu build (made here from that log's version)
    for line in (
        "Successfully installed torch-2.14.0+cpu",
        "Requirement already satisfied: torch in c:\\venv\\lib\\site-packages (2.14.0+cpu)",
        "xFormers was built for: PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.14.0+cpu)",
    ):
        assert facts(line).first("cpu_wheel_file") is not None, line
    tennis = train_text("logs/F19/tennis-tracking-16-no-matching-distribution-torch-1.9.0-cu102-pypi-only.txt")
    assert facts(tennis).first("cpu_torch_said") is not None


def test_tensorflow_skipping_the_gpu_is_f18_next_to_its_missing_library(tmp_path):
    text = train_text("logs/F18/behaviormetrics-385-tensorflow-cannot-dlopen-gpu-libraries-skipping-gpu-EXCERPT.txt")
    assert {m.id for m in scan(text, tmp_path).matches} == {"F18", "F23"}
    # TensorFlow's short form of its dlopen line (a train log quotes it so) still names the missing library
    cog = train_text("logs/F18/cog-845-example-model-libcudart.so.11.0-inference-on-cpu-prose.txt")
    assert decisive(cog, tmp_path) == ("F23", "anchor:shared-object-missing")
