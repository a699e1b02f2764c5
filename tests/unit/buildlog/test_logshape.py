"""Log shapes the wrapped-line joining must not mistake for wrapping (issue 23 deliverable 6).

Every log here is a real sample of tests/corpus reshaped (padded, cut to one width, repeated); the
behaviour is asserted (lines counted, matches and line numbers), not the time: the time is measured by
bench/logscan.py's fixed-width shape.
"""

from __future__ import annotations

from pathlib import Path

from envmgr.buildlog.engine import _ALLOW, MAX_PIECES, _gated, literal_prefixes, logical_lines
from envmgr.buildlog.scan import scan_path
from tests.conftest import CORPUS

F01 = "cmake-no-cuda-toolset-found-vs2019-cmake3.24.txt"  # "No CUDA toolset found." on line 4
SMI = "nvidia-smi-windows-576.80-cuda12.9-rtx3080.txt"  # a box-drawn table, rows of 91 columns
F04 = "msbuild-cuda11.8-host_config-unsupported-msvc14.40-vs2022-buildtools-llama-cpp-python-EXCERPT.txt"


def lines_of(name: str) -> list[str]:
    text = (CORPUS / name).read_text(encoding="utf-8")
    return ["" if l.startswith(("# SOURCE:", "# Context:")) else l for l in text.split("\n")]


def scan_lines(tmp_path: Path, lines: list[str]):
    path = tmp_path / "build.log"
    path.write_bytes("\n".join(lines).encode("utf-8"))
    return scan_path(path)


def test_padded_fixed_width_log_keeps_every_line(tmp_path):
    # every line padded to one width (a fixed-width console or a report): nothing is joined
    unit = lines_of(F01)
    width = max(map(len, unit)) + 3
    lines = [l.ljust(width) for l in unit] * 300
    found = scan_lines(tmp_path, lines)
    assert found.lines == len(lines)
    (m,) = found.matches
    assert (m.id, m.line_no, m.count) == ("F01", 4, 300)


def test_text_cut_at_one_width_is_not_one_line(tmp_path):
    # 87-column lines of text without padding, as a truncating console writes them: a run far longer than
    # any wrapped line, so no line is joined (issue 23: this shape was read as "1 lines")
    text = " ".join(l.strip() for l in lines_of(F01) if l.strip())
    lines = [(text * 3)[k % 50 : k % 50 + 87] for k in range(3000)]
    assert {len(l) for l in lines} == {87}
    assert scan_lines(tmp_path, lines).lines == 3000


def test_a_box_table_is_not_joined_with_the_line_after_it(tmp_path):
    smi = lines_of(SMI)
    lines = smi + ["RuntimeError: The NVIDIA driver on your system is too old (found version 11040)."] + smi
    joined = [t for _, ts in logical_lines([lines], 91) for t in ts]
    assert joined == lines


def test_a_wrapped_line_is_joined_and_a_run_stays_bounded():
    text = next(l for l in lines_of(F04) if "host_config.h" in l)
    width = 90
    pieces = [text[:width]] + ["       " + text[k : k + width - 7] for k in range(width, len(text), width - 7)]
    assert len(pieces) > 2 and len(pieces[-1]) < width and all(len(p) == width for p in pieces[:-1])
    ((nums, texts),) = list(logical_lines([["before"] + pieces + ["after"]], width))
    assert nums == [1, 2, 2 + len(pieces)] and texts[1].replace(" ", "") == text.replace(" ", "")
    # more pieces than one wrapped line can have: left as they are
    long = [("x" * width)] * (MAX_PIECES + 5) + ["tail"]
    out = [t for _, ts in logical_lines([long], width) for t in ts]
    assert out == long


def test_joining_is_the_same_across_batch_boundaries():
    text = next(l for l in lines_of(F04) if "host_config.h" in l)
    width = 90
    pieces = [text[:width]] + ["       " + text[k : k + width - 7] for k in range(width, len(text), width - 7)]
    lines = (["short line"] + pieces) * 20 + [("y" * width)] * (MAX_PIECES + 3) + ["end"]
    whole = list(logical_lines([lines], width))
    one_by_one = list(logical_lines([[l] for l in lines], width))
    flat = lambda batches: [(n, t) for ns, ts in batches for n, t in zip(ns, ts)]  # noqa: E731
    assert flat(one_by_one) == flat(whole)
    assert len(flat(whole)) == 20 * 2 + MAX_PIECES + 3 + 1


def test_a_fixed_width_run_keeps_every_line_number_across_batches():
    # runs longer than MAX_PIECES (copied at C speed) between lines of another length, cut into odd batches
    width = 87
    lines = [f"{f'row {k}':<{width}}" for k in range(3 * MAX_PIECES)] + ["short"] + ["z" * width] * 2 + ["end"]
    lines = lines * 3
    batches = [lines[k : k + 37] for k in range(0, len(lines), 37)]
    out = [(n, t) for ns, ts in logical_lines(batches, width) for n, t in zip(ns, ts, strict=True)]
    assert out[: 3 * MAX_PIECES] == [(k + 1, lines[k]) for k in range(3 * MAX_PIECES)]
    # the padded rows stay lines; "zzz..." twice then "end" is a wrapped line (cut mid-word, shorter last piece)
    assert len(out) == len(lines) - 2 * 3 and out[-1] == (len(lines) - 2, "z" * 2 * width + "end")


def test_a_leading_lookbehind_keeps_the_literal_as_needle():
    # the flag anchor starts with a zero-width (?<!'): its literal is still where every match starts, so the
    # regex runs from that literal on, not over every window of a log that never passes the flag
    assert literal_prefixes(_ALLOW.pattern) == ("-allow-unsupported-compiler",)
    assert literal_prefixes(r"^(?!x)abcd|(?<=\))efgh") == ("abcd", "efgh")
    assert literal_prefixes(r"(?<!x(abcd") == () and literal_prefixes(r"(abcd)") == ()
    body = (
        "host_config.h: '-allow-unsupported-compiler' can be used to override this version check\n"
        "nvcc.exe -x cu -allow-unsupported-compiler -g\n"
    )
    m = _gated(_ALLOW, literal_prefixes(_ALLOW.pattern), body, 0, len(body))
    assert m is not None and m.start() == body.index("-x cu") + 6
    assert _gated(_ALLOW, literal_prefixes(_ALLOW.pattern), body.split("\n")[0], 0, 90) is None
