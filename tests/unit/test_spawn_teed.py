"""spawn.run_teed: a build's output shown and copied to its log (install --recipe keeps the log of a failed build
and diagnoses it). A real child: this Python, writing to stdout and stderr and exiting with its own code."""

from __future__ import annotations

import os
import sys

from envmgr import spawn

CHILD = (
    "import sys; print('out line', flush=True); sys.stderr.write('fatal error: cublas_v2.h: No such file\\n'); "
    "sys.exit(3)"
)


def test_the_childs_code_and_both_streams_in_the_log(tmp_path, capfd):
    log = tmp_path / "build.log"
    code = spawn.run_teed([sys.executable, "-c", CHILD], dict(os.environ), str(log))
    assert code == 3
    text = log.read_bytes().decode()
    assert "out line" in text and "fatal error: cublas_v2.h: No such file" in text
    shown = capfd.readouterr().out
    assert "out line" in shown and "cublas_v2.h" in shown  # shown live as well, on stdout


def test_under_json_the_copy_goes_to_stderr(tmp_path, capfd):
    with spawn.children_print_to_stderr():
        assert spawn.run_teed([sys.executable, "-c", CHILD], dict(os.environ), str(tmp_path / "b.log")) == 3
    out, err = capfd.readouterr()
    assert out == "" and "out line" in err
