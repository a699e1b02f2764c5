"""Each command resolves its snapshot once: one discovery + composition (one vcvars run on Windows).

Under --machine nothing is cached, so every resolve composes again: counting compose() counts the
captures. `export --recipe/--activate` composed twice before, `install --recipe` twice (issue 12)."""

from __future__ import annotations

import pytest

from envmgr.errors import EnvmgrError
from tests.conftest import MACHINES

LINUX = str(MACHINES / "linux-two-toolkits.toml")


class Stop(EnvmgrError):
    exit_code = 9


@pytest.fixture
def captures(monkeypatch):
    from envmgr.snapshot import compose as compose_mod

    calls = []
    real = compose_mod.compose

    def counting(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(compose_mod, "compose", counting)
    return calls


@pytest.mark.parametrize(
    "extra",
    [
        (),
        ("--format", "sh"),
        ("--activate", "--format", "sh"),
        ("--recipe", "llama-cpp-python", "--format", "sh"),
        ("--recipe", "llama-cpp-python", "--activate", "--format", "fish"),
        ("--recipe", "llama-cpp-python", "--format", "json"),
    ],
    ids=" ".join,
)
def test_export_resolves_once(cli, captures, extra):
    got = cli("--machine", LINUX, "export", "--cuda", "12.4", *extra)
    assert got.code == 0, got.stderr
    assert len(captures) == 1


def test_install_resolves_once(cli, captures, monkeypatch):
    # Stopped right after the point where install used to resolve a second time (for the CUDA version).
    from envmgr.wheels import store as wheels

    def stop(env):
        raise Stop("stopped after resolving")

    monkeypatch.setattr(wheels, "build_facts", stop)
    got = cli(
        "--machine", LINUX, "install", "--cuda", "12.4", "--recipe", "llama-cpp-python", "llama-cpp-python==0.3.16"
    )
    assert got.code == 9 and "stopped after resolving" in got.stderr, got.stderr
    assert len(captures) == 1
