"""The Host seam's capabilities (issue 12, deliverable 3): every kind of host answers every question
of the protocol, and the answers drive behaviour that used to hang on `isinstance` or `os.*`."""

from __future__ import annotations

import os
import typing
from pathlib import Path

import pytest
import tomlkit

from envmgr.cache import store as cache
from envmgr.host.base import Host
from envmgr.host.live import LiveHost
from envmgr.host.recorded import load_machine
from envmgr.host.recording import RecordingHost
from envmgr.host.wine import WineHost
from tests.conftest import MACHINES, run_cli

LINUX = MACHINES / "linux-two-toolkits.toml"
WINDOWS = MACHINES / "community-buildtools-cuda124.toml"


def _members() -> set[str]:
    return {n for n in dir(Host) if not n.startswith("_")} | set(typing.get_type_hints(Host))


@pytest.mark.parametrize(
    "make",
    [
        LiveHost,
        lambda: WineHost("/nonexistent-prefix"),
        lambda: load_machine(str(LINUX)),
        lambda: RecordingHost(LiveHost()),
    ],
    ids=["live", "wine", "record", "recording"],
)
def test_every_host_kind_answers_the_whole_protocol(make):
    host = make()
    missing = sorted(n for n in _members() if not hasattr(host, n))
    assert missing == []
    assert isinstance(host.name, str) and host.name
    assert isinstance(host.cpu_count, int) and host.cpu_count >= 1


def test_capabilities_per_kind():
    live, wine, record = LiveHost(), WineHost("/srv/pfx"), load_machine(str(WINDOWS))
    assert (live.runs_programs, live.writes_files, live.default_shell) == (True, True, None)
    assert (wine.runs_programs, wine.writes_files, wine.default_shell) == (True, True, "cmd")
    assert (record.runs_programs, record.writes_files, record.default_shell) == (False, False, None)
    assert live.local_path("/etc/hosts") == "/etc/hosts" and record.local_path("C:\\x") is None
    assert Path(wine.local_path("C:\\Windows\\x.dll")) == Path(
        os.path.abspath("/srv/pfx"), "drive_c", "Windows", "x.dll"
    )
    assert live.cpu_count == (os.cpu_count() or 1)
    assert record.name == str(WINDOWS)
    assert RecordingHost(record).writes_files is False  # recording watches; the capabilities are its host's


def test_a_record_has_its_own_processor_count(tmp_path):
    doc = tomlkit.parse(LINUX.read_text(encoding="utf-8"))
    doc.setdefault("meta", {})["cpu_count"] = 37
    path = tmp_path / "rec.toml"
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    assert load_machine(str(path)).cpu_count == 37
    env = {"ENVMGR_CACHE_DIR": str(tmp_path / "cache")}
    got = run_cli("--machine", str(path), "export", "--recipe", "llama-cpp-python", "--format", "json", env=env)
    assert got.code == 0, got.stderr
    # the recipe's build parallelism is the recorded machine's, not this one's (was os.cpu_count())
    assert got.json()["env"]["CMAKE_BUILD_PARALLEL_LEVEL"]["set"] == "37"


def test_a_windows_record_counts_number_of_processors():
    doc = tomlkit.parse(WINDOWS.read_text(encoding="utf-8"))
    doc["env"]["number_of_processors"] = "12"  # Windows names are case-insensitive
    from envmgr.host.recorded import RecordedHost

    assert RecordedHost(doc.unwrap(), origin="w.toml").cpu_count == 12


def test_the_cache_stats_a_wine_prefix_through_the_host(tmp_path, monkeypatch):
    """A C:\\ path watched by a cache entry is the prefix's drive_c file: changing it retires the entry.
    (os.stat on "C:\\..." found nothing, "absent" stayed "absent", and the stale snapshot was served.)"""
    monkeypatch.setenv("ENVMGR_CACHE_DIR", str(tmp_path / "cache"))
    wine = WineHost(str(tmp_path / "pfx"))
    vcvars = Path(tmp_path / "pfx" / "drive_c" / "VS" / "vcvarsall.bat")
    vcvars.parent.mkdir(parents=True)
    vcvars.write_text("@echo off\r\n")
    watched = "C:\\VS\\vcvarsall.bat"
    cache.store("wine-key", "# snapshot\n", [watched], wine)
    assert cache.lookup("wine-key", host=wine) == "# snapshot\n"
    vcvars.write_text("@echo off\r\nset CHANGED=1\r\n")
    assert cache.lookup("wine-key", host=wine) is None


def test_interactive_start_on_each_kind():
    argv, env = LiveHost().interactive(["bash", "-i"], {"A": "1"})
    assert (argv, env) == (["bash", "-i"], {"A": "1"})
    wine_argv, wine_env = WineHost("/srv/pfx").interactive(["cmd.exe"], {"PATH": "C:\\x", "B": "2"})
    assert wine_argv[1:] == ["cmd.exe"] and wine_env["WINEPATH"] == "C:\\x" and wine_env["B"] == "2"
    from envmgr.errors import InputFileError

    with pytest.raises(InputFileError, match="machine record"):
        load_machine(str(LINUX)).interactive(["bash"], {})


def test_cli_takes_a_host():
    """Tests (and embedders) give the CLI a host instead of patching it in."""
    record = load_machine(str(LINUX))
    got = run_cli("list", "--json", host=record)
    assert got.code == 0, got.stderr
    assert got.json()["cuda"] and run_cli("--machine", str(LINUX), "list", "--json").json() == got.json()
