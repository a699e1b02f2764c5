"""Live progress (issue 33): the build's own counter read from real build output (tests/corpus), the line
rendered, escapes kept out of log files, and `run --log` drawing the line for a real slow child, under a
pty (in place) and without one (a line every 10 s)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envmgr import output, progress
from envmgr.progress import BuildWatch, Counter, LogCleaner, Ticker, build_line, download_line, read_counter, strip_ansi
from tests.conftest import CORPUS, corpus

SCRIPT = Path(sys.executable).with_name("envmgr")


def _last_counter(text: str) -> Counter:
    counter = Counter()
    for line in text.splitlines():
        counter = read_counter(strip_ansi(line), counter)
    return counter


def test_ninja_counter_from_a_real_pytorch_log():
    text = (
        CORPUS / "logs" / "F20" / "pytorch-cpu-feedstock-84-azure-cuda10.2-timing-out-at-4935-of-5485-nvcc-objects.txt"
    ).read_text("utf-8")
    counter = _last_counter(text)
    assert (counter.done, counter.total) == (4935, 5485) and counter.text() == "[4935/5485]"


def test_ninja_counter_from_a_real_llama_cpp_python_build():
    line = "  [4/8] Building CUDA object vendor\\llama.cpp\\CMakeFiles\\ggml.dir\\ggml-cuda.cu.obj"
    assert read_counter(line, Counter()).text() == "[4/8]"


def test_make_percent_from_a_real_cmake_makefile_log():
    counter = _last_counter(corpus("ld-cannot-find-lcublas-cmake-make-instant-ngp-EXCERPT.txt"))
    assert counter.percent is not None and counter.text().endswith("%]")
    assert read_counter("[ 98%] Linking CXX executable testbed", Counter()).text() == "[ 98%]"
    assert read_counter("[100%] Linking CXX shared library pyngp.so", Counter()).percent == 100


def test_msbuild_projects_from_a_real_msbuild_log():
    text = corpus("msbuild-cuda11.8-host_config-unsupported-msvc14.40-vs2022-buildtools-llama-cpp-python-EXCERPT.txt")
    counter = _last_counter(text)
    assert counter.project == "cmTC_d9b18" and counter.text() == "[project 1: cmTC_d9b18]"


def test_msbuild_project_done_line():
    """MSBuild's `NAME.vcxproj -> OUTPUT` line (its standard form; hand-written: the corpus has error
    summaries only)."""
    one = read_counter("  ggml.vcxproj -> C:\\b\\Release\\ggml.dll", Counter())
    two = read_counter("  llama.vcxproj -> C:\\b\\Release\\llama.dll", one)
    assert two.projects == ("ggml", "llama") and two.text() == "[project 2: llama]"


def test_msbuild_project_start_lines():
    """MSBuild's `Project "..." on node N` and `Project "..." (1) is building "..." (2)` lines (its standard
    forms at normal verbosity; hand-written: the corpus holds error summaries only)."""
    one = read_counter('Project "C:\\b\\ALL_BUILD.vcxproj" on node 1 (default targets).', Counter())
    two = read_counter('Project "C:\\b\\ALL_BUILD.vcxproj" (1) is building "C:\\b\\ggml.vcxproj" (2) on node 1', one)
    assert one.project == "ALL_BUILD" and two.projects == ("ALL_BUILD", "ggml")
    assert (
        read_counter('Project "C:\\b\\ggml-cuda.vcxproj" on node 2 (default targets).', two).text()
        == "[project 3: ggml-cuda]"
    )


def test_other_lines_leave_the_counter_alone():
    before = Counter(done=3, total=9)
    for line in (
        "-- The CUDA compiler identification is NVIDIA 12.4.131",
        "[notice] A new release of pip",
        "[1234%] nonsense",
        "",
    ):
        assert read_counter(line, before) == before


def test_build_line_fits_and_does_not_repeat_the_counter():
    line = build_line("building llama-cpp-python", 133, Counter(45, 120), "[45/120] Building CUDA object x.cu.o", 200)
    assert line == "envmgr: building llama-cpp-python 2:13 [45/120]  Building CUDA object x.cu.o"
    assert len(build_line("b", 5, Counter(), "x" * 500, 60)) == 60
    assert build_line("b", 3725, Counter(), "", 80) == "envmgr: b 1:02:05"


def test_download_line_shows_bytes_total_and_rate():
    line = download_line("llama_cpp_python-0.3.16-cp311.whl", 10, 120_000_000, 310_200_000, 200)
    assert line == "envmgr: downloading llama_cpp_python-0.3.16-cp311.whl 120.0 MB of 310.2 MB (38%) 12.0 MB/s 0:10"
    assert "of" not in download_line("x.whl", 2, 5_000, None, 200).split("x.whl")[1]


def test_strip_ansi_on_a_coloured_line():
    coloured = "\x1b]0;build\x07\x1b[1;31merror\x1b[0m: x\x1b[K"
    assert strip_ansi(coloured) == "error: x"


def test_log_cleaner_holds_an_escape_cut_between_reads():
    cleaner = LogCleaner()
    out = cleaner.feed(b"ok \x1b[3") + cleaner.feed(b"2mgreen\x1b[0m done\n") + cleaner.flush()
    assert out == b"ok green done\n"


def test_ticker_waits_2s_on_a_terminal_and_10s_elsewhere():
    tty = Ticker(io.StringIO(), start=0.0, tty=True)
    plain = Ticker(io.StringIO(), start=0.0, tty=False)
    assert not tty.due(1.9) and tty.due(2.0)
    assert not plain.due(9.9) and plain.due(10.0)
    plain.draw("a line", 10.0)
    assert not plain.due(19.9) and plain.due(20.0) and plain.stream.getvalue() == "a line\n"
    tty.draw("x", 2.0)
    tty.clear()
    assert tty.stream.getvalue() == "\r\x1b[Kx\r\x1b[K"


def test_quiet_silences_the_ticker():
    output.configure(verbosity=-1)
    try:
        assert not Ticker(io.StringIO(), start=0.0, tty=False).due(100.0)
    finally:
        output.configure()
    assert Ticker(io.StringIO(), start=0.0, tty=False).due(100.0)


def test_build_watch_reads_split_chunks():
    watch = BuildWatch("building", Ticker(io.StringIO(), start=0.0, tty=False))
    for chunk in (b"[1/3] a\r\n[2/", b"3] b\n\x1b[32m[3/3]\x1b[0m c", b"\n"):
        watch.feed(chunk)
    watch.tick(10.0)
    assert watch.ticker.stream.getvalue() == "envmgr: building 0:10 [3/3]  c\n"


# ---- live: a real child that prints [1/3]..[3/3] slowly, through `envmgr run --log` --------------------
CHILD = (
    "import sys, time\n"
    "for i in range(1, 4):\n"
    "    print(f'\\x1b[32m[{i}/3]\\x1b[0m Building CUDA object step{i}.cu.o', flush=True)\n"
    "    time.sleep(float(sys.argv[1]))\n"
)


@pytest.fixture
def env(tmp_path):
    base = {k: v for k, v in os.environ.items() if not k.startswith("ENVMGR_")}
    return {
        **base,
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "COLUMNS": "100",
    }


@pytest.mark.skipif(sys.platform == "win32", reason="run --log's pty is POSIX here (pywinpty on Windows)")
def test_run_log_without_a_terminal_prints_a_line_every_10s(env, tmp_path):
    log = tmp_path / "build.log"
    done = subprocess.run(
        [str(SCRIPT), "run", "--log", str(log), "--", sys.executable, "-c", CHILD, "4"],
        capture_output=True,
        env=env,
        timeout=120,
    )
    lines = [x for x in done.stderr.decode().splitlines() if x.startswith("envmgr: running")]
    assert done.returncode == 0 and len(lines) == 1, done.stderr
    assert lines[0].startswith("envmgr: running python") and "[3/3]" in lines[0] and "0:1" in lines[0]
    assert b"\x1b" not in log.read_bytes() and b"[3/3] Building CUDA object step3.cu.o" in log.read_bytes()
    assert b"envmgr:" not in done.stdout  # progress never on stdout


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX pty")
def test_run_log_under_a_terminal_redraws_in_place(env, tmp_path):
    import pty

    log = tmp_path / "build.log"
    argv = [str(SCRIPT), "run", "--log", str(log), "--", sys.executable, "-c", CHILD, "1.5"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: envmgr with the pty as its terminal (stdin, stdout, stderr)
        os.execve(argv[0], argv, env)
    seen = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    _, status = os.waitpid(pid, 0)
    text = seen.decode("utf-8", "replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert "\r\x1b[Kenvmgr: running python" in text  # drawn in place after 2 s
    assert "[3/3] Building CUDA object step3.cu.o" in strip_ansi(text)
    assert b"\x1b" not in log.read_bytes()


# ---- live: a real download from a loopback HTTP server that sends slowly -------------------------------
def test_a_slow_download_shows_bytes_total_and_rate(monkeypatch, capsys):
    import http.server
    import threading

    from envmgr.wheels import remote

    body = b"x" * 300_000

    class Slow(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # the name http.server calls
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for i in range(3):
                self.wfile.write(body[i * 100_000 : (i + 1) * 100_000])
                self.wfile.flush()
                time.sleep(1.2)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(progress, "EVERY_PLAIN", 1.0)  # a line a second instead of every 10 s: a short test
    got = []
    try:
        remote.read(f"http://127.0.0.1:{server.server_address[1]}/llama_cpp_python-0.3.16-cp311.whl", got.append)
    finally:
        server.shutdown()
    lines = capsys.readouterr().err.splitlines()
    assert b"".join(got) == body and lines, lines
    assert all(x.startswith("envmgr: downloading llama_cpp_python-0.3.16-cp311.whl ") for x in lines)
    assert any(" of 300.0 KB (" in x and "/s " in x for x in lines)


# ---- captures and other slow steps: output.Spinner -----------------------------------------------------
def test_a_slow_step_off_a_terminal_says_what_runs_every_period(monkeypatch, capsys):
    monkeypatch.setattr(output.Spinner, "PLAIN_EVERY", 0.2)  # every 10 s in real use: a short test
    with output.Spinner("running vcvarsall.bat x64 (VS 2022 Community)"):
        time.sleep(0.5)
    lines = capsys.readouterr().err.splitlines()
    assert lines[:2] == [
        "envmgr: running vcvarsall.bat x64 (VS 2022 Community) (0 s)",
        "envmgr: running vcvarsall.bat x64 (VS 2022 Community) (0 s)",
    ]


def test_a_quiet_slow_step_says_nothing(monkeypatch, capsys):
    monkeypatch.setattr(output.Spinner, "PLAIN_EVERY", 0.1)
    output.configure(verbosity=-1)
    try:
        with output.Spinner("capturing"):
            time.sleep(0.3)
    finally:
        output.configure()
    assert capsys.readouterr().err == ""


# ---- install's build: spawn.run_watched and install_build._watched_build ------------------------------
def test_run_watched_keeps_the_output_in_the_log_and_draws_the_line(monkeypatch, capfd, tmp_path):
    from envmgr import spawn

    monkeypatch.setattr(progress, "EVERY_PLAIN", 1.0)  # every 10 s in real use: a short test
    log = tmp_path / "build.log"
    code = spawn.run_watched([sys.executable, "-c", CHILD, "0.8"], dict(os.environ), "building tiny", str(log))
    out, err = capfd.readouterr()
    lines = [x for x in err.splitlines() if x.startswith("envmgr: building tiny ")]
    assert code == 0 and out == "" and lines, err
    assert any("/3]" in x and "Building CUDA object step" in x for x in lines)
    assert log.read_bytes().count(b"Building CUDA object") == 3 and b"\x1b" not in log.read_bytes()


@pytest.mark.skipif(sys.platform == "win32", reason="the fake Python here is a POSIX script")
def test_the_build_runs_pip_wheel_verbose_into_a_log_and_shows_its_tail(capfd, tmp_path):
    from envmgr.commands import install_build

    fake = tmp_path / "fakepy"
    fake.write_text(
        f'#!/bin/sh\necho "$@" > "{tmp_path}/argv"\n'
        'printf "\\033[31m[1/2] Building C object a.o\\033[0m\\n"\n'
        'echo "CMake Error: the end of the story"\nexit 3\n'
    )
    fake.chmod(0o755)
    argv = [str(fake), "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path), "llama-cpp-python"]
    log = tmp_path / "build.log"
    code = install_build._watched_build(argv, dict(os.environ), log, "llama_cpp_python", verbose=False)
    assert code == 3
    assert (tmp_path / "argv").read_text().startswith("-m pip wheel -v --no-deps")
    assert log.read_bytes() == b"[1/2] Building C object a.o\nCMake Error: the end of the story\n"
    install_build._say_tail(log)
    err = capfd.readouterr().err
    assert "  | CMake Error: the end of the story" in err
    # the output itself was not echoed: only the tail says it
    assert [x for x in err.splitlines() if "CMake Error" in x] == ["  | CMake Error: the end of the story"]


@pytest.mark.skipif(sys.platform == "win32", reason="the fake Python here is a POSIX script")
def test_with_pip_v_the_build_output_is_shown_too(capfd, tmp_path):
    from envmgr.commands import install_build

    fake = tmp_path / "fakepy"
    fake.write_text(f'#!/bin/sh\necho "$@" > "{tmp_path}/argv"\necho "[1/1] Linking CXX shared library x.so"\n')
    fake.chmod(0o755)
    argv = [str(fake), "-m", "pip", "wheel", "-w", str(tmp_path), "-v", "x"]
    code = install_build._watched_build(argv, dict(os.environ), tmp_path / "build.log", "x", verbose=True)
    captured = capfd.readouterr()
    assert code == 0 and (tmp_path / "argv").read_text().startswith("-m pip wheel -w")  # no second -v
    assert "[1/1] Linking CXX shared library x.so" in captured.err and captured.out == ""


def test_a_line_the_command_left_unfinished_on_screen_is_not_drawn_over():
    """A prompt (`Password: `) or ninja's own status line, shown on the same terminal: no line over it."""
    watch = BuildWatch("running x", Ticker(io.StringIO(), start=0.0, tty=True), shown=True)
    watch.feed(b"[1/2] a\nPassword: ")
    watch.tick(5.0)
    assert watch.ticker.stream.getvalue() == ""
    watch.feed(b"\n")
    watch.tick(5.0)
    assert watch.ticker.stream.getvalue().startswith("\r\x1b[Kenvmgr: running x 0:05 [1/2]")


@pytest.mark.conpty
@pytest.mark.skipif(sys.platform != "win32", reason="run --log's ConPTY path (pywinpty) is Windows only")
def test_run_log_under_conpty_writes_its_log_without_escapes(tmp_path):
    pytest.importorskip("winpty")
    from envmgr import spawn

    log, child = tmp_path / "build.log", tmp_path / "child.py"
    child.write_text(CHILD)  # a file: a command line holding newlines does not survive ConPTY's spawn
    code = spawn.run_logged([sys.executable, str(child), "0.2"], dict(os.environ), str(log))
    text = log.read_bytes()
    assert code == 0 and b"\x1b" not in text, text[:300]
    # Wine's ConPTY hands the child's own ESC on as "?" (seen here); its own escapes are what the log drops
    assert b"[3/3]" in text and b" Building CUDA object step3.cu.o" in text
