"""One scan reads its log once (issue 35 part 2): every pass of `scan_path` (the wrap width, the scan, a paste read
again with a weak or a soft wrap width) runs over the text read.LogText kept from the one open of the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from envmgr.buildlog import read
from envmgr.buildlog.scan import scan_path
from tests.conftest import CORPUS


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths read._open (the one place a log file is opened) was asked for."""
    seen: list[str] = []
    real = read._open

    def counted(path: str | Path):  # type: ignore[no-untyped-def]
        seen.append(str(path))
        return real(path)

    monkeypatch.setattr(read, "_open", counted)
    return seen


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The passes over the kept text (`last` of each)."""
    seen: list[bool] = []
    real = read.LogText.pieces

    def counted(self: read.LogText, last: bool = False):  # type: ignore[no-untyped-def]
        seen.append(last)
        return real(self, last)

    monkeypatch.setattr(read.LogText, "pieces", counted)
    return seen


def test_a_build_log_with_a_match_is_opened_once(opens: list[str], passes: list[bool]) -> None:
    log = CORPUS / "logs" / "cmake-no-cuda-toolset-found-vs2019-cmake3.24.txt"
    if not log.is_file():
        log = next(p for p in sorted(CORPUS.rglob("cmake-no-cuda-toolset-found-vs2019-cmake3.24.txt")))
    assert [m.id for m in scan_path(log).matches] == ["F01"]
    assert len(opens) == 1
    assert len(passes) == 2  # the wrap width, the scan


def test_a_paste_read_with_every_wrap_width_is_opened_once(
    tmp_path: Path, opens: list[str], passes: list[bool]
) -> None:
    # prose word-wrapped at 60 columns with one line cut at a column: no catalog failure, so the scan tries the
    # weak and the soft wrap width after the first
    words = "the build stopped somewhere in the middle of the compile and nobody knows why it did that".split()
    lines, line = [], ""
    for w in words * 8:
        if len(line) + 1 + len(w) > 60:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    lines.append(line)
    log = tmp_path / "paste.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert scan_path(log).matches == ()
    assert len(opens) == 1
    assert len(passes) >= 3 and not any(passes)  # every pass over the kept text, none of them the last


def test_the_kept_text_is_the_files_text_and_bounded(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    log.write_text("".join(f"line {i}\n" for i in range(5000)), encoding="utf-8")
    whole = "".join(read.stream_text(log, block=1024))
    kept = read.LogText(log, block=1024)
    assert "".join(kept.pieces()) == whole == "".join(kept.pieces(last=True))
    small = read.LogText(log, block=1024, keep=4096)  # past `keep` characters nothing is kept: a later pass
    assert "".join(small.pieces()) == whole  # opens the file again
    assert "".join(small.pieces()) == whole
    assert small._kept == []
