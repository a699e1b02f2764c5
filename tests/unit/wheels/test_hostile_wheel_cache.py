"""The wheel cache, the prebuilt downloads and `wheels publish/list/clear` against hostile or shared state
(issue 34; audit ../shared/audits/hostile-input-2026-12.md N1, N10, N16, N17). Entries are written the way
the audit's `mkentry` writes them; the commands that could hang run as a child with a timeout, so a
regression fails the test instead of holding the suite.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from envmgr.wheels import prebuilt
from envmgr.wheels.pick import Candidate
from tests import hostile_zip as hz
from tests.conftest import CUDA_SO, MACHINES, ROOT, run_cli, sample_bytes

HERE_TAG = "py3-none-win_amd64" if sys.platform == "win32" else "py3-none-manylinux_2_17_x86_64"
WHEEL = f"llama_cpp_python-0.3.36-{HERE_TAG}.whl"
POSIX = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and /dev/zero are POSIX")


@pytest.fixture(autouse=True)
def env(tmp_path, monkeypatch):
    values = {
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "ENVMGR_DATA_DIR": str(tmp_path / "data"),
        "ENVMGR_WHEEL_INDEX": "",
        "ENVMGR_PREBUILT_INDEX": "",
    }
    for k, v in values.items():
        monkeypatch.setenv(k, v)
    return values


def wheel_bytes(pad: int = 0) -> bytes:
    extra = {"llama_cpp/pad.bin": os.urandom(pad)} if pad else {}
    return hz.make_zip(
        {"llama_cpp/__init__.py": b"", "llama_cpp/lib/libggml-cuda.so": sample_bytes(CUDA_SO), **extra},
        zipfile.ZIP_DEFLATED,
    )


def mkentry(cache: Path, version: str = "0.3.36") -> Path:
    """The audit's mkentry: a cache entry as store() writes it."""
    key = {
        "package": "llama-cpp-python",
        "version": version,
        "source": "index",
        "cuda": "13.0",
        "archs": "89",
        "generator": "Ninja",
        "cmake_args": "",
        "python_tag": "cp311",
        "platform": "linux_x86_64",
    }
    folder = cache / "wheels" / hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
    folder.mkdir(parents=True)
    data = wheel_bytes()
    name = f"llama_cpp_python-{version}-py3-none-any.whl"
    (folder / name).write_bytes(data)
    (folder / "entry.json").write_text(
        json.dumps({"schema": 1, "key": key, "wheel": name, "sha256": hashlib.sha256(data).hexdigest()})
    )
    return folder


def envmgr(*args: str, env: dict, timeout: float = 60) -> subprocess.CompletedProcess:
    """envmgr as a child: a hang is a failed test (TimeoutExpired), not a stuck suite."""
    return subprocess.run(
        [sys.executable, "-m", "envmgr", *args],
        env={**os.environ, **env, "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


# ---- N1: an unreadable cached wheel is skipped, the others are published ---------------------------


@POSIX
def test_n1_publish_skips_a_cached_wheel_it_cannot_read(tmp_path, env):
    cache = tmp_path / "cache"
    good, bad = mkentry(cache, "0.3.36"), mkentry(cache, "0.3.35")
    wheel = next(bad.glob("*.whl"))
    if os.geteuid() != 0:
        wheel.chmod(0)  # the audit's case (root reads it anyway)
    else:
        wheel.unlink()
        os.mkfifo(wheel)  # as unreadable for root: open() of a FIFO without a writer
    r = envmgr("wheels", "publish", str(tmp_path / "dest"), env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "cannot be read" in r.stderr and str(bad) in r.stderr
    assert (tmp_path / "dest" / "llama-cpp-python" / good.name / next(good.glob("*.whl")).name).is_file()
    assert not (tmp_path / "dest" / "llama-cpp-python" / bad.name).exists()


# ---- N10: FIFOs and /dev/zero in DEST or the cache -------------------------------------------------


@POSIX
def test_n10_publish_refuses_a_fifo_page_in_dest_at_once(tmp_path, env):
    mkentry(tmp_path / "cache")
    for page in ("llama-cpp-python/index.html", "index.html"):
        dest = tmp_path / f"dest-{page.count('/')}"
        (dest / page).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(dest / page)
        r = envmgr("wheels", "publish", str(dest), env=env, timeout=30)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert "not a regular file" in r.stderr and str(dest / page) in r.stderr


@POSIX
def test_n10_a_dev_zero_page_in_dest_is_refused(tmp_path, env):
    mkentry(tmp_path / "cache")
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "index.html").symlink_to("/dev/zero")
    r = envmgr("wheels", "publish", str(dest), env=env, timeout=30)
    assert r.returncode == 2 and "not a regular file" in r.stderr and "Traceback" not in r.stderr


@POSIX
def test_n10_list_and_publish_never_wait_on_a_fifo_entry_file_or_read_dev_zero(tmp_path, env):
    cache = tmp_path / "cache"
    fifo, zero = mkentry(cache, "0.3.36"), mkentry(cache, "0.3.35")
    good = mkentry(cache, "0.3.34")
    (fifo / "entry.json").unlink()
    os.mkfifo(fifo / "entry.json")
    (zero / "entry.json").unlink()
    (zero / "entry.json").symlink_to("/dev/zero")
    r = envmgr("wheels", "list", "--json", env=env, timeout=30)
    assert r.returncode == 0, r.stderr
    rows = {row["digest"]: row for row in json.loads(r.stdout)["wheels"]}
    assert rows[fifo.name]["broken"] and rows[zero.name]["broken"] and not rows[good.name].get("broken")
    dest = tmp_path / "dest"
    foreign = dest / "llama-cpp-python" / "0123456789abcdef0123"  # a foreign folder of DEST's project
    foreign.mkdir(parents=True)
    os.mkfifo(foreign / "entry.json")
    r = envmgr("wheels", "publish", str(dest), env=env, timeout=30)
    assert r.returncode == 0 and "added" in r.stdout, r.stderr


@POSIX
def test_n10_a_fifo_facts_file_in_the_prebuilt_cache_is_not_waited_on(tmp_path, env):
    script = (
        "import os, sys\nfrom envmgr.wheels import prebuilt\nfrom envmgr.wheels.pick import Candidate\n"
        f"cand = Candidate('file:///nowhere/{WHEEL}', '{WHEEL}', '/nowhere', '12.4')\n"
        "slot = prebuilt._slot(cand)\nslot.mkdir(parents=True)\nos.mkfifo(slot / 'facts.json')\n"
        f"(slot / '{WHEEL}').write_bytes(b'x')\nprint(prebuilt._cached_facts(slot, cand))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 0 and r.stdout.strip() == "None", r.stderr


# ---- N16: downloaded prebuilt wheels are listed and cleared ----------------------------------------


def plan(tmp_path: Path, env: dict) -> None:
    folder = tmp_path / "cu124"
    folder.mkdir(exist_ok=True)
    (folder / WHEEL).write_bytes(wheel_bytes())
    r = run_cli(
        "--machine",
        str(MACHINES / "community-buildtools-cuda124.toml"),
        "install",
        "llama-cpp-python",
        "--dry-run",
        "--json",
        "--prebuilt-index",
        str(folder),
        env=env,
    )
    assert r.code == 0, r.stderr


@pytest.mark.parametrize("command", [("wheels", "clear"), ("cache", "clear")])
def test_n16_downloaded_prebuilt_wheels_are_listed_and_cleared(tmp_path, env, command):
    plan(tmp_path, env)
    root = tmp_path / "cache" / "prebuilt"
    assert [p.name for p in root.rglob("*.whl")] == [WHEEL]
    (root / ".download-killed").mkdir()  # a download killed before it was kept
    (root / ".download-killed" / WHEEL).write_bytes(b"partial")
    (root / "mine").mkdir()  # not envmgr's: kept
    (root / "mine" / "notes.txt").write_text("keep")
    listed = run_cli("wheels", "list", "--json", env=env).json()
    assert [d["wheel"] for d in listed["downloads"]] == [WHEEL] and listed["downloads"][0]["bytes"] > 0
    assert "1 downloaded prebuilt wheel(s)" in run_cli("wheels", "list", env=env).stdout
    out = run_cli(*command, env=env)
    assert out.code == 0 and "1 downloaded prebuilt wheel(s)" in out.stdout, out.stdout
    assert sorted(p.name for p in root.iterdir()) == ["mine"] and (root / "mine" / "notes.txt").read_text() == "keep"
    assert run_cli("wheels", "list", "--json", env=env).json()["downloads"] == []


def test_n16_a_download_unused_for_30_days_goes_with_the_next_download(tmp_path, env):
    plan(tmp_path, env)
    root = tmp_path / "cache" / "prebuilt"
    (used,) = [p for p in root.iterdir() if p.name != "mine"]
    old = time.time() - 40 * 86400
    os.utime(used / "facts.json", (old, old))
    stale, fresh = root / ("a" * 24), root / ("b" * 24)
    for slot in (stale, fresh):
        slot.mkdir()
        (slot / "facts.json").write_text("{}")
        (slot / WHEEL).write_bytes(b"x")
    os.utime(stale / "facts.json", (old, old))
    plan(tmp_path, env)  # a cache hit: marks `used` as used now
    assert sorted(p.name for p in root.iterdir()) == sorted([used.name, stale.name, fresh.name])
    folder = tmp_path / "cu124"
    (folder / WHEEL.replace("0.3.36", "0.3.37")).write_bytes(wheel_bytes())
    plan(tmp_path, env)  # a new download: the stale one goes
    names = {p.name for p in root.iterdir()}
    assert stale.name not in names and {used.name, fresh.name} <= names and len(names) == 3


# ---- N17: installs sharing a cache never refuse a good wheel ---------------------------------------

RACE = """
import sys
sys.path.insert(0, sys.argv[4])   # the checkout (the Windows-CPython tier's embeddable Python ignores PYTHONPATH)
from pathlib import Path
from envmgr.wheels import prebuilt, store as wheels
from envmgr.wheels.pick import Candidate, Unusable
folder, name, mode = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
try:
    if mode == "prebuilt":
        code = prebuilt.read_code(Candidate(folder.joinpath(name).resolve().as_uri(), name, str(folder), "12.4"))
        prebuilt.downloaded(Candidate(folder.joinpath(name).resolve().as_uri(), name, str(folder), "12.4"))
    else:
        key = wheels.WheelKey("llama-cpp-python", "0.3.36", "index", "13.0", "89", "Ninja", "", "cp311", "linux_x86_64")
        wheels.store(key, folder / name, 1.0, True, "t")
except Exception as exc:
    print(f"REFUSED {type(exc).__name__}: {exc}")
    sys.exit(1)
print("CHOSEN")
"""


@pytest.mark.parametrize("mode", ["prebuilt", "store"])
def test_n17_concurrent_installs_sharing_a_cache_never_refuse_a_good_wheel(tmp_path, mode):
    """The audit's round: 6 processes at once on one shared cache, 3 rounds with a fresh cache each."""
    folder = tmp_path / "cu124"
    folder.mkdir()
    (folder / WHEEL).write_bytes(wheel_bytes(pad=8 << 20))
    outcomes = []
    for round_ in range(3):
        env = {**os.environ, "ENVMGR_CACHE_DIR": str(tmp_path / f"cache{round_}"), "PYTHONPATH": str(ROOT)}
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", RACE, str(folder), WHEEL, mode, str(ROOT)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for _ in range(6)
        ]
        outcomes += [p.communicate(timeout=120)[0].strip() for p in procs]
    assert outcomes == ["CHOSEN"] * 18, [o for o in outcomes if o != "CHOSEN"]


def test_n17_a_slot_filled_by_another_install_is_used(tmp_path):
    folder = tmp_path / "cu124"
    folder.mkdir()
    (folder / WHEEL).write_bytes(wheel_bytes())
    cand = Candidate((folder / WHEEL).resolve().as_uri(), WHEEL, str(folder), "12.4")
    first = prebuilt.read_code(cand)
    slot = prebuilt._slot(cand)
    before = {p.name: p.stat().st_mtime_ns for p in slot.iterdir()}
    other = tmp_path / "cache" / "prebuilt" / ".download-other"  # what a second install downloaded
    other.mkdir()
    for p in slot.iterdir():
        (other / p.name).write_bytes(p.read_bytes())
    prebuilt._keep(other, slot, cand)
    assert {p.name: p.stat().st_mtime_ns for p in slot.iterdir()} == before
    assert prebuilt.read_code(cand).summary() == first.summary()
