"""`envmgr wheels publish` (envmgr/wheels/index.py) and the index lookup of `install --wheel-index`
(envmgr/wheels/remote.py), on folder indexes and on a loopback `python -m http.server`.

The wheels are hand-made with zipfile (as in test_wheels.py): what is tested is the index layout,
the hashes and the keys, not a build. tests/linux/test_wheel_index_e2e.py builds and installs real ones.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from envmgr.wheels import index as wheelindex
from envmgr.wheels import remote as wheelremote
from envmgr.wheels import store as wheels
from envmgr.errors import InputFileError
from tests.conftest import CUDA_SO, ROOT, sample_bytes

KEY = wheels.WheelKey(
    package="fakecuda",
    version="1.2.3",
    source="file:0123456789abcdef",
    cuda="13.0",
    archs="90",
    generator="Ninja",
    cmake_args="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90",
    python_tag="cp311",
    platform="linux_x86_64",
)
WHEEL = "fakecuda-1.2.3-py3-none-any.whl"


@pytest.fixture(autouse=True)
def cache_dir(envmgr_dirs):
    return envmgr_dirs


def fake_wheel(folder: Path, *, cuda: bool = True, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / WHEEL
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("fakecuda/__init__.py", f"BUILT = True{extra}\n")
        if cuda:
            zf.writestr("fakecuda/lib/libfake_cuda.so", sample_bytes(CUDA_SO))
    return path


def cached(tmp_path: Path, key: wheels.WheelKey = KEY, **kw) -> wheels.Entry:
    return wheels.store(key, fake_wheel(tmp_path / "built" / key.digest(), **kw), 42.0, True, "2026-11-22T00:00:00Z")


def published(tmp_path: Path, *keys: wheels.WheelKey) -> Path:
    dest = tmp_path / "index"
    wheelindex.publish([cached(tmp_path, k) for k in (keys or (KEY,))], dest)
    wheels.clear()  # the local cache is empty again: only the index has them
    return dest


def said():
    lines: list[str] = []
    return lines, lines.append


# --- publish ------------------------------------------------------------------------------------


def test_publish_writes_a_pep503_layout_with_hashes_and_keys(tmp_path):
    entry = cached(tmp_path)
    dest = tmp_path / "index"
    (done,) = wheelindex.publish([entry], dest)
    assert done.status == "added"
    root = wheelindex.parse_links((dest / "index.html").read_text())
    assert [(link.href, link.text) for link in root] == [("fakecuda/", "fakecuda")]
    (link,) = wheelindex.parse_links((dest / "fakecuda" / "index.html").read_text())
    assert link.href == f"{KEY.digest()}/{WHEEL}#sha256={entry.sha256}"
    assert link.attr("data-envmgr-digest") == KEY.digest()
    assert wheels.WheelKey(**json.loads(link.attr("data-envmgr-key"))) == KEY
    key_file = json.loads((dest / "fakecuda" / KEY.digest() / "entry.json").read_text())
    assert key_file["sha256"] == entry.sha256 and key_file["key"]["archs"] == "90"
    assert wheels.file_sha256(dest / "fakecuda" / KEY.digest() / WHEEL) == entry.sha256
    # a web server running as another user must be able to read what was written
    for path in (dest / "index.html", dest / "fakecuda" / "index.html", dest / "fakecuda" / KEY.digest()):
        assert path.stat().st_mode & 0o004, path
    assert not [p for p in dest.rglob(".*")], "temporary files left behind"


def test_publishing_again_changes_nothing(tmp_path):
    entry = cached(tmp_path)
    dest = tmp_path / "index"
    wheelindex.publish([entry], dest)
    before = {p: p.read_bytes() for p in dest.rglob("*") if p.is_file()}
    (done,) = wheelindex.publish([entry], dest)
    assert done.status == "present"
    assert {p: p.read_bytes() for p in dest.rglob("*") if p.is_file()} == before


def test_an_existing_index_is_updated_not_rewritten(tmp_path):
    dest = tmp_path / "index"
    (dest / "fakecuda").mkdir(parents=True)
    (dest / "other").mkdir()
    (dest / "index.html").write_text('<html><body><a href="other/">other</a></body></html>')
    (dest / "fakecuda" / "index.html").write_text(
        '<a href="https://files.example.org/fakecuda-1.0-py3-none-any.whl#sha256=' + "a" * 64 + '">x</a>'
    )
    wheelindex.publish([cached(tmp_path)], dest)
    wheelindex.publish([cached(tmp_path, replace(KEY, archs="86", cmake_args="-DCMAKE_CUDA_ARCHITECTURES=86"))], dest)
    links = wheelindex.parse_links((dest / "fakecuda" / "index.html").read_text())
    assert links[0].href.startswith("https://files.example.org/")
    assert len([link for link in links if link.attr("data-envmgr-digest")]) == 2
    assert [link.text for link in wheelindex.parse_links((dest / "index.html").read_text())] == ["other", "fakecuda"]


def test_a_corrupt_wheel_in_the_index_is_repaired_by_the_next_publish(tmp_path):
    entry = cached(tmp_path)
    dest = tmp_path / "index"
    wheelindex.publish([entry], dest)
    there = dest / "fakecuda" / KEY.digest() / WHEEL
    there.write_bytes(there.read_bytes()[:20])
    (done,) = wheelindex.publish([entry], dest)
    assert done.status == "repaired" and wheels.file_sha256(there) == entry.sha256


def test_cli_publish_json_and_nothing_to_publish(cli, tmp_path, cache_dir):
    env = {"ENVMGR_CACHE_DIR": str(cache_dir)}
    out = cli("wheels", "publish", str(tmp_path / "index"), env=env)
    assert out.code == 3 and "no intact wheel" in out.stderr and len(out.stderr.strip().splitlines()) <= 2
    cached(tmp_path)
    data = cli("wheels", "publish", "--json", str(tmp_path / "index"), env=env).json()
    assert data["schema"] == 1 and data["wheels"][0]["status"] == "added"
    text = cli("wheels", "publish", str(tmp_path / "index"), env=env)
    assert text.code == 0 and "published 0 new wheel(s), 1 already there" in text.stdout


@pytest.mark.parametrize("where", ["a-file", "under-a-file"])
def test_a_dest_that_cannot_be_written_is_one_line_and_exit_2(cli, tmp_path, cache_dir, where):
    cached(tmp_path)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file")
    dest = blocker if where == "a-file" else blocker / "index"
    out = cli("wheels", "publish", str(dest), env={"ENVMGR_CACHE_DIR": str(cache_dir)})
    assert out.code == 2, out.stderr
    first = out.stderr.strip().splitlines()[0]
    assert "cannot be written" in first and "nothing was published" in first and "Traceback" not in out.stderr
    assert blocker.read_text() == "a file"


def test_concurrent_publishers_never_corrupt_the_index(tmp_path):
    """Eight processes, each with its own cache of three wheels, publish into one folder at once."""
    script = (
        "import sys, zipfile\nfrom pathlib import Path\nfrom envmgr.wheels import store as wheels\n"
        "from envmgr.commands.wheels import publish_command\n"
        "n = int(sys.argv[1]); tmp = Path(sys.argv[2])\n"
        "for i in range(3):\n"
        "    key = wheels.WheelKey('fakecuda', '1.2.3', 'index', '13.0', f'{n}{i}', 'Ninja', '', 'cp311', 'x')\n"
        "    w = tmp / f'w{n}{i}' / 'fakecuda-1.2.3-py3-none-any.whl'; w.parent.mkdir(parents=True)\n"
        "    with zipfile.ZipFile(w, 'w') as zf:\n"
        "        zf.writestr('fakecuda/lib/libx_cuda.so', Path(sys.argv[4]).read_bytes())\n"
        "        zf.writestr('fakecuda/n.txt', f'{n}{i}')\n"
        "    wheels.store(key, w, 1.0, True, 't')\n"
        "publish_command.main([sys.argv[3]], standalone_mode=True)\n"
    )
    dest = tmp_path / "index"
    sample = Path(__file__).resolve().parents[2] / "corpus" / "devicecode" / CUDA_SO
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(n), str(tmp_path / f"p{n}"), str(dest), str(sample)],
            cwd=ROOT,
            env={**os.environ, "ENVMGR_CACHE_DIR": str(tmp_path / f"cache{n}")},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for n in range(8)
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    links = wheelindex.parse_links((dest / "fakecuda" / "index.html").read_text())
    assert len(links) == 24 and len({link.attr("data-envmgr-digest") for link in links}) == 24
    for link in links:
        path = dest / "fakecuda" / link.href.split("#")[0]
        assert wheels.file_sha256(path) == link.href.split("=")[-1]
    assert [link.text for link in wheelindex.parse_links((dest / "index.html").read_text())] == ["fakecuda"]
    assert not [p for p in dest.rglob(".*")], "temporary files left behind"


# --- lookup from a folder index ---------------------------------------------------------------------


def test_a_key_hit_is_downloaded_verified_and_cached(tmp_path):
    dest = published(tmp_path)
    lines, say = said()
    entry = wheelremote.fetch(str(dest), KEY, True, say)
    assert entry is not None and entry.key == KEY and wheels.lookup(KEY, True, say) is not None
    assert entry.build_seconds == 42.0
    assert "downloaded" in lines[-1] and "sha256 ok" in lines[-1]


def test_candidates_with_another_key_are_refused_with_the_reason(tmp_path):
    dest = published(
        tmp_path,
        replace(KEY, archs="86", cmake_args="-DCMAKE_CUDA_ARCHITECTURES=86"),
        replace(KEY, cuda="12.8"),
        replace(KEY, python_tag="cp312"),
        replace(KEY, version="1.0"),
    )
    lines, say = said()
    assert wheelremote.fetch(str(dest), KEY, True, say) is None
    text = "\n".join(lines)
    assert "CUDA architectures 86, missing 90 wanted here" in text
    assert "CUDA 12.8 (here: 13.0)" in text and "Python cp312 (here: cp311)" in text
    assert "1 other wheel(s) in the index are for other versions" in text
    assert lines[-1].endswith("building instead")


def test_a_truncated_wheel_is_refused(tmp_path):
    dest = published(tmp_path)
    wheel = dest / "fakecuda" / KEY.digest() / WHEEL
    wheel.write_bytes(wheel.read_bytes()[:-30])
    lines, say = said()
    assert wheelremote.fetch(str(dest), KEY, True, say) is None
    assert any("does not match its sha256" in line for line in lines)
    assert wheels.entries() == [] and not list(wheels.wheels_dir().glob(".download-*"))


def test_a_cpu_only_wheel_under_a_cuda_key_is_refused(tmp_path):
    dest = tmp_path / "index"
    entry = wheels.store(replace(KEY, cuda=""), fake_wheel(tmp_path / "cpu", cuda=False), 1.0, False, "t")
    # an index whose page and key file claim a CUDA key for a CPU-only wheel (a hand-edited index)
    wheelindex.publish([entry], dest)
    folder = dest / "fakecuda" / entry.folder.name
    data = json.loads((folder / "entry.json").read_text())
    data["key"] = json.loads(json.dumps(KEY.__dict__))
    (folder / "entry.json").write_text(json.dumps(data))
    page = dest / "fakecuda" / "index.html"
    page.write_text(page.read_text().replace("&quot;cuda&quot;:&quot;&quot;", "&quot;cuda&quot;:&quot;13.0&quot;"))
    lines, say = said()
    assert wheelremote.fetch(str(dest), KEY, True, say) is None
    assert any("CPU-only" in line for line in lines)


@pytest.mark.parametrize(
    "damage, words",
    [
        (lambda f: f.unlink(), "is missing"),
        (lambda f: f.write_text("{not json"), "not valid JSON"),
        (lambda f: f.write_text('{"schema": 1}'), "malformed"),
        (lambda f: f.write_text(f.read_text().replace('"90"', '"86"')), "disagrees"),
    ],
)
def test_a_missing_or_malformed_key_file_is_refused(tmp_path, damage, words):
    dest = published(tmp_path)
    damage(dest / "fakecuda" / KEY.digest() / "entry.json")
    lines, say = said()
    assert wheelremote.fetch(str(dest), KEY, True, say) is None
    refused = [line for line in lines if line.startswith("refused")]
    assert len(refused) == 1 and words in refused[0] and "\n" not in refused[0]


def test_no_page_for_the_package_is_a_miss(tmp_path):
    dest = published(tmp_path)
    lines, say = said()
    assert wheelremote.fetch(str(dest), replace(KEY, package="other"), True, say) is None
    assert lines == [
        f"the wheel index {dest} has no page for other ({dest.resolve().as_uri()}/other/); building instead"
    ]


def test_a_folder_index_that_does_not_exist(tmp_path):
    lines, say = said()
    assert wheelremote.fetch(str(tmp_path / "nowhere"), KEY, True, say) is None
    assert lines == [f"the wheel index folder {tmp_path / 'nowhere'} does not exist; building instead"]


def test_an_html_page_that_is_no_index(tmp_path):
    site = tmp_path / "site" / "fakecuda"
    site.mkdir(parents=True)
    (site / "index.html").write_text('<html><body><a href="/about">About us</a></body></html>')
    lines, say = said()
    assert wheelremote.fetch(str(tmp_path / "site"), KEY, True, say) is None
    assert "is not a PEP 503 index page" in lines[0] and len(lines) == 1


def test_the_index_setting_flag_env_config(tmp_path, monkeypatch):
    config = tmp_path / "config" / "config.toml"
    assert wheelremote.configured_index(None) is None
    config.parent.mkdir(parents=True)
    config.write_text('[wheels]\nindex = "https://wheels.example.org/simple/"\n')
    assert wheelremote.configured_index(None) == "https://wheels.example.org/simple/"
    monkeypatch.setenv("ENVMGR_WHEEL_INDEX", "/srv/wheels")
    assert wheelremote.configured_index(None) == "/srv/wheels"
    assert wheelremote.configured_index("http://x/") == "http://x/"
    assert wheelremote.configured_index("") is None
    monkeypatch.delenv("ENVMGR_WHEEL_INDEX")
    config.write_text("[wheels]\nindex = 3\n")
    with pytest.raises(InputFileError, match="must be a string"):
        wheelremote.configured_index(None)


# --- lookup over HTTP (loopback) ----------------------------------------------------------------------


@pytest.fixture
def serve():
    """`python -m http.server` on 127.0.0.1 and a free port, serving a folder; stopped afterwards."""
    started = []

    def start(folder: Path) -> str:
        proc = subprocess.Popen(
            [sys.executable, "-u", "-m", "http.server", "--bind", "127.0.0.1", "0", "--directory", str(folder)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        started.append(proc)
        line = proc.stdout.readline()
        port = re.search(r"port (\d+)", line)
        assert port, f"http.server said: {line!r}"
        return f"http://127.0.0.1:{port.group(1)}/"

    yield start
    for proc in started:
        proc.terminate()
        proc.wait(timeout=10)


def test_http_hit_and_truncated_wheel(tmp_path, serve):
    dest = published(tmp_path)
    url = serve(dest)
    lines, say = said()
    assert wheelremote.fetch(url, KEY, True, say) is not None, lines
    wheels.clear()
    wheel = dest / "fakecuda" / KEY.digest() / WHEEL
    wheel.write_bytes(wheel.read_bytes()[:-30])
    lines, say = said()
    assert wheelremote.fetch(url, KEY, True, say) is None
    assert any("does not match its sha256" in line for line in lines)


def test_http_404_and_unreachable(tmp_path, serve):
    url = serve(published(tmp_path))
    lines, say = said()
    assert wheelremote.fetch(url + "nothing-here/", KEY, True, say) is None
    assert "has no page for fakecuda" in lines[0] and "building instead" in lines[0]
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/"
    lines, say = said()
    assert wheelremote.fetch(closed, KEY, True, say) is None
    assert len(lines) == 1 and "cannot be reached" in lines[0] and "building instead" in lines[0]


def test_a_cached_export_imports_no_http(tmp_path):
    """urllib.parse comes with pathlib; http.client and urllib.request only when an index is read."""
    machine = ROOT / "tests" / "machines" / "linux-two-toolkits.toml"
    code = (
        "import sys, runpy\nsys.argv = ['envmgr', '--machine', sys.argv[1], 'export']\n"
        "try:\n    runpy.run_module('envmgr', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('http', 'urllib') and m not in ('urllib', 'urllib.parse'))\n"
        "sys.stderr.write(repr(bad))\n"
    )
    env = {**os.environ, "ENVMGR_CACHE_DIR": str(tmp_path / "c"), "ENVMGR_WHEEL_INDEX": "http://127.0.0.1:9/"}
    for _ in range(2):  # the second export is the cached one
        out = subprocess.run(
            [sys.executable, "-c", code, str(machine)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
        )
    assert out.stderr.strip().endswith("[]"), out.stderr
