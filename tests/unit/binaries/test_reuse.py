"""envmgr/binaries/reuse.py: a soname the package needs that the process already mapped from an app's folder.
Real ELF files from tests/corpus/devicecode laid out as a package, an app and the package's own copy (found by
LD_LIBRARY_PATH): only the file names and the bytes matter to the rule (tests/linux/test_verify_reuse.py proves
it with the real loader)."""

from __future__ import annotations

import shutil
import sys

import pytest

from envmgr.binaries.reuse import Reused, host_name, reused
from envmgr.host.envview import with_env
from envmgr.host.live import LiveHost
from tests.conftest import CORPUS

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="ELF files read by the live host as POSIX paths")
PLAIN = CORPUS / "devicecode" / "libplain-no-device-code.so"  # NEEDED libm.so.6
OTHER = CORPUS / "devicecode" / "libtiny_cuda-sm75-sm90a-compute90.so"


@pytest.fixture
def layout(tmp_path):
    lib = tmp_path / "site" / "pkg" / "lib"
    own, app = tmp_path / "own", tmp_path / "app"
    for folder in (lib, own, app):
        folder.mkdir(parents=True)
    shutil.copy(PLAIN, lib / "libplain.so")
    shutil.copy(PLAIN, own / "libm.so.6")  # the package's own copy of the soname
    shutil.copy(OTHER, app / "libm.so.6")  # another file of the same soname, loaded by the app
    host = with_env(LiveHost(), {"LD_LIBRARY_PATH": str(own)})
    return host, [str(lib / "libplain.so"), str(app / "libm.so.6")], str(lib.parent), str(app / "libm.so.6"), own


def test_the_apps_copy_is_named_with_both_paths_and_sizes(layout):
    host, mapped, root, app_copy, own = layout
    (found,) = reused(host, mapped, [root], {app_copy: "myapp"})
    assert isinstance(found, Reused)
    assert (found.soname, found.importer, found.mapped, found.by) == ("libm.so.6", mapped[0], app_copy, "myapp")
    assert (found.alone, found.how) == (str(own / "libm.so.6"), f"LD_LIBRARY_PATH {own}")
    assert found.mapped_version == f"libm.so.6, {OTHER.stat().st_size:,} bytes"
    assert found.alone_version == f"libm.so.6, {PLAIN.stat().st_size:,} bytes"
    assert found.line.startswith(f"libplain.so needs libm.so.6: reused the app's copy {app_copy} (")
    assert found.as_json()["found_by"] == f"LD_LIBRARY_PATH {own}" and found.as_json()["loaded_by"] == "myapp"


def test_nothing_without_an_app_module_or_when_the_copies_are_the_same(layout, tmp_path):
    host, mapped, root, app_copy, own = layout
    assert reused(host, mapped, [root], {}) == ()  # no --after module
    assert reused(host, mapped, [root], {"/elsewhere/libm.so.6": "x"}) == ()  # mapped, but not by the app
    assert reused(host, mapped, [str(tmp_path / "nothing")], {app_copy: "myapp"}) == ()  # no package library
    shutil.copy(PLAIN, app_copy)  # the same bytes: no difference to name
    assert reused(host, mapped, [root], {app_copy: "myapp"}) == ()
    assert host_name("/a/b/libcudart.so.13.0.96") == "libcudart.so.13.0.96"
