"""F18 (a run that wanted the GPU ends on the CPU) in runtimes' and reporters' words (issue 23, round 8).

Every log is a TRAIN log of tests/corpus/logs (its source in its header), read and sometimes changed the way a
test of the rule needs (a line added, replaced or dropped, said at the change). Single lines quoted from public
threads carry their source. No held-out log is read here (bench/diagnosis.py alone measures those).
"""

from __future__ import annotations

from tests.logtext import decisive, facts, scan, train_text

OLLAMA_NO_AVX = "logs/F18/ollama-2825-windows-0.1.27-nvidia-detected-no-vector-extensions-EXCERPT.txt"


def test_ollama_turning_its_gpu_runners_off_for_a_cpu_without_avx_is_f18_where_its_probe_found_the_gpu(tmp_path):
    text = train_text(OLLAMA_NO_AVX)
    assert decisive(text, tmp_path) == ("F18", "anchor:cpu-fallback-gpu-expected")
    assert facts(text).first("gpu_seen").value == "Nvidia GPU detected"
    # the same lines without the probe's "Nvidia GPU detected" (dropped here): a machine with no GPU says the same
    without = "\n".join(line for line in text.split("\n") if "Nvidia GPU detected" not in line)
    assert decisive(without, tmp_path) == (None, None)
    # and a train clean log: an old tablet with no graphics card, "no GPU detected"
    tablet = train_text("logs/clean/ollama-3306-old-tablet-no-gpu-no-vector-extensions-no-gpu-detected.txt")
    assert scan(tablet, tmp_path).matches == ()


def test_ollama_saying_it_disables_gpu_support_needs_no_other_evidence(tmp_path):
    # the WARN line's text as ollama #2903 and #2524 quote it in their titles (the rest of the line made here)
    line = (
        'time=2024-03-03T10:00:00.000+08:00 level=WARN source=gpu.go:128 msg="CPU does not have AVX or AVX2, '
        'disabling GPU support."\n'
    )
    assert decisive(line, tmp_path) == ("F18", "anchor:cpu-only")


def test_localai_finding_the_gpu_but_no_cuda_backend_is_f18(tmp_path):
    text = train_text("logs/F18/localai-2394-docker-compose-gpu-device-found-no-cuda-backend-EXCERPT.txt")
    assert decisive(text, tmp_path) == ("F18", "anchor:cpu-only")


def test_falling_back_to_cpu_counts_only_where_the_gpu_was_asked(tmp_path):
    text = train_text("logs/F18/llamafile-263-arch-ngl-9999-cuda-linked-no-gpus-found-falling-back-cpu-EXCERPT.txt")
    assert decisive(text, tmp_path) == ("F18", "anchor:cpu-fallback-gpu-expected")
    assert facts(text).first("cpu_fallback").value.lower() == "falling back to cpu"
    # the words alone (a line made here, as a container's entrypoint prints them): a CPU machine prints the same
    alone = "[entrypoint] no GPU detected - falling back to CPU inference.\n"
    assert decisive(alone, tmp_path) == (None, None)
    # onnxruntime's provider list stays the cpu-only rule's (not a second fallback fact)
    assert facts("Falling back to ['CPUExecutionProvider'] and retrying.").first("cpu_fallback") is None


def test_blas_0_written_without_spaces_is_the_same_report(tmp_path):
    text = train_text("logs/F18/private-gpt-2107-make_args-ggml_cublas-blas-0-no-gpu-prose-EXCERPT.txt")
    assert decisive(text, tmp_path) == ("F18", "anchor:cpu-only")
    assert facts("it should say OPENBLAS=0 or GGML_BLAS=0").first("cpu_only") is None


def test_model_buffers_all_on_the_cpu_though_layers_were_asked(tmp_path):
    text = train_text("logs/F18/llama-cpp-agent-57-cpu-buffer-size-only-n_gpu_layers-40-prose.txt")
    assert decisive(text, tmp_path) == ("F18", "anchor:weights-on-cpu-layers-asked")
    assert facts(text).values("model_buffer") == ["CPU"]
    # no layer count given (its mention dropped here): a CPU run's buffer is where the weights belong
    assert decisive(text.replace(", even though I've got `n_gpu_layers=40` set up", ""), tmp_path) == (None, None)
    # a CUDA buffer next to it (a line added here, as a CUDA build prints it): the layers went to the GPU
    both = text + "\nllm_load_tensors:      CUDA0 buffer size =  1967.79 MiB\n"
    assert facts(both).values("model_buffer") == ["CPU", "CUDA0"]
    assert decisive(both, tmp_path) == (None, None)


def test_the_reporter_saying_it_runs_on_the_cpu_where_layers_were_asked(tmp_path):
    for name in (
        "logs/F18/ctransformers-177-mistral-gpu_layers-200-two-a16-cpu-only-prose.txt",
        "logs/F18/llama-zip-19-n_gpu_layers-99-gpu-not-used-prose.txt",
        "logs/F18/ctransformers-163-langchain-gpu_layers-50-load-on-cpu-prose.txt",
    ):
        assert decisive(train_text(name), tmp_path) == ("F18", "anchor:cpu-run-said-gpu-asked"), name
    # a ggml-family build flag asked of pip (whisper.cpp's WHISPER_CUDA=1) and "doesn't use the GPU"
    whisper = train_text("logs/F18/pywhispercpp-125-whisper_cuda-1-pip-install-doesnt-use-gpu-prose.txt")
    assert facts(whisper).first("cpu_run_said").value == "n't use the GPU"
    assert decisive(whisper, tmp_path) == ("F18", "anchor:cpu-run-said-gpu-asked")
    # the same words with no layer count or CUDA asked (the count dropped here) say nothing of a GPU wanted
    assert decisive("used it but gpu is not being used\n", tmp_path) == (None, None)
    # a condition the reporter sets is no report of the symptom (a train clean log: garbage only when offloading)
    garbage = train_text("logs/clean/llama.cpp-3750-garbage-output-n-gpu-layers-10-rtx-a4000-EXCERPT.txt")
    assert facts(garbage).first("cpu_run_said") is None and scan(garbage, tmp_path).matches == ()
