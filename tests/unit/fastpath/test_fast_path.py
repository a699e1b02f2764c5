"""The console script's fast path (envmgr/fastpath/main.py) answers cache hits byte for byte as the full CLI.

Every format, `--activate` (with and without an active environment), `run`, `--version`: the
console script's stdout, stderr and exit code are compared with envmgr.cli.main:main's on the same cache
entry. The entries are written by cache.store, as a capture writes them; their snapshots hold the
values shells find hard (quotes, `$`, backslashes, newlines, non-ASCII, empty entries).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envmgr import __version__
from envmgr.fastpath import main as _fast
from envmgr.cache import store as cache
from envmgr.cache import key as cachekey
from envmgr.snapshot.envdelta import APPEND, PREPEND, REMOVE, SET, UNSET, EnvDelta, VarOp
from envmgr.snapshot.form import Snapshot, to_toml

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the fast path runs on POSIX only")

SCRIPT = Path(sys.executable).with_name("envmgr")
FULL = [sys.executable, "-c", "from envmgr.cli.main import main; main()"]
FORMATS = ("toml", "json", "sh", "fish", "ps1", "cmd")

SUMMARY = (("cuda", "13.0.88"), ("cuda_short", "13.0"), ("arch", "x64"))
PLAIN = EnvDelta(
    "linux",
    (
        VarOp("CUDA_PATH", SET, "/opt/cuda-13.0"),
        VarOp("QUOTED", SET, 'it\'s "$HOME" \\ `x` ü 中'),
        VarOp("PATH", PREPEND, ("/opt/cuda-13.0/bin", "/opt/with space")),
        VarOp("LD_LIBRARY_PATH", APPEND, ("/opt/cuda-13.0/lib64",)),
        VarOp("GONE", UNSET),
    ),
)
MULTILINE = EnvDelta("linux", (VarOp("NOTE", SET, "line one\nline two"), VarOp("PATH", PREPEND, ("/x/bin",))))
REMOVING = EnvDelta("linux", (VarOp("PATH", REMOVE, ("/usr/local/cuda/bin",)), VarOp("PATH", PREPEND, ("/y/bin",))))
CASES = {"plain": PLAIN, "multiline": MULTILINE, "removing": REMOVING}


@pytest.fixture
def env(tmp_path):
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ENVMGR_", "CUDA"))}
    return {
        **base,
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "NO_COLOR": "1",
        "PATH": "/usr/bin:/bin",
        "GONE": "here",
        "LD_LIBRARY_PATH": "/lib/a::/lib/b",
    }


def store(env: dict, delta: EnvDelta, watched: Path, *more: Path, **sel) -> str:
    selectors = {"vs": None, "toolset": None, "arch": "x64", "cuda": None, "python": [], **sel}
    key = cachekey.cache_key("linux", selectors, env, __version__)
    assert key == cache.cache_key("linux", selectors, env)  # one rule, two callers
    text = to_toml(Snapshot("linux", delta, SUMMARY, (("cuda", "/opt/cuda-13.0"),), (), __version__, "2026-11-23"))
    old = os.environ.get("ENVMGR_CACHE_DIR")
    os.environ["ENVMGR_CACHE_DIR"] = env["ENVMGR_CACHE_DIR"]
    try:
        cache.store(key, text, [str(watched), *map(str, more)])
    finally:
        os.environ.pop("ENVMGR_CACHE_DIR") if old is None else os.environ.__setitem__("ENVMGR_CACHE_DIR", old)
    return key


def both(args: list[str], env: dict) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    fast = subprocess.run([str(SCRIPT), *args], env=env, capture_output=True)
    full = subprocess.run([*FULL, *args], env=env, capture_output=True)
    return fast, full


def same(args: list[str], env: dict) -> subprocess.CompletedProcess:
    fast, full = both(args, env)
    assert (fast.returncode, fast.stdout, fast.stderr) == (full.returncode, full.stdout, full.stderr), args
    return fast


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_format_is_byte_identical(case, env, tmp_path):
    watched = tmp_path / "vcvarsall.bat"
    watched.write_text("x")
    store(env, CASES[case], watched, cuda="13.0")
    for fmt in FORMATS:
        answered = _fast.plan(["export", "--cuda", "13.0", "--format", fmt], env) is not None
        # Scripts of a snapshot that removes PATH entries depend on the caller's PATH, and cmd cannot
        # hold a line break: those are the full path's.
        full_only = (case == "removing" and fmt not in ("toml", "json")) or (case == "multiline" and fmt == "cmd")
        assert answered != full_only, fmt
        same(["export", "--cuda", "13.0", "--format", fmt], env)
        same(["export", "--cuda=13.0", f"--format={fmt}"], env)


@pytest.mark.parametrize("active", [False, True])
def test_activation_scripts_are_byte_identical(active, env, tmp_path):
    watched = tmp_path / "w"
    watched.write_text("x")
    store(env, PLAIN, watched)
    if active:  # switching from an active environment: restores what it changed
        env = {
            **env,
            "ENVMGR_ACTIVE": "cuda-12.4",
            "ENVMGR_RESTORE": json.dumps({"OLD": None, "PATH": "/usr/bin"}),
            "OLD": "1",
        }
    for fmt in ("sh", "fish", "ps1", "cmd"):
        assert _fast.plan(["export", "--activate", "--format", fmt], env) is not None
        same(["export", "--activate", "--format", fmt], env)
    same(["export", "--activate", "--format", "json"], env)  # a usage error, from the full path


def test_run_gives_the_child_the_same_environment_and_exit_code(env, tmp_path):
    watched = tmp_path / "w"
    watched.write_text("x")
    store(env, PLAIN, watched, cuda="13.0")
    assert _fast.plan(["run", "--cuda", "13.0", "--", "env"], env) is not None
    dump = [sys.executable, "-c", "import os, json; print(json.dumps(dict(sorted(os.environ.items()))))"]
    fast, full = both(["run", "--cuda", "13.0", "--", *dump], env)
    strip = lambda out: {k: v for k, v in json.loads(out).items() if k != "_"}  # noqa: E731
    assert fast.returncode == full.returncode == 0
    assert strip(fast.stdout) == strip(full.stdout)
    assert strip(fast.stdout)["QUOTED"] == PLAIN.ops[1].value
    same(["run", "--cuda", "13.0", "--", "sh", "-c", "exit 7"], env)
    same(["run", "--cuda", "13.0", "--", "no-such-program-envmgr"], env)


def test_version_is_the_same(env):
    assert _fast.plan(["--version"], env) is not None
    same(["--version"], env)
    same(["-V"], env)


def test_a_stale_or_cleared_entry_falls_back(env, tmp_path):
    watched = tmp_path / "w"
    watched.write_text("x")
    store(env, PLAIN, watched)
    args = ["export", "--format", "sh"]
    assert _fast.plan(args, env) is not None
    watched.write_text("changed!")
    assert _fast.plan(args, env) is None
    store(env, PLAIN, watched)
    assert _fast.plan(args, env) is not None
    for name in ("CUDA_PATH", "CUDA_HOME", "CONDA_PREFIX", "CUDA_PATH_V12_4", "cuda_path_v13_0"):
        assert _fast.plan(args, {**env, name: "/elsewhere"}) is None, name  # another key
    subprocess.run([*FULL, "cache", "clear"], env=env, check=True, capture_output=True)
    assert _fast.plan(args, env) is None
    assert not list((tmp_path / "cache" / "snapshots").glob("*.fast"))


@pytest.mark.parametrize(
    "args",
    [
        ["export", "--format", "dotenv"],
        ["export", "--format", "github"],
        ["export", "--refresh"],
        ["export", "--python", "python3"],
        ["export", "--from", "x.toml"],
        ["export", "--recipe", "r"],
        ["export", "--cuda", "/opt/cuda"],
        ["export", "--cuda"],
        ["export", "--format", "sh", "--format", "sh"],
        ["export", "--cuda", "-x"],
        ["run", "true"],
        ["run", "--"],
        ["run", "--", "--", "true"],
        ["list"],
        [],
        ["--help"],
        ["export", "--activate", "--format", "toml"],
    ],
)
def test_unusual_forms_go_to_the_full_cli(args, env, tmp_path):
    watched = tmp_path / "w"
    watched.write_text("x")
    store(env, PLAIN, watched)
    assert _fast.plan(args, env) is None


@pytest.mark.parametrize("var", ["ENVMGR_MACHINE", "ENVMGR_WINEPREFIX", "_ENVMGR_COMPLETE"])
def test_other_hosts_and_completion_go_to_the_full_cli(var, env, tmp_path):
    watched = tmp_path / "w"
    watched.write_text("x")
    store(env, PLAIN, watched)
    assert _fast.plan(["export", "--format", "sh"], env) is not None
    assert _fast.plan(["export", "--format", "sh"], {**env, var: "x"}) is None


def test_cache_dir_matches_platformdirs(monkeypatch, tmp_path):
    for xdg in (None, "", "  ", str(tmp_path / "xdg")):
        monkeypatch.delenv("ENVMGR_CACHE_DIR", raising=False)
        if xdg is None:
            monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_CACHE_HOME", xdg)
        assert Path(_fast.cache_dir(os.environ)) == cache.cache_dir()


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        17,
        -3,
        "",
        "plain",
        'quote" back\\slash',
        "tab\tnl\ncr\r\b\f\x00\x1f\x7f",
        "ü 中 \u2028 😀",
        ["a", None, 3],
        {"b": 1, "a": {"z": [], "y": "ü"}},
        {"sel": {"cuda": None}, "env": {}},
    ],
)
def test_dumps_is_json_dumps(value):
    for ascii_only in (True, False):
        assert cachekey.dumps(value, ensure_ascii=ascii_only) == json.dumps(
            value, sort_keys=True, ensure_ascii=ascii_only
        )


HEAVY = ("typing", "click", "envmgr.cli.main", "envmgr.host.live", "tomllib", "pathlib", "hashlib", "json")
PROBE = (
    "import sys\n"
    "sys.argv = ['envmgr', *sys.argv[1:]]\n"
    "try:\n    from envmgr.fastpath.main import main; main()\nexcept SystemExit:\n    pass\n"
    "sys.stderr.write(repr(sorted(m for m in sys.modules if m in %r)))\n" % (HEAVY,)
)


@pytest.mark.parametrize(
    "args", [["--version"], ["export", "--cuda", "13.0", "--format", "sh"]], ids=["version", "cached export"]
)
def test_the_fast_path_imports_none_of_the_heavy_modules(args, env, tmp_path):
    """A cache hit costs Python's start and a few ms (issue 14): `typing` alone is ~20 ms here (a
    `from typing import Mapping` in a module the fast path imported made --version +20 ms)."""
    watched = tmp_path / "vcvarsall.bat"
    watched.write_text("x")
    store(env, PLAIN, watched, cuda="13.0")
    done = subprocess.run([sys.executable, "-S", "-c", PROBE, *args], env=env, capture_output=True, text=True)
    assert done.stdout and done.stderr.endswith("[]"), done.stderr
