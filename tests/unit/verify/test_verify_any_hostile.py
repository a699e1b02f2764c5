"""`envmgr verify PACKAGE` on damaged installs and hostile packages (issue 34; audit
../shared/audits/hostile-input-2026-12.md N21, N22, N23): the packages are laid out as the audit's repros lay
them out, in a temporary site folder, and run by the real child (verify/child_any.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envmgr.host.child import run_bounded
from envmgr.verify.anyschema import record_filter, well_typed
from envmgr.verify.report import parse_run
from tests.conftest import CUDA_SO, ROOT, run_cli, sample_bytes
from tests.unit.verify.test_verify_any import installed, steps, verify

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="ELF samples and POSIX sessions")


# ---- N21: a damaged or unlisted install is not "pure Python / CPU-only" ------------------------------


def test_n21_record_lists_a_library_that_is_missing(tmp_path):
    site = installed(tmp_path, "gone", "", {"libgone.so": b""})
    (site / "gone" / "libgone.so").unlink()
    code, doc = verify(site, "gone")
    native = steps(doc)["native"]
    assert code == 1 and native["status"] == "fail"
    assert native["summary"] == "RECORD lists libgone.so, which is missing: a damaged install"
    assert "--force-reinstall" in native["fix_command"] and "CPU-only" not in json.dumps(native)


def test_n21_no_record_looks_in_the_package_folder(tmp_path):
    site = installed(tmp_path, "norec", "", {"libggml-cuda.so": sample_bytes(CUDA_SO)})
    (site / "norec-1.0.dist-info" / "RECORD").unlink()
    code, doc = verify(site, "norec")
    s = steps(doc)
    assert s["native"]["status"] == "warn" and s["native"]["summary"].startswith("no RECORD: 1 native library")
    assert any(e.endswith("norec/libggml-cuda.so") for e in s["native"]["evidence"])
    assert s["cuda"]["summary"] == "device code: cubin sm_75 sm_90a; PTX compute_90"  # the library found was read
    empty = installed(tmp_path / "e", "bare", "", {})
    (empty / "bare-1.0.dist-info" / "RECORD").unlink()
    _code, doc = verify(empty, "bare")
    assert steps(doc)["native"]["summary"] == "no RECORD, and no native library in the package folder"


# ---- N22: the package prints a stage record of its own ------------------------------------------


def test_n22_a_record_printed_by_the_package_does_not_crash_verify(tmp_path):
    fake = 'print(\'ENVMGR-VERIFY {"stage": "package", "found": true, "libraries": [null]}\')\n'
    site = installed(tmp_path, "fake", fake, {"libkern.so": sample_bytes(CUDA_SO)})
    code, doc = verify(site, "fake")
    assert code == 1 and steps(doc)["package"]["status"] == "ok"
    assert steps(doc)["cuda"]["summary"] == "device code: cubin sm_75 sm_90a; PTX compute_90"
    text = run_cli("verify", "fake", env={"PYTHONPATH": str(site)})
    assert "Traceback" not in text.stdout + text.stderr


def test_n22_records_with_wrong_types_are_skipped():
    lines = [
        'ENVMGR-VERIFY {"stage": "package", "found": true, "libraries": ["/a.so"]}',
        'ENVMGR-VERIFY {"stage": "package", "found": true, "libraries": "abc"}',
        'ENVMGR-VERIFY {"stage": "load", "libraries": [{"path": null, "ok": true}]}',
        'ENVMGR-VERIFY {"stage": "import", "module": 5, "ok": "yes"}',
    ]
    run = parse_run("\n".join(lines), "", 0, accept=well_typed)
    assert run.get("package")["libraries"] == ["/a.so"] and run.get("load") == {} and run.get("import") == {}
    spoof = 'ENVMGR-VERIFY {"stage": "package", "found": true, "libraries": ["/evil.so"]}'
    run = parse_run("\n".join([lines[0], spoof]), "", 0, accept=record_filter())
    assert run.get("package")["libraries"] == ["/a.so"]  # the child's own record comes first


# ---- N23: a detached process the import starts --------------------------------------------------


def test_n23_verify_timeout_holds_when_the_import_starts_a_detached_process(tmp_path):
    init = (
        "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], "
        "start_new_session=True)\n"
    )
    site = installed(tmp_path, "daemon", init, {"libkern.so": sample_bytes(CUDA_SO)})
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "envmgr", "verify", "daemon", "--timeout", "10", "--json"],
        env={
            "PYTHONPATH": f"{site}:{ROOT}",
            "PATH": "/usr/bin:/bin",
            "NO_COLOR": "1",
            **{f"ENVMGR_{d}_DIR": str(tmp_path / d.lower()) for d in ("CACHE", "CONFIG", "DATA")},
        },
        capture_output=True,
        text=True,
        timeout=50,
        cwd=ROOT,
    )
    assert time.monotonic() - t0 < 35, "verify waited for the detached process"
    doc = json.loads(r.stdout)
    s = steps(doc)
    assert s["child"]["status"] == "warn" and "kept running" in s["child"]["summary"]
    assert s["package"]["status"] == "ok" and doc["child"]["exit_code"] == 0


def test_n23_run_bounded_keeps_the_exit_code_and_stops_at_the_timeout(tmp_path):
    script = tmp_path / "d.py"
    script.write_text(
        "import subprocess, sys\nprint('answer', flush=True)\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'], start_new_session=True)"
        "\nsys.exit(3)\n"
    )
    t0 = time.monotonic()
    done = run_bounded([sys.executable, str(script)], timeout=3)
    assert time.monotonic() - t0 < 10
    assert done.lingered and not done.timed_out and done.returncode == 3 and done.stdout.strip() == b"answer"
    Path(script).unlink()
