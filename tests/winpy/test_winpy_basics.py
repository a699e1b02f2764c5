"""envmgr's own win32 code paths, run by a real Windows CPython under Wine."""
from __future__ import annotations

import pytest

pytestmark = [pytest.mark.wine, pytest.mark.winpy]


def test_the_interpreter_is_windows_cpython(winpy):
    done = winpy.run("-c", "import sys, envmgr; print(sys.platform, sys.version.split()[0], envmgr.__file__)")
    assert done.returncode == 0, done.stderr
    platform, version, where = done.stdout.split()
    assert platform == "win32"
    assert version.startswith("3.")
    assert where.startswith("Z:\\") and where.endswith("envmgr\\__init__.py")
