"""Generated names and paths fed to every reader that builds a path from a name it was given (issue 22:
"names from outside are names"): a wheel index's link text and key file, a wheel cache entry's key
and wheel, a machine record's `{ from = … }`. Whatever the name, nothing is written outside the
temporary root's own folders (the cache, DEST), nothing outside the record's folder is read, and
every refusal is an answer (None, a skipped entry, one line), never an exception.

The names mix the pieces that make paths dangerous on either platform (`..`, `/`, `\\`, `C:`, NUL,
a Windows device name) with a real wheel name, so most examples are near misses. Not POSIX-only:
this module also runs in the Windows-CPython tier.
"""

from __future__ import annotations

import html
import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envmgr.errors import InputFileError
from envmgr.files import names
from envmgr.host.recorded import load_machine
from envmgr.wheels import index as wheelindex
from envmgr.wheels import remote as wheelremote
from envmgr.wheels import store as wheels
from tests.conftest import CUDA_SO, sample_bytes

PIECES = [
    "..",
    ".",
    "/",
    "\\",
    "C:",
    "c:",
    "\\\\srv\\s",
    "nul",
    "NUL.whl",
    "\x00",
    "%2e%2e",
    "~",
    " ",
    "sub",
    "fakecuda",
    "-1.2.3",
    "-py3-none-any",
    ".whl",
    "fakecuda-1.2.3-py3-none-any.whl",
    "secret.txt",
    "ü",
    ":",
]
NAMES = st.one_of(
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join), st.text(min_size=1, max_size=40)
)
# Paths made of parts and either separator; ROOT stands for the temporary root (an absolute path).
PARTS = ["..", ".", "sub", "secret.txt", "inside.txt", "C:", "ROOT", "nul", "", "fakecuda-1.2.3-py3-none-any.whl"]
PATHS = st.builds(
    lambda parts, sep: sep.join(parts),
    st.lists(st.sampled_from(PARTS), min_size=1, max_size=5),
    st.sampled_from(["/", "\\"]),
)
HOSTILE = st.one_of(PATHS, NAMES)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

KEY = wheels.WheelKey(
    package="fakecuda",
    version="1.2.3",
    source="index",
    cuda="13.0",
    archs="90",
    generator="Ninja",
    cmake_args="",
    python_tag="cp311",
    platform="linux_x86_64",
)
WHEEL = "fakecuda-1.2.3-py3-none-any.whl"


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under root with its bytes (None for a folder)."""
    return {os.path.relpath(p, root): (None if p.is_dir() else p.read_bytes()) for p in sorted(root.rglob("*"))}


def outside(root: Path, before: dict, *mine: str) -> dict:
    """What changed under root except in the named folders (the ones a reader may write)."""
    after = snapshot(root)
    keep = lambda rel: not any(rel == m or rel.startswith(m + os.sep) for m in mine)  # noqa: E731
    return {k: v for k, v in after.items() if keep(k) and before.get(k, "<new>") != v} | {
        k: "<gone>" for k in before if keep(k) and k not in after
    }


@pytest.fixture(autouse=True)
def isolated(monkeypatch):
    monkeypatch.delenv("ENVMGR_WHEEL_INDEX", raising=False)


def _index(root: Path, name: str) -> Path:
    """A published index whose link text and key file name the wheel `name`."""
    import zipfile

    os.environ["ENVMGR_CACHE_DIR"] = str(root / "cache")
    built = root / "built"
    built.mkdir()
    with zipfile.ZipFile(built / WHEEL, "w") as zf:
        zf.writestr("fakecuda/lib/libfake_cuda.so", sample_bytes(CUDA_SO))
    entry = wheels.store(KEY, built / WHEEL, 1.0, True, "t")
    dest = root / "index"
    wheelindex.publish([entry], dest)
    wheels.clear()
    page = dest / "fakecuda" / "index.html"
    page.write_text(
        page.read_text(encoding="utf-8").replace(f">{WHEEL}</a>", f">{html.escape(name)}</a>"), encoding="utf-8"
    )
    key_file = dest / "fakecuda" / KEY.digest() / "entry.json"
    key_file.write_text(
        json.dumps({**json.loads(key_file.read_text(encoding="utf-8")), "wheel": name}), encoding="utf-8"
    )
    return dest


@SETTINGS
@given(name=HOSTILE)
def test_an_index_writes_nothing_outside_the_cache_whatever_its_wheel_is_called(name):
    saved = os.environ.get("ENVMGR_CACHE_DIR")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        try:
            name = name.replace("ROOT", str(root))
            dest = _index(root, name)
            before = snapshot(root)
            lines: list[str] = []
            got = wheelremote.fetch(str(dest), KEY, True, lines.append)
            assert outside(root, before, "cache") == {}, name
            wheels_dir = root / "cache" / "wheels"
            assert not list(wheels_dir.glob(".download-*"))
            if got is None:
                assert lines and lines[-1].endswith("building instead")
            else:  # only a real wheel name of the key's project is ever stored
                assert names.wheel_project(got.wheel) == "fakecuda" and got.path.parent.parent == wheels_dir
        finally:
            os.environ.pop("ENVMGR_CACHE_DIR", None) if saved is None else os.environ.update(ENVMGR_CACHE_DIR=saved)


@SETTINGS
@given(package=HOSTILE, wheel=st.one_of(st.just(WHEEL), HOSTILE))
def test_a_cache_entry_publishes_nothing_outside_dest_whatever_its_names(package, wheel):
    saved = os.environ.get("ENVMGR_CACHE_DIR")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["ENVMGR_CACHE_DIR"] = str(root / "cache")
        package, wheel = package.replace("ROOT", str(root)), wheel.replace("ROOT", str(root))
        try:
            key = {**KEY.__dict__, "package": package}
            folder = wheels.wheels_dir() / wheels.WheelKey(**key).digest()
            folder.mkdir(parents=True)
            (folder / WHEEL).write_bytes(b"PK\x05\x06" + b"\0" * 18)
            (folder / "entry.json").write_text(
                json.dumps({"schema": 1, "key": key, "wheel": wheel, "sha256": wheels.file_sha256(folder / WHEEL)})
            )
            before = snapshot(root)
            good, skipped = wheelindex.cached_entries()
            if good:
                wheelindex.publish(good, root / "dest")
            assert outside(root, before, "dest") == {}, (package, wheel)
            for entry in good:
                assert names.project_name(entry.key.package) and names.wheel_filename(entry.wheel)
            assert len(good) + len(skipped) == 1
        finally:
            os.environ.pop("ENVMGR_CACHE_DIR", None) if saved is None else os.environ.update(ENVMGR_CACHE_DIR=saved)


SECRET = b"SECRET-OUTSIDE-THE-RECORD"


@SETTINGS
@given(source=HOSTILE)
def test_a_record_reads_nothing_outside_its_folder_whatever_from_says(source):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "secret.txt").write_bytes(SECRET)
        folder = root / "rec"
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "inside.txt").write_bytes(b"inside")
        source = source.replace("ROOT", str(root))
        record = folder / "m.toml"
        record.write_text(
            f'schema = 1\nplatform = "linux"\n[files]\n"/x/version.json" = {{ from = {json.dumps(source)} }}\n',
            encoding="utf-8",
        )
        try:
            host = load_machine(str(record))
        except InputFileError:
            return  # refused with one line: the answer for a path that leaves
        data = host.read_bytes("/x/version.json")
        assert data != SECRET, source


@given(name=HOSTILE)
def test_a_name_that_passes_is_a_basename_that_stays_under_its_root(name):
    for check in (names.wheel_filename, names.project_name, names.digest):
        try:
            checked = check(name)
        except names.BadName:
            continue
        assert os.path.basename(checked) == checked and "/" not in checked and "\\" not in checked
        assert checked not in (".", "..") and not names.WINDOWS_DEVICE.match(checked)
        root = tempfile.gettempdir()
        assert os.path.dirname(names.under(root, checked)) == root
