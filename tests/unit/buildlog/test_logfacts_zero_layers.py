"""F18's zero-gpu-layers anchor (a layer count of 0 given to a ggml run) against two kinds of deliberate CPU run:
llama-bench's list of counts and the reporter's 0 given as the way to switch the GPU off (issue 23, round 8).

Every log is a TRAIN log of tests/corpus/logs (its source in its header), read and sometimes changed the way a test
of the rule needs (a line added or replaced, said at the change). No held-out log is read here.
"""

from __future__ import annotations

from tests.logtext import decisive, facts, scan, train_text

BENCH = "logs/clean/llama.cpp-7244-amd-radeon-metal-llama-bench-ngl-0-8-16-slower-offload-EXCERPT.txt"
GIBBERISH = "logs/clean/textgen-5354-llama-cpp-python-0.2.31-cuda-gibberish-n-gpu-layers-0-works-prose.txt"
DEFAULT_ZERO = "logs/F18/llm-gguf-8-rtx4080-cuda-build-default-n_gpu_layers-0-prose.txt"


def test_a_list_of_layer_counts_is_a_comparison_not_a_run_left_at_zero(tmp_path):
    text = train_text(BENCH)
    assert scan(text, tmp_path).matches == ()
    assert facts(text).first("zero_layers") is None
    # the same bench given the single count 0 (its list cut here): llama-bench's default is every layer on the GPU
    # (99), so its -ngl 0 is the CPU measured on purpose, whatever the GPU (issue 36: two CPU benchmarks of the blind
    # cohorts); the fact is read, the anchor does not fire, on the Radeon or on an NVIDIA GPU (that line replaced)
    single = text.replace("-ngl 0,8,16", "-ngl 0")
    assert facts(single).first("zero_layers") is not None
    nvidia = single.replace("AMD Radeon Pro 5600M 8 GB", "NVIDIA GeForce RTX 3060 12 GB")
    for bench in (single, nvidia):
        assert scan(bench, tmp_path).matches == () and scan(bench, tmp_path).vetoed == ()
    # a run of llama-cli given 0 (the bench's command and its table replaced by the run's, composed in its words):
    # F18's anchor fires where the log shows a GPU there or asked for (here CUDA asked of the build); on this machine
    # (an AMD Radeon, its own line in the log) the context stage sets it aside
    run = "./llama-cli -m models/llama-2-7b-chat.Q4_K_M.gguf -ngl 0 -p hello\n"
    radeon = "cmake -B build -DGGML_CUDA=ON\nggml_metal_init: found device: AMD Radeon Pro 5600M\n" + run
    assert decisive(radeon, tmp_path) == (None, None)
    assert [(v.id, v.reason) for v in scan(radeon, tmp_path).vetoed] == [("F18", "platform")]
    geforce = "ggml_cuda_init: found 1 CUDA devices:\n  Device 0: NVIDIA GeForce RTX 3060, compute capability 8.6\n"
    assert decisive(geforce + run, tmp_path) == ("F18", "anchor:zero-gpu-layers")
    # llama-bench's own table beside a -ngl 0 (its command cut from the paste, a variable in its place): the same
    table = (
        "| model | size | params | backend | ngl | test | t/s |\n"
        "| llama 7B Q4_K | 3.80 GiB | 6.74 B | CUDA | 0 | pp512 | 61.2 |\n"
    )
    assert decisive(geforce + "$BENCH -m m.gguf -ngl 0\n" + table, tmp_path) == (None, None)
    assert facts("llama-bench -m m.gguf -ngl 0, 99").first("zero_layers") is None


def test_a_zero_given_to_switch_the_gpu_off_is_a_deliberate_cpu_run(tmp_path):
    text = train_text(GIBBERISH)
    assert scan(text, tmp_path).matches == ()
    assert facts(text).first("zero_layers") is not None  # the fact is read; the rule sets it aside
    # the same setting given as the run's own (the sentence replaced here): F18 as before
    plain = text.replace(
        "If you disable it with `n-gpu-layers=0` you will get the correct results.", "My settings: `n-gpu-layers=0`."
    )
    assert decisive(plain, tmp_path) == ("F18", "anchor:zero-gpu-layers")


def test_a_default_of_zero_layers_stays_f18(tmp_path):
    # llm-gguf's plugin never passed n_gpu_layers (llama-cpp-python's default 0): the train F18 log keeps its id
    assert decisive(train_text(DEFAULT_ZERO), tmp_path) == ("F18", "anchor:zero-gpu-layers")
