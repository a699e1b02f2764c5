"""envmgr/verify/plain.py: the process verify judges is a plain new one, the active envmgr environment left out
(ENVMGR_ACTIVE/ENVMGR_RESTORE as `envmgr shell` sets them), unless --inherit-env."""

from __future__ import annotations

import json

from envmgr.host.recorded import RecordedHost
from envmgr.verify.plain import INHERITED, PLAIN, plain_host


def _host(platform: str, env: dict[str, str]) -> RecordedHost:
    return RecordedHost({"schema": 1, "platform": platform, "env": env})


def test_the_active_environment_is_undone():
    active = {
        "PATH": "/opt/cuda/bin:/usr/bin",
        "CUDA_HOME": "/opt/cuda",
        "LANG": "C.UTF-8",
        "ENVMGR_ACTIVE": "cuda-12.4",
        "ENVMGR_RESTORE": json.dumps({"PATH": "/usr/bin", "CUDA_HOME": None}),
    }
    host, mode, words = plain_host(_host("linux", active))
    assert mode == PLAIN and words == "a plain process (the active envmgr environment cuda-12.4 left out)"
    assert dict(host.env) == {"PATH": "/usr/bin", "LANG": "C.UTF-8"}
    assert host.platform == "linux"


def test_windows_names_fold_and_a_restore_without_a_name_is_still_left_out():
    env = {"Path": "C:\\CUDA\\bin;C:\\Windows", "envmgr_restore": json.dumps({"PATH": "C:\\Windows"})}
    host, mode, words = plain_host(_host("windows", env))
    assert mode == PLAIN and words == "a plain process (the active envmgr environment an envmgr environment left out)"
    assert {k.upper(): v for k, v in host.env.items()} == {"PATH": "C:\\Windows"}


def test_no_active_environment_and_inherit_env_keep_it_as_is():
    env = {"PATH": "/usr/bin", "ENVMGR_ACTIVE": "x", "ENVMGR_RESTORE": json.dumps({"PATH": "/bin"})}
    host, mode, words = plain_host(_host("linux", {"PATH": "/usr/bin"}))
    assert (dict(host.env), mode, words) == ({"PATH": "/usr/bin"}, PLAIN, "a plain process")
    host, mode, words = plain_host(_host("linux", env), inherit=True)
    assert (dict(host.env), mode) == (env, INHERITED) and "--inherit-env" in words
