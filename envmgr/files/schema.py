"""The shape of every file envmgr reads (snapshot, recipe, machine record), checked in one place.

A bad field is one InputFileError (exit 2) naming the file, the field and the type expected, in
TOML's words ("a string", "a list of strings"), never Python's. Hand-written, not jsonschema or
pydantic: importing either costs more than the whole start-up budget of a cached `export`, and
these three schemas need only tables, lists, strings, integers, booleans and a few fixed values.
"""

from __future__ import annotations

import re

# No `typing` import (annotations stay strings): from_toml checks every cached snapshot on the
# `export` fast path, and typing alone costs several milliseconds there.
from envmgr.errors import InputFileError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see above)
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any


class Spec:
    expected = "a value"

    def problem(self, value: Any, where: str) -> tuple[str, str] | None:
        """(field, expected) of the first bad value, or None."""
        return None if self.accepts(value) else (where, self.expected)

    def accepts(self, value: Any) -> bool:
        return True


class Str(Spec):
    expected = "a string"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str)


class Int(Spec):
    expected = "an integer"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)


class Bool(Spec):
    expected = "true or false"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, bool)


class Hex(Spec):
    expected = "a string of hex digits"

    def accepts(self, value: Any) -> bool:
        if not isinstance(value, str):
            return False
        try:
            bytes.fromhex(value)
        except ValueError:
            return False
        return True


class Literal(Spec):
    def __init__(self, *values: Any) -> None:
        self.values = values
        self.expected = " or ".join(_toml(v) for v in values)

    def accepts(self, value: Any) -> bool:
        return any(type(value) is type(v) and value == v for v in self.values)


class List(Spec):
    def __init__(self, item: Spec, *, non_empty: bool = False) -> None:
        self.item, self.non_empty = item, non_empty
        noun = {"a string": "strings", "an integer": "integers"}.get(item.expected, f"items that are {item.expected}")
        self.expected = f"a {'non-empty ' if non_empty else ''}list of {noun}"

    def problem(self, value: Any, where: str) -> tuple[str, str] | None:
        if not isinstance(value, list) or (self.non_empty and not value):
            return where, self.expected
        for i, item in enumerate(value):
            found = self.item.problem(item, f"{where}[{i}]")
            if found:
                return found
        return None


class Map(Spec):
    """A table whose keys are names chosen by the user (variables, paths, registry keys)."""

    def __init__(self, value: Spec) -> None:
        self.value = value
        self.expected = "a table"

    def problem(self, value: Any, where: str) -> tuple[str, str] | None:
        if not isinstance(value, dict):
            return where, self.expected
        for key, item in value.items():
            # The key is named only when its value is wrong: naming each of a large record's ~2,000
            # files took longer than checking them (issue 14).
            if self.value.problem(item, where) is not None:
                return self.value.problem(item, _join(where, key))
        return None


class Table(Spec):
    """A table with known keys; unknown keys are refused unless `open`."""

    def __init__(self, fields: Mapping[str, Spec], *, required: tuple[str, ...] = (), open: bool = False) -> None:
        self.fields, self.required, self.open = dict(fields), required, open
        self.expected = "a table"

    def problem(self, value: Any, where: str) -> tuple[str, str] | None:
        if not isinstance(value, dict):
            return where, self.expected
        for key in self.required:
            if key not in value:
                return _join(where, key), f"present ({self.fields[key].expected})"
        for key, item in value.items():
            spec = self.fields.get(key)
            if spec is None:
                if self.open:
                    continue
                return _join(where, key), "absent: allowed: " + ", ".join(sorted(self.fields))
            found = spec.problem(item, _join(where, key))
            if found:
                return found
        return None


class OneOf(Spec):
    def __init__(self, *options: Spec, expected: str = "") -> None:
        self.options = options
        self.expected = expected or " or ".join(o.expected for o in options)

    def problem(self, value: Any, where: str) -> tuple[str, str] | None:
        kinds = [o for o in self.options if _same_kind(o, value)]
        if len(kinds) == 1 and not isinstance(kinds[0], (Str, Int, Bool, Literal, Hex)):
            return kinds[0].problem(value, where)  # e.g. the table form: say which field inside is wrong
        if any(o.problem(value, where) is None for o in self.options):
            return None
        return where, self.expected


def _same_kind(spec: Spec, value: Any) -> bool:
    if isinstance(spec, (Table, Map)):
        return isinstance(value, dict)
    if isinstance(spec, List):
        return isinstance(value, list)
    return False


def _join(where: str, key: str) -> str:
    bare = key.replace("_", "").replace("-", "").isalnum() and key.isascii()
    part = key if bare else '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{where}.{part}" if where else part


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def describe(value: Any) -> str:
    """A value in TOML's words: `a string ("yes")`, `an integer (5)`, `a table`."""
    if isinstance(value, bool):
        return f"a boolean ({_toml(value)})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f'a string ("{shown}")' if value else "an empty string"
    if isinstance(value, list):
        return f"a list of {len(value)} item(s)" if value else "an empty list"
    if isinstance(value, dict):
        return "a table"
    return "a date or time"


def _lookup(data: Any, where: str) -> Any:
    """The value at a path check() reported (for the 'not X' part of the message)."""

    value = data
    for part in re.findall(r'"(?:[^"\\]|\\.)*"|\[\d+\]|[^.\[]+', where):
        if part.startswith("["):
            value = value[int(part[1:-1])]
        else:
            key = part[1:-1].replace('\\"', '"').replace("\\\\", "\\") if part.startswith('"') else part
            if not isinstance(value, dict) or key not in value:
                return _MISSING
            value = value[key]
    return value


_MISSING = object()


def check(data: dict[str, Any], spec: Spec, origin: str, what: str, remedy: str) -> None:
    """Raise one InputFileError for the first field of `data` that does not fit `spec`."""
    if not data:
        raise InputFileError(f"{origin}: the {what} is empty", remedy)
    found = spec.problem(data, "")
    if found is None:
        return
    where, expected = found
    value = _lookup(data, where)
    if expected.startswith("absent: "):
        raise InputFileError(f"{origin}: unknown key '{where}'; {expected.removeprefix('absent: ')}", remedy)
    if value is _MISSING:
        raise InputFileError(
            f"{origin}: '{where}' is missing; it must be {expected.removeprefix('present (')[:-1]}", remedy
        )
    raise InputFileError(f"{origin}: '{where}' must be {expected}, not {describe(value)}", remedy)


def check_version(data: dict[str, Any], reads: tuple[int, ...], origin: str, what: str, remedy: str) -> None:
    """Before the shape: a newer file may have fields this envmgr does not know."""
    if not data:
        raise InputFileError(f"{origin}: the {what} is empty", remedy)
    if "schema" not in data:
        raise InputFileError(f"{origin}: the {what} has no 'schema' key", f"add schema = {reads[-1]} at the top")
    schema = data["schema"]
    if schema not in reads or isinstance(schema, bool):
        shown = schema if Int().accepts(schema) else describe(schema)
        raise InputFileError(
            f"{origin}: {what} schema {shown} is not one this envmgr reads (it reads {', '.join(map(str, reads))})",
            remedy,
        )


# ---- the three file kinds ---------------------------------------------------------------------
_STR_LIST = List(Str())

SNAPSHOT_VAR = OneOf(
    Str(),
    Table({"set": Str(), "unset": Literal(True), "prepend": _STR_LIST, "append": _STR_LIST, "remove": _STR_LIST}),
    expected="a string or a table with set, unset = true, or prepend/append/remove lists of strings",
)
SNAPSHOT = Table(
    {
        "schema": Int(),
        "platform": Literal("windows", "linux"),
        "envmgr": Str(),
        "created": Str(),
        "notes": _STR_LIST,
        "summary": Map(Str()),
        "identity": Map(Str()),
        "env": Map(SNAPSHOT_VAR),
    },
    required=("schema", "platform"),
)

RECIPE = Table(
    {
        "schema": Int(),
        "name": Str(),
        "description": Str(),
        "kind": Literal("cmake", "torch-extension", "prebuilt-lib"),
        "package": Str(),
        "cmake_args": _STR_LIST,
        "cuda_architectures": Bool(),
        "generator": Str(),
        "short_temp": Bool(),
        "drop_env": _STR_LIST,
        "env": Map(Str()),
        "params": Map(Str()),
        "required_files": Map(_STR_LIST),
        "architectures_env": Str(),
        "architectures_define": Str(),
    },
    required=("schema", "kind"),
)

_CONTENT_TABLE = {"text": Str(), "from": Str(), "hex": Hex(), "size": Int()}
_CONTENT = OneOf(Str(), Table(_CONTENT_TABLE), expected="a string or a table with text, from, hex or size")
_REG_VALUE = OneOf(
    Str(),
    Table(
        {
            "type": Literal("REG_SZ", "REG_EXPAND_SZ", "REG_MULTI_SZ", "REG_DWORD", "REG_QWORD", "REG_BINARY"),
            "value": OneOf(Str(), Int(), _STR_LIST, List(Int())),
        },
        required=("type", "value"),
    ),
    expected='a string or a table { type = "REG_SZ", value = "..." }',
)
MACHINE = Table(
    {
        "schema": Int(),
        "platform": Literal("windows", "linux"),
        "meta": Table({}, open=True),
        "python": Table({"executable": Str(), "version": Str(), "site_packages": _STR_LIST}, required=("executable",)),
        "env": Map(Str()),
        "dirs": _STR_LIST,
        "links": Map(Str()),
        "files": Map(_CONTENT),
        "registry": Map(Map(_REG_VALUE)),
        "commands": List(
            Table(
                {
                    "argv": List(Str(), non_empty=True),
                    "returncode": Int(),
                    "stderr": Str(),
                    "timed_out": Bool(),
                    "start_error": Str(),
                    "match": Literal("exact", "glob"),
                    "stdout": OneOf(
                        Str(),
                        Table({**_CONTENT_TABLE, "encoding": Str()}),
                        expected="a string or a table with text, from, hex or size (and encoding)",
                    ),
                },
                required=("argv",),
            )
        ),
    },
    required=("schema",),
)


# ---- environment variables: checked once, where a snapshot or recipe is read --------------------
# A name no environment can hold (empty, '=', NUL, a control character) and a value with NUL would make
# `run` and `install` end in Python's ValueError and `export` refuse in one format but not another, so
# the readers refuse them, and every command refuses the same file the same way (audit C6). So are
# two operations on one variable (only one would be applied: M8) and a list entry holding the path-list
# separator (the shells and `run` would split it in two: M3).
_BAD_NAME = re.compile(r"[\x00-\x1f\x7f=]")
_PATH_SEPARATOR = {"linux": ":", "windows": ";"}
_ONE_OP = ("set", "unset")


def _shown(key: str) -> str:
    """A key as TOML writes it, control characters escaped: safe on one line of a terminal."""
    body = "".join(f"\\u{ord(c):04X}" if c < " " or c == "\x7f" else c for c in key)
    return body if body and _join("", key) == key else '"' + body.replace('"', '\\"') + '"'


def _char(ch: str) -> str:
    names = {"\0": "NUL", "\n": "LINE FEED", "\r": "CARRIAGE RETURN", "\t": "TAB", "=": "EQUALS SIGN"}
    return f"U+{ord(ch):04X} ({names.get(ch, 'a control character')})"


def _name_problem(name: str) -> str | None:
    if not name:
        return "an empty name"
    bad = _BAD_NAME.search(name)
    return None if bad is None else f"a variable name cannot hold {_char(bad.group())}"


def _value_problems(name: str, item: Any, separator: str | None) -> Iterator[tuple[str, str]]:
    """(field, what is wrong) for a snapshot [env] entry or a recipe env value."""
    if isinstance(item, str):
        if "\0" in item:
            yield name, f"a value cannot hold {_char(chr(0))}"
        return
    ops = [k for k in item if k != "unset" or item[k] is True]
    if len(ops) > 1 and any(k in _ONE_OP for k in ops):
        yield name, f"it has both {' and '.join(ops)}: give set, unset = true, or prepend/append/remove lists"
    if "\0" in item.get("set", ""):
        yield f"{name}.set", f"a value cannot hold {_char(chr(0))}"
    for op in ("prepend", "append", "remove"):
        for i, entry in enumerate(item.get(op, ())):
            if "\0" in entry:
                yield f"{name}.{op}[{i}]", f"a value cannot hold {_char(chr(0))}"
            elif separator and separator in entry:
                yield (
                    f"{name}.{op}[{i}]",
                    f"\"{entry}\" holds '{separator}', the path-list separator, so it would be "
                    "split into two entries: give each one as its own list item",
                )


def check_env(
    env: dict[str, Any], names: list[str], where: str, platform: str | None, origin: str, what: str, remedy: str
) -> None:
    """Raise one InputFileError for the first variable of `env` (an [env] table, already of the right
    shape) or of `names` (drop_env) that no environment can hold, or whose operations cannot all apply."""
    separator = _PATH_SEPARATOR.get(platform or "")
    for name in [*env, *names]:
        problem = _name_problem(name)
        if problem:
            raise InputFileError(
                f"{origin}: '{where}' holds {_shown(name)}: {problem}"
                if name
                else f"{origin}: '{where}' holds a variable with an empty name",
                remedy,
            )
    for name, item in env.items():
        for field, problem in _value_problems(name, item, separator):
            shown = _shown(name) + field[len(name) :]
            raise InputFileError(f"{origin}: '{where}.{shown}': {problem}", remedy)
