"""On real Windows (the GitHub runners have Visual Studio 2022 Enterprise, and no CUDA): discovery
through the real vswhere and registry, a real vcvars capture, and the exported scripts run by the
real PowerShell and cmd.exe. Runs in .github/workflows/windows.yml.

Also run by Windows CPython under Wine (tests/run-win32.sh), in a prefix laid out like a runner
(tests/wine/layout.py: a VS 2022 tree whose vcvarsall.bat is a hand-made stand-in, run by Wine's real
cmd.exe). What Wine alone does differently is a strict xfail naming the behaviour."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import UNDER_WINE

pytestmark = pytest.mark.windows


def envmgr(*args, tmp_path, check=True):
    env = {**os.environ, "NO_COLOR": "1", "ENVMGR_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "envmgr", *args], capture_output=True, text=True, env=env)
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_list_finds_the_runners_visual_studio(tmp_path):
    data = json.loads(envmgr("list", "--json", tmp_path=tmp_path).stdout)
    usable = [vs for vs in data["visual_studio"] if vs["toolsets"] and vs["vcvarsall"]]
    assert usable, data
    assert usable[0]["build_customizations"]["dir"].endswith("BuildCustomizations")
    assert data["windows_sdks"], "the runner has a Windows SDK"


@pytest.mark.xfail(
    UNDER_WINE,
    strict=True,
    reason="Wine 8 here is 64-bit only (no WoW64): Microsoft's x86 "
    "vswhere.exe cannot run, so discovery reads the installer's state.json instead",
)
def test_list_finds_visual_studio_through_vswhere(tmp_path):
    data = json.loads(envmgr("list", "--json", tmp_path=tmp_path).stdout)
    assert data["visual_studio"] and all(vs["source"] == "vswhere" for vs in data["visual_studio"])


def test_real_vcvars_capture_and_cache(tmp_path):
    fresh = json.loads(envmgr("export", "--format", "json", "--refresh", tmp_path=tmp_path).stdout)
    env = fresh["env"]
    assert env["VCToolsInstallDir"]["set"].endswith("\\")
    assert env["VSCMD_ARG_TGT_ARCH"]["set"] == "x64"
    assert any("Hostx64\\x64" in entry for entry in env["PATH"]["prepend"])
    cached = json.loads(envmgr("export", "--format", "json", tmp_path=tmp_path).stdout)
    assert cached["env"] == env
    listed = json.loads(envmgr("cache", "list", "--json", tmp_path=tmp_path).stdout)
    assert [e["valid"] for e in listed["entries"]] == [True]


@pytest.mark.xfail(
    UNDER_WINE,
    strict=True,
    reason="Wine's powershell.exe is a stub: it prints nothing and exits 0, so the values cannot be read back",
)
def test_exported_ps1_gives_powershell_a_working_cl(tmp_path):
    script = tmp_path / "env.ps1"
    script.write_bytes(envmgr("export", "--format", "ps1", tmp_path=tmp_path).stdout.encode("utf-8"))
    done = subprocess.run(
        [
            "powershell",
            "-NoProfile",
            "-ExecutionPolicy",
            "Bypass",
            "-Command",
            f". '{script}'; (Get-Command cl.exe).Source; $env:VSCMD_ARG_TGT_ARCH",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].lower().endswith("\\hostx64\\x64\\cl.exe") and lines[-1] == "x64"


def test_exported_cmd_gives_cmd_a_working_cl(tmp_path):
    script = tmp_path / "env.cmd"
    done = envmgr("export", "--format", "cmd", tmp_path=tmp_path)
    script.write_bytes(done.stdout.encode("utf-8"))
    # A command line, not an argv: subprocess would turn the quotes of `call "..."` into \" inside one
    # quoted argument, which cmd.exe does not understand. `%~$PATH:I` is cmd's own PATH search (Wine 8's
    # where.exe prints nothing).
    run = subprocess.run(
        f'cmd.exe /d /c call "{script}" && for %I in (cl.exe) do @echo %~$PATH:I', capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[0].lower().endswith("\\hostx64\\x64\\cl.exe")


def test_record_then_replay_gives_the_same_inventory(tmp_path):
    record = tmp_path / "machine.toml"
    envmgr("record", "-o", str(record), tmp_path=tmp_path)
    live = json.loads(envmgr("list", "--json", tmp_path=tmp_path).stdout)
    replay = json.loads(envmgr("--machine", str(record), "list", "--json", tmp_path=tmp_path).stdout)
    assert replay["visual_studio"] == live["visual_studio"]
