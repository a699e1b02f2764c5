"""CUDA toolkit parsers (nvcc --version, version.json/.txt, dist-info names) on the real samples.

Sources of the samples: tests/corpus/SOURCES.md.
"""

from __future__ import annotations

import pytest

from envmgr.discover.cudaparse import (
    NvccVersion,
    mixed_components,
    parse_dist_info_name,
    parse_nvcc_version,
    parse_version_json,
    parse_version_txt,
    short_version,
)
from tests.conftest import CORPUS, corpus

# file -> (short, full). The file names carry the version; the values are written out anyway.
NVCC = {
    "nvcc-version-linux-11.8.89.txt": ("11.8", "11.8.89"),
    "nvcc-version-linux-12.4.131.txt": ("12.4", "12.4.131"),
    "nvcc-version-windows-11.7.64.txt": ("11.7", "11.7.64"),
    "nvcc-version-windows-11.8.89.txt": ("11.8", "11.8.89"),
    "nvcc-version-windows-12.1.105.txt": ("12.1", "12.1.105"),
    "nvcc-version-windows-12.3.107.txt": ("12.3", "12.3.107"),
    "nvcc-version-windows-12.4.99.txt": ("12.4", "12.4.99"),
    "nvcc-version-windows-12.8.61.txt": ("12.8", "12.8.61"),
    "nvcc-version-windows-12.8.93.txt": ("12.8", "12.8.93"),
    "nvcc-version-windows-12.9.41.txt": ("12.9", "12.9.41"),
    "nvcc-version-windows-12.9.86.txt": ("12.9", "12.9.86"),
    "nvcc-version-windows-13.0.48.txt": ("13.0", "13.0.48"),
    "nvcc-version-windows-13.0.88.txt": ("13.0", "13.0.88"),
    "nvcc-version-windows-13.1.80.txt": ("13.1", "13.1.80"),
    # `J:\DF>nvcc --version` prompt first, then a `where cudart*.dll` after the output
    "where-cudart-cuda13.0-bin-x64.txt": ("13.0", "13.0.88"),
    # a guide that pastes nvcc --version among VsDevCmd, nvidia-smi and a folder listing
    "vsdevcmd-and-devpowershell-vs2026-18.2.1-community-default-x86-msvc14.50.35717-EXCERPT.txt": ("13.1", "13.1.80"),
}

# Corpus files that talk about CUDA/nvcc but hold no `nvcc --version` output.
NOT_NVCC = (
    "cmake-check-cuda-compiler-broken-vs2022-buildtools-msbuild17.10-cuda12.2.140-EXCERPT.txt",
    "cmake-no-cuda-toolset-found-cmake3.27-cuda11.3-findcudatoolkit-ok.txt",
    "cmake-no-cuda-toolset-found-vs2019-buildtools-bundled-cmake3.20.txt",
    "cmake-no-cuda-toolset-found-vs2019-cmake3.24.txt",
    "cmake-vs-generator-cuda-compilerid-nvcc-commandline-cuda12.2-msvc14.40-EXCERPT.txt",
    "cmake-vs2022-generator-cuda-identification-ok-ci-cuda11.7.99.txt",
    "cuda-version-json-linux-11.8.0.json",
    "msbuild-cuda11.8-host_config-unsupported-msvc14.40-vs2022-buildtools-llama-cpp-python-EXCERPT.txt",
    "msbuild-imported-project-cuda-props-not-found-vs2022.txt",
    "nvcc-host_config-unsupported-msvc-error-cuda12.2.txt",
    "nvidia-smi-query-compute_cap-unsupported-old-driver.txt",
    "nvidia-smi-query-gpu-compute_cap-csv-linux-570.86.15.txt",
    "nvidia-smi-windows-576.80-cuda12.9-rtx3080.txt",
    "nvidia-smi-windows-596.36-cuda13.2-rtx4060ti.txt",
)


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def test_every_nvcc_version_sample_is_in_the_table():
    assert {p.name for p in CORPUS.glob("nvcc-version-*.txt")} <= set(NVCC)
    assert len(list(CORPUS.glob("nvcc-version-*.txt"))) == 14


@pytest.mark.parametrize("name", sorted(NVCC))
@pytest.mark.parametrize("convert", [str, crlf], ids=["lf", "crlf"])
def test_nvcc_version_exact(name, convert):
    short, full = NVCC[name]
    assert parse_nvcc_version(convert(corpus(name))) == NvccVersion(short, full)


@pytest.mark.parametrize("name", sorted(n for n in NVCC if n.startswith("nvcc-version-")))
def test_file_name_agrees_with_the_table(name):
    assert name.rsplit("-", 1)[1].removesuffix(".txt") == NVCC[name][1]


def test_nvcc_output_cut_before_build_line():
    text = corpus("nvcc-version-windows-12.4.99.txt")
    head = "".join(text.splitlines(keepends=True)[:4])
    assert parse_nvcc_version(head) == NvccVersion("12.4", "12.4.99")
    assert parse_nvcc_version(crlf(head)) == NvccVersion("12.4", "12.4.99")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\r\n",
        "'nvcc' is not recognized as an internal or external command,\r\noperable program or batch file.\r\n",
        "bash: nvcc: command not found\n",
        "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\n",  # cut short
        "Cuda compilation tools, release 12.4, V12.4\n",  # no patch number
    ],
)
def test_nvcc_garbage_is_none(text):
    assert parse_nvcc_version(text) is None


@pytest.mark.parametrize("name", NOT_NVCC)
def test_other_cuda_logs_hold_no_nvcc_version(name):
    assert parse_nvcc_version(corpus(name)) is None


# --- version.json / version.txt ---


@pytest.mark.parametrize("convert", [str, crlf], ids=["lf", "crlf"])
def test_version_json_linux_11_8(convert):
    assert parse_version_json(convert(corpus("cuda-version-json-linux-11.8.0.json"))) == "11.8.0"


def test_version_json_with_bom():
    assert parse_version_json("\ufeff" + corpus("cuda-version-json-linux-11.8.0.json")) == "11.8.0"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        '["cuda"]',
        '{"cuda_nvcc": {"name": "CUDA NVCC", "version": "11.8.89"}}',
        '{"cuda": {"name": "CUDA SDK", "version": "eleven"}}',
        '{"cuda": "11.8.0"}',
    ],
)
def test_version_json_without_a_cuda_version_is_none(text):
    assert parse_version_json(text) is None


def test_version_json_cut_short_is_none():
    text = corpus("cuda-version-json-linux-11.8.0.json")
    assert parse_version_json(text[:200]) is None


# No version.txt sample in the corpus: this line is hand-written in the documented CUDA <= 11.0
# format (../shared/facts/windows.md §5.4).
@pytest.mark.parametrize("text", ["CUDA Version 10.2.89\n", "CUDA Version 10.2.89\r\n", "CUDA Version 10.2.89"])
def test_version_txt(text):
    assert parse_version_txt(text) == "10.2.89"


@pytest.mark.parametrize("text", ["", "CUDA Version\n", "10.2.89\n"])
def test_version_txt_garbage_is_none(text):
    assert parse_version_txt(text) is None


# --- dist-info names ---
# Real names: this machine's /usr/local/cuda-13.0/dist-info and pip wheels of nvidia-cuda-nvcc
# (13.2.86, cu12 12.9.86 / 12.3.107, cu11 11.8.89) and nvidia-cuda-runtime-cu12 12.9.79.
DIST_INFO = {
    "nvidia_cuda_nvcc-13.0.88.dist-info": ("nvidia-cuda-nvcc", "13.0.88"),
    "nvidia_cuda_runtime_cu12-12.9.79.dist-info": ("nvidia-cuda-runtime-cu12", "12.9.79"),
    "nvidia_cuda_nvcc-13.2.86.dist-info": ("nvidia-cuda-nvcc", "13.2.86"),
    "nvidia_cuda_nvcc_cu12-12.9.86.dist-info": ("nvidia-cuda-nvcc-cu12", "12.9.86"),
    "nvidia_cuda_nvcc_cu12-12.3.107.dist-info": ("nvidia-cuda-nvcc-cu12", "12.3.107"),
    "nvidia_cuda_nvcc_cu11-11.8.89.dist-info": ("nvidia-cuda-nvcc-cu11", "11.8.89"),
    "nvidia_nvvm-13.0.88.dist-info": ("nvidia-nvvm", "13.0.88"),
    "nvidia_cuda_crt-13.0.88.dist-info": ("nvidia-cuda-crt", "13.0.88"),
    "nvidia_cuda_cccl-13.0.85.dist-info": ("nvidia-cuda-cccl", "13.0.85"),
    "nvidia_cuda_runtime-13.0.96.dist-info": ("nvidia-cuda-runtime", "13.0.96"),
    "nvidia_cuda_profiler_api-13.0.85.dist-info": ("nvidia-cuda-profiler-api", "13.0.85"),
    "nvidia_nvtx-13.0.85.dist-info": ("nvidia-nvtx", "13.0.85"),
    "nvidia_cudnn_cu12-9.1.0.70.dist-info": ("nvidia-cudnn-cu12", "9.1.0.70"),
}


@pytest.mark.parametrize("name", sorted(DIST_INFO))
def test_dist_info_name(name):
    assert parse_dist_info_name(name) == DIST_INFO[name]


@pytest.mark.parametrize(
    "name",
    [
        "numpy-2.0.0.dist-info",
        "nvidia_cuda_nvcc-13.0.88.egg-info",
        "nvidia_cuda_nvcc",
        "nvidia_cuda_nvcc-13.dist-info",
        "cuda_python-12.4.0.dist-info",
    ],
)
def test_dist_info_name_not_a_cuda_wheel(name):
    assert parse_dist_info_name(name) is None


def test_short_version():
    assert [short_version(v) for v in ("13.0.88", "12.4", "13", "")] == ["13.0", "12.4", "13", ""]


# --- mixed pip components ---


def components(*names: str) -> tuple[tuple[str, str], ...]:
    out = [parse_dist_info_name(n) for n in names]
    assert all(out)
    return tuple(sorted(out))


# This machine's /usr/local/cuda-13.0/dist-info (a toolkit assembled from NVIDIA's wheels):
# runtime 13.0.96 and cccl 13.0.85 next to nvcc 13.0.88 are one toolkit.
CUDA_13_0 = (
    "nvidia_cuda_cccl-13.0.85.dist-info",
    "nvidia_cuda_crt-13.0.88.dist-info",
    "nvidia_cuda_culibos-13.0.85.dist-info",
    "nvidia_cuda_cupti-13.0.85.dist-info",
    "nvidia_cuda_cuxxfilt-13.0.85.dist-info",
    "nvidia_cuda_nvcc-13.0.88.dist-info",
    "nvidia_cuda_profiler_api-13.0.85.dist-info",
    "nvidia_cuda_runtime-13.0.96.dist-info",
    "nvidia_nvtx-13.0.85.dist-info",
    "nvidia_nvvm-13.0.88.dist-info",
)

# The nvidia-* pins of a torch 2.4.0+cu121 environment (public file, search index id 70920644901):
# the libraries (cublas, cufft, cudnn, nccl, nvjitlink ...) have versions of their own.
TORCH_CU121 = (
    "nvidia_cublas_cu12-12.1.3.1.dist-info",
    "nvidia_cuda_cupti_cu12-12.1.105.dist-info",
    "nvidia_cuda_nvrtc_cu12-12.1.105.dist-info",
    "nvidia_cuda_runtime_cu12-12.1.105.dist-info",
    "nvidia_cudnn_cu12-9.1.0.70.dist-info",
    "nvidia_cufft_cu12-11.0.2.54.dist-info",
    "nvidia_curand_cu12-10.3.2.106.dist-info",
    "nvidia_cusolver_cu12-11.4.5.107.dist-info",
    "nvidia_cusparse_cu12-12.1.0.106.dist-info",
    "nvidia_nccl_cu12-2.20.5.dist-info",
    "nvidia_nvjitlink_cu12-12.9.86.dist-info",
    "nvidia_nvtx_cu12-12.1.105.dist-info",
)


def test_one_toolkit_is_not_mixed():
    assert mixed_components(components(*CUDA_13_0)) is None


def test_torch_libraries_are_not_a_mix():
    assert mixed_components(components(*TORCH_CU121)) is None
    assert mixed_components(components(*TORCH_CU121, "nvidia_cuda_nvcc_cu12-12.1.105.dist-info")) is None


def test_newer_nvcc_in_a_torch_venv_is_a_mix():
    problem = mixed_components(components(*TORCH_CU121, "nvidia_cuda_nvcc_cu12-12.4.131.dist-info"))
    assert problem == (
        "pip CUDA components of different versions (12.1: nvidia-cuda-cupti-cu12 12.1.105, "
        "nvidia-cuda-nvrtc-cu12 12.1.105, nvidia-cuda-runtime-cu12 12.1.105; "
        "12.4: nvidia-cuda-nvcc-cu12 12.4.131): install matching versions, "
        "e.g. pip install 'nvidia-cuda-nvcc==X.Y.*' 'nvidia-nvvm==X.Y.*' 'nvidia-cuda-crt==X.Y.*'"
    )


def test_nvcc_13_2_with_13_0_nvvm_is_a_mix():
    problem = mixed_components(
        components(
            "nvidia_cuda_nvcc-13.2.86.dist-info", "nvidia_cuda_crt-13.2.86.dist-info", "nvidia_nvvm-13.0.88.dist-info"
        )
    )
    assert problem is not None
    assert problem.startswith(
        "pip CUDA components of different versions (13.0: nvidia-nvvm 13.0.88; "
        "13.2: nvidia-cuda-crt 13.2.86, nvidia-cuda-nvcc 13.2.86)"
    )


def test_profiler_api_and_nvtx_are_versioned_on_their_own():
    assert (
        mixed_components(
            (
                ("nvidia-cuda-nvcc", "13.2.86"),
                ("nvidia-cuda-profiler-api", "13.0.85"),
                ("nvidia-nvtx", "13.0.85"),
                ("nvidia-nvtx-cu12", "12.1.105"),
            )
        )
        is None
    )


def test_no_components_is_not_mixed():
    assert mixed_components(()) is None
