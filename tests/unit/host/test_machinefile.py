"""envmgr/host/machinefile.py: what a RecordingHost saw, written as a machine file that replays the same
discovery (recorded machines from tests/machines, read again through a RecordingHost)."""

from __future__ import annotations

import pytest
import tomlkit

from envmgr.discover import discover
from envmgr.host.base import RegValue
from envmgr.host.machinefile import machine_document
from envmgr.host.recorded import RecordedHost, load_machine
from envmgr.host.recording import RecordingHost
from tests.conftest import MACHINES


@pytest.mark.parametrize("name", ["linux-two-toolkits.toml", "vs2019-vs2022.toml"])
def test_a_record_of_a_record_replays_the_same_discovery(tmp_path, name):
    rec = RecordingHost(load_machine(str(MACHINES / name)))
    inv = discover(rec)
    doc = machine_document(rec, version="0.1.0", description="re-recorded", cpu_flags=["avx2", "fma"])
    out = tmp_path / "again.toml"
    out.write_text(tomlkit.dumps(doc), encoding="utf-8")
    again = load_machine(str(out))
    assert discover(again) == inv and inv.cuda
    assert again.meta["recorded_by"] == "envmgr 0.1.0" and again.meta["description"] == "re-recorded"
    assert again.cpu_flags == ("avx2", "fma") and again.platform == rec.platform
    # only what discovery read is kept: the original's environment has more than this one
    assert set(doc["env"]) <= set(load_machine(str(MACHINES / name)).env)


def test_binary_contents_multi_strings_and_bytes_are_kept_exactly(tmp_path):
    key = "HKLM\\SOFTWARE\\Example"
    inner = RecordedHost(
        {
            "schema": 1,
            "platform": "windows",
            "env": {},
            "files": {"C:\\bin\\a.dll": {"hex": "4d5aff00"}, "C:\\t.txt": "text\r\n"},
            "registry": {
                key: {
                    "Multi": {"type": "REG_MULTI_SZ", "value": ["a", "b"]},
                    "Bin": {"type": "REG_BINARY", "value": "00ff"},
                }
            },
        }
    )
    rec = RecordingHost(inner)
    assert rec.read_bytes("C:\\bin\\a.dll") == b"MZ\xff\x00" and rec.read_text("C:\\t.txt") == "text\r\n"
    values = rec.reg_values(key)
    assert values["Multi"] == RegValue("Multi", "REG_MULTI_SZ", ("a", "b")) and values["Bin"].data == b"\x00\xff"
    text = tomlkit.dumps(machine_document(rec, version="9", cpu_flags=None))
    replay = RecordedHost(tomlkit.parse(text).unwrap())
    assert replay.read_bytes("C:\\bin\\a.dll") == b"MZ\xff\x00" and replay.read_text("C:\\t.txt") == "text\r\n"
    assert replay.reg_values(key) == values and replay.cpu_flags is None


def test_a_record_without_commands_keeps_its_header_comments_first(tmp_path):
    rec = RecordingHost(RecordedHost({"schema": 1, "platform": "linux", "env": {}, "files": {"/etc/os": "x\n"}}))
    assert rec.read_text("/etc/os") == "x\n" and rec.commands == []
    text = tomlkit.dumps(machine_document(rec, version="9"))
    assert text.startswith("# envmgr machine record:"), text.splitlines()[0]
    assert "commands = []" in text.split("[meta]")[0]
    out = tmp_path / "m.toml"
    out.write_text(text, encoding="utf-8")
    again = load_machine(str(out))
    assert again.read_text("/etc/os") == "x\n" and again.platform == "linux"
