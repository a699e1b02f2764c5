"""Blocking findings whose fix is another installed toolkit print it as a command to paste (issue 33,
deliverable 6): F13 (a GPU the chosen CUDA dropped) and F17 (a driver too old for it) on the recorded
Linux machine with CUDA 13.0 and 12.4, a TITAN V (sm_70) and driver 570."""
from __future__ import annotations

import json

from tests.conftest import MACHINES, run_cli

TWO = str(MACHINES / "linux-two-toolkits.toml")


def test_f13_and_f17_name_the_toolkit_that_fits():
    r = run_cli("--machine", TWO, "doctor", "--only", "F13,F17", "--json")
    found = {f["id"]: f for f in json.loads(r.stdout)["checks"]}
    assert found["F13"]["status"] == "fail" and found["F17"]["status"] == "fail"
    assert found["F13"]["fix_command"] == "envmgr shell --cuda 12.4"
    assert found["F17"]["fix_command"] == "envmgr shell --cuda 12.4"


def test_with_the_toolkit_that_fits_they_pass():
    r = run_cli("--machine", TWO, "doctor", "--only", "F13,F17", "--cuda", "12.4", "--json")
    assert {f["id"]: f["status"] for f in json.loads(r.stdout)["checks"]} == {"F13": "ok", "F17": "ok"}
