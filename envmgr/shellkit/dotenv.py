"""dotenv files (python-dotenv, docker compose `env_file`): `KEY="value"`, static values.

A dotenv file has no "current value", so prepend/append are resolved against `current_env`,
and unset cannot be expressed. Double quotes: `\\\\`, `\\"`, `\\n`, `\\r` are escaped (python-dotenv
would otherwise decode `\\a`, `\\t`... in `C:\\a\\table`). Both readers interpolate `$` in double
quotes (`${X}`; compose also `$X`) and neither has one escape for `$` that the other reads, so a
value with `$` is written in single quotes (literal in compose) when it has no `'`, no line break
and no `\\\\` (python-dotenv decodes `\\\\` and `\\'` there); otherwise it is refused. `${` is
refused outright: python-dotenv 1.x expands it even in single quotes (measured with 1.2.2).
"""

from __future__ import annotations

import re

from envmgr.shellkit._common import UnrepresentableValue, check_name, check_text, expected_env, ops_of
from envmgr.snapshot.envdelta import UNSET, EnvDelta
from envmgr.winenv import env_key

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the fast path renders through here
if TYPE_CHECKING:
    from collections.abc import Mapping

NEWLINE = "\n"
ENCODING = "utf-8"
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_UNQUOTED = re.compile(r"[^\s#'\"$]+")
_DQ = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"}


def quote(name: str, value: str) -> str:
    check_text("dotenv", name, value)
    if "${" in value:
        # python-dotenv 1.x expands ${X} in every quoting (measured) and has no escape for it.
        raise UnrepresentableValue("dotenv", name, "python-dotenv expands '${' in any quoting", "$")
    if value.endswith("\\"):
        # python-dotenv's quoted-value regex reads the closing `\\"` as an escaped quote and runs on
        # to the next line's quote (1.2.2, measured); `C:\\` must be written unquoted.
        if not _UNQUOTED.fullmatch(value):
            bad = next(c for c in value if not _UNQUOTED.fullmatch(c))
            raise UnrepresentableValue(
                "dotenv", name, "a value ending in '\\' must be unquoted, which cannot hold this", bad
            )
        return value
    if "$" not in value:
        return '"' + "".join(_DQ.get(c, c) for c in value) + '"'
    for bad in ("'", "\n", "\r"):
        if bad in value:
            raise UnrepresentableValue("dotenv", name, "'$' needs single quotes, which cannot hold this", bad)
    if "\\\\" in value:
        raise UnrepresentableValue(
            "dotenv", name, "'$' needs single quotes, where python-dotenv reads '\\\\' as one", "\\"
        )
    return "'" + value + "'"


def final_values(
    fmt: str, delta: EnvDelta, current_env: Mapping[str, str] | None, skip: frozenset[str] = frozenset()
) -> dict[str, str]:
    """Resolve the delta to static values for the variables it names (static formats)."""
    needs_current = any(op.op not in ("set", UNSET) and op.name not in skip for op in delta.ops)
    if needs_current and current_env is None:
        op = next(op for op in delta.ops if op.op not in ("set", UNSET) and op.name not in skip)
        raise UnrepresentableValue(
            fmt,
            op.name,
            f"{fmt} is static: a {op.op} needs the current environment (pass current_env)",
            what="operation",
        )
    env = dict(current_env or {})
    after = expected_env(delta, env)
    fold = delta.platform == "windows"
    out = {}
    for name in delta.names():
        key = env_key(after, name, fold)
        if key is None:
            raise UnrepresentableValue(fmt, name, f"{fmt} cannot unset a variable", what="operation")
        out[key] = after[key]
    return out


def render(delta: EnvDelta, current_env: Mapping[str, str] | None = None) -> str:
    for op in ops_of(delta):
        check_name("dotenv", op.name, NAME, "letters, digits, '_' and '.', not starting with a digit")
        if op.op == UNSET:
            raise UnrepresentableValue("dotenv", op.name, "dotenv cannot unset a variable", what="operation")
    values = final_values("dotenv", delta, current_env)
    return "".join(f"{k}={quote(k, v)}{NEWLINE}" for k, v in values.items())
