"""The anchors of buildlog/facts.py hold when a train log is pasted another way (issue 23 items 1 and 2).

Every case is a real train log of tests/corpus/logs (its source in its header), changed the way users
paste logs: a Python bytes repr, a JSON string, typographic quotes, a CI service's annotation prefix. What
the scan names must not change. No held-out log is read here (bench/diagnosis.py alone measures those).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from envmgr.buildlog.clean import repair_line
from envmgr.buildlog.facts import unfinished
from envmgr.buildlog.scan import scan_path
from tests.conftest import CORPUS

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from corpus_index import INDEX, load_index, read_log  # noqa: E402

ROWS = {e.file: e for e in load_index()} if INDEX.is_file() else {}


def train_text(name: str) -> str:
    e = ROWS[name]
    assert e.split == "train"
    return read_log(CORPUS / name, e.origin).decode("utf-8")


def named(text: str, tmp_path: Path) -> str | None:
    path = tmp_path / "build.log"
    path.write_bytes(text.encode("utf-8"))
    found = scan_path(path)
    return found.decisive.id if found.decisive else None


PASTES = {
    # repr() of the captured bytes: both quote kinds in the text, so repr escapes \' (nvcc quotes the arch)
    "bytes-repr": lambda t: repr(t.encode("utf-8")),
    # a JSON string: \" around CMake's "native", Chinese text as \uXXXX
    "json-string": lambda t: json.dumps(t),
    # typographic quotes (a web page's, an editor's or a localised console's) around nvcc's arch and CMake's value
    "smart-quotes": lambda t: re.sub(r'"([^"\n]*)"', "\u201c\\1\u201d", re.sub(r"'([^'\n]*)'", "\u2018\\1\u2019", t)),
    # Azure Pipelines / GitHub Actions: a timestamp and an annotation before every line
    "ci-annotation": lambda t: "\n".join(
        f"2024-05-01T10:00:00.1234567Z ##[error]{line}" if line.strip() else line for line in t.split("\n")
    ),
    # Docker's json-file log driver (docker logs' source, /var/lib/docker/containers/*/*-json.log): a JSON object
    # per line, its text a JSON string with the line break in it
    "docker-json": lambda t: "\n".join(
        json.dumps(
            {"log": line + "\n", "stream": "stderr", "time": "2024-05-01T10:00:00.123456789Z"}, separators=(",", ":")
        )
        for line in t.split("\n")
    ),
    # the CRI format kubectl and containerd write: a timestamp, the stream and a partial/full tag before every line
    "cri": lambda t: "\n".join(f"2024-05-01T10:00:00.123456789Z stderr F {line}" for line in t.split("\n")),
    # a program that printed the captured output split into lines: the repr of a list of str
    "list-repr": lambda t: repr(t.split("\n")),
}
CASES = [
    ("nvcc-fatal-unsupported-gpu-architecture-compute_120a-pip-EXCERPT.txt", "bytes-repr"),
    ("logs/F12/pixtrack-docker-build-cuda_architectures-native-no-gpu.txt", "json-string"),
    ("logs/F03/instant-ngp-985-vs2019-no-windows-sdk-corecrt-h-compileridcuda-zh.txt", "json-string"),
    ("logs/F08/dect-1-detected-cuda-12.1-vs-torch-11.8.txt", "ci-annotation"),
    ("nvcc-fatal-unsupported-gpu-architecture-compute_20-findcuda-make-BPA-EXCERPT.txt", "smart-quotes"),
    ("logs/F12/pixtrack-docker-build-cuda_architectures-native-no-gpu.txt", "smart-quotes"),
    ("logs/F08/dect-1-detected-cuda-12.1-vs-torch-11.8.txt", "docker-json"),
    ("logs/F24/oneflow-conda-env-cuda-cublas_static-target-not-found-EXCERPT.txt", "docker-json"),
    ("logs/F08/pytorch-sparse-189-detected-cuda-11.2-vs-torch-10.2-colab.txt", "cri"),
    ("cmake3.22-cuda_architectures-native-compute_native-unsupported-cuda12.3-colmap-EXCERPT.txt", "list-repr"),
    ("logs/F13/detectron2-272-rtx2060-cuda9.2-compute_75-quoted.txt", "list-repr"),
    ("logs/F24/oneflow-conda-env-cuda-cublas_static-target-not-found-EXCERPT.txt", "list-repr"),
    (
        "logs/F19/xformers-1161-comfyui-portable-torch2.5.1-cu124-xformers-0.0.28.post3-sdist-EXCERPT.txt",
        "ci-annotation",
    ),
    ("logs/F19/pytorch-34798-pip-verbose-none-of-the-wheel-tags-match-torch-1.4.0-EXCERPT.txt", "docker-json"),
    ("logs/F18/llama.cpp-b547-cublas-build-no-ngl-cpu-only-EXCERPT.txt", "list-repr"),
]


@pytest.mark.parametrize(("name", "paste"), CASES)
def test_a_pasted_train_log_names_the_same_cause(name, paste, tmp_path):
    if name not in ROWS:
        pytest.skip(f"{name} is not in the corpus index")
    text = train_text(name)
    expect = ROWS[name].expect
    assert named(text, tmp_path) in expect
    assert named(PASTES[paste](text), tmp_path) in expect


SPINNER = "logs/F20/hip-ad-requirements-flash-attn-building-wheel-never-finishes.txt"


def test_a_log_that_ends_inside_a_wheel_build_is_f20_until_the_build_ends(tmp_path):
    text = train_text(SPINNER)
    assert named(text, tmp_path) == "F20"
    lines = list(enumerate(text.rstrip("\n").split("\n"), 1))
    last = unfinished(lines)
    assert last is not None and "Building wheel for flash-attn" in last.line
    # the same build, finished or failed: no longer a build that ran on
    done = lines + [(len(lines) + 1, "  Building wheel for flash-attn (setup.py) ... done")]
    failed = lines + [(len(lines) + 1, "  error: subprocess-exited-with-error")]
    assert unfinished(done) is None and unfinished(failed) is None


def test_no_cuda_device_is_cpu_fallback_and_a_driver_reason_is_f17(tmp_path):
    cortex = "logs/F18/cortex.cpp-cuda-init-no-device-cpu-buffers-iso-timestamps.txt"
    text = train_text(cortex)
    assert named(text, tmp_path) == "F18"
    # the same ggml line with a driver reason (the runtime's cudaErrorInsufficientDriver text) is F17
    driver = text.replace(
        "no CUDA-capable device is detected", "CUDA driver version is insufficient for CUDA runtime version"
    )
    assert named(driver, tmp_path) == "F17"


def test_a_heavy_build_the_log_ends_in_is_f20_until_it_ends(tmp_path):
    # pip fetched flash-attn's sdist and the paste stops there (the reporter: "stuck for a long time"); the
    # metadata step's "... done" is no end of the build, pip's own end of the wheel is
    name = "logs/F20/flash-attention-1912-2.8.3-mirror-installation-stuck-EXCERPT.txt"
    text = train_text(name).rstrip("\n")
    assert named(text, tmp_path) == "F20"
    done = "\n  Building wheel for flash-attn (setup.py) ... done\nSuccessfully installed flash-attn-2.8.3"
    assert named(text + done, tmp_path) is None
    # llama.cpp's fattn template instances and ptxas on flash kernels are such builds too
    assert named(train_text("logs/F20/beellama-cpp-build-slows-at-fattn-mma-instances.txt"), tmp_path) == "F20"
    assert named(train_text("logs/F20/disco-colab-xformers-ptxas-sm_90-4-hours.txt"), tmp_path) == "F20"


def test_a_build_said_to_take_hours_is_f20(tmp_path):
    for name in (
        "logs/F20/tensorrt-llm-2469-build_wheel-h100-more-than-2-hours-EXCERPT.txt",
        "logs/F20/llama.cpp-ci-windows-cuda-jobs-50-minutes.txt",
        "logs/F20/node-llama-cpp-311-download-cuda-single-threaded-slow.txt",
    ):
        text = train_text(name)
        assert named(text, tmp_path) == "F20"
    # minutes below half an hour are no slow build; a duration with no build in the line is none either
    assert named("The build took 12 minutes on CI.\n", tmp_path) is None
    assert named("I waited 3 hours for the download to start.\n", tmp_path) is None


def test_a_container_started_without_gpus_then_calling_cuda_is_f23(tmp_path):
    name = "logs/F23/kaggle-rcic-docker-run-privileged-no-gpus-found-no-driver-EXCERPT.txt"
    text = train_text(name)
    assert named(text, tmp_path) == "F23"
    # the same container given the GPUs: the cut traceback names nothing
    assert named(text.replace("--privileged", "--privileged --gpus all"), tmp_path) is None
    # a container without GPUs whose program never calls CUDA (clean train log plantcv's libGL) is no F23
    assert named(train_text("logs/clean/b-plantcv-docker-libGL.so.1.txt"), tmp_path) is None


def test_ggml_probe_without_a_device_is_f18_only_where_the_gpu_was_wanted(tmp_path):
    ollama = train_text("logs/clean/b-ollama-cuda-visible-devices-minus1-cpu-only-intended.txt")
    assert named(ollama, tmp_path) is None
    asked = ollama + "\nllm_load_tensors: offloading 33 repeating layers to GPU\n"
    assert named(asked, tmp_path) == "F18"
    # the runtimes' words for nothing on the GPU
    for line in (
        "llama_model_load_internal: [cublas] offloading 0 layers to GPU",
        "llama_model_load_internal: [cublas] total VRAM used: 0 MB",
        'time=2024-05-01T10:00:00 level=INFO msg="no compatible GPUs were discovered"',
    ):
        assert named(line + "\n", tmp_path) == "F18"


def test_a_fallback_arch_list_is_f12_only_where_no_arch_was_given(tmp_path):
    ngp = train_text("logs/clean/b-instant-ngp-cuda10.2-arch-fallback-then-fmt-cmake-compile-features.txt")
    assert named(ngp, tmp_path) is None
    no_given = re.sub(r"(?m)^-- Obtained target architecture from CMake variable.*\n", "", ngp)
    assert named(no_given, tmp_path) == "F12"


def test_a_command_argument_list_is_not_split_into_lines():
    # subprocess's argv in a traceback stays one line (its items hold no spaces); a list of output lines is split
    argv = "['cmake', '-DGGML_CUDA=on', '-DCMAKE_CUDA_ARCHITECTURES=native', '..']"
    assert repair_line(argv) == [argv]
    out = "['-- Configuring incomplete', 'CMake Error at CMakeLists.txt:1 (message):', \"  it's bad\"]"
    assert repair_line(out) == ["-- Configuring incomplete", "CMake Error at CMakeLists.txt:1 (message):", "  it's bad"]


def test_pip_building_a_package_its_own_wheel_index_was_given_for_is_f19(tmp_path):
    # the index of llama-cpp-python's CUDA wheels was given (as .../whl/124, a folder with no wheels), and pip built
    # llama-cpp-python's sdist
    name = "logs/F19/llama-cpp-python-1947-wrong-index-whl-124-pep517-build-EXCERPT.txt"
    text = train_text(name)
    assert named(text, tmp_path) == "F19"
    # the index of another project (PyTorch's) and a build of llama-cpp-python: no such evidence
    other = text.replace("abetlen.github.io/llama-cpp-python/whl/124", "download.pytorch.org/whl/cu124")
    assert named(other, tmp_path) is None


def test_runtime_words_for_a_model_on_the_cpu_are_f18(tmp_path):
    ollama = (
        'time=2024-09-01T10:00:00 level=INFO source=types.go:107 msg="inference compute" id=0 library=cpu '
        'compute="" driver=0.0 name="" total="31.2 GiB" available="25.1 GiB"'
    )
    for line in ("warning: no usable GPU found, --gpu-layers option will be ignored", ollama):
        assert named("NVIDIA GeForce RTX 3060\n" + line + "\n", tmp_path) == "F18"
    # ollama's start-up line for the CPU it computes on is printed on every machine without a GPU: F18 only where
    # the log shows one there or asked for (issue 36)
    assert named(ollama + "\n", tmp_path) is None
    assert named("warning: no usable GPU found, --gpu-layers option will be ignored\n", tmp_path) == "F18"


def test_no_compiler_for_cmake_is_f03_only_where_the_build_is_about_visual_studio(tmp_path):
    # scikit-build's Ninja (Visual Studio 17 2022) attempt without the C++ tools
    text = train_text("logs/F03/private-gpt-331-llama-cpp-python-skbuild-ninja-vs17-no-cmake_c_compiler-EXCERPT.txt")
    assert named(text, tmp_path) == "F03"
    # the same CMake words with nothing of Visual Studio or Windows around them (a Linux box without gcc): no F03
    linux = "\n".join(line for line in text.splitlines() if "Visual Studio" not in line)
    assert named(linux, tmp_path) != "F03"
    # CMake's `cl` not on PATH (a console without vcvars), even with a wrapper's [CMake] prefix on every line
    khiops = train_text("logs/F03/khiops-56-vscode-cmake-prefix-cl-not-full-path-after-vs-update.txt")
    assert named(khiops, tmp_path) == "F03"


def test_setuptools_finding_no_msvc_is_f03_in_any_language_around_it(tmp_path):
    for name in (
        "logs/F03/readptu-2-setup-py-install-buildtools-2019-msvc-14.0-required.txt",
        "logs/F03/mojimoji-9-ja-win7-py3.6-msvc-14.0-required-build-tools-link-expired.txt",
        "logs/F03/opennre-214-zh-requirements-msvc-14.0-required.txt",
    ):
        assert named(train_text(name), tmp_path) == "F03", name


def test_a_cuda_make_flag_that_never_reaches_the_compile_lines_is_f18(tmp_path):
    text = train_text("logs/F18/whisper.cpp-2297-docker-ggml_cuda-1-make-no-cuda-flags-EXCERPT.txt")
    assert named(text, tmp_path) == "F18"
    # the flag reached the build (its define in the flags): no evidence of a CPU build
    cuda = text.replace("I CFLAGS:   -I.", "I CFLAGS:   -I. -DGGML_USE_CUDA", 1)
    assert named(cuda, tmp_path) is None


def test_a_cuda_wheel_no_index_holds_for_this_python_is_f19(tmp_path):
    text = train_text("logs/F19/onetrainer-138-torch-2.1.2-cu118-no-matching-distribution-python-version.txt")
    assert named(text, tmp_path) == "F19"
    # a plain version pip cannot find is not about a CUDA wheel
    assert named(text.replace("+cu118", ""), tmp_path) is None


def test_a_compiler_killed_in_a_cuda_build_is_f25_in_any_tool_words(tmp_path):
    # sh's bare report of a child killed by SIGKILL in a ninja build of nvcc jobs (vllm #3180), in glibc's words
    # for other locales too
    vllm = train_text("logs/F25/vllm-3180-pip-source-build-nvcc-job-bare-killed-max_jobs-EXCERPT.txt")
    assert named(vllm, tmp_path) == "F25"
    assert named(vllm.replace("      Killed\n", "      已杀死\n"), tmp_path) == "F25"
    # ninja's exit code of an nvcc whose tool was killed (ExchCXX #46), and make's word for a 137 exit
    exch = train_text("logs/F25/exchcxx-46-ci-ninja-failed-code-9-nvcc-builtin-cu-low-memory-EXCERPT.txt")
    assert named(exch, tmp_path) == "F25"
    make = re.sub(r"FAILED: \[code=9\] (\S+)", r"make[2]: *** [\1] Error 137", exch)
    assert "[code=9]" not in make and named(make, tmp_path) == "F25"
    # gcc's kill line cut after "Killed" (fastllm #274), and gcc's own out-of-memory words in that build
    fastllm = train_text("logs/F25/fastllm-274-zh-cuda11.6-docker-make-cc1plus-killed-cut-EXCERPT.txt")
    assert named(fastllm, tmp_path) == "F25"
    oom = fastllm.replace("c++: fatal error: Killed signal te", "virtual memory exhausted: Cannot allocate memory")
    assert named(oom, tmp_path) == "F25"
    # the same kill words in a build that compiles no CUDA are outside the catalog
    assert named("[3/9] Building CXX object a.cpp.o\nKilled\nFAILED: [code=137] a.cpp.o\n", tmp_path) is None
    assert named(train_text("logs/clean/darkflame-715-cc1-killed-signal-sqlite-make-EXCERPT.txt"), tmp_path) is None


def test_llama_cublas_given_to_a_llama_cpp_python_that_vendors_ggml_cuda_is_f09(tmp_path):
    # the pip run is cut before CMake's FATAL_ERROR; the flag and the sdist's version decide (AutoDefense #4)
    name = "logs/F09/autodefense-pip-llama-cpp-python-0.3.16-cmake_args-llama_cublas-cut.txt"
    text = train_text(name)
    assert named(text, tmp_path) == "F09"
    # the same flag with a llama-cpp-python from before the rename was right then: nothing is named
    assert named(text.replace("0.3.16", "0.2.26"), tmp_path) is None
    # and the new flag name with the new version is no F09 either
    assert named(text.replace("LLAMA_CUBLAS", "GGML_CUDA"), tmp_path) is None


def test_a_cmake_setting_run_as_a_command_is_f10(tmp_path):
    # llama-cpp-python #2068 in cmd's words, then the same mistake in PowerShell's and bash's: the value of
    # CMAKE_ARGS given unquoted or after a space, so the shell runs the -D setting as a command
    text = train_text("logs/F10/llama-cpp-python-2068-bash-env-prefix-in-cmd-not-recognized.txt")
    assert named(text, tmp_path) == "F10"
    ps = (
        "-DGGML_CUDA=on : The term '-DGGML_CUDA=on' is not recognized as the name of a cmdlet, function, "
        "script file, or operable program.\n"
    )
    assert named(ps, tmp_path) == "F10"
    assert named("bash: -DGGML_CUDA=ON: command not found\n", tmp_path) == "F10"
    assert named("bash: export: `-DGGML_CUDA=on': not a valid identifier\n", tmp_path) == "F10"


def test_no_kernel_image_after_a_failed_arch_detection_is_f12(tmp_path):
    # Caffe configured in `docker build` (no GPU visible) fell back to its list, then no kernel image at run time
    # (nvidia-docker #797): the build's guess is the cause, the run's error its symptom
    name = "logs/F12/nvidia-docker-797-scenereco-caffe-build-all-known-archs-no-kernel-image.txt"
    text = train_text(name)
    assert named(text, tmp_path) == "F12"
    guessed = "-- Automatic GPU detection failed. Building for all known architectures.\n"
    assert guessed in text and named(text.replace(guessed, ""), tmp_path) == "F14"
    # the same fallback where the build was given its architectures names nothing (clean train log instant-ngp)
    assert (
        named(text.replace(guessed, guessed + "-- Obtained target architecture from CMake variable\n"), tmp_path)
        == "F14"
    )


def test_a_cuda_compile_whose_program_is_its_first_flag_is_f07(tmp_path):
    # waf's CUDA tool left the nvcc command empty, so Python ran '-shared' (wire-cell-toolkit #275)
    text = train_text("logs/F07/wire-cell-toolkit-waf-empty-nvcc-filenotfounderror-shared.txt")
    assert named(text, tmp_path) == "F07"
    # the same empty program in a command that compiles no CUDA is no failure of this catalog
    assert named(text.replace(".cu", ".cpp"), tmp_path) is None


# Excerpts of public issue threads that are not in the corpus (no train log shows these tools' words): the
# F03 anchors of other build tools and of MSBuild's codes.
# https://github.com/xmrig/xmrig-nvidia/issues/55 (CMake with -T v140 on VS 2017 without the v140 tools)
XMRIG_NVIDIA_55 = r"""CMake Error at CMakeLists.txt:2 (project):
  Failed to run MSBuild command:

    C:/Program Files (x86)/Microsoft Visual Studio/2017/Community/MSBuild/15.0/Bin/MSBuild.exe

  to get the value of VCTargetsPath:

    Microsoft (R) Build Engine version 15.4.8.50001 for .NET Framework
    Copyright (C) Microsoft Corporation. All rights reserved.

    Build started 5-12-2017 10:34:38.
    Project "C:\xmrig-nvidia-master\build\CMakeFiles\3.10.0\VCTargetsPath.vcxproj" on node 1 (default targets).
""" + (
    r"    C:\Program Files (x86)\Microsoft Visual Studio\2017\Community\Common7\IDE\VC\VCTargets"
    r"\Microsoft.Cpp.Platform.targets(57,5): error MSB8020: The build tools for v140 (Platform Toolset = 'v140')"
    r" cannot be found. To build using the v140 build tools, please install v140 build tools."
    "\n"
)
# https://github.com/rust-lang/rust/issues/114700 (cargo on Windows, no Visual C++ tools found)
RUST_114700 = """   Compiling untitled v0.1.0 (C:\\Users\\lennard\\CLionProjects\\untitled)
error: linker `link.exe` not found
  |
  = note: program not found

note: the msvc targets depend on the msvc linker but `link.exe` was not found
"""


def test_other_tools_finding_no_visual_cpp_tools_is_f03(tmp_path):
    assert named(XMRIG_NVIDIA_55, tmp_path) == "F03"
    # MSBuild's code alone, in a localised console (the code is the same in every language)
    code_only = XMRIG_NVIDIA_55.replace("to get the value of VCTargetsPath:", "").replace(
        "The build tools for v140 (Platform Toolset = 'v140') cannot be found.",
        'Die Buildtools für v140 (Plattformtoolset = "v140") wurden nicht gefunden.',
    )
    assert "VCTargetsPath:" not in code_only and named(code_only, tmp_path) == "F03"
    assert named(RUST_114700, tmp_path) == "F03"
    # linking that ran and failed is another matter (Ribasim #2608's "linking with `link.exe` failed")
    assert named("error: linking with `link.exe` failed: exit code: 1\n", tmp_path) is None


def test_a_missing_nvcc_or_toolkit_component_in_other_locales(tmp_path):
    # bash's "command not found" for nvcc in Chinese (faster-rcnn make.sh), then as French and Spanish bash word it
    text = train_text("logs/F22/faster-rcnn-pytorch-make.sh-nvcc-not-found-zh-shell.txt")
    assert "nvcc: 未找到命令" in text and named(text, tmp_path) == "F22"
    for words in ("nvcc : commande introuvable", "nvcc: orden no encontrada", "nvcc: comando não encontrado"):
        assert named(text.replace("nvcc: 未找到命令", words), tmp_path) == "F22"
    # MSVC's C1083 as a localised console printed it (instant-ngp #985, “...” quotes), on a cuBLAS header: F24
    ngp = train_text("logs/F03/instant-ngp-985-vs2019-no-windows-sdk-corecrt-h-compileridcuda-zh.txt")
    line = next(line for line in ngp.splitlines() if "C1083" in line)
    cublas = line.replace("crtdefs.h", "example.cu").replace("“corecrt.h”", "“cublas_v2.h”")
    assert named(cublas + "\n", tmp_path) == "F24"
    # the linker's LNK1181 in another language's quotes, on a toolkit library (hand-made: no train log shows
    # LNK1181; the code and the file name are what the anchor reads, whatever the words around them)
    lnk = 'LINK : fatal error LNK1181: Eingabedatei "cublas.lib" kann nicht geöffnet werden.\n'
    assert named(lnk, tmp_path) == "F24"


def test_msbuild_and_loader_codes_in_any_language(tmp_path):
    # MSBuild 16+ reports a missing import with fallback search paths as MSB4226 (the code every locale prints);
    # the Chinese error list of a train log, with that code
    zh = train_text("vs2017-error-list-msb4019-cuda10.0-props-not-found-chinese-EXCERPT.txt")
    assert named(zh, tmp_path) == "F01"
    assert named(zh.replace("MSB4019", "MSB4226"), tmp_path) == "F01"
    # torch's loader line (ai-toolkit), its WinError 1114 (a DLL's initialisation routine failed) with the tail cut
    text = train_text("logs/F15/ai-toolkit-flux-torch-2.4.0-cu121-fbgemm.dll-EXCERPT.txt")
    line = next(line for line in text.splitlines() if "WinError 126" in line)
    cut = line.replace(
        "[WinError 126] The specified module could not be found.",
        "[WinError 1114] A dynamic link library (DLL) initialization routine failed.",
    )
    cut = cut.split(" or one of its dependencies")[0]
    assert named(cut + "\n", tmp_path) == "F15"
    # Windows' loader dialog in German, naming a CUDA DLL (hand-made: no train log holds the dialog's text)
    dialog = "Die Ausführung des Codes kann nicht fortgesetzt werden, da cublas64_12.dll nicht gefunden wurde.\n"
    assert named(dialog, tmp_path) == "F15"


def test_cmake_arguments_split_or_mangled_by_a_shell_are_f10(tmp_path):
    # https://github.com/pvpgn/pvpgn-server/issues/125: `-D WITH_MYSQL=true` (a space after -D) on an old CMake
    pvpgn = (
        "/pvpgn-master# cmake -D CMAKE_INSTALL_PREFIX=/var/www/pvpgn -D WITH_MYSQL=true\n"
        'CMake Error: The source directory "/var/www/pvpgn-master/WITH_MYSQL=true" does not exist.\n'
        "Specify --help for usage, or press the help button on the CMake GUI.\n"
    )
    assert named(pvpgn, tmp_path) == "F10"
    # https://github.com/BVLC/caffe/issues/5876: an unquoted -DCUDNN_ROOT=C:\Program Files\NVIDIA GPU Computing
    # Toolkit\CUDA\v8.0 split at its spaces (the title)
    caffe = 'CMake Error: The source directory "[cafffe_dir]/caffe/build/Toolkit/CUDA/v8.0" does not exist.\n'
    assert named(caffe, tmp_path) == "F10"
    # a source folder that is simply not there is no argument problem (CMake's words in many threads)
    assert named('CMake Error: The source directory "/root/build" does not exist.\n', tmp_path) is None
    # a backslash path after a POSIX split (hand-made: no train log shows one; shlex drops unquoted backslashes)
    eaten = (
        "CMake Error at CMakeLists.txt:4 (find_package):\n"
        "  Could not find CUDAToolkit in C:Program FilesNVIDIA GPU Computing ToolkitCUDAv12.4\n"
    )
    assert named(eaten, tmp_path) == "F10"


def test_a_process_killed_at_run_time_is_no_compiler_killed(tmp_path):
    # a run whose CUDA error names the kernel's .cu file (llama.cpp's ggml-cuda), then the shell's "Killed": a .cu
    # path at run time is no compile, so no F25 (the run's own error still names its cause)
    text = train_text("llama.cpp-cuda-error-209-no-kernel-image-ggml-cuda-EXCERPT.txt")
    assert named(text, tmp_path) == "F14"
    cu = next(line for line in text.splitlines() if re.search(r"\.cu:\d", line))
    # the same line with the runtime's out-of-memory error (cudaErrorMemoryAllocation, 2), then the kill
    oom = re.sub(r"CUDA error \d+ (at \S+\.cu:\d+): .*", r"CUDA error 2 \1: out of memory", cu)
    assert oom != cu and named(oom + "\nKilled\n", tmp_path) is None
