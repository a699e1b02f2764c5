"""Pure parsers for vswhere's `-format json` output and the installer's state.json.

Both become the same `VsRecord`, so discovery does not care where an instance came from.
See docs/knowledge.md#vswhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from envmgr.files.nested import loads_json
from envmgr.knowledge import vs_year
from envmgr.version import Version

# vswhere prints "Error 0x57: Unknown parameter: foo" on stdout and may exit 0 (Program.cpp).
_ERROR_LINE = re.compile(r"^\s*Error(?: 0x[0-9a-fA-F]+)?:\s*(.+)$", re.M)


_DISPLAY_EDITION = re.compile(
    r"\b(Community|Professional|Enterprise|Build Tools|BuildTools|Team Explorer|"
    r"TestAgent|TestController|TestProfessional|Express)\b",
    re.I,
)
_DISPLAY_CHANNEL = re.compile(r"\b(Insiders|Preview)\b", re.I)


class VswhereError(ValueError):
    """vswhere's output could not be used; the message says why in one line."""


@dataclass(frozen=True)
class VsRecord:
    instance_id: str
    installation_path: str
    installation_version: str
    product_id: str = ""
    display_name: str = ""
    channel_id: str = ""
    nickname: str = ""
    is_complete: bool | None = None
    is_launchable: bool | None = None
    is_prerelease: bool | None = None
    is_reboot_required: bool | None = None
    product_line_version: str = ""
    source: str = "vswhere"
    problems: tuple[str, ...] = ()

    @property
    def major(self) -> int | None:
        head = self.installation_version.split(".", 1)[0]
        return int(head) if head.isdigit() else None

    @property
    def edition(self) -> str:
        """Community/Professional/Enterprise/BuildTools/...; Insiders and Preview are channels."""
        if self.product_id.startswith("Microsoft.VisualStudio.Product."):
            return self.product_id.rsplit(".", 1)[-1]
        if self.product_id:
            return self.product_id
        # No productId (a pasted excerpt, some state.json files): "Visual Studio Community 2026 Insiders".
        # The VS 2026 Insiders folder is 18\Insiders, so the path would name the channel, not the edition.
        found = _DISPLAY_EDITION.search(self.display_name)
        return found.group(1).replace(" ", "") if found else "Unknown"

    @property
    def channel(self) -> str:
        """Release / Preview / Insiders / Stable, from channelId (e.g. VisualStudio.18.Insiders)."""
        # state.json of VS 2017 RTM says "VisualStudio.15.Release/public.d15rel/15.0.26117.0".
        parts = self.channel_id.split("/", 1)[0].split(".")
        if len(parts) >= 3:
            return parts[2]
        found = _DISPLAY_CHANNEL.search(self.display_name)
        if found:
            return found.group(1).capitalize()
        return "Preview" if self.is_prerelease else ""

    @property
    def year(self) -> str:
        m = self.major
        # displayName holds the year except on VS 2026, whose productLineVersion is "18".
        found = re.search(r"\b(20\d\d)\b", self.display_name)
        if found:
            return found.group(1)
        if re.fullmatch(r"20\d\d", self.product_line_version):
            return self.product_line_version
        # 10-14 are the `-legacy` instances (VS 2010-2015), which have no displayName (vswhere issue #61).
        return vs_year(m)


def _bool(value: Any) -> bool | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes"):
        return True
    if text in ("0", "false", "no"):
        return False
    return None


def check_vswhere_output(stdout: str, returncode: int) -> None:
    """Raise VswhereError when vswhere reported an error, whatever its exit code."""
    found = _ERROR_LINE.search(stdout)
    if found:
        raise VswhereError(f"vswhere reported an error: {found.group(0).strip()}")
    if returncode != 0:
        first = next((ln.strip() for ln in stdout.splitlines() if ln.strip()), "")
        raise VswhereError(f"vswhere exited with {returncode}" + (f": {first}" if first else ""))


def _from_flat(d: Mapping[str, Any], source: str) -> VsRecord:
    catalog = c if isinstance(c := d.get("catalog"), dict) else {}
    props = p if isinstance(p := d.get("properties"), dict) else {}

    def pick(key: str, table: Mapping[str, Any], prefix: str) -> str:
        value = table.get(key, d.get(f"{prefix}_{key}", ""))
        return "" if value is None else str(value)

    problems = []
    if not d.get("installationPath"):
        problems.append("vswhere gave no installationPath")
    return VsRecord(
        instance_id=str(d.get("instanceId", "")),
        installation_path=str(d.get("installationPath", "")),
        installation_version=str(d.get("installationVersion", "")),
        product_id=str(d.get("productId", "")),
        display_name=str(d.get("displayName", "")),
        channel_id=str(d.get("channelId", "")),
        nickname=pick("nickname", props, "properties"),
        is_complete=_bool(d.get("isComplete")),
        is_launchable=_bool(d.get("isLaunchable")),
        is_prerelease=_bool(d.get("isPrerelease")),
        is_reboot_required=_bool(d.get("isRebootRequired")),
        product_line_version=pick("productLineVersion", catalog, "catalog"),
        source=source,
        problems=tuple(problems),
    )


def parse_vswhere_json(text: str) -> tuple[VsRecord, ...]:
    """`vswhere -format json` output. `[]` is a valid empty answer."""
    text = text.lstrip("\ufeff")
    start = text.find("[")
    if start < 0:
        raise VswhereError("vswhere printed no JSON array" + _first_line_hint(text))
    try:
        data = loads_json(text[start:])
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}: {exc.msg}"
        salvaged = _salvage_json(text[start:], where)
        if not salvaged:
            raise VswhereError(f"vswhere printed malformed JSON ({where})") from None
        return salvaged
    if not isinstance(data, list):
        raise VswhereError("vswhere JSON is not a list of instances")
    return tuple(_from_flat(d, "vswhere") for d in data if isinstance(d, dict))


_JSON_PAIR = re.compile(r'^\s*"(\w+)"\s*:\s*("(?:[^"\\]|\\.)*"|true|false|-?\d+)\s*,?\s*$')
_NESTED = {"catalog", "properties"}


def _salvage_json(text: str, where: str) -> tuple[VsRecord, ...]:
    """Read the complete `"key": value` lines of cut-short JSON (a truncated pipe, a pasted excerpt)."""
    blocks: list[dict[str, Any]] = []
    section = ""
    for line in text.splitlines():
        opened = re.match(r'^\s*"(\w+)"\s*:\s*\{\s*$', line)
        if opened:
            section = opened.group(1) if opened.group(1) in _NESTED else "other"
            continue
        if re.match(r"^\s*\}", line):
            section = ""
            continue
        m = _JSON_PAIR.match(line)
        if not m:
            continue
        key, raw = m.group(1), m.group(2)
        try:
            value = loads_json(raw)
        except json.JSONDecodeError:
            continue
        if key == "instanceId" and not section:
            blocks.append({})
        if not blocks:
            continue
        blocks[-1][f"{section}_{key}" if section else key] = value
    note = f"vswhere JSON was cut short or malformed ({where}); only its complete fields were read"
    out = []
    for b in blocks:
        rec = _from_flat(b, "vswhere")
        out.append(VsRecord(**{**rec.__dict__, "problems": rec.problems + (note,)}))
    return tuple(out)


def _first_line_hint(text: str) -> str:
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return f" (it printed: {first[:120]})" if first else " (it printed nothing)"


def parse_state_json(text: str, instance_id: str) -> VsRecord:
    """The installer's `_Instances\\<id>\\state.json` (an undocumented format: fallback only)."""
    try:
        d = loads_json(text.lstrip("\ufeff"))
    except json.JSONDecodeError as exc:
        raise VswhereError(f"state.json is malformed (line {exc.lineno}): {exc.msg}") from None
    if not isinstance(d, dict):
        raise VswhereError("state.json is not a JSON object")
    catalog = d.get("catalogInfo") or {}
    product = d.get("product") or {}
    resources = d.get("localizedResources") or []
    title = next(
        (r.get("title", "") for r in resources if str(r.get("language", "")).lower() == "en-us"),
        resources[0].get("title", "") if resources else "",
    )
    errors = d.get("errors") or {}
    failed = errors.get("failedPackages") or []
    problems = []
    if failed:
        problems.append(f"the installer recorded {len(failed)} failed package(s): the instance is incomplete")
    prerelease = _bool(catalog.get("productMilestoneIsPreRelease"))
    return VsRecord(
        instance_id=instance_id,
        installation_path=str(d.get("installationPath", "")),
        installation_version=str(d.get("installationVersion", "")),
        product_id=str(product.get("id", "")),
        display_name=str(title),
        channel_id=str(d.get("channelId", "")),
        nickname=str((d.get("properties") or {}).get("nickname", "") or ""),
        is_complete=False if failed else None,
        is_launchable=None,
        is_prerelease=prerelease,
        product_line_version=str(catalog.get("productLineVersion", "")),
        source="state.json",
        problems=tuple(problems),
    )


def newest_first(records: Iterable[VsRecord]) -> list[VsRecord]:
    return sorted(records, key=lambda r: (Version.of(r.installation_version), r.instance_id), reverse=True)
