"""The shape of child_any.py's stage records, checked before anything trusts them (audit N22).

The records come on the child's stdout, which the package being verified can write to as well: a package
that prints `ENVMGR-VERIFY {"stage": "package", "libraries": [null]}` made `verify` crash on a None path.
A record whose known fields have the wrong types is dropped, as a line that is not JSON is; fields not
named here are not read by the judge and are left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]


def _text(v: Any) -> bool:
    return isinstance(v, str)


def _flag(v: Any) -> bool:
    return isinstance(v, bool)


def _texts(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _optional_text(v: Any) -> bool:
    return v is None or isinstance(v, str)


def _load_record(v: Any) -> bool:
    return (
        isinstance(v, dict)
        and _text(v.get("path"))
        and _flag(v.get("ok"))
        and all(_optional_text(v.get(k)) for k in ("how", "error"))
        and (v.get("winerror") is None or (isinstance(v.get("winerror"), int) and not _flag(v.get("winerror"))))
    )


def _load_records(v: Any) -> bool:
    return isinstance(v, list) and all(_load_record(x) for x in v)


def _numbers(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)


def _integer(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


FIELDS: dict[str, dict[str, Check]] = {
    "package": {
        "found": _flag,
        "name": _text,
        "version": _text,
        "python": _text,
        "platform": _text,
        "libraries": _texts,
        "modules": _texts,
        "requires": _texts,
        "unlisted": _texts,
        "missing": _texts,
        "record": _flag,
    },
    "import": {"module": _text, "ok": _flag, "error_type": _text, "error": _text},
    "loading": {"path": _text},
    "load": {"libraries": _load_records},
    "smoke-start": {"device": _text},
    "smoke": {
        "ok": _flag,
        "kind": _text,
        "library": _optional_text,
        "devices": _texts,
        "computed_on": _text,
        "status": _integer,
        "result": _numbers,
        "function": _text,
        "system_info": _text,
        "torch": _optional_text,
        "torch_cuda": _optional_text,
        "cuda_available": _flag,
        "device": _text,
        "error_type": _text,
        "error": _text,
    },
}


def well_typed(record: dict[str, Any]) -> bool:
    """True when every field this schema names has its type (a field may be absent)."""
    fields = FIELDS.get(record.get("stage", ""), {})
    return all(check(record[name]) for name, check in fields.items() if name in record)


# The child writes its `package` record once, before it imports anything of the package: a second one was
# printed by the package itself and is not read.
ONCE = frozenset({"package"})


def record_filter() -> Callable[[dict[str, Any]], bool]:
    """well_typed, and the first record of each ONCE stage only (a fresh filter per run)."""
    seen: set[str] = set()

    def accept(record: dict[str, Any]) -> bool:
        stage = record.get("stage", "")
        if not well_typed(record) or stage in seen:
            return False
        if stage in ONCE:
            seen.add(stage)
        return True

    return accept
