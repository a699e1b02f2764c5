"""`reg query` parsers on real output of Wine's reg.exe (tests/corpus/SOURCES-wine.md says how each
file was captured). The files are read as bytes and decoded as WineHost does (cp437, Wine's OEM page)."""

from __future__ import annotations

import pytest

from envmgr.host.base import RegValue
from envmgr.host.regquery import parse_data, parse_reg_query, parse_reg_subkeys
from tests.conftest import CORPUS

CUDA = "HKEY_LOCAL_MACHINE\\SOFTWARE\\NVIDIA Corporation\\GPU Computing Toolkit\\CUDA"
TYPES = "HKEY_LOCAL_MACHINE\\SOFTWARE\\EnvmgrTest\\Types"
SESSION_ENV = "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment"


def capture(name: str, newline: str = "\r\n") -> str:
    text = (CORPUS / name).read_bytes().decode("cp437")
    assert "\r\n" in text  # the captures are byte-exact: reg.exe writes CRLF
    return text if newline == "\r\n" else text.replace("\r\n", newline)


@pytest.fixture(params=["\r\n", "\n"], ids=["crlf", "lf"])
def newline(request):
    return request.param


def test_one_key(newline):
    keys = parse_reg_query(capture("wine-reg-query-cuda-v13.2.txt", newline))
    assert list(keys) == [f"{CUDA}\\v13.2"]
    assert keys[f"{CUDA}\\v13.2"] == {
        "64BitInstalled": RegValue("64BitInstalled", "REG_DWORD", 1),
        "InstallDir": RegValue(
            "InstallDir", "REG_SZ", "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v13.2\\"
        ),
    }


def test_every_value_type_with_s(newline):
    keys = parse_reg_query(capture("wine-reg-query-s-all-value-types.txt", newline))
    assert list(keys) == [TYPES, f"{TYPES}\\Sub Key", f"{TYPES}\\Sub Key\\Deeper"]
    v = keys[TYPES]
    assert v[""] == RegValue("", "REG_SZ", "default val")  # (Default) is "" as in winreg
    assert v["Bin"].data == bytes.fromhex("4d5a90ff")
    assert v["Dw"] == RegValue("Dw", "REG_DWORD", 42)
    assert v["DwMax"].data == 0xFFFFFFFF
    assert v["EmptyBin"].data == b""
    assert v["EmptySz"] == RegValue("EmptySz", "REG_SZ", "")
    assert v["Ex"] == RegValue("Ex", "REG_EXPAND_SZ", "%SystemRoot%\\x;%CUDA_PATH%")  # unexpanded
    assert v["Multi"].data == ("a", "b c", "C:\\x y")
    assert v["Name With  Spaces"].data == "value  with    four spaces"
    # Wine 8's reg.exe prints REG_QWORD as "(null)": kept as text, typed REG_QWORD.
    assert v["Qw"] == RegValue("Qw", "REG_QWORD", "(null)")
    assert keys[f"{TYPES}\\Sub Key"] == {"X": RegValue("X", "REG_SZ", "y")}
    assert keys[f"{TYPES}\\Sub Key\\Deeper"] == {"": RegValue("", "REG_SZ", "")}


def test_s_over_versions_keeps_the_dword_installdir(newline):
    keys = parse_reg_query(capture("wine-reg-query-s-cuda-two-versions-dword-installdir.txt", newline))
    assert keys[f"{CUDA}\\v12.9"] == {"InstallDir": RegValue("InstallDir", "REG_DWORD", 1)}
    assert keys[f"{CUDA}\\v13.2"]["InstallDir"].type == "REG_SZ"


def test_subkeys_of_a_key_without_values(newline):
    text = capture("wine-reg-query-cuda-parent-subkeys.txt", newline)
    assert parse_reg_subkeys(text, "HKLM\\SOFTWARE\\NVIDIA Corporation\\GPU Computing Toolkit\\CUDA") == [
        "v12.9",
        "v13.2",
    ]
    # compared case-insensitively, as Windows does; the key's own header line is not a subkey
    assert parse_reg_subkeys(text, CUDA.lower()) == ["v12.9", "v13.2"]
    # Wine prints no header line for a key without values: only the subkeys' lines.
    assert parse_reg_query(text) == {f"{CUDA}\\v12.9": {}, f"{CUDA}\\v13.2": {}}


def test_values_then_subkeys_without_s(newline):
    text = capture("wine-reg-query-values-then-subkeys.txt", newline)
    assert parse_reg_subkeys(text, TYPES) == ["Sub Key"]
    assert len(parse_reg_query(text)[TYPES]) == 10


def test_subkeys_are_direct_children_only(newline):
    text = capture("wine-reg-query-s-all-value-types.txt", newline)
    assert parse_reg_subkeys(text, TYPES) == ["Sub Key"]
    assert parse_reg_subkeys(text, f"{TYPES}\\Sub Key") == ["Deeper"]


def test_session_manager_environment():
    env = parse_reg_query(capture("wine-reg-query-session-manager-environment.txt"))[SESSION_ENV]
    assert env["PATH"] == RegValue(
        "PATH",
        "REG_EXPAND_SZ",
        "%SystemRoot%\\system32;%SystemRoot%;"
        "%SystemRoot%\\system32\\wbem;%SystemRoot%\\system32\\WindowsPowershell\\v1.0",
    )
    assert env["PATHEXT"].data == ".com;.exe;.bat;.cmd;.vbs;.vbe;.js;.jse;.wsf;.wsh"
    assert env["windir"].type == "REG_EXPAND_SZ"
    assert env["PROCESSOR_IDENTIFIER"].data == "AMD64 Family 26 Model 2 Stepping 1, AuthenticAMD"


def test_missing_key_is_no_key():
    text = capture("wine-reg-query-missing-key.txt")
    assert parse_reg_query(text) == {}
    assert parse_reg_subkeys(text, "HKLM\\SOFTWARE\\EnvmgrTest\\Nope") == []


def test_oem_code_page_data():
    keys = parse_reg_query(capture("wine-reg-query-non-ascii-oem-cp437.txt"))
    assert keys["HKEY_LOCAL_MACHINE\\SOFTWARE\\EnvmgrTest\\Uni"]["P"].data == "C:\\Users\\José\\?\\??"


def test_surrounding_blank_lines_and_abbreviated_hive():
    text = "\n\n\nHKLM\\Software\\X\\\n    A    REG_SZ    b\n\n\n"
    assert parse_reg_query(text) == {"HKEY_LOCAL_MACHINE\\Software\\X": {"A": RegValue("A", "REG_SZ", "b")}}


def test_windows_only_spellings():
    # Real Windows: "(value not set)" for an unset default; `End of search` after /f searches.
    text = (
        "\r\nHKEY_CURRENT_USER\\Environment\r\n    (Default)    REG_SZ    (value not set)\r\n"
        "    TEMP    REG_EXPAND_SZ    %USERPROFILE%\\AppData\\Local\\Temp\r\n\r\nEnd of search: 1 match(es) found.\r\n"
    )
    assert parse_reg_query(text) == {
        "HKEY_CURRENT_USER\\Environment": {
            "TEMP": RegValue("TEMP", "REG_EXPAND_SZ", "%USERPROFILE%\\AppData\\Local\\Temp")
        }
    }


def test_a_value_line_whose_trailing_separator_was_trimmed():
    assert parse_reg_query("HKLM\\X\n    E    REG_SZ\n")["HKEY_LOCAL_MACHINE\\X"]["E"].data == ""


@pytest.mark.parametrize(
    ("kind", "raw", "data"),
    [
        ("REG_DWORD", "0x0", 0),
        ("REG_QWORD", "0x123456789abcdef", 0x123456789ABCDEF),
        ("REG_DWORD", "garbage", "garbage"),
        ("REG_MULTI_SZ", "", ()),
        ("REG_MULTI_SZ", "only", ("only",)),
        ("REG_BINARY", "zz", "zz"),
        ("REG_NONE", "", ""),
    ],
)
def test_parse_data(kind, raw, data):
    assert parse_data(kind, raw) == data
