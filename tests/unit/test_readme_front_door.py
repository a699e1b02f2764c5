"""README is a front door (issue 33): at most 1,500 words, the install line first, the design card's
commands, the test command, and links that work, also on an index page (PyPI shows README as the long
description, where a relative link goes nowhere: README's links are absolute, to the repository).
Every relative link in docs/ resolves to a file in the checkout (and its #anchor to a heading there);
so does every absolute link to the repository's main branch."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
REPO = "https://github.com/envmgr/envmgr/blob/main/"  # pyproject.toml [project.urls]; docs/packaging.md
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def words(text: str) -> int:
    return len(text.split())


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, flags=re.M)}


def target(source: Path, link: str) -> tuple[Path, str] | None:
    """The checkout file (and anchor) a link names, or None for a link outside the repository."""
    if link.startswith(REPO):
        rest = link[len(REPO) :]
        base = ROOT
    elif re.match(r"[a-z]+:", link):
        return None
    else:
        rest, base = link, source.parent
    path, _, anchor = rest.partition("#")
    return (base / path if path else source).resolve(), anchor


def broken(source: Path) -> list[str]:
    out = []
    for link in LINK.findall(source.read_text(encoding="utf-8")):
        found = target(source, link)
        if found is None:
            continue
        path, anchor = found
        if not path.exists():
            out.append(f"{link}: no {path}")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            out.append(f"{link}: no heading #{anchor} in {path.name}")
    return out


def test_readme_is_at_most_1500_words():
    assert words(README.read_text(encoding="utf-8")) <= 1500


def test_readme_links_are_absolute_and_resolve():
    text = README.read_text(encoding="utf-8")
    links = LINK.findall(text)
    assert links
    relative = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert relative == [], "README is PyPI's long description: use absolute links to the repository"
    assert broken(README) == []


@pytest.mark.parametrize("name", sorted(p.name for p in DOCS.glob("*.md")))
def test_every_link_in_docs_resolves(name):
    assert broken(DOCS / name) == []


def test_docs_index_lists_every_doc():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    listed = set(LINK.findall(index))
    missing = [p.name for p in DOCS.glob("*.md") if p.name != "README.md" and p.name not in listed]
    assert missing == []


def test_readme_opens_with_the_install_line_then_the_card_commands_and_the_test_command():
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```\n(.*?)```", text, flags=re.S)
    assert blocks[0].strip() == "uv tool install envmgr-cuda"
    assert "`pipx install envmgr-cuda`" in text and "`pip install envmgr-cuda`" in text
    commands = [line for block in blocks for line in block.splitlines()]
    for command in (
        "envmgr shell --cuda 12.4 --vs community",
        "envmgr export > env.toml",
        "envmgr fix-msbuild",
        "envmgr install llama-cpp-python",
        "bash tests/run-all.sh",
    ):
        assert any(command in line for line in commands), command
    # the H100 figure keeps its dated result file
    assert "bench/results/2026-11-25-issue24-gpu-prebuilt.md" in text
    # the start-up and progress figures keep their dated result files
    assert "bench/results/2026-12-07-startup.md" in text and "bench/results/2026-12-07-progress.md" in text


def test_the_tutorial_walks_from_a_bare_machine_to_verify():
    text = (DOCS / "tutorial.md").read_text(encoding="utf-8")
    steps = re.findall(r"^## (\d+)\. ", text, flags=re.M)
    assert steps == [str(n) for n in range(1, len(steps) + 1)] and len(steps) >= 8
    order = [
        "uv tool install envmgr-cuda",
        "envmgr list",
        "envmgr doctor",
        "envmgr fix-msbuild",
        "envmgr install",
        "envmgr verify",
    ]
    at = text.index("## 1. ")
    for command in order:  # each one after the one before it (raises ValueError when missing)
        at = text.index(command, at)
