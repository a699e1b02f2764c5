"""vcvars capture: the real `set` dump and vcvars outputs in the corpus, cmd /u's mixed encodings,
and a whole capture through a recorded machine (ok, [ERROR:] with exit 0, hang)."""

from __future__ import annotations

import pytest
import tomlkit

from envmgr.snapshot.capture import (
    BEGIN,
    END,
    LEVEL,
    CaptureError,
    base_environment,
    capture_script,
    capture_vcvars,
    check_capture,
    decode_cmd_output,
    parse_capture_output,
    parse_set_dump,
    vcvars_args,
)
from envmgr.snapshot.envdelta import APPEND, PREPEND, SET, diff
from envmgr.host.recorded import RecordedHost
from tests.conftest import MACHINES, corpus

SET_DUMP = "set-after-vsdevcmd-vs2022-community-17.8.2-x86-msvc-14.38.txt"
BANNER_X64 = "vcvarsall-x64-vs2022-17.14.30-community-cl19.44.35225.txt"


def cmd_u_stream(messages: str, set_dump: str, level: int = 0) -> bytes:
    """What `cmd /d /u /c capture.cmd` writes: its own echo/set output in UTF-16LE, CRLF."""
    body = messages.replace("\r\n", "\n").replace("\n", "\r\n")
    dump = set_dump.replace("\r\n", "\n").replace("\n", "\r\n")
    text = f"{body}{LEVEL}{level}\r\n{BEGIN}\r\n{dump}{END}\r\n"
    return text.encode("utf-16-le")


def test_real_set_dump_splits_on_first_equals_only():
    env = parse_set_dump(corpus(SET_DUMP).splitlines())
    assert env["VCToolsVersion"] == "14.38.33130"
    assert env["VSCMD_VER"] == "17.8.2"
    assert env["VSCMD_ARG_TGT_ARCH"] == "x86"
    assert env["VCToolsInstallDir"].endswith("\\VC\\Tools\\MSVC\\14.38.33130\\")
    assert env["COMPUTERNAME"] == "WINDEV2311EVAL"
    assert not any(k.startswith("=") for k in env)


def test_set_dump_drops_drive_cwd_keys_and_keeps_equals_in_values():
    env = parse_set_dump(["=C:=C:\\Users\\me", "=ExitCode=00000000", "CMAKE_ARGS=-DGGML_CUDA=on -DX=1", "EMPTY="])
    assert env == {"CMAKE_ARGS": "-DGGML_CUDA=on -DX=1", "EMPTY": ""}


def test_crlf_and_lf_dumps_parse_the_same():
    text = corpus(SET_DUMP)
    lf = parse_capture_output(decode_cmd_output(cmd_u_stream("", text)))
    crlf = parse_capture_output(decode_cmd_output(cmd_u_stream("", text.replace("\n", "\r\n"))))
    assert lf.env == crlf.env and len(lf.env) > 50


def test_banner_is_kept_as_messages_and_the_dump_as_env():
    banner = "\n".join(corpus(BANNER_X64).splitlines()[1:6]) + "\n"
    out = parse_capture_output(decode_cmd_output(cmd_u_stream(banner, corpus(SET_DUMP))))
    assert out.messages[-1] == "[vcvarsall.bat] Environment initialized for: 'x64'"
    assert out.errors == ()
    check_capture(out, "vcvarsall.bat")  # does not raise


def test_vs2026_debug_lines_and_chinese_text_are_not_errors():
    sample = corpus("vcvars-banner-vs2026-18.2.1-buildtools-DEBUG-v145-version-file-cl19.50.35723-x86-zh.txt")
    banner = "\n".join(sample.splitlines()[:6]) + "\n"
    out = parse_capture_output(decode_cmd_output(cmd_u_stream(banner, "VCToolsInstallDir=C:\\vc\\\n版本=中文\n")))
    assert [m for m in out.messages if m.startswith("[DEBUG:")] == [
        "[DEBUG:ext\\vcvars.bat] Found potential v145 version file: 'Microsoft.VCToolsVersion.VC.14.50.18.0.txt'",
        "[DEBUG:ext\\vcvars.bat] Testing v145 version file: 'Microsoft.VCToolsVersion.VC.14.50.18.0.txt'",
    ]
    assert out.errors == ()
    assert out.env["版本"] == "中文"


def test_usage_error_with_exit_0_is_a_failure_with_vcvars_own_words():
    usage = corpus("vcvarsall-error-no-arguments-usage.txt")
    out = parse_capture_output(decode_cmd_output(cmd_u_stream(usage, "PATH=C:\\Windows\n")))
    with pytest.raises(CaptureError) as err:
        check_capture(out, "vcvarsall.bat")
    assert "[ERROR:vcvarsall.bat] Error in script usage" in err.value.message


def test_missing_vctoolsinstalldir_is_a_failure():
    out = parse_capture_output(decode_cmd_output(cmd_u_stream("", "PATH=C:\\Windows\n")))
    with pytest.raises(CaptureError, match="VCToolsInstallDir"):
        check_capture(out, "vcvarsall.bat")


def test_eight_bit_output_of_a_child_between_utf16_lines_is_decoded():
    stream = "** banner\r\n".encode("utf-16-le") + b"vswhere said this\r\n" + cmd_u_stream("", "VCToolsInstallDir=x\n")
    out = parse_capture_output(decode_cmd_output(stream))
    assert out.messages == ("** banner", "vswhere said this")
    assert out.env == {"VCToolsInstallDir": "x"}


def test_script_quotes_the_path_and_doubles_percent():
    script = capture_script("C:\\VS 100%\\vcvarsall.bat", vcvars_args("x64", "14.39"))
    assert script.endswith("\r\n") and "\n" not in script.replace("\r\n", "")
    assert 'call "C:\\VS 100%%\\vcvarsall.bat" x64 -vcvars_ver=14.39' in script
    assert script.splitlines()[-3:] == [f"echo {BEGIN}", "set", f"echo {END}"]


def test_delta_against_the_base_prepends_vs_folders_and_sets_the_rest():
    base = base_environment({"SystemRoot": "C:\\Windows", "TEMP": "C:\\T"})
    assert base["VSCMD_SKIP_SENDTELEMETRY"] == "1"
    after = dict(base, PATH="C:\\VS\\bin;C:\\VS\\bin;" + base["PATH"] + ";C:\\extra", VCToolsVersion="14.44.35207")
    delta = diff("windows", base, after)
    ops = {(o.name, o.op): o.value for o in delta.ops}
    assert ops[("PATH", PREPEND)] == ("C:\\VS\\bin",)  # de-duplicated
    assert ops[("PATH", APPEND)] == ("C:\\extra",)
    assert ops[("VCToolsVersion", SET)] == "14.44.35207"
    assert delta.apply(base)["PATH"].split(";")[0] == "C:\\VS\\bin"


def _machine_with_cmd(tmp_path, **command) -> RecordedHost:
    from envmgr.host.recorded import load_machine

    doc = tomlkit.parse((MACHINES / "community-buildtools-cuda124.toml").read_text(encoding="utf-8"))
    entry = {
        "argv": ["cmd.exe", "/d", "/u", "/c", "C:\\envmgr-temp\\envmgr-vcvars-*.cmd"],
        "match": "glob",
        "returncode": 0,
        **command,
    }
    doc["commands"].append(entry)
    path = tmp_path / "m.toml"
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return load_machine(str(path))


def test_capture_through_a_recorded_machine(tmp_path):
    banner = "\n".join(corpus(BANNER_X64).splitlines()[1:6]) + "\n"
    text = f"{banner}{LEVEL}0\n{BEGIN}\n{corpus(SET_DUMP)}{END}\n".replace("\n", "\r\n")
    host = _machine_with_cmd(tmp_path, stdout={"text": text, "encoding": "utf-16-le"})
    base = base_environment(host.env)
    delta, out = capture_vcvars(host, "C:\\VS\\vcvarsall.bat", ("x64",), base)
    env = delta.apply(base)
    assert env["VCToolsVersion"] == "14.38.33130"
    assert out.messages[0].startswith("****")
    assert not host.exists("C:\\envmgr-temp\\envmgr-vcvars-x.cmd")


def test_capture_error_exit_0_through_a_recorded_machine(tmp_path):
    text = f"[ERROR:vcvars.bat] Toolset directory for version '14.99' was not found.\n{LEVEL}0\n{BEGIN}\nPATH=C:\\W\n{END}\n"
    host = _machine_with_cmd(tmp_path, stdout={"text": text, "encoding": "utf-16-le"})
    with pytest.raises(CaptureError, match="14.99"):
        capture_vcvars(host, "C:\\VS\\vcvarsall.bat", ("x64", "-vcvars_ver=14.99"), base_environment(host.env))


def test_capture_hang_ends_with_a_clear_error(tmp_path):
    host = _machine_with_cmd(tmp_path, stdout="", timed_out=True, returncode=-1)
    with pytest.raises(CaptureError, match="did not finish"):
        capture_vcvars(host, "C:\\VS\\vcvarsall.bat", ("x64",), base_environment(host.env), timeout=5)
