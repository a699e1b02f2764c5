"""What keeps `--machine` replays of large records cheap (issue 14) gives pathlib's and tomllib's answers.

host.base.clean_path/clean_parent/join stand in for PureWindowsPath/PurePosixPath on paths already in
pathlib's form; RecordedHost's tables built with them equal those built with path objects on every
recorded machine; a large record's parse kept in the cache folder equals tomllib's and is ignored when
damaged. (bench/activation.py measures the speed; this holds the answers.)
"""

from __future__ import annotations

import datetime
import sys
from pathlib import Path, PurePosixPath, PureWindowsPath

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the workflow and the Windows-CPython tier run it
    import tomli as tomllib

import pytest

from envmgr.host import recorded
from envmgr.host.base import LINUX, WINDOWS, clean_parent, clean_path, join
from envmgr.host.recorded import RecordedHost, load_machine

MACHINES = sorted((Path(__file__).resolve().parents[2] / "machines").glob("*.toml"))
WIN = [
    "C:\\",
    "C:\\a",
    "c:\\a\\b",
    "C:\\a\\b\\",
    "C:\\a\\\\b",
    "C:\\a\\.\\b",
    "C:\\a\\.",
    "C:\\a\\..\\b",
    "C:/a/b",
    "C:\\a/b",
    "\\\\server\\share\\x",
    "a\\b",
    "\\a",
    "C:a",
    "C:\\a b\\c.d ",
    "C:\\a.",
    "C:\\a\\b:c",
    "D:\\Program Files (x86)\\Microsoft Visual Studio\\2019\\BuildTools",
    "C:\\ü\\中",
    "C:\\.",
    "1:\\a",
    "",
    "C:\\a\\b\\.",
]
POSIX = [
    "/",
    "/a",
    "/a/b",
    "/a/b/",
    "//a",
    "/a//b",
    "/a/./b",
    "/a/.",
    "/a/../b",
    "a/b",
    "",
    ".",
    "/.",
    "/a b/c\\d",
    "///a",
    "/ü/中",
]


class _Host:
    def __init__(self, platform):
        self.platform = platform


@pytest.mark.parametrize(("windows", "paths"), [(True, WIN), (False, POSIX)])
def test_clean_paths_are_pathlibs(windows, paths):
    pure = PureWindowsPath if windows else PurePosixPath
    for path in paths:
        if clean_path(path, windows):
            assert str(pure(path)) == path, path
            assert clean_parent(path, windows) == str(pure(path).parent), path
        for parts in (("x",), ("x", "y z"), (), ("..",), (".",), ("",), ("a\\b",), ("a/b",), ("d:x",), ("ü",)):
            host = _Host(WINDOWS if windows else LINUX)
            assert join(host, path, *parts) == str(pure(path, *parts)), (path, parts)


def _reference_tables(host: RecordedHost, data: dict):
    """The files/dirs tables as the host built them with path objects before (b9b1cff)."""
    pure = PureWindowsPath if host.platform == WINDOWS else PurePosixPath

    def key(path):
        return host._fold(str(pure(path)).rstrip("\\/") or str(pure(path)))

    files, dirs = {}, {}

    def add_dir(path):
        p = pure(path)
        while True:
            if key(str(p)) in dirs:
                return
            dirs[key(str(p))] = str(p)
            if p.parent == p:
                return
            p = p.parent

    for path in data.get("files", {}):
        files[key(path)] = str(pure(path))
        add_dir(str(pure(path).parent))
    for d in data.get("dirs", []):
        add_dir(d)
    return files, dirs


@pytest.mark.parametrize("machine", MACHINES, ids=lambda p: p.stem)
def test_recorded_tables_are_the_path_objects(machine):
    data = tomllib.loads(machine.read_text(encoding="utf-8"))
    host = RecordedHost(data, origin=str(machine), base_dir=machine.parent)
    files, dirs = _reference_tables(host, data)
    assert {k: v[0] for k, v in host._files.items()} == files
    assert host._dirs == dirs
    pure = PureWindowsPath if host.platform == WINDOWS else PurePosixPath
    for folder in list(dirs.values())[:200]:
        try:
            names = host.listdir(folder)
        except FileNotFoundError:  # a folder under a recorded link resolves elsewhere
            continue
        assert all(pure(n).name == n for n in names)


def _big_record(tmp_path: Path, extra: str = "") -> Path:
    record = MACHINES[0].read_text(encoding="utf-8")
    padding = "x" * recorded.PARSED_COPY_FROM
    rec = tmp_path / "big.toml"
    # Bytes, not write_text: on Windows that writes CRLF, and load_machine's text (CRLF) and the test's
    # read_text (LF) would then be two records with two kept copies.
    rec.write_bytes(record.replace("[env]", f'[env]\nENVMGR_PADDING = "{padding}"{extra}', 1).encode("utf-8"))
    return rec


def test_a_large_records_parse_is_kept_and_equal(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVMGR_CACHE_DIR", str(tmp_path / "cache"))
    rec = _big_record(tmp_path)
    text = rec.read_text(encoding="utf-8")
    assert "[env]" in text and len(text) > recorded.PARSED_COPY_FROM
    first = recorded._parsed(text, str(rec))
    copies = list((tmp_path / "cache" / "records").iterdir())
    assert len(copies) == 1
    assert recorded._parsed(text, str(rec)) == first == tomllib.loads(text)
    again = load_machine(str(rec))
    assert again.env["ENVMGR_PADDING"] == "x" * recorded.PARSED_COPY_FROM
    copies[0].write_bytes(b"damaged")
    assert recorded._parsed(text, str(rec)) == first  # parsed again, copy rewritten
    assert copies[0].read_bytes() != b"damaged"
    small = MACHINES[0].read_text(encoding="utf-8")
    recorded._parsed(small, "small")
    assert len(list((tmp_path / "cache" / "records").iterdir())) == 1  # small records: no copy


def test_values_marshal_cannot_hold_are_parsed_every_time(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVMGR_CACHE_DIR", str(tmp_path / "cache"))
    text = f'when = 1979-05-27T07:32:00Z\npad = "{"x" * recorded.PARSED_COPY_FROM}"\n'
    assert recorded._parsed(text, "t")["when"] == datetime.datetime(1979, 5, 27, 7, 32, tzinfo=datetime.timezone.utc)
    assert not list((tmp_path / "cache" / "records").glob("*.marshal"))


def test_cache_clear_removes_the_kept_parses(tmp_path, monkeypatch):
    from envmgr.cache import store as cache

    monkeypatch.setenv("ENVMGR_CACHE_DIR", str(tmp_path / "cache"))
    rec = _big_record(tmp_path)
    load_machine(str(rec))
    assert list((tmp_path / "cache" / "records").glob("*.marshal"))
    assert cache.clear() == 0  # snapshots only are counted
    assert not list((tmp_path / "cache" / "records").glob("*.marshal"))


def _reference_index(host: RecordedHost, sep: str) -> dict:
    """The folder index as b9b1cff built it: pathlib's name for any path not clean_path."""
    index = {}
    for table in (host._files, host._dirs):
        for k, v in table.items():
            cut = k.rfind(sep)
            if cut < 0 or cut == len(k) - 1:
                continue
            original = v[0] if isinstance(v, tuple) else v
            name = (
                original[original.rfind(sep) + 1 :] if clean_path(original, sep == "\\") else host._pure(original).name
            )
            index.setdefault(k[: cut + 1], {})[k[cut + 1 :]] = name
    return index


@pytest.mark.parametrize(("platform", "paths"), [(WINDOWS, WIN), (LINUX, POSIX)])
def test_the_folder_index_names_odd_paths_as_pathlib(platform, paths):
    files = {p + suffix: "" for p in paths if p for suffix in ("", "\\f.txt" if platform == WINDOWS else "/f.txt")}
    host = RecordedHost({"platform": platform, "files": files, "dirs": [p for p in paths if p]})
    sep = "\\" if platform == WINDOWS else "/"
    assert host._children(sep) == _reference_index(host, sep)


@pytest.mark.parametrize("machine", MACHINES, ids=lambda p: p.stem)
def test_the_folder_index_is_pathlibs_on_every_machine(machine):
    host = load_machine(str(machine))
    sep = "\\" if host.platform == WINDOWS else "/"
    assert host._children(sep) == _reference_index(host, sep)
