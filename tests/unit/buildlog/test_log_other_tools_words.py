"""Other tools' words for causes the catalog knows (issue 36 part 5): NVRTC's builtins library not opened, conda's
missing __cuda virtual package, MSVC's linker without cudart.lib, nvcc's tool dying with a Windows memory NTSTATUS.
Each excerpt is the tool's own output from the thread named beside it (train logs of the corpus where there is one);
the NTSTATUS lines are composed (no public log with them was found) and say so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import logtext

CASES = [
    # mivertowski/DotCompute#182 (train: logs/F15/dotcompute-182-...): NVRTC on Windows
    (
        "F15",
        "nvrtc-builtins-dll",
        "Compilation Log:\nnvrtc: error: failed to open nvrtc-builtins64_122.dll.\n"
        "  Make sure that nvrtc-builtins64_122.dll is installed correctly.\n",
    ),
    # WisconsinAIVision/yolact_edge#186 (train): the same on Linux
    (
        "F23",
        "nvrtc-builtins-so",
        "RuntimeError: nvrtc: error: failed to open libnvrtc-builtins.so.11.1.\n"
        "  Make sure that libnvrtc-builtins.so.11.1 is installed correctly.\n",
    ),
    # conda-forge/tensorflow-feedstock#216 (train): mamba's solver in a container without the driver
    (
        "F23",
        "no-cuda-virtual-package",
        "Encountered problems while solving:\n"
        "  - nothing provides __cuda needed by tensorflow-2.7.0-cuda102py310hcf4adbc_0\n",
    ),
    # cudpp/cudpp#72 (train): MSVC's linker and the CUDA runtime's import library
    ("F24", "lnk1181", "LINK : fatal error LNK1181: cannot open input file 'cudart.lib'\n"),
    # composed: nvcc's "died with status" line (its real form: gunrock/essentials#90, 0xC0000005) with the NTSTATUS
    # codes of ntstatus.h for memory, STATUS_NO_MEMORY and STATUS_COMMITMENT_LIMIT
    ("F25", "nvcc-tool-no-memory", "geo.cu\nCUDACOMPILE : nvcc error : 'cicc' died with status 0xC0000017 \n"),
    ("F25", "nvcc-tool-no-memory", "nvcc error   : 'cudafe++' died with status 0xC000012D\n"),
]


@pytest.mark.parametrize(("fid", "signature", "text"), CASES, ids=[f"{f}-{s}" for f, s, _ in CASES])
def test_the_tools_own_words_name_the_known_cause(fid, signature, text, tmp_path: Path):
    found = logtext.scan(text, tmp_path)
    assert found.decisive is not None and found.decisive.id == fid
    assert found.decisive.details["signature"] == signature


def test_an_access_violation_is_no_memory_failure(tmp_path: Path):
    # gunrock/essentials#90: cicc crashed (0xC0000005), which is not the memory running out
    found = logtext.scan("CUDACOMPILE : nvcc error : 'cicc' died with status 0xC0000005 (ACCESS_VIOLATION)\n", tmp_path)
    assert all(m.id != "F25" for m in found.matches)


def test_a_mac_sets_the_conda_cuda_answer_aside(tmp_path: Path):
    # conda/conda#15501's virtual packages on an M1 (__osx) beside the solver's words of feedstock#216: a Mac has no
    # NVIDIA driver to give __cuda, so no catalog id
    text = (
        "       virtual packages : __archspec=1=m1\n                          __osx=15.6.1=0\n"
        "  - nothing provides __cuda needed by tensorflow-2.7.0-cuda102py310hcf4adbc_0\n"
    )
    found = logtext.scan(text, tmp_path)
    assert not found.matches and [v.id for v in found.vetoed] == ["F23"]
