"""envmgr/hook/site_module.py, imported by its envmgr name (the target imports the copy as `_envmgr_hook`, which
tests/unit/test_hook.py runs in real interpreters): applying the env file in this process, refusing a cut or
foreign file before anything changes, ENVMGR_HOOK=0, and a start that never raises."""

from __future__ import annotations

import os

import pytest

from envmgr.hook import site_module

SEP = os.pathsep


@pytest.fixture
def env(monkeypatch):
    """The variables the files below touch, restored after the test (apply() writes os.environ itself)."""
    monkeypatch.setenv("EMT_PATH", SEP.join(["/old", "/keep"]))
    monkeypatch.setenv("EMT_STALE", "1")
    monkeypatch.setenv("EMT_NEW", "-")
    monkeypatch.delenv("EMT_NEW")
    monkeypatch.delenv("ENVMGR_HOOK", raising=False)
    return monkeypatch


def _file(tmp_path, *lines: str):
    path = tmp_path / site_module.ENV_FILE
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    return str(path)


def test_importing_it_by_its_envmgr_name_applies_nothing():
    assert site_module.__name__ == "envmgr.hook.site_module" and site_module.HEADER == "envmgr-hook 1"


def test_apply_sets_unsets_and_merges_path_lists_without_duplicates(tmp_path, env):
    path = _file(
        tmp_path,
        site_module.HEADER,
        "# written by envmgr hook install",
        "set\tEMT_NEW\tvalue with\ttab",
        "unset\tEMT_STALE",
        "remove\tEMT_PATH\t/old",
        "prepend\tEMT_PATH\t/cuda/bin\t/keep",
        "append\tEMT_PATH\t/z",
    )
    assert site_module.apply(path) is True
    assert os.environ["EMT_NEW"] == "value with" and "EMT_STALE" not in os.environ
    assert os.environ["EMT_PATH"] == SEP.join(["/cuda/bin", "/keep", "/z"])


def test_a_foreign_or_cut_file_changes_nothing(tmp_path, env):
    with pytest.raises(ValueError, match="not an envmgr hook file"):
        site_module.apply(_file(tmp_path, "export A=1"))
    with pytest.raises(ValueError, match="a malformed line"):
        site_module.apply(_file(tmp_path, site_module.HEADER, "set\tEMT_NEW\tx", "prepend"))
    assert "EMT_NEW" not in os.environ and os.environ["EMT_STALE"] == "1"


def test_envmgr_hook_0_turns_it_off(tmp_path, env):
    env.setenv("ENVMGR_HOOK", "0")
    assert site_module.apply(_file(tmp_path, site_module.HEADER, "unset\tEMT_STALE")) is False
    assert os.environ["EMT_STALE"] == "1"


def test_the_start_never_raises_and_says_one_line(capsys, env):
    site_module._start()  # no env file beside the envmgr copy: one line, no exception
    err = capsys.readouterr().err
    assert err.startswith("envmgr hook: not applied (") and err.endswith("`envmgr hook status` says more\n")
    assert err.count("\n") == 1
