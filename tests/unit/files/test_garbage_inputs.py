"""Property: whatever TOML or JSON a user hands envmgr as a machine file (--machine), a snapshot
(--from) or a recipe in their config folder, envmgr answers with an exit code and never a traceback.

The documents are generated: random tables built from the keys the real files use (so the loaders
get past "unknown key" and into the fields), random scalars, lists and tables for the values, and
JSON text and raw bytes. run_cli does not catch exceptions, so any traceback fails the example.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.conftest import MACHINES, run_cli

LINUX = str(MACHINES / "linux-two-toolkits.toml")
KEYS = [
    "schema",
    "platform",
    "env",
    "files",
    "dirs",
    "links",
    "registry",
    "commands",
    "python",
    "meta",
    "argv",
    "returncode",
    "stdout",
    "stderr",
    "timed_out",
    "start_error",
    "match",
    "text",
    "hex",
    "size",
    "from",
    "encoding",
    "type",
    "value",
    "executable",
    "site_packages",
    "summary",
    "identity",
    "notes",
    "set",
    "unset",
    "prepend",
    "append",
    "remove",
    "PATH",
    "name",
    "kind",
    "description",
    "cmake_args",
    "drop_env",
    "params",
    "required_files",
    "cuda_architectures",
    "generator",
    "short_temp",
    "package",
    "C:\\x\\a.dll",
    "/usr/local/cuda",
    "HKLM\\SOFTWARE\\NVIDIA Corporation",
]

scalars = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.booleans(),
    st.text(max_size=12),
    st.sampled_from(
        [
            "windows",
            "linux",
            "cmake",
            "REG_SZ",
            "REG_DWORD",
            "REG_BINARY",
            "glob",
            "utf-16-le",
            "zz",
            "4d5a",
            "../x",
            "/dev/null",
        ]
    ),
    st.floats(allow_nan=False, allow_infinity=False),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
    max_leaves=12,
)
documents = st.dictionaries(st.sampled_from(KEYS), values, max_size=8).map(
    lambda d: {"schema": 1, **d} if d.get("schema") is None and len(d) % 2 else d
)


def _toml(doc: dict) -> bytes | None:
    import tomlkit

    try:
        return tomlkit.dumps(doc).encode("utf-8")
    except Exception:  # tomlkit cannot write every shape (e.g. mixed arrays of tables): not our input
        return None


inputs = st.one_of(
    documents.map(_toml).filter(lambda b: b is not None),
    documents.map(lambda d: json.dumps(d).encode("utf-8")),
    st.binary(max_size=200),
    st.text(max_size=200).map(lambda t: t.encode("utf-8")),
)

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


def _clean(res) -> None:
    assert "Traceback" not in res.stdout + res.stderr
    assert res.code in (0, 1, 2, 3), res.stderr


@pytest.fixture
def env(tmp_path):
    return {"ENVMGR_CONFIG_DIR": str(tmp_path / "cfg"), "ENVMGR_CACHE_DIR": str(tmp_path / "cache")}


@SETTINGS
@given(data=inputs)
def test_garbage_machine_file(data, tmp_path, env):
    path = tmp_path / "machine.toml"
    path.write_bytes(data)
    _clean(run_cli("--machine", str(path), "list", "--json", env=env))


@SETTINGS
@given(data=inputs)
def test_garbage_snapshot(data, tmp_path, env):
    path = tmp_path / "env.toml"
    path.write_bytes(data)
    _clean(run_cli("--machine", LINUX, "export", "--from", str(path), "--format", "sh", env=env))


@SETTINGS
@given(data=inputs)
def test_garbage_user_recipe(data, tmp_path, env):
    folder = tmp_path / "cfg" / "recipes"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "garbage.toml").write_bytes(data)
    listing = run_cli("recipes", env=env)
    _clean(listing)
    assert listing.code == 0 and "llama-cpp-python" in listing.stdout  # a bad file never hides the built-ins
    _clean(run_cli("--machine", LINUX, "export", "--recipe", "garbage", env=env))
