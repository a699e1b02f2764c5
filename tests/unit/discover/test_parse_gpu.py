"""nvidia-smi query parsing, the name -> compute capability table, and host compiler versions.

Sources of the samples: tests/corpus/SOURCES.md.
"""

from __future__ import annotations

import re

import pytest

from envmgr.discover.compilers import parse_compiler_version
from envmgr.discover.gpu import QUERY, QUERY_OLD, cc_from_name, parse_query_csv
from envmgr.discover.model import Gpu
from tests.conftest import corpus

CSV_570 = "nvidia-smi-query-gpu-compute_cap-csv-linux-570.86.15.txt"
OLD_DRIVER = "nvidia-smi-query-compute_cap-unsupported-old-driver.txt"
TABLES = (
    "nvidia-smi-windows-576.80-cuda12.9-rtx3080.txt",
    "nvidia-smi-windows-596.36-cuda13.2-rtx4060ti.txt",
    "vsdevcmd-and-devpowershell-vs2026-18.2.1-community-default-x86-msvc14.50.35717-EXCERPT.txt",
    OLD_DRIVER,
)


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


# --- CSV query ---
# The sample's own query: `--query-gpu=compute_cap,compute_mode,driver_version,name,index --format=csv`
# (prompt line and header included).
CSV_570_FIELDS = ("compute_cap", "compute_mode", "driver_version", "name", "index")


@pytest.mark.parametrize("convert", [str, crlf], ids=["lf", "crlf"])
def test_csv_with_prompt_and_header(convert):
    assert parse_query_csv(convert(corpus(CSV_570)), CSV_570_FIELDS) == (
        Gpu(0, "NVIDIA TITAN V", "7.0", "nvidia-smi", "570.86.15", None),
        Gpu(1, "NVIDIA RTX 5880 Ada Generation", "8.9", "nvidia-smi", "570.86.15", None),
    )


def test_csv_rows_in_envmgr_query_order():
    # Hand-made (no real sample of envmgr's own query in the corpus): the GPUs of the 570.86.15
    # sample in QUERY order, noheader; the memory column in nvidia-smi's `N MiB` form.
    text = (
        "0, NVIDIA TITAN V, 7.0, 570.86.15, 12288 MiB\r\n"
        "1, NVIDIA RTX 5880 Ada Generation, 8.9, 570.86.15, 49140 MiB\r\n"
    )
    assert parse_query_csv(text, tuple(QUERY.split(","))) == (
        Gpu(0, "NVIDIA TITAN V", "7.0", "nvidia-smi", "570.86.15", 12288),
        Gpu(1, "NVIDIA RTX 5880 Ada Generation", "8.9", "nvidia-smi", "570.86.15", 49140),
    )


def test_old_query_falls_back_to_the_name_table():
    # Hand-made in QUERY_OLD order from the names and drivers of the Windows table samples.
    text = "0, NVIDIA GeForce RTX 3080, 576.80, 10240 MiB\n1, NVIDIA GeForce RTX ----, 591.74, [N/A]\n"
    assert parse_query_csv(text, tuple(QUERY_OLD.split(","))) == (
        Gpu(0, "NVIDIA GeForce RTX 3080", "8.6", "name table", "576.80", 10240),
        Gpu(1, "NVIDIA GeForce RTX ----", None, "unknown", "591.74", None),
    )


def test_old_driver_rejects_compute_cap():
    text = corpus(OLD_DRIVER)
    assert 'Field "compute_cap" is not a valid field to query.' in text  # what discover_gpus looks for
    assert "not a valid field" in text
    # Neither the error line nor the default table that follows is a GPU row, whatever the query.
    for fields in (("compute_cap",), tuple(QUERY.split(",")), tuple(QUERY_OLD.split(","))):
        assert parse_query_csv(text, fields) == ()
        assert parse_query_csv(crlf(text), fields) == ()


@pytest.mark.parametrize("name", TABLES)
@pytest.mark.parametrize("fields", [("compute_cap",), ("index",), tuple(QUERY.split(",")), tuple(QUERY_OLD.split(","))])
def test_default_table_output_is_not_csv(name, fields):
    assert parse_query_csv(corpus(name), fields) == ()


def test_empty_output_no_gpus():
    assert parse_query_csv("", tuple(QUERY.split(","))) == ()
    assert parse_query_csv("No devices were found\r\n", tuple(QUERY.split(","))) == ()


# --- name -> compute capability (used only when the driver cannot report compute_cap) ---
# Every GPU name in the corpus samples, as nvidia-smi printed it.
CORPUS_NAMES = {
    ("nvidia-smi-windows-576.80-cuda12.9-rtx3080.txt", "NVIDIA GeForce RTX 3080"): "8.6",
    ("nvidia-smi-windows-596.36-cuda13.2-rtx4060ti.txt", "NVIDIA GeForce RTX 4060 Ti"): "8.9",
    (CSV_570, "NVIDIA TITAN V"): "7.0",
    (CSV_570, "NVIDIA RTX 5880 Ada Generation"): "8.9",
    # the default table cuts long names: an RTX PRO of unknown model stays unknown
    (OLD_DRIVER, "NVIDIA RTX PRO ..."): None,
    # masked by the author of the guide
    (TABLES[2], "NVIDIA GeForce RTX ----"): None,
}


@pytest.mark.parametrize("sample,name", sorted(CORPUS_NAMES))
def test_cc_from_corpus_names(sample, name):
    assert name in corpus(sample)
    assert cc_from_name(name) == CORPUS_NAMES[(sample, name)]


def test_csv_sample_agrees_with_the_name_table():
    # The driver's own answer and the table must agree on the GPUs that report both.
    for gpu in parse_query_csv(corpus(CSV_570), CSV_570_FIELDS):
        assert cc_from_name(gpu.name) == gpu.compute_cap


def test_table_rows_name_the_gpus_we_test():
    names = set()
    for sample in TABLES:
        names |= {m.strip() for m in re.findall(r"^\|\s+\d+\s+(NVIDIA .+?)\s{2,}", corpus(sample), re.M)}
    assert names == {n for (_, n) in CORPUS_NAMES} - {"NVIDIA TITAN V", "NVIDIA RTX 5880 Ada Generation"}


# --- host compilers: first line of `--version` ---
COMPILERS = {
    "gcc (Debian 12.2.0-14+deb12u1) 12.2.0": "12.2.0",  # this machine's gcc
    "g++ (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0": "11.4.0",
    "clang version 14.0.6": "14.0.6",
    "Ubuntu clang version 18.1.3 (1ubuntu1)": "18.1.3",
    "gcc (GCC) 13.2.1 20231011 (Red Hat 13.2.1-4)": "13.2.1",
}


@pytest.mark.parametrize("line", sorted(COMPILERS))
@pytest.mark.parametrize("convert", [str, crlf], ids=["lf", "crlf"])
def test_compiler_first_line(line, convert):
    full = line + "\nCopyright (C) 2022 Free Software Foundation, Inc.\n"
    assert parse_compiler_version(convert(full)) == COMPILERS[line]


@pytest.mark.parametrize("text", ["", "\n", "gcc: fatal error: no input files\n"])
def test_compiler_garbage_is_none(text):
    assert parse_compiler_version(text) is None
