"""The vcvars capture run for real: Wine's cmd.exe runs envmgr's generated .cmd, which calls a
vcvarsall.bat laid out in a Visual Studio 2022 Community tree (tests/wine/vsfake, HAND-MADE: it
behaves like the real one, see its header), and the real corpus `set` dump echoed by a batch file.

Own prefix (module scope, ~6 s): the session prefix must keep exactly one VS instance
(test_wine_discovery.py). The CUDA 13.2 toolkit is copied from the session prefix.

What real cmd.exe under Wine 8 does, measured here (also WINE-NOTES.md "cmd / batch"):
* `cmd /d /u /c x.cmd`: echo and set write UTF-16LE (no BOM, CRLF as 0D 00 0A 00); a child program
  (hostname.exe, reg.exe) writes 8-bit text into the same stream; reg.exe writes non-ASCII in the
  OEM code page (cp437: "Ünïcode é" -> 9A 6E 8B 63 6F 64 65 20 82), so those bytes are not UTF-8.
* A batch file is read in the OEM code page: UTF-8 "é" (C3 A9) arrives as "├⌐". Non-ASCII text
  survives only when the file is written in cp437 (ASCII-only files, like Microsoft's vcvars
  scripts, are safe); environment variables are UTF-16 and carry any text.
* cmd's own complaints ("Can't recognize ...") go to stderr, in UTF-16 too; `call` of a missing
  file leaves errorlevel 1; vcvarsall's `exit /b 0` after [ERROR:...] lines gives errorlevel 0.
* The program sees the Unix environment of whoever runs wine (SHELL, PIP_*, WINE*...) plus
  Windows defaults (PROMPT, COMPUTERNAME...), not only the variables passed to it.
* A killed capture (timeout) takes its cmd.exe and ping.exe children with it.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Iterator

import pytest

from envmgr.snapshot.capture import CaptureError, base_environment, capture_vcvars, parse_set_dump
from envmgr.snapshot.envdelta import SET
from envmgr.host.wine import WineHost
from envmgr.snapshot.form import from_toml
from tests.conftest import corpus
from tests.wine import layout
from tests.wine.conftest import CUDA_DIR, CUDA_KEY, MACHINE_ENV, WinePrefix, new_prefix
from tests.wine.layout import DEFAULT_TOOLSET, FAKE, INSTANCE_ID, KITS, OLDER_TOOLSET, SDK, SDK_KEY, VS

pytestmark = pytest.mark.wine

# A second copy of the tree, where no installer would put it, with the characters that break naive
# quoting and decoding: a space, `&`, `(x86)`, `=` and a non-ASCII letter.
ODD_VS = "C:\\VS & Co (x86)\\Communauté a=b"
VCVARSALL = VS + "\\VC\\Auxiliary\\Build\\vcvarsall.bat"
SET_DUMP = "set-after-vsdevcmd-vs2022-community-17.8.2-x86-msvc-14.38.txt"
BANNER_X64 = "vcvarsall-x64-vs2022-17.14.30-community-cl19.44.35225.txt"
# Every variable the fake vcvarsall sets: a capture's delta must hold nothing else.
VCVARS_NAMES = {
    n.upper()
    for n in (
        "VSINSTALLDIR",
        "VCINSTALLDIR",
        "VSCMD_VER",
        "VisualStudioVersion",
        "VS170COMNTOOLS",
        "DevEnvDir",
        "VCIDEInstallDir",
        "VSCMD_ARG_HOST_ARCH",
        "VSCMD_ARG_TGT_ARCH",
        "VSCMD_ARG_app_plat",
        "__VSCMD_PREINIT_PATH",
        "WindowsSdkDir",
        "WindowsSDKVersion",
        "WindowsSDKLibVersion",
        "UCRTVersion",
        "UniversalCRTSdkDir",
        "WindowsSdkBinPath",
        "WindowsSdkVerBinPath",
        "WindowsLibPath",
        "INCLUDE",
        "EXTERNAL_INCLUDE",
        "LIB",
        "LIBPATH",
        "PATH",
        "VCToolsVersion",
        "VCToolsInstallDir",
        "VCToolsRedistDir",
        "Platform",
        "CommandPromptType",
    )
}


def lay_out_vs(pfx: WinePrefix, root: str) -> None:
    layout.lay_out_vs(pfx.drive_c, root)


@pytest.fixture(scope="module")
def vs_prefix(wine_prefix, tmp_path_factory) -> Iterator[WinePrefix]:
    with new_prefix(tmp_path_factory.mktemp("wine-capture")) as pfx:
        shutil.copytree(wine_prefix.unix(CUDA_DIR), pfx.unix(CUDA_DIR))
        pfx.reg("add", f"{CUDA_KEY}\\v13.2", "/v", "InstallDir", "/t", "REG_SZ", "/d", CUDA_DIR + "\\", "/f")
        pfx.reg("add", MACHINE_ENV, "/v", "CUDA_PATH_V13_2", "/t", "REG_SZ", "/d", CUDA_DIR, "/f")
        lay_out_vs(pfx, VS)
        lay_out_vs(pfx, ODD_VS)
        instance = pfx.unix("C:\\ProgramData\\Microsoft\\VisualStudio\\Packages\\_Instances") / INSTANCE_ID
        instance.mkdir(parents=True)
        shutil.copy2(FAKE / "state.json", instance / "state.json")
        um = pfx.unix(KITS + "Include\\" + SDK + "\\um")
        um.mkdir(parents=True)
        (um / "winsdkver.h").write_bytes(b"")
        (um / "windows.h").write_bytes(b"")
        pfx.reg("add", SDK_KEY, "/v", "InstallationFolder", "/t", "REG_SZ", "/d", KITS, "/f")
        pfx.reg("add", SDK_KEY, "/v", "Note", "/t", "REG_SZ", "/d", "Ünïcode é", "/f")
        yield pfx


@pytest.fixture(scope="module")
def host(vs_prefix) -> WineHost:
    return WineHost(str(vs_prefix.path))


def entries(value: str) -> list[str]:
    return [e for e in value.split(";") if e]


def assert_no_duplicates(env: dict, *names: str) -> None:
    for name in names:
        folded = [e.lower() for e in entries(env[name])]
        assert len(folded) == len(set(folded)), (name, env[name])


def test_capture_through_wine_cmd_gives_the_vcvars_environment(host):
    base = base_environment(host.env)
    delta, out = capture_vcvars(host, VCVARSALL, ("x64",), base)
    assert list(out.messages) == corpus(BANNER_X64).splitlines()[1:6]  # the real banner, line for line
    # Only what vcvars set: not the Unix environment or Wine's additions that cmd.exe also saw.
    assert {op.name.upper() for op in delta.ops} <= VCVARS_NAMES, sorted(op.name for op in delta.ops)
    env = delta.apply(base)
    tools = f"{VS}\\VC\\Tools\\MSVC\\{DEFAULT_TOOLSET}\\"
    assert env["VSINSTALLDIR"] == VS + "\\"
    assert env["VCINSTALLDIR"] == VS + "\\VC\\"
    assert env["VCToolsInstallDir"] == tools
    assert env["VCToolsVersion"] == DEFAULT_TOOLSET
    assert (env["VSCMD_ARG_HOST_ARCH"], env["VSCMD_ARG_TGT_ARCH"], env["Platform"]) == ("x64", "x64", "x64")
    assert env["VSCMD_VER"] == "17.14.30"
    assert env["WindowsSDKVersion"] == SDK + "\\"  # read from the registry by reg.exe in `for /f`
    assert entries(env["INCLUDE"]) == [
        tools + "include",
        tools + "ATLMFC\\include",
        VS + "\\VC\\Auxiliary\\VS\\include",
        f"{KITS}include\\{SDK}\\ucrt",
        f"{KITS}\\include\\{SDK}\\\\um",
        f"{KITS}\\include\\{SDK}\\\\shared",
    ]
    assert entries(env["LIB"])[:2] == [tools + "ATLMFC\\lib\\x64", tools + "lib\\x64"]
    path = entries(env["PATH"])
    assert path[0] == tools + "bin\\Hostx64\\x64"
    assert path[-1] == VS + "\\Common7\\IDE\\CommonExtensions\\Microsoft\\CMake\\CMake\\bin"  # vcvars appends it
    assert entries(base["PATH"]) == [p for p in path if p in entries(base["PATH"])]  # the base kept, in order
    assert_no_duplicates(env, "PATH", "INCLUDE", "LIB", "LIBPATH")


def test_odd_characters_in_the_install_path_survive(host):
    base = base_environment(host.env)
    delta, out = capture_vcvars(
        host, ODD_VS + "\\VC\\Auxiliary\\Build\\vcvarsall.bat", ("x64", f"-vcvars_ver={OLDER_TOOLSET[:5]}"), base
    )
    env = delta.apply(base)
    assert env["VSINSTALLDIR"] == ODD_VS + "\\"
    assert env["VCToolsVersion"] == OLDER_TOOLSET  # 14.39 -> the newest 14.39.*
    assert entries(env["INCLUDE"])[0] == f"{ODD_VS}\\VC\\Tools\\MSVC\\{OLDER_TOOLSET}\\include"
    assert entries(env["PATH"])[0] == f"{ODD_VS}\\VC\\Tools\\MSVC\\{OLDER_TOOLSET}\\bin\\Hostx64\\x64"
    assert_no_duplicates(env, "PATH", "INCLUDE", "LIB", "LIBPATH")
    assert out.messages[-1] == "[vcvarsall.bat] Environment initialized for: 'x64'"


def test_missing_toolset_error_with_exit_0_is_a_capture_error(host):
    with pytest.raises(CaptureError) as err:
        capture_vcvars(host, VCVARSALL, ("x64", "-vcvars_ver=14.99"), base_environment(host.env))
    assert err.value.message == (
        "vcvarsall.bat failed: [ERROR:vcvars.bat] Toolset directory for version '14.99' was not found."
    )
    assert "** Visual Studio 2022 Developer Command Prompt v17.14.30" in err.value.details


def test_no_arguments_prints_usage_and_is_a_capture_error(host):
    with pytest.raises(CaptureError, match=r"\[ERROR:vcvarsall.bat\] Error in script usage"):
        capture_vcvars(host, VCVARSALL, (), base_environment(host.env))


def test_a_hanging_vcvars_ends_at_the_timeout(host):
    base = {**base_environment(host.env), "ENVMGR_FAKE_VCVARS_HANG": "1"}
    started = time.monotonic()
    with pytest.raises(CaptureError, match="did not finish within 5 s"):
        capture_vcvars(host, VCVARSALL, ("x64",), base, timeout=5)
    assert time.monotonic() - started < 15


def export(cli, vs_prefix, tmp_path, fmt: str):
    result = cli(
        "--wine-prefix",
        str(vs_prefix.path),
        "export",
        "--format",
        fmt,
        env={"ENVMGR_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert result.code == 0, result.stderr
    return result


def test_export_toml_and_json_hold_vcvars_and_cuda(cli, vs_prefix, host, tmp_path):
    snap = from_toml(export(cli, vs_prefix, tmp_path, "toml").stdout, "<export>")
    assert snap.platform == "windows"
    env = snap.delta.apply(base_environment(host.env))
    tools = f"{VS}\\VC\\Tools\\MSVC\\{DEFAULT_TOOLSET}\\"
    assert env["VCToolsVersion"] == DEFAULT_TOOLSET and env["VSCMD_ARG_TGT_ARCH"] == "x64"
    assert entries(env["INCLUDE"])[0] == tools + "include"
    assert env["CUDA_PATH_V13_2"] == env["CUDA_PATH"] == CUDA_DIR
    assert env["CUDACXX"] == CUDA_DIR + "\\bin\\nvcc.exe"
    path = entries(env["PATH"])
    assert path[0] == CUDA_DIR + "\\bin" and path[1] == tools + "bin\\Hostx64\\x64"  # CUDA's prepend last
    assert_no_duplicates(env, "PATH", "INCLUDE", "LIB", "LIBPATH")
    assert dict(snap.identity)["vs_instance_id"] == INSTANCE_ID
    assert not any(op.name.upper().startswith("WINE") for op in snap.delta.ops)

    data = export(cli, vs_prefix, tmp_path, "json").json()
    text = json.dumps(data)
    for needle in ("VCToolsVersion", DEFAULT_TOOLSET, "CUDA_PATH_V13_2", "CUDACXX", "VSCMD_ARG_TGT_ARCH"):
        assert needle in text, needle
    assert json.dumps(CUDA_DIR + "\\bin") in text


def corpus_batch() -> bytes:
    """A vcvarsall stand-in that prints the real banner, runs two 8-bit children, empties the
    environment and sets exactly the variables of the real `set` dump. Written in cp437 (cmd reads
    batch files in the OEM code page); NOTE_UTF8 is the same text in UTF-8, to show what that gives."""
    banner = corpus(BANNER_X64).splitlines()[1:6]
    lines = [
        "@echo off",
        *(f"echo {b}" for b in banner[:4]),
        '"%SystemRoot%\\system32\\hostname.exe"',
        f'reg query "{SDK_KEY}" /v Note',
        f"echo {banner[4]}",
        'for /f "delims==" %%v in (\'set\') do set "%%v="',
    ]
    for name, value in parse_set_dump(corpus(SET_DUMP).splitlines()).items():
        lines.append(f'set "{name}={value.replace("%", "%%")}"')
    lines.append('set "NOTE_CP437=Communauté"')
    return ("\r\n".join(lines) + "\r\n").encode("cp437") + 'set "NOTE_UTF8=Communauté"\r\nexit /b 0\r\n'.encode()


def test_real_set_dump_round_trips_through_wine_cmd(vs_prefix, host):
    bat = vs_prefix.unix("C:\\corpus\\vcvarsall.bat")
    bat.parent.mkdir(exist_ok=True)
    bat.write_bytes(corpus_batch())
    # The raw stream first: UTF-16 from cmd's echo, 8-bit (cp437) from reg.exe, side by side.
    raw = host.run(["cmd.exe", "/d", "/u", "/c", "C:\\corpus\\vcvarsall.bat"], timeout=60, encoding=None)
    assert raw.returncode == 0
    assert "** Copyright (c) 2025 Microsoft Corporation\r\n".encode("utf-16-le") in raw.stdout_bytes
    assert b"    Note    REG_SZ    \x9an\x8bcode \x82\r\n" in raw.stdout_bytes

    delta, out = capture_vcvars(host, "C:\\corpus\\vcvarsall.bat", ("x64",), base_environment(host.env))
    expected = parse_set_dump(corpus(SET_DUMP).splitlines())
    got = dict(out.env)
    assert got.pop("NOTE_CP437") == "Communauté"
    assert got.pop("NOTE_UTF8") == "Communaut├⌐"  # UTF-8 bytes read as cp437
    assert got == expected
    banner = corpus(BANNER_X64).splitlines()[1:6]
    assert list(out.messages[:4]) == banner[:4] and out.messages[-1] == banner[4]
    children = out.messages[4:-1]  # hostname.exe, then reg.exe: 8-bit lines between UTF-16 ones
    assert children[0].upper() == out.before["COMPUTERNAME"]  # Wine's COMPUTERNAME is the host name
    assert children[1] == "HKEY_LOCAL_MACHINE\\" + SDK_KEY[5:]
    assert children[2].startswith("    Note    REG_SZ    ")
    assert {op.name for op in delta.ops if op.op == SET} >= {"VCToolsVersion", "VSCMD_VER", "NOTE_CP437"}


def test_record_with_capture_replays_export_exactly(vs_prefix, tmp_path, cli):
    """`record --capture` under Wine, then `--machine` export on the record: the same snapshot env."""
    record = tmp_path / "machine.toml"
    env = {"ENVMGR_CACHE_DIR": str(tmp_path / "cache")}
    recorded = cli(
        "--wine-prefix", str(vs_prefix.path), "record", "--capture", "--vs", "community", "-o", str(record), env=env
    )
    assert recorded.code == 0, recorded.stderr
    live = cli("--wine-prefix", str(vs_prefix.path), "export", "--vs", "community", "--format", "json", env=env)
    replay = cli("--machine", str(record), "export", "--vs", "community", "--format", "json", env=env)
    assert live.code == 0 and replay.code == 0, live.stderr + replay.stderr
    assert replay.json()["env"] == live.json()["env"]
    assert "VCToolsVersion" in replay.json()["env"]
