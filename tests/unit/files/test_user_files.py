"""The one writer for files at a path the user gave (issue 22; audit S2, C10): `record -o`,
`verify --save-output`, `run --log`, ENVMGR_SLOT slots and fix-msbuild's PLAN.result.json.

A regular file is replaced atomically (a link to one keeps being a link); a FIFO, a device or a
link to one is written in place, never renamed over; a FIFO nobody reads is refused at once; no
folder is made and nothing is written beside the path. Devices are never touched: the "device"
here is a symlink in a temporary folder to /dev/null, and what is checked is that the link and
/dev/null are what they were (the old code renamed a regular file over the link).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from envmgr.files.atomic import hold_for_writing, write_user_file
from tests.conftest import EXAMPLES, MACHINES, ROOT

pytestmark = pytest.mark.posix  # FIFOs and /dev/null

LINUX = str(MACHINES / "linux-two-toolkits.toml")
WIN = str(EXAMPLES / "community-buildtools-cuda124.toml")


def envmgr(
    *args: str, tmp: Path, timeout: float = 60, limit_mb: int | None = None, env: dict | None = None
) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "ENVMGR_CACHE_DIR": str(tmp / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp / "config"),
        "PYTHONPATH": str(ROOT),
        "NO_COLOR": "1",
        **(env or {}),
    }
    env.pop("ENVMGR_MACHINE", None)

    def cap():  # the old code read /dev/zero whole: never let a failing run take the machine's memory
        import resource  # POSIX only, as this module

        if limit_mb:
            resource.setrlimit(resource.RLIMIT_AS, (limit_mb << 20, limit_mb << 20))

    return subprocess.run(
        [sys.executable, "-m", "envmgr", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=tmp,
        preexec_fn=cap,
    )


class Reader(threading.Thread):
    """Reads a FIFO to its end (as `cat FIFO` would), so a writer with a reader can be tested."""

    def __init__(self, fifo: Path):
        super().__init__(daemon=True)
        self.fifo, self.data = fifo, b""
        self.start()

    def run(self):
        with open(self.fifo, "rb") as fh:
            self.data = fh.read()


def kind(path: Path) -> str:
    st = os.lstat(path)
    return (
        "link"
        if stat.S_ISLNK(st.st_mode)
        else "fifo"
        if stat.S_ISFIFO(st.st_mode)
        else "char"
        if stat.S_ISCHR(st.st_mode)
        else "file"
        if stat.S_ISREG(st.st_mode)
        else "other"
    )


@pytest.fixture
def devnull_link(tmp_path) -> Path:
    link = tmp_path / "NODE"
    link.symlink_to(os.devnull)
    yield link
    assert kind(Path(os.devnull)) == "char", "/dev/null was replaced"


# --- the writer itself ----------------------------------------------------------------------------


def test_a_regular_file_is_replaced_and_a_link_to_it_stays_a_link(tmp_path):
    real = tmp_path / "real.toml"
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "link.toml"
    link.symlink_to(real)
    saved = write_user_file(link, b"new", backup=True)
    assert kind(link) == "link" and real.read_text() == "new" and saved == real.with_name("real.toml.bak")
    assert saved.read_text() == "old" and stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.toml", "real.toml", "real.toml.bak"]


def test_a_new_file_honours_the_umask_not_0600(tmp_path):
    write_user_file(tmp_path / "new.toml", b"x")
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE((tmp_path / "new.toml").stat().st_mode) == 0o666 & ~mask


def test_a_link_to_a_device_is_written_through_never_replaced(devnull_link):
    assert write_user_file(devnull_link, b"x" * 100, backup=True) is None
    assert kind(devnull_link) == "link" and not devnull_link.with_name("NODE.bak").exists()


def test_a_fifo_with_a_reader_gets_the_bytes_in_place(tmp_path):
    fifo = tmp_path / "F"
    os.mkfifo(fifo)
    reader = Reader(fifo)
    for _ in range(200):  # wait until the reader has it open
        try:
            write_user_file(fifo, b"hello fifo\n")
            break
        except OSError:
            threading.Event().wait(0.01)
    reader.join(10)
    assert reader.data == b"hello fifo\n" and kind(fifo) == "fifo"


def test_a_fifo_nobody_reads_is_refused_at_once(tmp_path):
    fifo = tmp_path / "F"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="nothing reads it"):
        write_user_file(fifo, b"x")
    with pytest.raises(OSError, match="nothing reads it"):
        hold_for_writing(fifo)
    assert kind(fifo) == "fifo" and sorted(p.name for p in tmp_path.iterdir()) == ["F"]


def test_a_folder_is_refused_and_no_folder_is_made(tmp_path):
    with pytest.raises(IsADirectoryError):
        write_user_file(tmp_path, b"x")
    with pytest.raises(FileNotFoundError, match="its folder does not exist"):
        write_user_file(tmp_path / "elsewhere" / "x.toml", b"x")
    assert list(tmp_path.iterdir()) == []


# --- the commands ---------------------------------------------------------------------------------


def test_s2_record_to_a_link_to_a_device_writes_through_it(tmp_path, devnull_link):
    out = envmgr("--machine", LINUX, "record", "-o", str(devnull_link), tmp=tmp_path)
    assert out.returncode == 0, out.stderr
    assert kind(devnull_link) == "link" and not (tmp_path / "NODE.bak").exists()
    assert "previous file kept" not in out.stderr


def test_s2_record_to_a_fifo_with_no_reader_is_one_line_and_leaves_the_fifo(tmp_path):
    fifo = tmp_path / "ff.toml"
    os.mkfifo(fifo)
    out = envmgr("--machine", LINUX, "record", "-o", str(fifo), tmp=tmp_path, timeout=30)
    assert out.returncode == 2 and "nothing reads it" in out.stderr and "None" not in out.stderr
    assert len(out.stderr.strip().splitlines()) <= 2 and "Traceback" not in out.stderr
    assert kind(fifo) == "fifo" and not (tmp_path / "ff.toml.bak").exists()


def test_s2_record_to_a_fifo_with_a_reader_streams_the_record(tmp_path):
    fifo = tmp_path / "ff.toml"
    os.mkfifo(fifo)
    reader = Reader(fifo)
    out = envmgr("--machine", LINUX, "record", "-o", str(fifo), tmp=tmp_path, timeout=30)
    reader.join(10)
    assert out.returncode == 0, out.stderr
    assert b"schema = 1" in reader.data and kind(fifo) == "fifo"


def test_s2_record_makes_no_folder_for_its_output(tmp_path):
    out = envmgr("--machine", LINUX, "record", "-o", str(tmp_path / "elsewhere" / "m.toml"), tmp=tmp_path)
    assert out.returncode == 2 and "its folder does not exist" in out.stderr
    assert not (tmp_path / "elsewhere").exists()


def test_s2_verify_save_output_to_a_fifo_or_a_device_link(tmp_path, devnull_link):
    from envmgr.commands.verify import _save

    class Run:
        returncode, stdout, log = 1, "out\n", "err\n"

    _save(str(devnull_link), Run())
    assert kind(devnull_link) == "link"
    fifo = tmp_path / "F"
    os.mkfifo(fifo)
    from envmgr.errors import InputFileError

    with pytest.raises(InputFileError, match="nothing reads it"):
        _save(str(fifo), Run())
    assert kind(fifo) == "fifo"


def test_s2_run_log_to_a_fifo_with_no_reader_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "build.log"
    os.mkfifo(fifo)
    out = envmgr("run", "--log", str(fifo), "--", "true", tmp=tmp_path, timeout=60)
    assert out.returncode == 2 and "nothing reads it" in out.stderr and kind(fifo) == "fifo"


@pytest.mark.parametrize("make", ["devnull", "fifo", "missing-folder", "link-to-file"])
def test_s2_a_slot_that_is_no_regular_file_is_left_alone(tmp_path, make):
    from envmgr.fastpath.slot_sh import write_slot

    slot = tmp_path / "slot"
    if make == "devnull":
        slot.symlink_to(os.devnull)
    elif make == "fifo":
        os.mkfifo(slot)
    elif make == "link-to-file":
        (tmp_path / "target").write_text("user's file\n")
        slot.symlink_to(tmp_path / "target")
    else:
        slot = tmp_path / "elsewhere" / "slot"
    before = {p: kind(p) for p in tmp_path.rglob("*")}
    calls = []
    env = {"ENVMGR_CACHE_DIR": str(tmp_path / "c")}
    write_slot(lambda *a: calls.append(a) or "echo slot\n", str(slot), {}, [], env, os.devnull)
    assert {p: kind(p) for p in tmp_path.rglob("*")} == before and calls == []
    if make == "link-to-file":
        assert (tmp_path / "target").read_text() == "user's file\n"


def test_a_slot_in_the_cache_is_written_and_its_folder_made(tmp_path):
    from envmgr.fastpath.slot_sh import write_slot

    slot = tmp_path / "c" / "reactivate" / "sh-x"
    write_slot(lambda *a: "echo slot\n", str(slot), {}, [], {"ENVMGR_CACHE_DIR": str(tmp_path / "c")}, os.devnull)
    assert slot.read_text() == "echo slot\n"


# --- C10: fix-msbuild --apply-plan reads a plan with limits and writes no result beside a non-plan ---


@pytest.mark.parametrize("make", ["fifo", "zero", "folder"])
def test_c10_apply_plan_refuses_what_is_no_plan_file_and_writes_nothing_beside_it(tmp_path, make):
    plan = tmp_path / "pf"
    if make == "fifo":
        os.mkfifo(plan)
    elif make == "zero":
        plan.symlink_to("/dev/zero")
    else:
        plan.mkdir()
    out = envmgr("fix-msbuild", "--apply-plan", str(plan), tmp=tmp_path, timeout=30, limit_mb=2000)
    assert out.returncode == 2 and "not a readable plan file" in out.stderr, out.stderr[-500:]
    assert "Traceback" not in out.stderr and not (tmp_path / "pf.result.json").exists()


def test_c10_a_recorded_machine_is_refused_before_the_plan_is_read(tmp_path):
    plan = tmp_path / "pf"
    os.mkfifo(plan)
    out = envmgr("--machine", WIN, "fix-msbuild", "--apply-plan", str(plan), tmp=tmp_path, timeout=30)
    assert out.returncode == 2 and "recorded machines are for planning" in out.stderr
    assert not (tmp_path / "pf.result.json").exists()


@pytest.mark.parametrize("make", ["fifo", "folder", "missing-folder"])
def test_s2_github_env_that_is_no_file_is_one_line_not_a_hang(tmp_path, make):
    snap = tmp_path / "env.toml"
    snap.write_text("schema = 1\nplatform = 'linux'\n[env]\nCUDA_HOME = '/opt/cuda'\n", encoding="utf-8")
    target = tmp_path / "github_env"
    if make == "fifo":
        os.mkfifo(target)
    elif make == "folder":
        target.mkdir()
    else:
        target = tmp_path / "elsewhere" / "github_env"
    (tmp_path / "github_path").write_text("")
    out = envmgr(
        "export",
        "--from",
        str(snap),
        "--format",
        "github",
        tmp=tmp_path,
        timeout=30,
        env={"GITHUB_ENV": str(target), "GITHUB_PATH": str(tmp_path / "github_path")},
    )
    assert out.returncode == 2 and "$GITHUB_ENV" in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert not (tmp_path / "elsewhere").exists() and (make != "fifo" or kind(target) == "fifo")
