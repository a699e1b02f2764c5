"""The scan's cheap pre-checks give the answers of the searches they replace (issue 23 item 6: linear and fast).

logengine.Probe asks a cut copy of a window (UTF-8 bytes for non-ASCII text, runs of 3+ spaces cut to two for a
padded one) whether a literal may be there: it must never say no where the literal is, and `holds` must be exact.
required_literals reads the literals every match of a signature holds: each must be in each match, on real logs.
A needle whose signatures each lack their gate literal in a window is not looked at there: scanning with and
without the gates must give the same result. Samples: tests/corpus (their SOURCE lines say where each is from),
reshaped as bench/logscan.py reshapes them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from envmgr.buildlog import engine as logengine
from envmgr.buildlog import facts as logfacts
from envmgr.buildlog.engine import Probe, Scanner, required_literals
from envmgr.buildlog.rules import SIGNATURES
from envmgr.buildlog.scan import scan_json, scan_path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from corpus_index import CORPUS, load_index, read_log

TRAIN = [e for e in load_index() if e.split == "train"][::7]
NEEDLES = sorted(
    {n for s in SIGNATURES for n in s.needle}
    | {n for fx in logfacts.FACTS for n in fx.needles}
    | {lit for s in SIGNATURES for lit in required_literals(s.regex)}
)
ORDINARY = "cmake-vs2022-generator-cuda-identification-ok-ci-cuda11.7.99.txt"  # bench/logscan.py's ordinary log


def _padded(text: str, width: int = 87) -> str:
    """Every line cut into pieces of `width` columns, each padded to it (a fixed-width console; bench/logscan.py)."""
    lines = text.split("\n")
    return "\n".join(line[k : k + width].ljust(width) for line in lines for k in range(0, max(len(line), 1), width))


def _bodies(name: str, origin: str) -> list[str]:
    body = read_log(CORPUS / name, origin).decode("utf-8", "replace")
    return [body, _padded(body)]


@pytest.mark.parametrize(("name", "origin"), [(e.file, e.origin) for e in TRAIN])
def test_the_probe_never_misses_a_literal_and_holds_is_exact(name, origin):
    for body in _bodies(name, origin):
        probe = Probe(body)
        for n in NEEDLES:
            there = n in body
            assert probe.holds(n) == there, n
            assert probe.maybe(n) or not there, n


def test_a_padded_text_is_cut_and_a_plain_one_is_not():
    body = (CORPUS / ORDINARY).read_text(encoding="utf-8")
    assert not Probe(body * 20).cut
    padded = Probe(_padded(body) * 20)
    assert padded.cut and len(padded.text) < 0.8 * len(padded.body)
    # three spaces in a row are kept where a literal holds them: asked of the text itself
    assert padded.holds("NVIDIA 11.7.99" + " " * 3) and not padded.holds("NVIDIA 11.7.99" + " " * 90)
    wide = Probe(_padded("é " + body) * 20)  # non-ASCII: its UTF-8 bytes, cut alike
    assert isinstance(wide.text, bytes) and wide.cut and wide.holds("é") and wide.holds("Visual Studio 17")


@pytest.mark.parametrize(("name", "origin"), [(e.file, e.origin) for e in TRAIN])
def test_each_required_literal_is_in_each_match(name, origin):
    body = read_log(CORPUS / name, origin).decode("utf-8", "replace")
    for sig in SIGNATURES:
        lits = required_literals(sig.regex)
        for m in sig.regex.finditer(body):
            assert all(lit in m.group(0) for lit in lits), (sig.name, lits)


def test_required_literals_of_hand_made_patterns():
    assert required_literals(re.compile(r"abc?d\s+(?:x|y)ef[gh]ij")) == ("ab", "d", "ef", "ij")
    assert required_literals(re.compile(r"a\.b\ c{2,3}d*e")) == ("a.b ", "e")
    assert required_literals(re.compile(r"(?<!')-allow-x(?!' can)")) == ("-allow-x",)
    assert required_literals(re.compile(r"[]|(]abcd")) == ("abcd",)
    assert required_literals(re.compile(r"abcd|efgh")) == ()  # either branch: no literal in each
    assert required_literals(re.compile(r"abcd", re.I)) == ()  # case-insensitive
    assert required_literals(re.compile(r"ab\x41cd")) == ()  # a numeric escape is not read


def test_gates_skip_the_needle_places_of_a_log_that_cannot_match():
    # bench/logscan.py's ordinary log names an nvcc on every sixth line ("compiler identification is NVIDIA") but
    # no CUDAToolkit: the two signatures of that needle need "Found CUDAToolkit:", so past GATE_AFTER places in a
    # window its places are not looked at
    sc = Scanner(SIGNATURES, (), (), re.compile("x^"))
    needle = "compiler identification is NVIDIA"
    assert sc.gates[needle] == ("Found CUDAToolkit:",)
    looked: dict[str, int] = {}

    class Counting(dict):
        def get(self, key, default=None):
            looked[key[0]] = looked.get(key[0], 0) + 1
            return super().get(key, default)

    sc.regions = Counting()
    lines = (CORPUS / ORDINARY).read_text(encoding="utf-8").split("\n") * 1000  # 1000 places, two windows
    sc.feed(list(range(1, len(lines) + 1)), lines)
    sc.finish()
    assert 0 < looked[needle] < 2 * logengine.GATE_AFTER and not sc.hits


@pytest.mark.parametrize("shape", ["plain", "padded", "repeated"])
def test_scanning_with_gates_equals_scanning_without(tmp_path, monkeypatch, shape):
    path = tmp_path / "build.log"
    docs = []
    try:
        for gates in (True, False):
            if not gates:  # the plan a Scanner reads is made once per log kind: made again without gates
                monkeypatch.setattr(logengine, "_gates", lambda needle, sigs: None)
            logengine._PLANS.clear()
            for e in TRAIN[::4]:
                body = read_log(CORPUS / e.file, e.origin).decode("utf-8", "replace")
                body = {"plain": body, "padded": _padded(body), "repeated": body * 3}[shape]
                path.write_bytes(body.encode("utf-8"))
                docs.append(scan_json(scan_path(path), "build.log"))
            assert len(logengine._PLANS) == 1  # one plan for every scan of every log
    finally:
        logengine._PLANS.clear()
    half = len(docs) // 2
    assert half > 10 and docs[:half] == docs[half:]


def test_the_probe_keeps_its_answers_and_skips_a_literal_whose_part_is_absent():
    body = (CORPUS / ORDINARY).read_text(encoding="utf-8")
    probe = Probe(body, {"error MSB3721": ("MSB3721",), "CUDA toolset": ("CUDA",)})
    searched: list[str] = []

    class Counted(str):
        def __contains__(self, literal):
            searched.append(literal)
            return super().__contains__(literal)

    probe.text = Counted(probe.text)
    assert not probe.maybe("MSB3721") and not probe.maybe("error MSB3721")  # the second without a search
    assert probe.maybe("CUDA") and not probe.maybe("CUDA toolset")  # a part there: searched
    assert probe.maybe("CUDA") and searched == ["MSB3721", "CUDA", "CUDA toolset"]
