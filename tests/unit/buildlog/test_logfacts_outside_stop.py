"""A log that stops on a failure outside the catalog names no id from the facts (issue 23, round 10).

The facts infer a cause from what a log mentions (a requirement, a source archive, a probe); where the log's own
stop is a failure of another kind (the disk full, the GPU's memory used up at run time, the network given up on,
pip's requires-python refusal, an empty submodule folder, a Python source or module that is not there), those
mentions are on the way to that stop, not its cause. Each stop line is composed from the tool's own message (named
on each case); no held-out or dev log was read to write them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envmgr.buildlog.facts import decide
from tests import logtext

# lines the facts read as F19 on their own: pip taking a CUDA package's source archive, a CPU torch installed (not a
# +cpu requirement pip found nothing for: the CPU build was then the ask, issue 36)
SDIST = "Collecting vllm\n  Using cached vllm-0.3.0.tar.gz (264 kB)\n"
CPU_REQ = "Successfully installed torch-1.4.0+cpu\n"

STOPS = [
    # CPython's strerror for ENOSPC, as pip prints an OSError it stops on
    ("disk", "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device\n"),
    # Windows' message for ERROR_DISK_FULL (112)
    ("disk-windows", "error: There is not enough space on the disk.\n"),
    # torch's allocator (c10/cuda/CUDACachingAllocator.cpp) raising torch.OutOfMemoryError
    (
        "gpu-memory",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 4.00 GiB of which 1.80 GiB is free.\n",
    ),
    # pip's find-links page skipped: urllib3 gave up on the host (pip/_internal/index/collector.py)
    (
        "network",
        "Could not fetch URL https://download.pytorch.org/whl/torch_stable.html: There was a problem "
        "confirming the ssl certificate: HTTPSConnectionPool(host='download.pytorch.org', port=443): Max "
        "retries exceeded with url: /whl/torch_stable.html (Caused by SSLError(SSLCertVerificationError(1, "
        "'[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed'))) - skipping\n",
    ),
    # pip's check of Requires-Python (pip/_internal/resolution/resolvelib/requirements.py)
    ("requires-python", "ERROR: Package 'vllm' requires a different Python: 3.12.9 not in '<=3.12,>=3.9'\n"),
    # CMake's add_subdirectory on a folder without its list file (Source/cmAddSubDirectoryCommand.cxx)
    (
        "submodule",
        "CMake Error at CMakeLists.txt:25 (add_subdirectory):\n  The source directory\n\n"
        "    /src/llama-cpp-python/vendor/llama.cpp\n\n  does not contain a CMakeLists.txt file.\n",
    ),
    # CPython's parser and import system
    (
        "syntax",
        '  File "setup.py", line 8\n    def read(fname: str) -> str:\n                 ^\n'
        "SyntaxError: invalid syntax\n",
    ),
    ("module", "      ModuleNotFoundError: No module named 'packaging'\n"),
]


@pytest.mark.parametrize("anchor", [SDIST, CPU_REQ])
def test_the_anchors_name_f19_alone(anchor):
    assert [d.id for d in decide(logtext.facts(anchor))] == ["F19"]


@pytest.mark.parametrize(("kind", "stop"), STOPS, ids=[k for k, _ in STOPS])
@pytest.mark.parametrize("anchor", [SDIST, CPU_REQ], ids=["sdist", "cpu-requirement"])
def test_a_stop_outside_the_catalog_leaves_the_anchors_undecided(kind, stop, anchor, tmp_path: Path):
    assert decide(logtext.facts(anchor + stop)) == []
    assert decide(logtext.facts(stop + anchor)) == []  # pasted in either order
    assert logtext.decisive(anchor + stop, tmp_path) == (None, None)


# the same words where they are no stop: pip's retry warning (a download may follow it), an HTTP status (a wrong index
# URL gives one, and pip then builds from source: F19's own case), the compiler's own out-of-memory (F25's words)
NOT_STOPS = [
    "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection "
    "broken by 'SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify "
    "failed'))': /simple/\n",
    "Could not fetch URL https://abetlen.github.io/llama-cpp-python/whl/cu121/llama-cpp-python/: 404 Client Error: "
    "Not Found for url: https://abetlen.github.io/llama-cpp-python/whl/cu121/llama-cpp-python/ - skipping\n",
    "cc1plus: out of memory allocating 65536 bytes after a total of 1234567168 bytes\n",
]


@pytest.mark.parametrize("line", NOT_STOPS, ids=["retry-warning", "http-404", "compiler-oom"])
def test_the_same_words_without_a_stop_leave_the_anchor(line):
    assert decide(logtext.facts(line + SDIST)) != []


def test_a_train_clean_log_that_stops_on_the_network(tmp_path: Path):
    # pip without an ssl module: every index unreadable, so no version of the CPU torch it was asked for
    name = "logs/clean/pytorch-35880-windows-pip-torch-ssl-module-not-available.txt"
    assert logtext.decisive(logtext.train_text(name), tmp_path) == (None, None)
