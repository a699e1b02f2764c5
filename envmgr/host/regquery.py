"""Pure parsers for `reg query KEY` and `reg query KEY /s` output (Windows' and Wine's reg.exe).

The layout (measured under Wine 8.0, tests/setup/WINE-NOTES.md; Windows prints the same shape):

    <blank>
    HKEY_LOCAL_MACHINE\\SOFTWARE\\X            <- a key's full name, not indented
        Name    REG_SZ    data                <- 4-space indent, 4 spaces between the columns
    <blank>
    HKEY_LOCAL_MACHINE\\SOFTWARE\\X\\Sub       <- without /s: the subkeys' full names, one a line

The columns are separated by exactly four spaces, but names and data may contain runs of spaces
themselves, so a value line is split at its first `    REG_<TYPE>` column, not on every separator.
Wine leaves out the header line of a key that has no values (only the subkey lines follow).
"""

from __future__ import annotations

import re

from envmgr.host.base import HIVES, RegData, RegValue

_VALUE_LINE = re.compile(r"^    (?P<name>.*?)    (?P<type>REG_[A-Z_]+)(?:    (?P<data>.*))?$")
# `reg query` spells the default value "(Default)"; winreg (and LiveHost) name it "".
_DEFAULT_NAMES = ("(Default)", "(Standard)")
# Windows prints this for a default value that is not set (`/ve`); it is not a value.
_NOT_SET = "(value not set)"


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _key_name(line: str) -> str:
    """`HKLM\\X` -> `HKEY_LOCAL_MACHINE\\X`. Unlike base.normalize_key, `/` is kept: it is legal in key
    names (`...\\Content Type\\text/html`)."""
    hive, sep, rest = line.strip().rstrip("\\").partition("\\")
    return HIVES.get(hive.upper(), hive.upper()) + sep + rest


def _is_key_line(line: str) -> bool:
    return line.startswith("HKEY_") or line.upper().startswith(("HKLM\\", "HKCU\\", "HKCR\\", "HKU\\"))


def parse_data(kind: str, raw: str) -> RegData:
    """Typed data from reg.exe's text. Text that does not fit its type is kept as the raw string.

    Wine 8's reg.exe prints every REG_QWORD as `(null)` (its formatter has no QWORD case), so a
    QWORD can come back as that string; callers check `isinstance` before trusting the type.
    """
    if kind in ("REG_DWORD", "REG_QWORD", "REG_DWORD_BIG_ENDIAN"):
        try:
            return int(raw, 16) if raw.lower().startswith("0x") else int(raw)
        except ValueError:
            return raw
    if kind == "REG_MULTI_SZ":
        # reg.exe joins the strings with a literal backslash-zero; a trailing one ends the list.
        return tuple(p for p in raw.split("\\0")) if raw else ()
    if kind == "REG_BINARY":
        try:
            return bytes.fromhex(raw)
        except ValueError:
            return raw
    return raw


def _value(match: re.Match[str]) -> RegValue:
    name = match.group("name")
    if name in _DEFAULT_NAMES:
        name = ""
    kind = match.group("type")
    return RegValue(name, kind, parse_data(kind, match.group("data") or ""))


def parse_reg_query(text: str) -> dict[str, dict[str, RegValue]]:
    """Key full name -> {value name: RegValue}, in output order.

    Without /s the subkey lines appear as keys with no values; use `parse_reg_subkeys` to tell
    them apart. Error lines (`reg: Unable to find ...`, `ERROR: ...`) and the `End of search`
    summary are not keys and are skipped.
    """
    keys: dict[str, dict[str, RegValue]] = {}
    current: dict[str, RegValue] | None = None
    for line in _lines(text):
        if not line.strip():
            continue
        if _is_key_line(line):
            current = keys.setdefault(_key_name(line), {})
            continue
        match = _VALUE_LINE.match(line)
        if match is None or current is None:
            continue
        value = _value(match)
        if value.name == "" and value.data == _NOT_SET:
            continue
        current[value.name] = value
    return keys


def parse_reg_subkeys(text: str, key: str) -> list[str]:
    """The names of `key`'s direct subkeys listed by `reg query KEY` (compared case-insensitively)."""
    prefix = _key_name(key).lower() + "\\"
    names: list[str] = []
    for line in _lines(text):
        if not _is_key_line(line):
            continue
        full = _key_name(line)
        if full.lower().startswith(prefix):
            rest = full[len(prefix) :]
            if rest and "\\" not in rest and rest not in names:
                names.append(rest)
    return names
