"""The vswhere and state.json parsers on every real sample in tests/corpus.

Sources of the samples: tests/corpus/SOURCES.md. The stored copies have LF line endings; vswhere's
stdout is in text mode on Windows (CRLF, ../shared/facts/windows.md §1.5), so every sample is also
parsed as a CRLF copy and must give the same records.

envmgr runs only `vswhere -format json`. The samples in vswhere's text and xml formats are real
instances too: their fields are written here as the JSON array that `-format json` prints for the same
instance (as tests/machines/build_machines.py does) and read by the parser discovery uses.
"""

from __future__ import annotations

import json
import re
from xml.sax.saxutils import unescape

import pytest

from envmgr.discover.vswhere import VsRecord, VswhereError, check_vswhere_output, parse_state_json, parse_vswhere_json
from tests.conftest import CORPUS, corpus

JSON_CUT = "vswhere JSON was cut short or malformed ({}); only its complete fields were read"
FAILED_PACKAGES = "the installer recorded 1 failed package(s): the instance is incomplete"

VS2019_BT = "C:\\Program Files (x86)\\Microsoft Visual Studio\\2019\\BuildTools"
VS2022_BT = "C:\\Program Files (x86)\\Microsoft Visual Studio\\2022\\BuildTools"


def fields(r: VsRecord) -> dict:
    return {
        "instance_id": r.instance_id,
        "installation_path": r.installation_path,
        "installation_version": r.installation_version,
        "edition": r.edition,
        "display_name": r.display_name,
        "year": r.year,
        "channel": r.channel,
        "is_complete": r.is_complete,
        "is_launchable": r.is_launchable,
        "is_prerelease": r.is_prerelease,
        "nickname": r.nickname,
        "product_line_version": r.product_line_version,
        "source": r.source,
        "problems": r.problems,
    }


def rec(
    instance_id,
    path,
    version,
    edition,
    display,
    year,
    channel,
    complete,
    launchable,
    prerelease,
    nickname="",
    line="",
    source="vswhere",
    problems=(),
) -> dict:
    return {
        "instance_id": instance_id,
        "installation_path": path,
        "installation_version": version,
        "edition": edition,
        "display_name": display,
        "year": year,
        "channel": channel,
        "is_complete": complete,
        "is_launchable": launchable,
        "is_prerelease": prerelease,
        "nickname": nickname,
        "product_line_version": line,
        "source": source,
        "problems": tuple(problems),
    }


def _as_json(blocks: list[dict[str, str]]) -> str:
    """Flat `catalog_x`/`properties_x` keys nest as in vswhere's JSON; is* flags are booleans, state a number."""
    instances = []
    for block in blocks:
        obj: dict = {}
        for key, value in block.items():
            section, _, name = key.partition("_")
            if name and section in ("catalog", "properties"):
                obj.setdefault(section, {})[name] = value
            elif key.startswith("is") and value in ("0", "1"):
                obj[key] = value == "1"
            else:
                obj[key] = int(value) if key == "state" and value.isdigit() else value
        instances.append(obj)
    return json.dumps(instances, indent=2, ensure_ascii=False)


def text_as_json(text: str) -> str:
    """vswhere's default text format: `key: value` lines, one block per instance from instanceId on;
    the logo lines and a shell prompt around a pasted capture are not fields."""
    blocks: list[dict[str, str]] = []
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z]\w*):\s?(.*)$", line.rstrip("\r"))
        if m and m.group(1) == "instanceId":
            blocks.append({})
        if m and blocks:
            blocks[-1][m.group(1)] = m.group(2).strip()
    return _as_json(blocks)


def xml_as_json(text: str) -> str:
    """`-format xml`, as far as its complete elements go (the sample is cut inside one)."""
    blocks = []
    for found in re.finditer(r"<instance>(.*?)(?:</instance>|\Z)", text, re.S):
        block, flat = found.group(1), {}
        for section, body in re.findall(r"<(catalog|properties)>(.*?)</\1>", block, re.S):
            flat.update({f"{section}_{k}": unescape(v) for k, v in re.findall(r"<(\w+)>([^<]*)</\1>", body)})
        outer = re.sub(r"<(catalog|properties|packages)>.*?(</\1>|\Z)", "", block, flags=re.S)
        flat.update({k: unescape(v) for k, v in re.findall(r"<(\w+)>([^<]*)</\1>", outer)})
        blocks.append(flat)
    return _as_json(blocks)


def from_json(text: str) -> tuple[VsRecord, ...]:
    return parse_vswhere_json(text)


def from_text(text: str) -> tuple[VsRecord, ...]:
    return parse_vswhere_json(text_as_json(text))


def from_xml(text: str) -> tuple[VsRecord, ...]:
    return parse_vswhere_json(xml_as_json(text))


# file -> (how it is read, expected records). Every vswhere sample of the corpus is here (checked below).
VSWHERE = {
    # full capture, `-products * -format json`, all fields
    "vswhere-products-star-json-vs2022-buildtools-17.14.28-no-vctools.json": (
        from_json,
        [
            rec(
                "f7268007",
                VS2022_BT,
                "17.14.37027.9",
                "BuildTools",
                "Visual Studio Build Tools 2022",
                "2022",
                "Release",
                True,
                True,
                False,
                line="2022",
            )
        ],
    ),
    "vswhere-json-vs2022-community-17.5.4-flutter-fixture.json": (
        from_json,
        [
            rec(
                "491ec752",
                "C:\\Program Files\\Microsoft Visual Studio\\2022\\Community",
                "17.5.33530.505",
                "Community",
                "Visual Studio Community 2022",
                "2022",
                "Release",
                True,
                True,
                False,
                line="2022",
            )
        ],
    ),
    # a prompt line before the array, cut inside a string value: the complete fields are kept
    "vswhere-json-products-star-vs2022-buildtools-17.13.6-EXCERPT.txt": (
        from_json,
        [
            rec(
                "2c33f8c6",
                VS2022_BT,
                "17.13.35931.197",
                "BuildTools",
                "Visual Studio Build Tools 2022",
                "2022",
                "Release",
                True,
                True,
                False,
                problems=[JSON_CUT.format("line 20, column 38: Invalid control character at")],
            )
        ],
    ),
    # Japanese description (localized text), cut after a lone quote
    "vswhere-json-vs2019-community-16.11.15-japanese-description-EXCERPT.txt": (
        from_json,
        [
            rec(
                "1897ac53",
                "C:\\Program Files (x86)\\Microsoft Visual Studio\\2019\\Community",
                "16.11.32510.428",
                "Community",
                "Visual Studio Community 2019",
                "2019",
                "Release",
                True,
                True,
                False,
                problems=[JSON_CUT.format("line 24, column 6: Invalid control character at")],
            )
        ],
    ),
    # text format with catalog_/properties_ keys
    "vswhere-text-vs2019-buildtools-16.9.2-cc-rs-fixture.txt": (
        from_text,
        [
            rec(
                "58104422",
                VS2019_BT,
                "16.9.31112.23",
                "BuildTools",
                "Visual Studio Build Tools 2019",
                "2019",
                "Release",
                True,
                True,
                False,
                line="2019",
            )
        ],
    ),
    # `-all`, logo and prompt first; an incomplete instance (state 13); cut inside a key
    "vswhere-text-all-vs2019-professional-incomplete-state13-EXCERPT.txt": (
        from_text,
        [
            rec(
                "720b6bb8",
                "D:\\Program Files (x86)\\Microsoft Visual Studio\\2019\\Professional",
                "16.4.29806.167",
                "Professional",
                "Visual Studio Professional 2019",
                "2019",
                "Release",
                False,
                False,
                False,
            )
        ],
    ),
    # VS 2017 (vswhere 2.5.2): no isComplete/isLaunchable lines; a -property run before it
    "vswhere-text-vs2017-buildtools-15.9-windows-build-tools-EXCERPT.txt": (
        from_text,
        [
            rec(
                "5b6d4f0d",
                "C:\\Program Files (x86)\\Microsoft Visual Studio\\2017\\BuildTools",
                "15.9.28307.718",
                "BuildTools",
                "Visual Studio Build Tools 2017",
                "2017",
                "Release",
                None,
                None,
                False,
            )
        ],
    ),
    # preview instance: Enterprise edition, Preview channel
    "vswhere-text-vs2022-enterprise-preview-17.0-pre1-offline-layout-EXCERPT.txt": (
        from_text,
        [
            rec(
                "a7781cfa",
                "C:\\Program Files (x86)\\Microsoft Visual Studio\\2022\\EnterprisePreview",
                "17.0.31410.414",
                "Enterprise",
                "Visual Studio Enterprise 2022",
                "2022",
                "Preview",
                True,
                True,
                True,
            )
        ],
    ),
    # vswhere 1.0.62: `-latest -requires` found nothing (logo only); `-legacy` found VS 2010
    "vswhere-text-legacy-vs2010-and-buildtools2017-not-found-v1.0.62.txt": (
        from_text,
        [
            rec(
                "VisualStudio.10.0",
                "C:\\Program Files (x86)\\Microsoft Visual Studio 10.0\\",
                "10.0",
                "Unknown",
                "",
                "2010",
                "",
                None,
                None,
                None,
            )
        ],
    ),
    # xml, cut inside an element
    "vswhere-xml-vs2022-buildtools-17.6.5-EXCERPT.xml.txt": (
        from_xml,
        [
            rec(
                "4b174a92",
                VS2022_BT,
                "17.6.33829.357",
                "BuildTools",
                "Visual Studio Build Tools 2022",
                "2022",
                "Release",
                True,
                True,
                False,
            )
        ],
    ),
}

# The preview-17.0-pre7 excerpt starts after instanceId/installationPath were cut away: no usable record.
START_TRUNCATED = "vswhere-json-vs2022-community-preview-17.0-pre7-catalog-EXCERPT.txt"

# microsoft/vswhere docker/Instances/{2,4,5}/state.json: the folder name is the instance id.
STATE = {
    "vswhere-repo-fixture-state.json-buildtools-2017.json": (
        "2",
        rec(
            "2",
            "C:\\BuildTools",
            "15.0.26117",
            "BuildTools",
            "Visual Studio Build Tools 2017",
            "2017",
            "Release",
            None,
            None,
            None,
            source="state.json",
        ),
    ),
    "vswhere-repo-fixture-state.json-enterprise-2017-with-errors.json": (
        "4",
        rec(
            "4",
            "C:\\VS\\Enterprise",
            "15.0.26117",
            "Enterprise",
            "Visual Studio Enterprise 2017",
            "2017",
            "Release",
            False,
            None,
            None,
            nickname="Enterprise",
            source="state.json",
            problems=[FAILED_PACKAGES],
        ),
    ),
    "vswhere-repo-fixture-state.json-enterprise-preview-2017.json": (
        "5",
        rec(
            "5",
            "C:\\VS\\Preview",
            "15.3.26612.0",
            "Enterprise",
            "Visual Studio Enterprise 2017",
            "2017",
            "Preview",
            None,
            None,
            True,
            nickname="Preview",
            line="2017",
            source="state.json",
        ),
    ),
}


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def test_every_vswhere_sample_is_covered():
    on_disk = {p.name for p in CORPUS.glob("vswhere-*")}
    assert on_disk == set(VSWHERE) | {START_TRUNCATED} | set(STATE)


@pytest.mark.parametrize("name", sorted(VSWHERE))
def test_vswhere_sample_exact_fields(name):
    parse, expected = VSWHERE[name]
    assert [fields(r) for r in parse(corpus(name))] == expected


@pytest.mark.parametrize("name", sorted(VSWHERE))
def test_vswhere_sample_crlf_gives_the_same_records(name):
    parse, _ = VSWHERE[name]
    text = corpus(name)
    assert "\r" not in text  # the stored copy is LF; the CRLF variant is made here
    assert parse(crlf(text)) == parse(text)


@pytest.mark.parametrize("convert", [str, crlf], ids=["lf", "crlf"])
def test_start_truncated_json_without_instance_id_is_an_error(convert):
    with pytest.raises(VswhereError, match="malformed JSON"):
        parse_vswhere_json(convert(corpus(START_TRUNCATED)))


def test_japanese_description_is_read_as_utf8():
    text = corpus("vswhere-json-vs2019-community-16.11.15-japanese-description-EXCERPT.txt")
    assert "\u5b66\u751f" in text  # 学生 ("students"): the sample really holds Japanese text
    (record,) = parse_vswhere_json("\ufeff" + text)  # `-utf8` output may start with a BOM
    assert record.display_name == "Visual Studio Community 2019"


@pytest.mark.parametrize("name", sorted(STATE))
@pytest.mark.parametrize("convert", [str, crlf], ids=["lf", "crlf"])
def test_state_json_exact_fields(name, convert):
    instance_id, expected = STATE[name]
    assert fields(parse_state_json(convert(corpus(name)), instance_id)) == expected


def test_state_json_takes_the_en_us_title_among_localized_ones():
    text = corpus("vswhere-repo-fixture-state.json-buildtools-2017.json")
    assert "Visual Studio-Buildtools 2017" in text  # de-de title present
    assert parse_state_json(text, "2").display_name == "Visual Studio Build Tools 2017"


def test_state_json_malformed_is_an_error():
    text = corpus("vswhere-repo-fixture-state.json-buildtools-2017.json")
    with pytest.raises(VswhereError, match="state.json is malformed"):
        parse_state_json(text[: len(text) // 2], "2")


# --- exit codes and error text (facts/windows.md §1.4: errors go to stdout, maybe with exit 0) ---
LOGO = (
    "Visual Studio Locator version 2.8.4+ff0de50053 [query version 2.3.2200.14893]\r\n"
    "Copyright (C) Microsoft Corporation. All rights reserved.\r\n\r\n"
)


def test_check_output_error_line_with_exit_0():
    with pytest.raises(VswhereError, match=r"^vswhere reported an error: Error 0x57: Unknown parameter: foo$"):
        check_vswhere_output("Error 0x57: Unknown parameter: foo\r\n", 0)


def test_check_output_logo_then_error_with_exit_87():
    with pytest.raises(VswhereError, match=r"^vswhere reported an error: Error 0x57: Unknown parameter: foo$"):
        check_vswhere_output(LOGO + "Error 0x57: Unknown parameter: foo\r\n", 87)


def test_check_output_nonzero_exit_without_error_line():
    with pytest.raises(VswhereError, match=r"^vswhere exited with 5: Visual Studio Locator version 2\.8\.4"):
        check_vswhere_output(LOGO, 5)


@pytest.mark.parametrize("stdout", ["[]", "[]\n", "[]\r\n", "\ufeff[]\r\n"])
def test_empty_json_answer_is_valid_and_empty(stdout):
    check_vswhere_output(stdout, 0)
    assert parse_vswhere_json(stdout) == ()


def test_logo_only_answer_is_not_an_error():
    check_vswhere_output(LOGO, 0)


@pytest.mark.parametrize("name", sorted(VSWHERE))
def test_real_samples_are_not_mistaken_for_errors(name):
    check_vswhere_output(corpus(name), 0)


# --- node-gyp fixtures: {path, version, packages[]} normalised from real machines (not vswhere output).
# Only the version -> year mapping applies here; the recorded-machine tests use the rest.
NODE_GYP = {
    "node-gyp-fixture-VS_2019_BuildTools_minimal.json": (VS2019_BT, "16.1.28922.388", 16, "2019"),
    "node-gyp-fixture-VS_2022_BuildTools_arm64_only.json": (VS2022_BT, "17.11.35222.181", 17, "2022"),
    "node-gyp-fixture-VS_2026_Insiders_workload.json": (
        "C:\\Program Files\\Microsoft Visual Studio\\18\\Insiders",
        "18.3.11206.111",
        18,
        "2026",
    ),
}


@pytest.mark.parametrize("name", sorted(NODE_GYP))
def test_node_gyp_fixture_version_gives_year(name):
    path, version, major, year = NODE_GYP[name]
    (entry,) = json.loads(corpus(name))
    assert (entry["path"], entry["version"]) == (path, version)
    record = VsRecord(instance_id="", installation_path=entry["path"], installation_version=entry["version"])
    assert (record.major, record.year) == (major, year)
