"""Precision rules of issue 36 (the blind cohorts 2026-12-07, b and c, scored as train): where an id's own line also
appears in a log that is not that failure, the rule asks for what tells them apart.

Every log here is COMPOSED for the test in the tool's own words (the message the tool prints, with made-up paths
and names around it); none is a copy of a cohort log.
"""

from __future__ import annotations

from tests.logtext import decisive


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
