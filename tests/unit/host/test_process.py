"""envmgr/host/process.py: envmgr's own settings, a flag's value beating the variable."""

from __future__ import annotations

import os

from envmgr.host import process


def test_setting_reads_the_environment_and_an_empty_value_stays_empty(monkeypatch):
    monkeypatch.setenv("ENVMGR_GPU", "sm_89")
    monkeypatch.setenv("NO_COLOR", "")
    monkeypatch.delenv("ENVMGR_WHEEL_INDEX", raising=False)
    assert process.setting("ENVMGR_GPU") == "sm_89"
    assert process.setting("NO_COLOR") == ""
    assert process.setting("ENVMGR_WHEEL_INDEX") is None
    assert process.environ() is os.environ


def test_a_given_flag_beats_the_variable_until_forgotten(monkeypatch):
    monkeypatch.setenv("ENVMGR_GPU", "sm_75")
    try:
        process.give("ENVMGR_GPU", "sm_90")
        assert process.setting("ENVMGR_GPU") == "sm_90" and process.given("ENVMGR_GPU")
    finally:
        process.forget("ENVMGR_GPU")
    assert process.setting("ENVMGR_GPU") == "sm_75" and not process.given("ENVMGR_GPU")
    process.forget("ENVMGR_GPU")  # forgetting twice is harmless
