"""Snapshots: TOML round trip (property-tested), bad files, path checks; EnvDelta semantics."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from envmgr.snapshot.envdelta import APPEND, PREPEND, REMOVE, SET, UNSET, EnvDelta, VarOp, combine
from envmgr.errors import InputFileError
from envmgr.snapshot.form import Snapshot, from_toml, load, missing_paths, to_toml

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_()]{0,12}", fullmatch=True)
values = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)
entries = st.lists(
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00;:"), min_size=1, max_size=20).filter(
        lambda e: e.strip() and not e.endswith(("\\", "/"))
    ),
    min_size=1,
    max_size=4,
    unique_by=lambda e: e.lower(),
)


@st.composite
def deltas(draw):
    platform = draw(st.sampled_from(["windows", "linux"]))
    ops = []
    for name in draw(st.lists(names, max_size=6, unique_by=str.upper)):
        kind = draw(st.sampled_from([SET, UNSET, "list"]))
        if kind == SET:
            ops.append(VarOp(name, SET, draw(values)))
        elif kind == UNSET:
            ops.append(VarOp(name, UNSET))
        else:
            # what compose() produces (envdelta.combine): one list op of each kind, in the order
            # remove, prepend, append, and nothing removed that is also added
            kinds = draw(st.lists(st.sampled_from([REMOVE, PREPEND, APPEND]), min_size=1, max_size=3, unique=True))
            added: set[str] = set()
            for op in sorted(kinds, key=[REMOVE, PREPEND, APPEND].index)[::-1]:
                items = (
                    tuple(e for e in draw(entries) if e.lower() not in added) if op == REMOVE else tuple(draw(entries))
                )
                added |= {e.lower() for e in items}
                if items:
                    ops.append(VarOp(name, op, items))
            ops[len(ops) - sum(1 for o in ops if o.name == name) :] = sorted(
                [o for o in ops if o.name == name], key=lambda o: [REMOVE, PREPEND, APPEND].index(o.op)
            )
    return EnvDelta(platform, tuple(ops))


@settings(max_examples=150, deadline=None)
@given(deltas(), st.dictionaries(names, values, max_size=5))
def test_toml_round_trip_gives_exactly_the_same_environment(delta, env):
    snap = Snapshot(delta.platform, delta, (("cuda", "12.4.99"),), (("platform", delta.platform),))
    back = from_toml(to_toml(snap))
    assert back.delta.apply(env) == delta.apply(env)
    assert back.summary == snap.summary and back.identity == snap.identity


def test_apply_never_stacks_and_removes_other_toolkits():
    delta = EnvDelta(
        "windows", (VarOp("PATH", REMOVE, ("C:\\CUDA\\v11.8\\bin",)), VarOp("PATH", PREPEND, ("C:\\CUDA\\v12.4\\bin",)))
    )
    env = {"Path": "C:\\CUDA\\v11.8\\bin;C:\\Windows;c:\\cuda\\v12.4\\bin\\"}
    once = delta.apply(env)
    assert once == {"PATH": "C:\\CUDA\\v12.4\\bin;C:\\Windows"}
    assert delta.apply(once) == once


def test_combine_puts_later_prepends_first_and_keeps_one_op_per_kind():
    a = EnvDelta("linux", (VarOp("PATH", PREPEND, ("/vs",)), VarOp("X", SET, "1")))
    b = EnvDelta("linux", (VarOp("PATH", REMOVE, ("/old",)), VarOp("PATH", PREPEND, ("/cuda",)), VarOp("X", SET, "2")))
    ops = combine("linux", a, b).ops
    assert ops == (VarOp("PATH", REMOVE, ("/old",)), VarOp("PATH", PREPEND, ("/cuda", "/vs")), VarOp("X", SET, "2"))


def test_toml_is_readable_with_a_header_and_arrays():
    delta = EnvDelta(
        "linux",
        (VarOp("CUDA_HOME", SET, "/usr/local/cuda-13.0"), VarOp("PATH", PREPEND, ("/usr/local/cuda-13.0/bin",))),
    )
    text = to_toml(Snapshot("linux", delta, (("cuda", "13.0.88"),)))
    assert text.startswith("# envmgr environment snapshot (linux)\n# CUDA 13.0.88\n")
    assert 'CUDA_HOME = "/usr/local/cuda-13.0"' in text
    assert '[env.PATH]\nprepend = ["/usr/local/cuda-13.0/bin"]' in text


def test_malformed_file_names_line_and_column(tmp_path):
    bad = tmp_path / "env.toml"
    bad.write_text('schema = 1\nplatform = "linux"\n[env]\nX = "unterminated\n', encoding="utf-8")
    with pytest.raises(InputFileError) as err:
        load(str(bad))
    assert str(bad) in err.value.message and "line 4" in err.value.message and "column" in err.value.message


def test_unknown_schema_says_which_versions_are_read():
    with pytest.raises(InputFileError, match=r"schema 7 .*reads 1"):
        from_toml('schema = 7\nplatform = "linux"\n')


def test_unknown_key_in_a_variable_table_lists_allowed_keys():
    with pytest.raises(InputFileError, match="allowed: append, prepend, remove, set, unset"):
        from_toml('schema = 1\nplatform = "linux"\n[env.PATH]\nprepnd = ["/x"]\n')


def test_missing_paths_lists_folders_that_do_not_exist():
    delta = EnvDelta(
        "linux",
        (
            VarOp("CUDA_HOME", SET, "/nope/cuda"),
            VarOp("PATH", PREPEND, ("/usr", "/nope/bin")),
            VarOp("CMAKE_ARGS", SET, "-DGGML_CUDA=on"),
        ),
    )
    assert missing_paths(Snapshot("linux", delta), lambda p: p == "/usr") == ["/nope/cuda", "/nope/bin"]


@pytest.mark.parametrize(
    "platform,entry,refused",
    [
        ("windows", "C:\\\\a;C:\\\\b", True),
        ("windows", "C:\\\\CUDA\\\\bin", False),
        ("linux", "/tmp/x:y", True),
        ("linux", "/tmp/x;y", False),
    ],
)
def test_a_list_entry_with_the_path_separator_is_refused_where_it_is_read(platform, entry, refused):
    """sh, fish, ps1 and `run` join the entries with the separator: one entry holding it becomes two (M3).
    Pure (the platform is the file's): runs in the Windows-CPython tier too."""
    text = f'schema = 1\nplatform = "{platform}"\n[env.PATH]\nprepend = ["{entry}"]\n'
    if not refused:
        assert from_toml(text, "s.toml").delta.ops[0].entries == (entry.replace("\\\\", "\\"),)
        return
    with pytest.raises(InputFileError) as err:
        from_toml(text, "s.toml")
    sep = ";" if platform == "windows" else ":"
    assert f"holds '{sep}', the path-list separator" in err.value.message
    assert err.value.message.startswith("s.toml: 'env.PATH.prepend[0]'")
