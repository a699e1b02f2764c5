"""doctor --log's `try:` line is for the package the log is about (advice.py): the catalog's llama-cpp-python
command only where the log is llama-cpp-python's, the runtime's own way to its CUDA build where one command fits
(torch, onnxruntime, paddlepaddle, JAX), and no command rather than another package's. Real train logs of
tests/corpus/logs (each file names its source) and lines written here for the reading rules.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from envmgr.cli.main import cli
from envmgr.buildlog.advice import TAILORED, Advice, advise, named, runtime_of
from envmgr.catalog import CATALOG
from envmgr.buildlog.report import render_matches
from tests import logtext

# (train log, decisive id, runtime in --json, what the try: line holds; None: no try: line)
CASES = [
    (
        "logs/F19/pytorch-30664-miniconda-torch-not-compiled-with-cuda.txt",
        "F19",
        "torch",
        "https://download.pytorch.org/whl/cu",
    ),
    (
        "logs/F19/onnxruntime-23736-cuda12.4-cudnn9-provider-not-available-both-packages-EXCERPT.txt",
        "F19",
        "onnxruntime",
        "pip install onnxruntime-gpu",
    ),
    (
        "logs/F19/paddleclas-268-nvidia-docker-paddlepaddle-cpu-version-beside-gpu-package.txt",
        "F19",
        "paddlepaddle",
        "paddlepaddle-gpu",
    ),
    (
        "logs/F14/gpustack-sm_120-not-compatible-pytorch-userwarning.txt",
        "F14",
        "torch",
        "https://download.pytorch.org/whl/cu",
    ),
    # llama-cpp-python's own: the catalog's command stands
    (
        "pip-index-url-whl-cu124-no-llama-cpp-python-0.2.88-index-lags-pypi-EXCERPT.txt",
        "F19",
        None,
        CATALOG["F19"].fix_command,
    ),
    # flash-attn had no wheel for this install: no one command, and not llama-cpp-python's
    ("logs/F19/wan2.1-windows-flash-attn-2.7.4-no-win-wheel.txt", "F19", None, None),
    # llama.cpp's own program (llama-cli), no Python in the log: not a pip command
    ("logs/F18/llama.cpp-b3618-windows-llama-cli-not-compiled-gpu-offload.txt", "F18", "llama.cpp", None),
    ("logs/F18/ollama-0.1.9-cuda-error-3-init-then-not-compiled-gpu-offload.txt", "F18", "ollama", None),
]


@pytest.mark.parametrize(("name", "fid", "runtime", "command"), CASES, ids=[c[0].split("/")[-1][:40] for c in CASES])
def test_try_line_is_for_the_logs_own_package(name, fid, runtime, command, tmp_path: Path):
    found = logtext.scan(logtext.train_text(name), tmp_path)
    assert found.decisive is not None and found.decisive.id == fid
    m = found.decisive
    text = render_matches([m], lambda s, *styles: s)
    if command is None:
        assert m.fix_command is None and "try:" not in text
    else:
        assert command in (m.fix_command or "") and f"try:   {m.fix_command}" in text
    assert (m.advice.runtime or None if m.advice else None) == runtime


def test_json_carries_runtime_and_its_command(tmp_path: Path):
    log = tmp_path / "build.log"
    log.write_text(logtext.train_text(CASES[1][0]), encoding="utf-8")
    out = CliRunner().invoke(cli, ["doctor", "--json", "--log", str(log)])
    doc = json.loads(out.output)
    m = next(m for m in doc["matches"] if m["decisive"])
    assert (m["id"], m["runtime"]) == ("F19", "onnxruntime")
    assert m["fix_command"].startswith("pip uninstall -y onnxruntime onnxruntime-gpu")
    assert all("runtime" in x for x in doc["matches"])


def test_llama_cpp_lines_with_python_are_the_python_binding():
    lines = ["llm_load_tensors: offloaded 0/33 layers to GPU"]
    assert runtime_of(lines, [], Counter()) == "llama.cpp"
    # a Python traceback or site-packages among the last lines: llama-cpp-python runs llama.cpp
    assert runtime_of(lines, ['  File "/venv/lib/site-packages/x/app.py", line 3'], Counter()) == "llama-cpp-python"


def test_the_match_lines_decide_before_the_rest_and_a_tie_names_none():
    head = named(["import torch", "import torch.nn", "Collecting onnxruntime"])
    assert (
        runtime_of(["Specified provider 'CUDAExecutionProvider' is not in available provider names"], [], head)
        == "onnxruntime"
    )
    assert runtime_of(["no GPU here"], [], head) == "torch"
    assert runtime_of(["no GPU here"], ["import jax", "import torch"], head) is None  # the last lines tie


def test_advise_keeps_the_catalog_only_for_llama_cpp_python():
    assert advise("F18", "llama-cpp-python", "blas-off") is None
    assert advise("F04", "torch", "x") is None  # not a package's command
    assert advise("F18", None, "zero-layers-offloaded") == Advice("", None)
    # F19 of a package that had no CUDA wheel for this install: torch is named, its index is not the fix
    assert advise("F19", "torch", "prebuilt-wheel-not-found") == Advice("torch", None)
    assert advise("F19", "torch", "anchor:cpu-only-wheel").command.startswith("pip install --force-reinstall torch")
    assert set(TAILORED) == {"F14", "F18", "F19"}
    # the ids advice replaces are exactly those whose catalog command installs llama-cpp-python
    assert {f.id for f in CATALOG.values() if "llama-cpp-python" in (f.fix_command or "")} == set(TAILORED)
