"""Property tests over the guarded readers (issue 34, deliverable 4): envmgr/files' JSON and TOML readers
and the DLL-fix undo that reads a manifest, fed generated hostile input (deep nesting, long dotted keys, long
keys, large values, NUL, odd encodings, random bytes), never raise anything but envmgr's own error
(InputFileError, exit 2) and never take longer than their budget. Runs in the Linux and the Windows-CPython
tiers alike (no POSIX-only call)."""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import time
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envmgr.errors import EnvmgrError, InputFileError
from envmgr.files import jsondoc, tomlread
from envmgr.files.nested import loads_json
from envmgr.wheels import closure

BUDGET_S = 3.0  # one read of one generated document, on a slow shared CI machine
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)

ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "cp1252")
_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)


@st.composite
def nested_json(draw) -> str:
    depth = draw(st.integers(1, 150000))
    kind = draw(st.sampled_from(["list", "object", "mixed", "unclosed"]))
    if kind == "list":
        return "[" * depth + "]" * depth
    if kind == "object":
        return '{"a":' * depth + "1" + "}" * depth
    if kind == "mixed":
        return '[{"a":' * (depth // 2) + "null" + "}]" * (depth // 2)
    return "[" * depth


@st.composite
def nested_toml(draw) -> str:
    depth = draw(st.integers(1, 30000))
    kind = draw(st.sampled_from(["array", "inline", "dotted", "header", "quoted"]))
    if kind == "array":
        return "a = " + "[" * depth + "]" * depth + "\n"
    if kind == "inline":
        return "a = " + "{b = " * depth + "1" + "}" * depth + "\n"
    if kind == "dotted":
        return "a" + ".a" * depth + " = 1\n"
    if kind == "header":
        return "[" + ".".join(["t"] * depth) + "]\nx = 1\n"
    return ".".join(['"q"'] * depth) + " = 1\n"


@st.composite
def hostile_json(draw) -> str:
    value = draw(
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | _text,
            lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_text, inner, max_size=5),
            max_leaves=30,
        )
    )
    text = json.dumps(value)  # NaN and Infinity included: Python writes them, RFC 8259 has none
    cut = draw(st.integers(0, len(text)))
    return draw(
        st.sampled_from(
            [
                text,
                text[:cut],
                text.replace(",", "\0", 1),
                text + draw(_text),
                '{"' + "k" * draw(st.integers(0, 200000)) + '": 1}',
                '{"n": 1' + "0" * draw(st.integers(0, 5000)) + "}",
                '{"n": 1e999}',
            ]
        )
    )


@st.composite
def hostile_toml(draw) -> str:
    key = draw(st.sampled_from(["a", "k" * draw(st.integers(1, 100000)), '"\\u0000"', "'nul\0'", '""']))
    value = draw(
        st.sampled_from(
            [
                '"x"',
                "1" + "0" * draw(st.integers(0, 5000)),
                "nan",
                "inf",
                "1979-05-27T07:32:00Z",
                '"' + "v" * draw(st.integers(0, 300000)) + '"',
                '"""\0"""',
                "[1, 'a']",
                "{ }",
            ]
        )
    )
    return draw(
        st.sampled_from(
            [
                f"{key} = {value}\n",
                f"[{key}]\n{key} = {value}\n",
                f"{key} = {value}\n" * 2,
                f"{key} = {value}"[: draw(st.integers(0, 50))],
            ]
        )
    )


def _encode(text: str, encoding: str) -> bytes:
    return text.encode(encoding, "replace") if encoding in ("latin-1", "cp1252") else text.encode(encoding)


def _within_budget(call, *args) -> object:
    started = time.monotonic()
    try:
        return call(*args)
    except InputFileError as exc:  # the one error a reader may raise: one line, exit 2
        assert exc.exit_code == 2 and "\n" not in exc.message and "Traceback" not in exc.message
        return exc
    finally:
        assert time.monotonic() - started < BUDGET_S, (call.__name__, len(args[0]) if args else 0)


@SETTINGS
@given(st.one_of(nested_json(), hostile_json()), st.sampled_from(ENCODINGS))
def test_json_reader_raises_only_envmgrs_error(text, encoding):
    _within_budget(jsondoc.load_json, text, "<generated>", "document", "fix it")
    _within_budget(jsondoc.load_json, _encode(text, encoding), "<generated>", "document", "fix it")
    try:
        loads_json(text)  # the lower layer's contract: ValueError only
    except ValueError:
        pass


@SETTINGS
@given(st.one_of(nested_toml(), hostile_toml()))
def test_toml_reader_raises_only_envmgrs_error(text):
    _within_budget(tomlread.load_toml, text, "<generated>", "TOML file", "fix it")


@SETTINGS
@given(
    st.one_of(nested_toml(), hostile_toml(), nested_json(), hostile_json()),
    st.sampled_from(ENCODINGS),
    st.binary(max_size=64),
)
def test_file_readers_raise_only_envmgrs_error_whatever_the_bytes(tmp_path, text, encoding, noise):
    path = tmp_path / "doc"
    for raw in (_encode(text, encoding), noise, codecs.BOM_UTF16_LE + noise, codecs.BOM_UTF8 + noise + b"\0"):
        path.write_bytes(raw)
        _within_budget(jsondoc.read_json_file, path, "document", "fix it")
        _within_budget(tomlread.read_toml_file, path, "TOML file", "fix it")


@SETTINGS
@given(
    st.one_of(
        nested_json(),
        hostile_json(),
        st.recursive(
            st.none() | st.integers() | _text,
            lambda inner: (
                st.lists(inner, max_size=4)
                | st.dictionaries(st.sampled_from(["path", "sha256", "added", "schema", "x"]), inner, max_size=4)
            ),
            max_leaves=20,
        ).map(json.dumps),
    )
)
def test_undo_of_any_manifest_raises_only_envmgrs_error_and_removes_nothing_else(tmp_path, text):
    victim = tmp_path / "keep" / "cudart64_12.dll"  # a CUDA DLL by name, with its hash, outside llama_cpp/lib
    victim.parent.mkdir(exist_ok=True)
    victim.write_bytes(b"keep me")
    sha = hashlib.sha256(b"keep me").hexdigest()
    manifest = tmp_path / "m.json"
    for doc in (text, json.dumps({"schema": 1, "added": [{"path": str(victim), "sha256": sha}, text]})):
        manifest.write_text(doc, encoding="utf-8")
        result = _within_budget(closure.undo, manifest)
        assert isinstance(result, (list, InputFileError))
        assert victim.read_bytes() == b"keep me"


def test_a_file_over_the_cap_is_refused_from_its_size_without_reading_it(tmp_path):
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as fh:
        fh.truncate(jsondoc.JSON_LIMIT + 1)  # sparse where the file system allows
    tracemalloc.start()
    try:
        with pytest.raises(InputFileError, match="too large"):
            jsondoc.read_json_file(huge, "document", "fix it")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak
    assert issubclass(InputFileError, EnvmgrError) and os.path.getsize(huge) > jsondoc.JSON_LIMIT


def test_long_keys_and_values_are_read_in_time_and_memory(tmp_path):
    """A 8 MiB value and a 1 MiB key: read whole (below the cap), within the budget, with memory a small
    multiple of the file."""
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"k" * (1 << 20): "v" * (8 << 20)}))
    tracemalloc.start()
    try:
        started = time.monotonic()
        doc = jsondoc.read_json_file(path, "document", "fix it")
        seconds = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(doc) == 1 and seconds < BUDGET_S * 2 and peak < 8 * path.stat().st_size, (seconds, peak)
