"""tomlfast.loads gives tomllib's answer, or tomllib's error, on every document (issue 14).

Recorded machines and generated documents (tomlkit's output, and text built from tricky pieces:
every string form, escapes JSON lacks, stray quotes, control characters, duplicate keys in two
spellings) must give what tomllib gives; the recorded machines must take the fast way.
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the workflow and the Windows-CPython tier run it
    import tomli as tomllib

import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envmgr.files import tomlfast

MACHINES = sorted((Path(__file__).resolve().parents[2] / "machines").rglob("*.toml"))


def _answer(loads, text):
    try:
        return "ok", loads(text)
    except tomllib.TOMLDecodeError as exc:
        return "error", str(exc)


def _same(text):
    assert _answer(tomlfast.loads, text) == _answer(tomllib.loads, text), text


@pytest.mark.parametrize("machine", MACHINES, ids=lambda p: p.stem)
def test_recorded_machines_parse_the_fast_way_to_tomllibs_answer(machine, monkeypatch):
    text = machine.read_text(encoding="utf-8")
    seen = []
    monkeypatch.setattr(tomlfast, "tomllib", _Spy(seen))
    assert tomlfast.loads(text) == tomllib.loads(text)
    assert seen == [True]  # parsed once, with placeholders: no second parse of the original


class _Spy:
    TOMLDecodeError = tomllib.TOMLDecodeError

    def __init__(self, seen):
        self.seen = seen

    def loads(self, text):
        self.seen.append(tomlfast._MARK in text)
        return tomllib.loads(text)


@pytest.mark.parametrize(
    "text",
    [
        'a = "x"\n"a" = "y"\n',  # one key in two spellings: tomllib's error
        "\"a\\\\b\" = 1\n'a\\b' = 2\n",
        '[t]\nx = 1\n["t"]\ny = 2\n',
        '[t]\n["t".u]\nx = "1"\n',  # legal: the fast way gives way to tomllib
        '[r."K\\\\1".v]\nx = "a"\n[r."K\\\\1".w]\ny = "b"\n',
        'a = """\nx""y\\"z\\\\"""\nb = """\n\n q"""\n',
        "a = \"\"\"x\"\"\"\"\"\nb = '''y'''''\n",
        'a = "tab\there"\nb = "\\u00e9\\U0001F600"\nc = """line \\\n   joined"""\n',
        'a = "\\e"\nb = "\\x41"\n',
        'a = "x\x01"\n',
        'a = "x\x7f"\n',
        'a = """x\ry"""\n',
        'a = "x\r\n"\n',
        'a = "x" # "y" \'z\'\nb = \'"\' # c\n',
        '# "\na = 1\n',
        'a = "unterminated\nb = "x"\n',
        'a = \'x\nb = "y"\n',
        'a = x"y"\n',
        'a = """x\n',
        'a = ["x", "y\\\\z", {b = "c"}]\n',
        'a = {"b" = "1", b = "2"}\n',
        'k = "\ue000"\n',
        'a = "x"\r\nb = """\r\ny\r\n"""\r\n',
        'a = "\\"\\\\\\b\\t\\n\\f\\r"\n',
    ],
)
def test_tricky_documents(text):
    _same(text)


PIECES = list("ab\"'\\#\n\r\t =[].,{}xyzé\ue001") + [
    "\\n",
    '\\"',
    "\\\\",
    "\\u00e9",
    "\\U0001F600",
    '"""',
    "'''",
    "\\\n",
    "\x01",
    "\x7f",
    "\\t",
    "\\x41",
    "\\e",
]
KEYS = ["k", '"k"', "'k'", '"a\\\\b"', "'a\\b'", "x.y", '"x".y', "[t]\n", "[[a]]\n", '["t"]\n', '[t."u"]\n']


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(
        st.tuples(
            st.sampled_from(KEYS),
            st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
            st.sampled_from(['"', "'", '"""', "'''", ""]),
        ),
        max_size=6,
    )
)
def test_documents_from_pieces(parts):
    _same("".join(key if key.endswith("\n") else f"{key} = {quote}{body}{quote}\n" for key, body, quote in parts))


TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20) | st.text(
    alphabet="ab\"'\\\n\r\t\x01#=", max_size=20
)


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.dictionaries(
        TEXT, st.one_of(TEXT, st.lists(TEXT, max_size=3), st.dictionaries(TEXT, TEXT, max_size=3)), max_size=5
    ),
    st.booleans(),
)
def test_tomlkit_documents(data, multiline):
    doc = tomlkit.document()
    for key, value in data.items():
        doc[key] = tomlkit.string(value, multiline="\r" not in value) if multiline and isinstance(value, str) else value
    try:
        text = tomlkit.dumps(doc)
    except Exception:  # noqa: BLE001 - a value tomlkit cannot write is not ours to test
        return
    _same(text)
