"""envmgr/snapshot/form_json.py: the JSON form of a snapshot carries the TOML's content, op by op."""

from __future__ import annotations

from envmgr.snapshot.form import from_toml
from envmgr.snapshot.form_json import snapshot_json
from tests.conftest import MACHINES

LINUX = str(MACHINES / "linux-two-toolkits.toml")


def test_every_operation_and_header_field_reaches_the_json(cli, tmp_path):
    made = cli("--machine", LINUX, "export", "--format", "toml")
    assert made.code == 0, made.stderr
    snap = from_toml(made.stdout, "export")
    data = snapshot_json(snap)
    assert (data["schema"], data["platform"], data["created"]) == (1, "linux", snap.created)
    assert data["summary"]["cuda_path"] == "/usr/local/cuda-13.0" and data["identity"] == dict(snap.identity)
    assert data["notes"] == ["2 CUDA toolkits; using the newest, 13.0.88 (pin one with --cuda)"]
    env = data["env"]
    assert env["CUDACXX"] == {"set": "/usr/local/cuda-13.0/bin/nvcc"}
    assert env["PATH"] == {"remove": ["/usr/local/cuda-12.4/bin"], "prepend": ["/usr/local/cuda-13.0/bin"]}
    assert env["LD_LIBRARY_PATH"] == {"prepend": ["/usr/local/cuda-13.0/targets/x86_64-linux/lib"]}
    # the CLI's JSON of the same file is this function's output
    (tmp_path / "snap.toml").write_text(made.stdout, encoding="utf-8")
    shown = cli("--machine", LINUX, "export", "--from", str(tmp_path / "snap.toml"), "--format", "json")
    assert shown.code == 0, shown.stderr
    assert shown.json() == data


def test_unset_is_true_and_an_empty_list_stays_a_list():
    text = (
        'schema = 1\nplatform = "linux"\n\n[env]\nCC = "gcc-12"\n\n[env.CUDA_HOME]\nunset = true\n\n'
        "[env.PATH]\nappend = []\n"
    )  # hand-made: the op kinds the export above lacks
    env = snapshot_json(from_toml(text, "hand-made"))["env"]
    assert env == {"CC": {"set": "gcc-12"}, "CUDA_HOME": {"unset": True}, "PATH": {"append": []}}
