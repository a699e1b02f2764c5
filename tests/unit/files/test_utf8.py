"""envmgr/files/utf8.py: names that are not UTF-8 (PEP 383 surrogates) carried in JSON, refused in TOML."""

from __future__ import annotations

import json
import os
import sys

import pytest

from envmgr.errors import UsageError
from envmgr.files.utf8 import check_utf8, escape_surrogates, shown

# A Latin-1 home folder as Python hands it to envmgr on POSIX: b"/home/jos\xe9" decoded with surrogateescape.
LATIN1_HOME = b"/home/jos\xe9".decode("utf-8", "surrogateescape")


def test_json_text_carries_a_lone_surrogate_as_an_escape():
    text = json.dumps({"HOME": LATIN1_HOME}, ensure_ascii=False)
    out = escape_surrogates(text)
    out.encode("utf-8")  # valid UTF-8 now; the raw text was not
    assert out == '{"HOME": "/home/jos\\udce9"}'
    assert json.loads(out)["HOME"] == LATIN1_HOME
    assert escape_surrogates('{"a": "é"}') == '{"a": "é"}'


def test_shown_writes_the_bytes_that_are_not_utf8_as_hex():
    assert shown(LATIN1_HOME) == "/home/jos\\xe9"
    assert shown("C:\\Users\\José") == "C:\\Users\\José"


def test_check_utf8_names_the_variable_and_its_bytes():
    check_utf8([("PATH", "/usr/bin"), ("LANG", "fr_FR.UTF-8")], "the snapshot", "unset it")
    with pytest.raises(UsageError) as caught:
        check_utf8([("PATH", "/usr/bin"), ("HOME", LATIN1_HOME)], "the snapshot", "rename the folder")
    err = caught.value
    assert err.exit_code == 2 and err.remedy == "rename the folder"
    assert err.message.startswith("the snapshot: HOME holds bytes that are not UTF-8 (/home/jos\\xe9)")


@pytest.mark.skipif(
    sys.platform == "win32",
    reason="a name holding bytes that are not UTF-8 comes from POSIX's "
    "environment (surrogateescape); Windows' is UTF-16",
)
def test_check_utf8_names_a_variable_whose_name_is_not_utf8():
    with pytest.raises(UsageError, match=r"X\\xff holds"):
        check_utf8([(os.fsdecode(b"X\xff"), "1")], "the record", "")
