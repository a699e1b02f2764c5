"""Index URLs and index pages, hostile by construction (issue 34; audit ../shared/audits/hostile-input-2026-12.md,
N2 N3 N4 N5 N12 N14 N15). Each test is the audit's repro, run in-process against folders and servers on
127.0.0.1 started here, and failed on main 5725032.

The wheels hold the real nvcc 13.0 library tests/corpus/devicecode/libtiny_cuda-sm75-sm90a-compute90.so
(cubin sm_75 sm_90a, PTX compute_90). A machine with a compute capability 9.0 GPU (pick.Machine, built
here) runs it natively; the recorded RTX 4070 SUPER machine (8.9) does not, which is enough where only
what is printed matters.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import threading
import time
from pathlib import Path

import pytest

from envmgr.commands import install_prebuilt
from envmgr.wheels import index as wheelindex
from envmgr.wheels import pick, prebuilt
from envmgr.wheels import remote as wheelremote
from envmgr.wheels import store as wheels
from tests.conftest import run_cli
from tests.unit.wheels.test_prebuilt_index import HERE_LIB, HERE_TAG, SO, wheel
from tests.unit.wheels.test_wheelindex import KEY, WHEEL, published, said

pytestmark = pytest.mark.usefixtures("envmgr_dirs")

MACHINE = str(Path(__file__).resolve().parents[2] / "machines" / "community-buildtools-cuda124.toml")
PASSWORD, TOKEN = "s3cr3tpw", "t0k3nv4lue"
H100 = pick.Machine((("NVIDIA H100", "9.0"),), "580.65", "13.0", False, (HERE_TAG, "py3-none-any"), "test")


class Served:
    """A folder served by http.server on 127.0.0.1 in a thread, recording every request path."""

    def __init__(self, folder: Path, handler: type[http.server.SimpleHTTPRequestHandler] | None = None) -> None:
        seen: list[str] = []

        class Handler(handler or http.server.SimpleHTTPRequestHandler):  # type: ignore[misc]
            def do_GET(self):
                seen.append(self.path)
                self.path = self.path.split("?")[0]
                super().do_GET()

            def log_message(self, *args):
                pass

        self.seen = seen
        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
        self.srv.daemon_threads = True
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.port = self.srv.server_address[1]

    def close(self) -> None:
        self.srv.shutdown()
        self.srv.server_close()


@pytest.fixture
def serve():
    running: list[Served] = []

    def start(folder: Path, handler=None) -> Served:
        running.append(Served(folder, handler))
        return running[-1]

    yield start
    for s in running:
        s.close()


def project(root: Path, folder: str = "cu130", versions: tuple[str, ...] = ("0.3.16",), fragment: str = "") -> Path:
    """root/folder/llama-cpp-python/index.html linking each wheel by a relative href (+ fragment)."""
    page = root / folder / "llama-cpp-python"
    links = [wheel(page, v, HERE_LIB).name for v in versions]
    (page / "index.html").write_text("".join(f'<a href="{n}{fragment}">{n}</a>\n' for n in links))
    return root / folder


def files_holding(root: Path, needle: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


# --- N2: a credential never leaves the request --------------------------------------------------------


def test_n2_a_password_and_token_never_reach_stdout_stderr_or_json(tmp_path, serve):
    project(tmp_path / "srv", "cu124")
    srv = serve(tmp_path / "srv")
    url = f"http://alice:{PASSWORD}@127.0.0.1:{srv.port}/cu124/?token={TOKEN}"
    args = ("--machine", MACHINE, "install", "llama-cpp-python", "--dry-run", "--prebuilt-index", url)
    text, as_json = run_cli(*args), run_cli(*args, "--json")
    for r in (text, as_json):
        assert r.code == 0, r.stderr
        assert not any(secret in r.stdout + r.stderr for secret in (PASSWORD, TOKEN))
    data = as_json.json()
    (cand,) = data["prebuilt"]["candidates"]
    assert cand["url"].startswith(f"http://alice:****@127.0.0.1:{srv.port}/cu124/llama-cpp-python/")
    assert cand["url"].endswith("?token=****") and data["prebuilt"]["indexes"][0]["wheels"] == 1
    assert f"prebuilt index http://alice:****@127.0.0.1:{srv.port}/cu124/?token=****: 1 wheel(s)" in text.stderr
    assert srv.seen and all(p.endswith(f"?token={TOKEN}") for p in srv.seen)  # the request had it


@pytest.mark.parametrize("where", ["env", "config"])
def test_n2_an_index_from_the_environment_or_config_is_never_printed(tmp_path, serve, where):
    project(tmp_path / "srv", "cu124")
    srv = serve(tmp_path / "srv")
    url = f"http://alice:{PASSWORD}@127.0.0.1:{srv.port}/cu124/?token={TOKEN}"
    env = {"ENVMGR_CONFIG_DIR": str(tmp_path / "config"), "ENVMGR_WHEEL_INDEX": ""}
    if where == "env":
        env["ENVMGR_PREBUILT_INDEX"] = url
    else:
        env["ENVMGR_PREBUILT_INDEX"] = None  # unset: config.toml decides
        (tmp_path / "config").mkdir()
        (tmp_path / "config" / "config.toml").write_text(f'[wheels]\nprebuilt = ["{url}"]\n')
    r = run_cli("--machine", MACHINE, "install", "llama-cpp-python", "--dry-run", "--json", env=env)
    assert r.code == 0, r.stderr
    assert r.json()["prebuilt"]["candidates"][0]["url"].endswith("?token=****")
    assert not any(s in r.stdout + r.stderr for s in (PASSWORD, TOKEN))
    assert srv.seen


def test_n2_the_cache_key_entry_file_and_published_page_record_the_index_without_it(tmp_path, serve):
    project(tmp_path / "srv", "cu130")
    srv = serve(tmp_path / "srv")
    url = f"http://alice:{PASSWORD}@127.0.0.1:{srv.port}/cu130/?token={TOKEN}"
    route = install_prebuilt.plan_route(H100, "llama-cpp-python", "llama-cpp-python", (url,), "test")
    chosen = route.plan.chosen if route.plan else None
    assert chosen is not None, route.plan
    entry = install_prebuilt.store_chosen(chosen, "llama-cpp-python")
    assert entry.key.source == (
        f"prebuilt:http://127.0.0.1:{srv.port}/cu130/llama-cpp-python/{chosen.cand.filename}?token="
    )
    dest = tmp_path / "team-index"
    (done,) = wheelindex.publish([entry], dest)
    assert done.status == "added"
    cache = wheels.wheels_dir().parent
    for secret in (PASSWORD, TOKEN):
        assert files_holding(cache, secret) == [] and files_holding(dest, secret) == []
    assert f"127.0.0.1:{srv.port}/cu130/" in (dest / "llama-cpp-python" / "index.html").read_text()


def test_n2_an_entry_keyed_with_a_credential_before_the_fix_is_never_published(tmp_path):
    key = wheels.WheelKey(
        "fakecuda", "1.2.3", f"prebuilt:http://u:{PASSWORD}@h/x.whl", "13.0", "90", "prebuilt", "", "py3", "any"
    )
    from tests.unit.wheels.test_wheelindex import cached

    cached(tmp_path, key)
    good, skipped = wheelindex.cached_entries()
    assert good == [] and len(skipped) == 1 and "password or token" in skipped[0] and PASSWORD not in skipped[0]
    r = run_cli("wheels", "list", "--json")
    assert r.code == 0 and PASSWORD not in r.stdout and "u:****@h" in r.stdout


# --- N3: the query string is kept -------------------------------------------------------------------


def test_n3_a_token_in_the_query_reaches_the_project_page_and_the_wheel(tmp_path, serve):
    project(tmp_path / "srv", "cu124")
    srv = serve(tmp_path / "srv")
    listing = prebuilt.list_index(f"http://127.0.0.1:{srv.port}/cu124/?token={TOKEN}", "llama-cpp-python")
    assert listing.problem == "" and len(listing.candidates) == 1
    assert srv.seen == [f"/cu124/llama-cpp-python/?token={TOKEN}"]
    assert listing.candidates[0].url.secret().endswith(f".whl?token={TOKEN}")


# --- N4: every PEP 503 hash is checked --------------------------------------------------------------


def _plan_of(index: Path) -> pick.Judged:
    listing = prebuilt.list_index(str(index), "llama-cpp-python")
    assert listing.problem == "", listing.problem
    (judged,) = pick.plan(listing.candidates, H100, "llama-cpp-python", "", prebuilt.read_code).judged
    return judged


@pytest.mark.parametrize(
    "fragment, words",
    [
        ("#sha512=" + "0" * 128, "does not match the index's sha512"),
        ("#sha384=" + "0" * 96, "does not match the index's sha384"),
        ("#sha1=" + "0" * 40, "does not match the index's sha1"),
        ("#md5=" + "0" * 32, "does not match the index's md5"),
        ("#sha224=" + "0" * 56, "does not match the index's sha224"),
        ("#sha256=abc", "#sha256= hash is malformed"),
        ("#sha512=" + "z" * 128, "#sha512= hash is malformed"),
        ("#sha999=" + "0" * 64, "algorithm envmgr does not know"),
    ],
)
def test_n4_a_wrong_or_malformed_hash_of_any_name_refuses_the_file(tmp_path, fragment, words):
    judged = _plan_of(project(tmp_path, "cu130", fragment=fragment))
    assert judged.verdict == pick.REFUSED and words in judged.reason, judged


@pytest.mark.parametrize("name", ["sha1", "sha256", "sha384", "sha512", "md5", "sha3_256", "blake2b"])
def test_n4_a_right_hash_of_any_name_is_accepted(tmp_path, name):
    root = project(tmp_path, "cu130")
    page = root / "llama-cpp-python" / "index.html"
    whl = next(page.parent.glob("*.whl"))
    digest = hashlib.new(name, whl.read_bytes()).hexdigest()
    page.write_text(page.read_text().replace('.whl"', f'.whl#{name}={digest.upper()}"'))
    assert _plan_of(root).verdict == pick.CHOSEN


def test_n4_the_team_index_checks_a_second_hash_too(tmp_path):
    dest = published(tmp_path)
    page = dest / "fakecuda" / "index.html"
    page.write_text(page.read_text().replace(f"/{WHEEL}#sha256=", f"/{WHEEL}#sha512={'0' * 128}&amp;sha256="))
    lines, say = said()
    assert wheelremote.fetch(str(dest), KEY, True, say) is None
    assert any("does not match its sha512" in line for line in lines), lines


# --- N5: an index that is no URL ---------------------------------------------------------------------


@pytest.mark.parametrize("how", ["flag", "env"])
def test_n5_a_malformed_ipv6_url_is_one_line_and_exit_2(how):
    args = ["--prebuilt-index", f"http://u:{PASSWORD}@[::1"] if how == "flag" else []
    env = {"ENVMGR_PREBUILT_INDEX": f"http://u:{PASSWORD}@[::1"} if how == "env" else {}
    r = run_cli("--machine", MACHINE, "install", "llama-cpp-python", "--dry-run", "--json", *args, env=env)
    assert r.code == 2 and r.stdout == ""
    (line,) = [x for x in r.stderr.splitlines() if "error:" in x]
    assert "prebuilt index http://****@[::1" in line and "not a URL (Invalid IPv6 URL)" in line
    assert PASSWORD not in r.stderr and "Traceback" not in r.stderr


def test_n5_the_listing_of_such_an_index_says_so():
    listing = prebuilt.list_index("http://[::1", "llama-cpp-python")
    assert listing.problem == "not a URL (Invalid IPv6 URL)" and listing.candidates == ()


# --- N12: one deadline over the whole plan -------------------------------------------------------------


class Drip(http.server.SimpleHTTPRequestHandler):
    """Pages as files; a wheel announced at 100 MB and sent a byte every 0.2 s."""

    def do_GET(self):
        if not self.path.split("?")[0].endswith(".whl"):
            return super().do_GET()
        self.send_response(200)
        self.send_header("Content-Length", "100000000")
        self.end_headers()
        for _ in range(300):
            try:
                self.wfile.write(b"x")
                self.wfile.flush()
            except OSError:
                return
            time.sleep(0.2)


def test_n12_the_prebuilt_plan_has_one_deadline_not_one_per_wheel(tmp_path, serve, monkeypatch):
    page = tmp_path / "srv" / "cu124" / "llama-cpp-python"
    page.mkdir(parents=True)
    srv = serve(tmp_path / "srv", Drip)
    (page / "index.html").write_text(
        "".join(
            f'<a href="http://127.0.0.1:{srv.port}/w{i}/llama_cpp_python-0.3.3{i}-py3-none-any.whl">w</a>\n'
            for i in range(3)
        )
    )
    monkeypatch.setattr(wheelremote, "DEADLINE_S", 3.0)  # each read's own allowance
    monkeypatch.setattr(prebuilt, "PLAN_DEADLINE_S", 2.0, raising=False)  # the plan's: spent first
    t0 = time.monotonic()
    route = install_prebuilt.plan_route(
        H100, "llama-cpp-python", "llama-cpp-python", (f"http://127.0.0.1:{srv.port}/cu124/",), "test"
    )
    took = time.monotonic() - t0
    assert took < 5.0, f"{took:.1f} s: each wheel got its own deadline"  # 3 wheels x 3 s before the fix
    assert route.plan is not None and route.plan.chosen is None
    assert all(j.verdict == pick.REFUSED and "gave up after 2 s" in j.reason for j in route.plan.judged)
    assert "gave up after 2 s" in route.note


# --- N14: prereleases as pip takes them -----------------------------------------------------------


@pytest.mark.parametrize(
    "spec, pre, chosen",
    [
        ("", False, "0.3.36"),
        ("==0.3.*", False, "0.3.36"),
        ("~=0.3", False, "0.3.36"),
        ("!=0.3.30", False, "0.3.36"),
        ("==0.3.38.dev1", False, "0.3.38.dev1"),
        (">=0.3.38.dev0", False, "0.3.38.dev1"),
        ("", True, "0.3.38.dev1"),
        (">0.3.36", False, "0.3.38.dev1"),  # nothing else matches: PEP 440 takes the prerelease
    ],
)
def test_n14_a_prerelease_is_picked_only_when_asked_or_alone(spec, pre, chosen):
    base = "http://127.0.0.1:1/whl/cu130/"
    cands = [
        pick.Candidate(f"{base}{n}", n, base, "13.0")
        for n in (f"llama_cpp_python-{v}-py3-none-any.whl" for v in ("0.3.36", "0.3.38.dev1"))
    ]
    code = type("C", (), {"cubin": ("sm_90",), "ptx": (), "cuda_imports": ()})()
    plan = pick.plan(cands, H100, "llama-cpp-python", spec, lambda c: code, pre=pre)
    assert plan.chosen is not None and plan.chosen.version == chosen
    others = [j for j in plan.judged if j.version != chosen]
    if others and not pre and "dev" in others[0].version:
        assert others[0].verdict == pick.REFUSED and "prerelease" in others[0].reason


def test_n14_install_takes_pre_as_pip_does(tmp_path):
    folder = tmp_path / "cu124"
    for v in ("0.3.36", "0.3.38.dev1"):
        wheel(folder, v, SO)
    base = ("--machine", MACHINE, "install")
    plain = run_cli(*base, "llama-cpp-python", "--dry-run", "--json", "--prebuilt-index", str(folder)).json()
    with_pre = run_cli(*base, "--pre", "llama-cpp-python", "--dry-run", "--json", "--prebuilt-index", str(folder))
    assert with_pre.code == 0, with_pre.stderr
    by = {c["version"]: c["reason"] for c in plain["prebuilt"]["candidates"]}
    assert "prerelease" in by["0.3.38.dev1"] and "prerelease" not in by["0.3.36"]
    by_pre = {c["version"]: c["reason"] for c in with_pre.json()["prebuilt"]["candidates"]}
    assert "prerelease" not in by_pre["0.3.38.dev1"]


# --- N15: a version too long to be a number --------------------------------------------------------


def test_n15_a_5000_digit_version_on_a_page_is_no_wheel_name(tmp_path, serve):
    page = tmp_path / "srv" / "cu124" / "llama-cpp-python"
    page.mkdir(parents=True)
    (page / "index.html").write_text(
        f'<a href="llama_cpp_python-0.{"9" * 5000}-py3-none-any.whl">w</a>\n'
        f'<a href="llama_cpp_python-0.3.36-py3-none-any.whl">w</a>\n'
    )
    srv = serve(tmp_path / "srv")
    r = run_cli(
        "--machine",
        MACHINE,
        "install",
        "llama-cpp-python",
        "--dry-run",
        "--json",
        "--prebuilt-index",
        f"http://127.0.0.1:{srv.port}/cu124/",
    )
    assert r.code == 0, r.stderr[-500:]
    reasons = [c["reason"] for c in r.json()["prebuilt"]["candidates"]]
    assert reasons[0] == "not a wheel file name"


def test_n15_a_5000_digit_version_in_the_spec_is_one_line_exit_2(tmp_path):
    folder = tmp_path / "cu124"
    wheel(folder, "0.3.36", SO)
    r = run_cli(
        "--machine",
        MACHINE,
        "install",
        f"llama-cpp-python==0.3.{'9' * 5000}",
        "--dry-run",
        "--prebuilt-index",
        str(folder),
    )
    assert r.code == 2 and "names a version envmgr cannot read" in r.stderr and "Traceback" not in r.stderr
    assert len([x for x in r.stderr.splitlines() if "error:" in x]) == 1


def test_the_facts_file_of_a_download_holds_no_credential(tmp_path, serve):
    project(tmp_path / "srv", "cu130")
    srv = serve(tmp_path / "srv")
    listing = prebuilt.list_index(f"http://bob:{PASSWORD}@127.0.0.1:{srv.port}/cu130/", "llama-cpp-python")
    (cand,) = listing.candidates
    prebuilt.read_code(cand)
    facts = json.loads((prebuilt._slot(cand) / prebuilt.FACTS).read_text())
    assert facts["url"] == f"http://127.0.0.1:{srv.port}/cu130/llama-cpp-python/{cand.filename}"
    assert files_holding(prebuilt.downloads_dir(), PASSWORD) == []


def test_n2_urllibs_words_quoting_a_redirect_never_carry_the_token(tmp_path, serve):
    """urllib refuses a redirect to gopher: with "Redirection to url '…' is not allowed", quoting the URL."""

    class Redirect(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            self.send_response(302)
            self.send_header("Location", f"gopher://127.0.0.1/elsewhere/?token={TOKEN}&again={PASSWORD}")
            self.end_headers()

    srv = serve(tmp_path, Redirect)
    listing = prebuilt.list_index(
        f"http://127.0.0.1:{srv.port}/cu124/?token={TOKEN}&again={PASSWORD}", "llama-cpp-python"
    )
    assert listing.unreachable and "Redirection to url" in listing.problem, listing.problem
    assert TOKEN not in listing.problem and PASSWORD not in listing.problem


def test_n2_the_dry_run_names_the_team_index_without_its_credentials(capsys):
    """`install … --dry-run` names the team index it would ask (route 2): redacted, as every message."""
    from envmgr.commands import install_build

    info = wheels.SpecInfo("fakecuda", "1.2.3", "file:0123456789abcdef")
    url = f"https://bob:{PASSWORD}@wheels.example.org/simple/?token={TOKEN}"
    install_build._dry(lambda *a: KEY, info, True, url, False, None, "python", [], False, {})
    err = capsys.readouterr().err
    assert "route 2, team index: https://bob:****@wheels.example.org/simple/?token=**** would be asked" in err
    assert PASSWORD not in err and TOKEN not in err
