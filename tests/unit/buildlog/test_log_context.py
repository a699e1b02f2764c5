"""The context a log shows (buildlog/context.py, issue 36 part 1): the machine's vendor or platform in its tools' own
words, the veto of a CPU-family id it rules out (recorded with its reason in the report and in --json), and the
unnamed answer quoting the first failing line (part 3). Each excerpt is a tool's own output, quoted from the public
thread named beside it (the corpus's train logs where one is read); a line composed here says so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from envmgr.buildlog.context import ContextScanner, Platform, veto
from envmgr.buildlog.report import render_scan, scan_json
from envmgr.cli.main import cli
from tests import logtext


def platform_of(text: str) -> Platform:
    lines = text.splitlines()
    scanner = ContextScanner()
    scanner.feed(list(range(1, len(lines) + 1)), lines)
    return scanner.platform()


# ---------------------------------------------------------------- the machine, in its tools' words

SIGNS = [
    # llama-cpp-python#756: ggml-metal.m's start-up line on an M1
    ("apple", "metal", "ggml_metal_init: loading '/Users/agunapal/Documents/experiments/llama.cpp/ggml-metal.metal'"),
    # llama.cpp#2828: llama.cpp's Makefile build info on a Mac
    ("apple", "macos", "I UNAME_S:  Darwin\nI UNAME_P:  arm\nI UNAME_M:  arm64"),
    # karpathy/llama2.c#531: python.org's Python on macOS
    (
        "apple",
        "macos",
        '  File "/Library/Frameworks/Python.framework/Versions/3.11/lib/python3.11/site-packages/'
        'torch/cuda/__init__.py", line 239, in _lazy_init',
    ),
    # ollama#11557: ollama's inference compute line on an AMD GPU
    (
        "rocm",
        "ollama-rocm",
        'time=2025-07-26T11:15:53.149+03:00 level=INFO source=types.go:130 msg="inference compute" '
        'id=0 library=rocm variant="" compute=gfx1102 driver=0.0 name=1002:7480 total="8.0 GiB"',
    ),
    # lemonade-sdk/llamacpp-rocm#74: ggml-cuda.cu built for HIP names ROCm in its own message
    ("rocm", "ggml-rocm", "ggml_cuda_init: failed to initialize ROCm: no ROCm-capable device is detected"),
    # llama-cpp-python#2006: ggml-vulkan's device list on a Radeon
    (
        "vulkan",
        "ggml-vulkan",
        "ggml_vulkan: Found 1 Vulkan devices:\nggml_vulkan: 0 = Radeon RX 580 Series (AMD "
        "proprietary driver) | uma: 0 | fp16: 0 | warp size: 64",
    ),
    # xorbitsai/xllamacpp#23: vLLM's platform detection on a ROCm torch
    ("rocm", "torch-rocm", "INFO 04-24 17:55:33 [__init__.py:251] Automatically detected platform rocm."),
]


@pytest.mark.parametrize(("kind", "rule", "text"), SIGNS, ids=[f"{k}-{r}" for k, r, _ in SIGNS])
def test_another_vendor_or_platform_is_read_from_its_tools_own_lines(kind, rule, text):
    found = platform_of(text)
    assert found.other is not None and (found.other.kind, found.other.rule) == (kind, rule)
    assert found.nvidia is None


def test_an_nvidia_gpu_beside_another_vendors_words_lets_the_id_stand():
    # llama.cpp#11668: a Vulkan build on an RTX 3060 names the NVIDIA GPU
    text = (
        "ggml_vulkan: Found 1 Vulkan devices:\n"
        "ggml_vulkan: 0 = NVIDIA GeForce RTX 3060 (NVIDIA) | uma: 0 | fp16: 1 | warp size: 32"
    )
    found = platform_of(text)
    assert found.nvidia is not None and found.other is not None and found.other.kind == "vulkan"
    assert veto("F18", 2, ((2, "x"),), found, ()) is None


def test_a_mac_vetoes_even_beside_nvidia_words():
    # llama.cpp#2828's Metal build flags; a GeForce named in the same paste (composed) changes nothing: no CUDA on macOS
    text = (
        "I LDFLAGS:   -framework Accelerate -framework Foundation -framework Metal -framework MetalKit\n"
        "GeForce GTX 1080"
    )
    v = veto("F18", 1, ((1, "x"),), platform_of(text), ())
    assert v is not None and v.reason == "platform" and "Apple" in v.why


def test_an_arm_board_counts_only_without_an_nvidia_gpu():
    # jllllll/llama-cpp-python-cuBLAS-wheels#16: an Orange Pi 5 (RK3588)
    board = platform_of("orange pi 5 , (arm64  processor) with ARMBIAN 23.8.3 jammy 64 bit GNOME version 42.9")
    assert board.arm is not None and veto("F18", 5, ((5, "BLAS = 0"),), board, ()).reason == "platform"
    # prefix-dev/pixi#3008: an L4T (Jetson) image is ARM with an NVIDIA GPU
    jetson = platform_of("FROM nvcr.io/nvidia/l4t-base:r36.2.0\n           Platform: linux-aarch64")
    assert jetson.arm is not None and jetson.nvidia is not None
    assert veto("F18", 2, ((2, "x"),), jetson, ()) is None


def test_ollamas_runner_list_with_cuda_is_no_sign_of_rocm():
    # composed in the format of ollama-for-amd#40's real line (runners="[rocm_avx cpu cpu_avx cpu_avx2]"): ollama's
    # Linux builds list a ROCm runner beside the CUDA ones on every machine
    nvidia_box = platform_of('msg="Dynamic LLM libraries" runners="[cpu cpu_avx cpu_avx2 cuda_v11 rocm_v60102]"')
    assert nvidia_box.other is None
    amd_build = platform_of('msg="Dynamic LLM libraries" runners="[rocm_avx cpu cpu_avx cpu_avx2]"')
    assert amd_build.other is not None and amd_build.other.kind == "rocm"


def test_other_ids_are_never_vetoed():
    found = platform_of("ggml_metal_init: allocating")
    assert veto("F04", 1, ((1, "x"),), found, ()) is None
    assert veto("F13", 1, ((1, "x"),), found, ()) is None


# ------------------------------------------------------------ a command quoted in prose, a warning the run went past


def test_a_quoted_command_is_outranked_by_the_tools_failure_just_below():
    # fmralign#91's command, quoted; pip's own failure line a few lines below (pip 23's words)
    lines = ((3, "pip install torch --index-url https://download.pytorch.org/whl/cpu"),)
    found = platform_of("\n\n\n\n\n  error: subprocess-exited-with-error")
    v = veto("F19", 3, lines, found, ())
    assert v is not None and (v.reason, v.line_no) == ("prose", 6)
    # with no failure below it the command's evidence stands
    assert veto("F19", 3, lines, platform_of("nothing failed here"), ()) is None


def test_a_warning_the_run_went_past_is_no_failure_but_f18_is_such_a_run():
    # ComfyUI-WD14-Tagger#19: onnxruntime's warning; chandra#11's progress bar finishing after it
    warning = (
        "2024-01-09 21:33:49.2971069 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:747 onnxruntime::"
        "python::CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider."
    )
    last = ((1, warning), (2, "Loading checkpoint shards: 100%|████████| 4/4 [00:17<00:00,  4.48s/it]"))
    v = veto("F23", 1, ((1, warning),), platform_of(warning), last)
    assert v is not None and (v.reason, v.line_no) == ("warning_then_ran", 2)
    assert veto("F18", 1, ((1, warning),), platform_of(warning), last) is None
    # a failure after the run's progress: the warning may be the cause
    failed = (*last, (3, "Traceback (most recent call last):"))
    assert veto("F23", 1, ((1, warning),), platform_of(warning), failed) is None


# ---------------------------------------------------------------- the report and --json

ORANGE_PI = "logs/clean/llama-cpp-python-cublas-wheels-16-orange-pi-5-rk3588-arm64-blas-0.txt"


def test_a_vetoed_id_is_in_the_json_with_its_reason(tmp_path: Path):
    # F18's zero-layers signature (llama.cpp's own line, added here to the board's log: its BLAS = 0 alone is F18 only
    # where a GPU shows, issue 36) on an ARM board: set aside, and the answer says why nothing was named
    log = tmp_path / "build.log"
    log.write_text(_orange_pi_offloading_nothing(), encoding="utf-8")
    result = CliRunner().invoke(cli, ["doctor", "--log", str(log), "--json"])
    assert result.exit_code == 0
    doc = json.loads(result.output)
    assert doc["decisive"] is None and doc["matches"] == []
    (v,) = doc["vetoed"]
    assert (v["id"], v["reason"]) == ("F18", "platform") and "ARM board" in v["why"]
    assert v["line_no"] >= 6 and v["line"]
    assert doc["unnamed"]["reason"] == "vetoed" and doc["unnamed"]["vetoed"] == "platform"
    assert doc["context"]["arm"]["line_no"] == v["line_no"] and doc["context"]["nvidia"] is None


def _orange_pi_offloading_nothing() -> str:
    return logtext.train_text(ORANGE_PI) + "\nllm_load_tensors: offloaded 0/33 layers to GPU\n"


def test_the_text_report_says_why_nothing_was_named(tmp_path: Path):
    found = logtext.scan(_orange_pi_offloading_nothing(), tmp_path)
    text = render_scan(found, lambda s, *styles: s)
    assert "no catalog id: F18 was set aside" in text and "ARM board" in text


def test_a_vetoed_id_beside_a_named_one_is_listed_as_set_aside(tmp_path: Path):
    # llama-cpp-python#317's Metal run (train) with a GeForce-less CUDA compile failure of llama.cpp#13527 (F07,
    # failures.md) pasted after it: F07 stands, a CPU-family id would be set aside; the JSON list is always there
    found = logtext.scan("No CMAKE_CUDA_COMPILER could be found.\n", tmp_path)
    doc = scan_json(found, "build.log")
    assert doc["decisive"] == "F07" and doc["vetoed"] == []


# ---------------------------------------------------------------- the unnamed answer quotes the first failing line

MISTRAL = (
    # mistral.rs#653: a linker failure on the project's own library (outside the catalog)
    "cargo build --release --features cuda\n"
    "\n"
    "error message: \n"
    "  = note: LINK : fatal error LNK1181: cannot open input file 'mistralcuda.lib'\n"
    "\n"
    'error: could not compile `mistralrs-server` (bin "mistralrs-server") due to 1 previous error\n'
)


def test_the_unnamed_answer_quotes_the_first_failing_line(tmp_path: Path):
    found = logtext.scan(MISTRAL, tmp_path)
    assert not found.matches and found.unnamed is not None
    assert found.unnamed.first_failure == (
        4,
        "= note: LINK : fatal error LNK1181: cannot open input file 'mistralcuda.lib'",
    )
    doc = scan_json(found, "build.log")
    assert doc["unnamed"]["first_failure"] == {"line_no": 4, "line": found.unnamed.first_failure[1]}
    text = render_scan(found, lambda s, *styles: s)
    assert "first failing line 4: = note: LINK : fatal error LNK1181" in text


def test_a_log_without_a_failure_line_quotes_none(tmp_path: Path):
    found = logtext.scan("Collecting numpy\n  Using cached numpy-1.26.4.tar.gz\n", tmp_path)
    assert found.unnamed is not None and found.unnamed.first_failure is None
    assert scan_json(found, "build.log")["unnamed"]["first_failure"] is None


def test_the_cpu_chosen_on_purpose_is_no_gpu_failure():
    # ollama's docs/gpu.md: "to force CPU usage, use an invalid GPU ID (e.g., "-1")"; the line composed in that form,
    # and ggml's own zero-layer line below it (llama.cpp's llama-model.cpp)
    found = platform_of("CUDA_VISIBLE_DEVICES=-1 ollama serve\nload_tensors: offloaded 0/33 layers to GPU")
    v = veto("F18", 2, ((2, "load_tensors: offloaded 0/33 layers to GPU"),), found, ())
    assert v is not None and (v.reason, v.line_no) == ("cpu_chosen", 1)
    # pip's CPU index is F19's own evidence, not a choice the veto honours
    assert platform_of("pip install torch --index-url https://download.pytorch.org/whl/cpu").cpu is None


@pytest.mark.parametrize(
    "line",
    [
        # cudaminer#70 (train: logs/clean/cudaminer-70-...): nvcc's place and error
        'salsa_kernel.cu(397): error: more than one instance of overloaded function "min" matches the argument list:',
        # ninja#1353 (train): gcc killed, in gcc 7's words
        "g++-7: internal compiler error: Killed (program cc1plus)",
        # lc0#927 (train): a CUDA runtime error string
        "error CUDA error: out of memory (c:\\projects\\lc0\\src\\neural\\cuda\\network_cudnn.cc:442",
        # jimver/cuda-toolkit (train: b-jimver-...): apt's error prefix
        "E: Unable to locate package cuda-cublas-12-5",
    ],
)
def test_a_tools_failure_line_in_its_own_words_is_quoted(line, tmp_path: Path):
    found = logtext.scan(f"some output first\n{line}\n", tmp_path)
    assert found.unnamed is not None and found.unnamed.first_failure == (2, line)


# google/lightweight_mmm#23 (train): TensorFlow's probe for the CUDA runtime, a warning; its Linux form names the .so
TF_PROBE = (
    "2022-06-22 15:44:53.578885: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not "
    "load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: "
    "No such file or directory\n"
)
# composed in Keras's format: the training going on after the probe
EPOCHS = (
    "Epoch 1/10\n100/100 [==============================] - 2s 10ms/step - loss: 0.6931\n"
    "Epoch 2/10\n100/100 [==============================] - 1s 9ms/step - loss: 0.6930\n"
)


def test_a_library_probe_the_training_went_past_is_no_failure(tmp_path: Path):
    found = logtext.scan(TF_PROBE + EPOCHS, tmp_path)
    assert not found.matches and [(v.id, v.reason) for v in found.vetoed] == [("F23", "warning_then_ran")]
    assert found.unnamed is not None and found.unnamed.first_failure is None  # a warning is no failing line


def test_the_same_probe_on_a_machine_with_an_nvidia_gpu_stands(tmp_path: Path):
    # nvidia-smi's header (its real form) above it: the runtime library missing is why the GPU went unused
    smi = "| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4     |\n"
    found = logtext.scan(smi + TF_PROBE + EPOCHS, tmp_path)
    assert found.decisive is not None and found.decisive.id == "F23" and not found.vetoed


# ---------------------------------------------------------------- an id the catalog states for one system only

# bitsandbytes#1104 (blind cohort 2026-12-07, a train log since its first-sight measurement): a bitsandbytes release
# that knew only Linux library names, run by Python on Windows
BNB_ON_WINDOWS = (
    "The following directories listed in your path were found to be non-existent: {WindowsPath('C')}\n"
    "CUDA_SETUP: WARNING! libcudart.so not found in any environmental path. Searching in backup paths...\n"
    "The following directories listed in your path were found to be non-existent: "
    "{WindowsPath('/usr/local/cuda/lib64')}"
)


def test_a_linux_only_id_in_a_log_whose_paths_are_windows_is_set_aside():
    found = platform_of(BNB_ON_WINDOWS)
    assert found.windows is not None and found.linux is None  # the POSIX path inside WindowsPath() is Windows'
    v = veto("F23", 2, ((2, "libcudart.so not found"),), found, ())
    assert v is not None and v.reason == "platform" and "Linux failure" in v.why


def test_the_same_words_under_linux_paths_stand():
    text = BNB_ON_WINDOWS.replace("{WindowsPath('C')}", "{PosixPath('/home/user/.local/lib')}")
    text = text.replace("WindowsPath('/usr/local/cuda/lib64')", "PosixPath('/usr/local/cuda/lib64')")
    found = platform_of(text)
    assert found.linux is not None and found.windows is None
    assert veto("F23", 2, ((2, "libcudart.so not found"),), found, ()) is None


def test_a_windows_only_id_in_a_log_of_linux_paths_is_set_aside_and_mixed_paths_keep_it():
    # composed here: a Linux traceback's path, then the loader's words
    linux = (
        '  File "/home/user/venv/lib/python3.11/site-packages/llama_cpp/llama_cpp.py", line 75, in _load_shared_library'
    )
    assert veto("F15", 1, ((1, "x"),), platform_of(linux), ()).reason == "platform"
    mixed = linux + "\nOSError: [WinError 126] The specified module could not be found"
    assert veto("F15", 1, ((1, "x"),), platform_of(mixed), ()) is None


def test_openvinos_plugin_name_is_an_intel_sign():
    # zhaohb/ollama_ov#6 (blind cohort 2026-12-07, train since its first-sight measurement): the OpenVINO fork of
    # ollama naming the device plugin it runs on
    line = (
        'time=2025-04-14T07:08:45.403Z level=INFO source=routes.go:1478 msg="GenAI inference device" Device=CPU '
        '"Build Number"=2025.2.0-18517-6d45b6f5054 description=openvino_intel_cpu_plugin'
    )
    found = platform_of(line)
    assert found.other is not None and (found.other.kind, found.other.rule) == ("intel", "openvino")
    assert veto("F18", 1, ((1, "x"),), found, ()).reason == "platform"
