"""The release workflow's promises (issue 33), read from its text: built once, the built wheel tested on
Windows and Linux, published by trusted publishing on a tag only. actionlint checks its syntax
(tests/unit/test_workflow_lint.py); this checks what it is for."""

from __future__ import annotations

import re

from tests.conftest import ROOT

RELEASE = ROOT / ".github" / "workflows" / "release.yml"


def job(text: str, name: str) -> str:
    """The lines of one job, up to the next job at the same indent."""
    start = text.index(f"\n  {name}:\n")
    end = re.search(r"\n  [a-z-]+:\n", text[start + 1 :])
    return text[start : start + 1 + end.start()] if end else text[start:]


def test_built_once_tested_on_both_systems_published_by_trusted_publishing_on_a_tag():
    # the steps, not the header comment that describes them
    text = "\n".join(
        line for line in RELEASE.read_text(encoding="utf-8").splitlines() if not line.lstrip().startswith("#")
    )
    assert re.search(r"on:\n  push:\n    tags: \[\"v\*\"\]", text)
    build, test, publish = job(text, "build"), job(text, "test"), job(text, "publish")
    assert text.count("python -m build") == 1 and "python -m build" in build
    assert "needs: build" in test and "os: [ubuntu-latest, windows-latest]" in test
    assert "pip install --disable-pip-version-check dist/*.whl" in test and "-e ." not in test
    assert "tests/wheel_smoke.py" in test
    assert "needs: test" in publish and "if: startsWith(github.ref, 'refs/tags/v')" in publish
    assert "id-token: write" in publish and "uses: pypa/gh-action-pypi-publish@release/v1" in publish
    assert "password" not in publish and "secrets." not in text  # trusted publishing: no token
    # only the publish job may mint an OIDC token
    assert text.count("id-token: write") == 1 and re.search(r"\npermissions:\n  contents: read\n", text)
