"""Precision rules of issue 36 (the blind cohorts 2026-12-07, b and c, scored as train): where an id's own line also
appears in a log that is not that failure, the rule asks for what tells them apart.

Every log here is COMPOSED for the test in the tool's own words (the message the tool prints, with made-up paths
and names around it); none is a copy of a cohort log.
"""

from __future__ import annotations

from envmgr.buildlog.context import ContextScanner
from tests.logtext import decisive, scan


def test_a_cub_checkout_beside_the_sources_is_no_toolkit_component(tmp_path):
    # gcc's words for an include it cannot open (as nvcc's host pass prints them)
    gcc = (
        "/home/dev/proj/src/layers/softmax.cu:9:27: fatal error: {h}: No such file or directory\n"
        "compilation terminated.\n"
    )
    # CUB as the toolkit's include folder holds it: cub/cub.cuh, cub/block/...: F24 (CCCL missing from the toolkit)
    assert decisive(gcc.format(h="cub/cub.cuh"), tmp_path) == ("F24", "header-missing")
    assert decisive(gcc.format(h="cub/block/block_reduce.cuh"), tmp_path) == ("F24", "header-missing")
    # a cub/cub/ path is a checkout of the CUB repository the project expects beside its sources: outside the catalog
    assert decisive(gcc.format(h="cub/cub/cub.cuh"), tmp_path) == (None, None)
    assert decisive(gcc.format(h="third_party/cub/cub.cuh"), tmp_path) == (None, None)


# llama.cpp's system_info line of a build before ggml's backends (its words; the counts made up)
_SYSTEM_INFO = "system_info: n_threads = 16 / 32 | AVX = 1 | AVX2 = 1 | FMA = 1 | F16C = 1 | BLAS = 0 | SSE3 = 1 |\n"
# whisper.cpp's probe of its GPU backend, printed where it has none it can use (src/whisper.cpp)
_WHISPER_NO_GPU = "whisper_model_load:      CPU total size =   147.37 MB\nwhisper_backend_init_gpu: no GPU found\n"


def test_a_start_up_line_every_cpu_run_prints_is_f18_only_where_a_gpu_shows(tmp_path):
    run = "./main -m models/7B/ggml-model-q4_0.bin -p 'hello' -n 64\n"
    # a CPU machine's run: nothing failed for a GPU, none is in the log
    assert decisive(run + _SYSTEM_INFO, tmp_path) == (None, None)
    assert decisive("./main -m models/ggml-base.en.bin -f samples/jfk.wav\n" + _WHISPER_NO_GPU, tmp_path) == (
        None,
        None,
    )
    # the same lines where the run asked for the GPU (a layer count) or one shows (nvidia-smi's words): F18
    asked = "./main -m models/7B/ggml-model-q4_0.bin -ngl 35 -p 'hello' -n 64\n"
    assert decisive(asked + _SYSTEM_INFO, tmp_path)[0] == "F18"
    smi = "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |\n"
    assert decisive(smi + "./main -m models/ggml-base.en.bin -f samples/jfk.wav\n" + _WHISPER_NO_GPU, tmp_path)[0] == (
        "F18"
    )


def test_whisper_given_no_gpu_on_its_command_line_chose_the_cpu(tmp_path):
    # whisper.cpp's main takes no layer count (a CUDA build puts the model on the GPU): its run with the CUDA build
    # asked and no -ngl is no run left on the CPU, as a llama.cpp run would be
    build = "WHISPER_CUBLAS=1 make -j && ./main -m models/ggml-base.en.bin -f samples/jfk.wav"
    assert decisive(build + "\n", tmp_path) == (None, None)
    assert decisive("LLAMA_CUBLAS=1 make -j && ./main -m models/7B/ggml-model-q4_0.bin -p hi\n", tmp_path)[0] == "F18"
    # whisper.cpp's `-ng, --no-gpu` (examples/cli): the CPU chosen on purpose, which sets aside its CPU run's F18
    # (here whisper's own probe line, with an NVIDIA GPU in the log)
    smi = "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |\n"
    for flag in ("-ng",):
        loading = "whisper_init_from_file_with_params_no_state: loading model from 'models/ggml-base.en.bin'\n"
        found = scan(smi + build + " " + flag + "\n" + loading + _WHISPER_NO_GPU, tmp_path)
        assert found.decisive is None and found.context is not None and found.context.cpu is not None, flag
        assert [(v.id, v.reason) for v in found.vetoed] == [("F18", "cpu_chosen")], flag
    # the long form, and the flag's letters inside another option (no such choice), as the context stage reads them
    for line, chosen in ((build + " --no-gpu", True), (build + " -ngx", False), (build + " --no-gpux", False)):
        context = ContextScanner()
        context.feed([1], [line])
        assert (context.platform().cpu is not None) is chosen, line


def test_a_library_search_that_goes_on_or_skips_the_other_word_size_is_no_missing_library(tmp_path):
    # bitsandbytes' cuda_setup (bitsandbytes/cuda_setup/main.py, 0.39-0.41): its warning, then the backup path found
    bnb = (
        "CUDA_SETUP: WARNING! libcudart.so not found in any environmental path. Searching in backup paths...\n"
        "DEBUG: Possible options found for libcudart.so: {PosixPath('/usr/local/cuda/lib64/libcudart.so')}\n"
    )
    assert decisive(bnb, tmp_path) == (None, None)
    # ollama's GPU discovery (gpu.go) skipping the 32-bit libcuda beside the 64-bit one, then the 64-bit one loaded
    # and its cuInit failing: neither is a libcuda missing from the machine
    ollama = (
        'time=2025-01-02T10:00:00.000Z level=DEBUG source=gpu.go:517 msg="Unable to load nvcuda" '
        'library=/usr/lib/i386-linux-gnu/libcuda.so.550.54.15 error="Unable to load /usr/lib/i386-linux-gnu/'
        'libcuda.so.550.54.15 library to query for Nvidia GPUs: wrong ELF class: ELFCLASS32"\n'
        'time=2025-01-02T10:00:00.010Z level=DEBUG source=gpu.go:517 msg="Unable to load nvcuda" '
        'library=/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15 error="nvcuda init failure: 999"\n'
    )
    assert decisive(ollama, tmp_path)[0] != "F23"
    # the loader's own word that the library is not there at all: F23 as before
    missing = "OSError: libcudart.so.12: cannot open shared object file: No such file or directory\n"
    assert decisive('  File "/usr/lib/python3/dist-packages/x.py", line 3\n' + missing, tmp_path)[0] == "F23"


def test_pip_finding_no_cpu_build_that_was_asked_for_is_no_f19(tmp_path):
    # pip's own words (a Docker build's step prefix before them) for a +cpu requirement it found no file for: the CPU
    # build was the ask, so no CUDA wheel was wanted (F19 is a CPU build taken where CUDA was)
    text = (
        "#12 0.741 Looking in links: https://download.pytorch.org/whl/torch_stable.html\n"
        "#12 1.574 ERROR: Could not find a version that satisfies the requirement torch==1.11.0+cpu "
        "(from versions: 1.10.2, 1.11.0)\n"
        "#12 1.574 ERROR: No matching distribution found for torch==1.11.0+cpu\n"
    )
    assert decisive(text, tmp_path) == (None, None)


def test_zero_layers_in_a_log_that_shows_no_gpu_is_a_cpu_run(tmp_path):
    # llama.cpp's main given -ngl 0 and its timings (its own words): no GPU, no CUDA anywhere in the log
    run = (
        "./main -m models/7B/ggml-model-q4_0.gguf -n 128 -ngl 0 -t 8 -p 'hello'\n"
        "llama_print_timings:        eval time =  9095.91 ms /   127 runs   (   71.62 ms per token)\n"
    )
    assert decisive(run, tmp_path) == (None, None)
    # the same run where the log shows a CUDA device (ggml's own line): the GPU left unused, F18
    cuda = "ggml_init_cublas: found 1 CUDA devices:\n  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6\n"
    assert decisive(cuda + run, tmp_path) == ("F18", "anchor:zero-gpu-layers")


def test_nvcc_refusing_an_architecture_is_f13_however_it_spells_gpu(tmp_path):
    # nvcc's own fatal line; its releases print "gpu" or "GPU" (a Makefile's old arch list given to CUDA 11)
    for word in ("gpu", "GPU"):
        line = f"nvcc fatal   : Unsupported {word} architecture 'compute_30'\n"
        assert decisive("nvcc -gencode arch=compute_30,code=sm_30 -c kernels.cu\n" + line, tmp_path) == (
            "F13",
            "unsupported-arch",
        )


def test_the_kernels_oom_task_dump_with_nvcc_tools_is_f25(tmp_path):
    # the kernel's OOM-killer task dump (mm/oom_kill.c dump_task), as journalctl shows it; pids and sizes made up
    head = (
        "Dec 01 10:00:00 host kernel: [  pid  ]   uid  tgid total_vm   rss pgtables_bytes swapents oom_score_adj name\n"
    )
    row = "Dec 01 10:00:00 host kernel: [   {pid}]     0  {pid}     6629    56    61440    93    0 {name}\n"
    dump = (
        head + row.format(pid=4101, name="sh") + row.format(pid=4102, name="cicc") + row.format(pid=4103, name="nvcc")
    )
    assert decisive(dump, tmp_path) == ("F25", "anchor:oom-killer-during-nvcc")
    # the same dump of a C++ build without CUDA (cc1plus, make): no failure of this catalog
    other = head + row.format(pid=4101, name="make") + row.format(pid=4102, name="cc1plus")
    assert decisive(other, tmp_path) == (None, None)
