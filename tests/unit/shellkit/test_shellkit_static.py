"""dotenv and GitHub Actions files: exact text, round trips through readers, and the shared API."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings, strategies as st

from envmgr.snapshot.envdelta import APPEND, PREPEND, SET, UNSET, EnvDelta, VarOp
from envmgr.shellkit import FORMATS, UnrepresentableValue, encoding, newline, render, render_github, write_script
from tests.conftest import need_module

SPECIAL = list(" '\"&|^%!<>()$`=;:\\*?~#{}[],\t\n") + ["é", "中文", "😀", "${X}", "\\\\", "<<EOF", "\\n", "=="]
VALUES = st.lists(
    st.one_of(st.sampled_from(SPECIAL), st.characters(codec="utf-8", exclude_characters="\0\r")), max_size=12
).map("".join)
NAMES = st.from_regex(r"EMT_[A-Za-z0-9_]{1,6}", fullmatch=True)


def parse_github_env(text: str) -> dict[str, str]:
    """GitHub's documented rules: `NAME=value`, or `NAME<<DELIM`, lines, `DELIM` (runner: '=' wins
    when it comes before '<<')."""
    lines, out, i = text.split("\n"), {}, 0
    assert lines[-1] == ""
    lines.pop()
    while i < len(lines):
        line = lines[i]
        eq, hd = line.find("="), line.find("<<")
        if eq >= 0 and (hd < 0 or eq < hd):
            out[line[:eq]] = line[eq + 1 :]
            i += 1
            continue
        name, delim = line[:hd], line[hd + 2 :]
        end = lines.index(delim, i + 1)
        out[name] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return out


@settings(max_examples=300, deadline=None)
@given(values=st.dictionaries(NAMES, VALUES, min_size=1, max_size=5))
def test_github_env_round_trip(values):
    delta = EnvDelta("linux", tuple(VarOp(k, SET, v) for k, v in values.items()))
    env_text, path_text = render_github(delta, {})
    assert path_text == "" and parse_github_env(env_text) == values


def test_github_exact_text_and_path_file():
    delta = EnvDelta(
        "windows",
        (
            VarOp("A", SET, "x=y<<z"),
            VarOp("M", SET, "l1\nl2"),
            VarOp("Path", PREPEND, ("C:\\a", "C:\\b")),
            VarOp("PATH", PREPEND, ("C:\\c",)),
            VarOp("INCLUDE", APPEND, ("C:\\i",)),
        ),
    )
    env_text, path_text = render_github(delta, {"INCLUDE": "C:\\old"})
    d = env_text.split("\n")[1].split("<<")[1]
    assert env_text == f"A=x=y<<z\nM<<{d}\nl1\nl2\n{d}\nINCLUDE=C:\\old;C:\\i\n"
    assert d.startswith("ghadelimiter_") and len(d) > 20
    # The runner puts the last line first: final PATH is C:\c;C:\a;C:\b;<old>.
    assert path_text == "C:\\b\nC:\\a\nC:\\c\n"
    combined = render(delta, "github", {"INCLUDE": "C:\\old"})
    assert "$GITHUB_PATH" in combined and combined.endswith("# >>> GITHUB_PATH\n" + path_text)


def test_github_delimiter_avoids_value():
    from envmgr.shellkit.github import delimiter

    v = "a\n" + delimiter("x")
    assert delimiter(v) not in v


@pytest.mark.parametrize(
    "op",
    [
        VarOp("A", SET, "a\rb"),
        VarOp("A", UNSET),
        VarOp("NODE_OPTIONS", SET, "x"),
        VarOp("A<<B", SET, "x"),
        VarOp("INCLUDE", APPEND, ("x",)),
    ],
)
def test_github_refuses(op):
    with pytest.raises(UnrepresentableValue):
        render_github(EnvDelta("linux", (op,)), None)


@settings(max_examples=300, deadline=None)
@given(values=st.dictionaries(NAMES, VALUES, min_size=1, max_size=5))
def test_dotenv_round_trip_python_dotenv(values):
    dotenv = need_module("dotenv")
    delta = EnvDelta("linux", tuple(VarOp(k, SET, v) for k, v in values.items()))
    try:
        text = render(delta, "dotenv")
    except UnrepresentableValue as err:
        value = values[err.name]
        assert ("$" in value and err.char in ("'", "\n", "\\", "$")) or value.endswith("\\")
        return
    assert dict(dotenv.dotenv_values(stream=io.StringIO(text))) == values


def test_dotenv_exact_text():
    delta = EnvDelta(
        "linux",
        (
            VarOp("A", SET, 'C:\\a "b"\nc'),
            VarOp("B", SET, "x$y"),
            VarOp("R", SET, "C:\\"),
            VarOp("PATH", PREPEND, ("/a",)),
            VarOp("E", APPEND, ("/e",)),
        ),
    )
    assert render(delta, "dotenv", {"PATH": "/usr/bin"}) == (
        'A="C:\\\\a \\"b\\"\\nc"\nB=\'x$y\'\nR=C:\\\nPATH="/a:/usr/bin"\nE="/e"\n'
    )


@pytest.mark.parametrize(
    "op", [VarOp("A", UNSET), VarOp("A", SET, "it's $x"), VarOp("A B", SET, "x"), VarOp("PATH", PREPEND, ("/a",))]
)
def test_dotenv_refuses(op):
    with pytest.raises(UnrepresentableValue) as err:
        render(EnvDelta("linux", (op,)), "dotenv")
    assert err.value.exit_code == 2 and "dotenv" in err.value.message and err.value.remedy


def test_api_constants_and_write_script(tmp_path):
    assert FORMATS == ("sh", "fish", "ps1", "cmd", "dotenv", "github")
    assert [newline(f) for f in FORMATS] == ["\n", "\n", "\r\n", "\r\n", "\n", "\n"]
    assert encoding("ps1") == "utf-8-sig" and encoding("cmd") == encoding("sh") == "utf-8"
    delta = EnvDelta("windows", (VarOp("A", SET, "é\nx"),))
    text = render(delta, "ps1")
    write_script(tmp_path / "env.ps1", text, "ps1")
    raw = (tmp_path / "env.ps1").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and b"\r\n" in raw and "'é\nx'".encode() in raw


def test_error_message_names_variable_char_and_format():
    with pytest.raises(UnrepresentableValue) as err:
        render(EnvDelta("windows", (VarOp("CUDA_X", SET, "a\nb"),)), "cmd")
    msg = err.value.message
    assert "cmd" in msg and "'CUDA_X'" in msg and "U+000A" in msg and "ps1" in err.value.remedy


def test_remove_ops_become_a_set_of_the_filtered_current_value():
    from envmgr.snapshot.envdelta import PREPEND, REMOVE, EnvDelta, VarOp
    from envmgr.shellkit import render, resolve_removals

    delta = EnvDelta(
        "windows", (VarOp("PATH", REMOVE, ("C:\\CUDA\\v11.8\\bin",)), VarOp("PATH", PREPEND, ("C:\\CUDA\\v12.4\\bin",)))
    )
    env = {"Path": "C:\\CUDA\\v11.8\\bin\\;C:\\Windows"}
    resolved = resolve_removals(delta, env)
    assert resolved.ops[0] == VarOp("PATH", "set", "C:\\Windows")
    assert resolved.ops[1].op == PREPEND
    assert "v11.8" not in render(delta, "ps1", env)
    untouched = {"PATH": "C:\\Windows"}
    assert [op.op for op in resolve_removals(delta, untouched).ops] == [PREPEND]
