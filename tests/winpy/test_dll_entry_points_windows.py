"""Missing entry points under the real Windows loader: Windows CPython (under Wine) loads mingw-built DLLs
(tests/pesyms_build.py) whose libfoo.dll import is satisfied by name by an older copy first on PATH, which
lacks foo_new, ordinal 7 and the target of libfwd.dll's forwarder. envmgr doctor --dll, run by the same
Windows CPython with the same PATH, must name exactly the functions the loader could not bind; after the
fix it names (the newer copy put into the package's folder) the loader binds them all and the calls return.

Wine 8 deviates from Windows here: Windows fails the load with [WinError 127] "The specified procedure
could not be found"; Wine binds a missing import to a stub, so the load succeeds and the first call fails
with "unimplemented function libfoo.dll.foo_new" (0x80000100). The oracle is therefore the call and the
loader's own message naming DLL.FUNCTION, not the load status (docs/doctor.md, the --dll section).
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from tests import pesyms_build
from tests.conftest import ROOT, need
from tests.winpy.conftest import windows_path

pytestmark = [pytest.mark.wine, pytest.mark.winpy]
PROBE = ROOT / "tests" / "winpy" / "entry_probe.py"
NAMES = ("imp_ok", "imp_name", "imp_ord", "imp_fwd")
_UNIMPLEMENTED = re.compile(r"unimplemented function (\S+)\.(\S+?),? aborting")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return pesyms_build.built_or_skip(tmp_path_factory, "entry")


def loader(winpy, built) -> tuple[dict, set[tuple[str, str]]]:
    env = {"WINEPATH": f"{windows_path(built / 'old')};{windows_path(built / 'new')}"}
    done = winpy.run(windows_path(PROBE), windows_path(built / "pkg"), *NAMES, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), set(_UNIMPLEMENTED.findall(done.stderr))


def doctor(winpy, built, name: str) -> dict:
    env = {"WINEPATH": f"{windows_path(built / 'old')};{windows_path(built / 'new')}"}
    done = winpy.envmgr("doctor", "--dll", windows_path(built / "pkg" / f"{name}.dll"), "--json", env=env)
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(done.stdout)
    assert done.returncode == (0 if data["loads"] else 1)
    return data


def test_the_loader_fails_where_envmgr_says_and_binds_after_the_fix(winpy, built):
    real, unbound = loader(winpy, built)
    # Windows: [WinError 127] at load; Wine 8: a stub whose call fails and names DLL.FUNCTION.
    failed = {n for n, r in real.items() if r["winerror"] == 127 or r["call_error"]}
    assert failed == {"imp_name", "imp_ord", "imp_fwd"}, real
    assert real["imp_ok"]["result"] == 1
    if not any(r["winerror"] == 127 for r in real.values()):  # Wine: its own words name each one
        assert unbound == {("libfoo.dll", "foo_new"), ("libfoo.dll", "7"), ("libfwd.dll", "fwd_func")}
    said = {n: doctor(winpy, built, n) for n in NAMES}
    assert {n for n, d in said.items() if d["missing_entry_points"]} == failed
    assert said["imp_ok"]["loads"] is True
    for name, (dll, func) in {
        "imp_name": ("libfoo.dll", "foo_new"),
        "imp_ord": ("libfoo.dll", "7"),
        "imp_fwd": ("libfwd.dll", "fwd_func"),
    }.items():
        [entry] = said[name]["missing_entry_points"]
        assert entry["dll"].lower() == dll and entry["function"].split(" ")[-1 if func == "7" else 0] == func
        assert (dll, func) in unbound or real[name]["winerror"] == 127, unbound
        if dll == "libfoo.dll":
            assert entry["path"].lower() == windows_path(built / "old" / "libfoo.dll").lower()
            good = [c for c in entry["copies"] if c["has_function"]]
            assert [c["version"] for c in good] == ["1.2.0.0"] and entry["version"] == "1.0.0.0"
            assert entry["fix"].lower().startswith(f"copy {windows_path(built / 'new' / 'libfoo.dll')} into".lower())

    shutil.copyfile(built / "new" / "libfoo.dll", built / "pkg" / "libfoo.dll")  # the fix doctor names
    try:
        after, unbound = loader(winpy, built)
        assert {n: r["result"] for n, r in after.items()} == {"imp_ok": 1, "imp_name": 2, "imp_ord": 3, "imp_fwd": 2}, (
            after
        )
        assert unbound == set()
        assert all(doctor(winpy, built, n)["missing_entry_points"] == [] for n in NAMES)
    finally:
        (built / "pkg" / "libfoo.dll").unlink()


FIX = ROOT / "tests" / "winpy" / "closure_fix.py"
OMP = "libomp140.x86_64"


def test_install_closure_fix_makes_the_real_loader_bind_and_undo_restores(winpy, tmp_path):
    """The 2026 case in the install flow's closure: another application's older libomp140.x86_64.dll first
    on PATH; closure (wheels/closure.py, run by Windows CPython on the live host) names the entry points,
    --fix copies the newer runtime into llama_cpp\\lib, the loader binds; undo removes it again."""
    missing = pesyms_build.missing_tools()
    need(not missing, f"needs {', '.join(missing)}")
    built = pesyms_build.build(tmp_path / "omp", OMP)
    lib = tmp_path / "site" / "llama_cpp" / "lib"
    lib.mkdir(parents=True)
    for dll in (built / "pkg").glob("*.dll"):
        shutil.copyfile(dll, lib / dll.name)
    env = {"WINEPATH": f"{windows_path(built / 'old')};{windows_path(built / 'new')}"}

    def probe() -> dict:
        done = winpy.run(windows_path(PROBE), windows_path(lib), *NAMES, env=env)
        assert done.returncode == 0, done.stderr
        return {n: r["result"] for n, r in json.loads(done.stdout.strip().splitlines()[-1]).items()}

    def fix(*args: str) -> dict:
        done = winpy.run(windows_path(FIX), *args, env=env)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    assert probe() == {"imp_ok": 1, "imp_name": None, "imp_ord": None, "imp_fwd": None}
    out = fix(windows_path(lib), windows_path(tmp_path / "no-cuda"), windows_path(tmp_path / "manifests"))
    assert sorted(out["entries"]) == [
        ["libfwd.dll", f"fwd_func (forwarded to {OMP}.foo_new, module {OMP} not found)"],
        [f"{OMP}.dll", "foo_new"],
        [f"{OMP}.dll", "ordinal 7"],
    ]
    assert out["missing"] == [] and out["applied"] == [
        f"copied {windows_path(built / 'new' / (OMP + '.dll'))} -> {windows_path(lib / (OMP + '.dll'))}"
    ]
    # The forwarder into "libomp140.x86_64" never binds (no ".dll" added to a dotted module name), and the
    # closure said so: out["entries"] lists it, and no copy is planned for it.
    assert probe() == {"imp_ok": 1, "imp_name": 2, "imp_ord": 3, "imp_fwd": None}
    undo = fix("", "", "", windows_path(tmp_path / "manifests" / out["manifest"].split("\\")[-1]))
    assert undo["undo"] == [f"removed {windows_path(lib / (OMP + '.dll'))}"]
    assert probe()["imp_name"] is None and (lib / "imp_name.dll").exists()
