"""`envmgr install llama-cpp-python --dry-run --json` against a loopback (127.0.0.1) copy of
llama-cpp-python's published CUDA indexes, holding wheels built here by nvcc 13.0.

The layout is the official one, as its generator writes it (abetlen/llama-cpp-python at 3691546f,
.github/workflows/generate-index-from-release.yaml running scripts/releases-to-pep-503.sh once per
folder): `whl/cuXYZ/index.html` links `llama-cpp-python/`; `whl/cuXYZ/llama-cpp-python/index.html` has an
`<h1>Links for llama-cpp-python</h1>`, an `<h2>vX.Y.Z</h2>` per release and `<a href="URL">URL</a><br>`
per wheel, URL being the GitHub release asset `…/releases/download/vX.Y.Z-cuXYZ/<wheel>` (no hash).
The wheels are named as the CUDA workflow names them (wheel.py-api = "py3", auditwheel's manylinux tag);
inside, `llama_cpp/lib/libggml-cuda.so` is tests/corpus/devicecode/tiny_kernel.cu built with the
-gencode set each case names (cached for the session), linked to the shared cudart as the real one is.

The machine is the recorded community-buildtools-cuda124 (RTX 4070 SUPER, compute capability 8.9, driver
576.80: CUDA 12 yes, CUDA 13 no by the driver table, so nvcc 13.0's PTX ISA 9.0 cannot be JIT-compiled there),
or for PTX the recorded vs2026-vs2022 (RTX 4060 Ti, 8.9, driver 596.36); the Python whose tags decide is this one.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import shutil
import subprocess
import threading
import zipfile
from functools import partial
from pathlib import Path

import pytest

from tests.conftest import need, run_cli
from tests.official_index import asset_dir, asset_url, official_pages

pytestmark = [pytest.mark.linux]
NVCC = Path("/usr/local/cuda-13.0/bin/nvcc")
KERNEL = Path(__file__).resolve().parents[1] / "corpus" / "devicecode" / "tiny_kernel.cu"
MACHINE = Path(__file__).resolve().parents[1] / "machines" / "community-buildtools-cuda124.toml"
NEW_DRIVER = MACHINE.with_name("vs2026-vs2022.toml")  # RTX 4060 Ti (8.9), driver 596.36
TAG = "py3-none-manylinux_2_17_x86_64"
GENCODES = {
    "sm75-sm89": ["arch=compute_75,code=sm_75", "arch=compute_89,code=sm_89"],
    "ptx80": ["arch=compute_80,code=compute_80"],
    "sm90-ptx90": ["arch=compute_90,code=sm_90", "arch=compute_90,code=compute_90"],
}


@pytest.fixture(scope="session")
def libs(tmp_path_factory) -> dict[str, bytes]:
    """One tiny CUDA library per -gencode set, built once per test session."""
    need(NVCC.is_file(), f"{NVCC} is not installed")
    out = {}
    for name, codes in GENCODES.items():
        so = tmp_path_factory.mktemp("nvcc") / f"{name}.so"
        argv = [str(NVCC), "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared", "-o", str(so), str(KERNEL)]
        for code in codes:
            argv[1:1] = ["-gencode", code]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        out[name] = so.read_bytes()
    return out


def make_wheel(folder: Path, version: str, lib: bytes) -> Path:
    name = f"llama_cpp_python-{version}-{TAG}.whl"
    info = f"llama_cpp_python-{version}.dist-info"
    files = {
        "llama_cpp/__init__.py": b"__version__ = '" + version.encode() + b"'\n",
        "llama_cpp/lib/libggml-cuda.so": lib,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: llama_cpp_python\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": (
            f"Wheel-Version: 1.0\nGenerator: scikit-build-core\nRoot-Is-Purelib: false\nTag: {TAG}\n"
        ).encode(),
    }
    record = "".join(f"{n},,\n" for n in files) + f"{info}/RECORD,,\n"
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / name, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, data in files.items():
            zf.writestr(n, data)
        zf.writestr(f"{info}/RECORD", record)
    return folder / name


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    handler = partial(Quiet, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def publish(root: Path, base: str, cu: str, version: str, lib: bytes) -> str:
    """A release asset at its GitHub-shaped path; returns its URL."""
    wheel = make_wheel(asset_dir(root, cu, version), version, lib)
    return asset_url(base, cu, version, wheel.name)


def dry_run(tmp_path, *indexes: str, spec: str = "llama-cpp-python", machine: Path = MACHINE):
    env = {
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "ENVMGR_WHEEL_INDEX": "",
        "ENVMGR_PREBUILT_INDEX": None,
    }
    flags = [a for x in indexes for a in ("--prebuilt-index", x)]
    return run_cli("--machine", str(machine), "install", *flags, "--dry-run", "--json", spec, env=env)


def by_cuda(data) -> dict[str, dict]:
    return {c["cuda"] + "/" + c["version"]: c for c in data["prebuilt"]["candidates"]}


def test_the_plan_over_an_official_layout_picks_native_and_says_why_not_the_others(tmp_path, server, libs):
    root, base = server
    official_pages(
        root,
        "cu124",
        {
            "v0.3.16": [publish(root, base, "cu124", "0.3.16", libs["sm75-sm89"])],
            "v0.3.15": [publish(root, base, "cu124", "0.3.15", libs["sm75-sm89"])],
        },
    )
    official_pages(root, "cu125", {"v0.3.16": [publish(root, base, "cu125", "0.3.16", libs["ptx80"])]})
    official_pages(root, "cu130", {"v0.3.16": [publish(root, base, "cu130", "0.3.16", libs["sm75-sm89"])]})
    folders = [f"{base}/llama-cpp-python/whl/{cu}/" for cu in ("cu130", "cu125", "cu124", "cu126")]
    r = dry_run(tmp_path, *folders)
    assert r.code == 0, r.stderr
    data = r.json()
    assert data["dry_run"] is True and data["prebuilt"]["indexes_from"] == "--prebuilt-index"
    assert "holds no vcvars capture" in data["cache"]["skipped"]  # the record has no build environment
    problems = {x["index"]: x["problem"] for x in data["prebuilt"]["indexes"]}
    assert problems[folders[3]].startswith("no page for llama-cpp-python") and "404" in problems[folders[3]]
    c = by_cuda(data)
    assert c["12.4/0.3.16"]["verdict"] == "chosen" and c["12.4/0.3.16"]["runs"] == "native"
    assert c["12.4/0.3.16"]["via"] == "sm_89" and c["12.4/0.3.16"]["device_code"] == "cubin sm_75 sm_89"
    # its PTX is nvcc 13.0's (ISA 9.0): driver 576.80 is below CUDA 13's minimum, so it cannot JIT it
    assert c["12.5/0.3.16"]["verdict"] == "refused" and "cannot compile it" in c["12.5/0.3.16"]["reason"]
    assert c["13.0/0.3.16"]["verdict"] == "refused" and "needs driver 580.00" in c["13.0/0.3.16"]["reason"]
    assert c["12.4/0.3.15"]["verdict"] == "not examined"
    assert data["prebuilt"]["chosen"]["url"].endswith("v0.3.16-cu124/llama_cpp_python-0.3.16-" + TAG + ".whl")
    gpus = data["prebuilt"]["machine"]["gpus"]
    assert gpus == [{"name": "NVIDIA GeForce RTX 4070 SUPER", "compute_capability": "8.9"}]
    assert "route 3, prebuilt indexes (--prebuilt-index): 4 to read" in r.stderr
    # the second plan reads the downloads cache, not the server
    shutil.rmtree(root / "abetlen")
    again = dry_run(tmp_path, *folders)
    assert by_cuda(again.json())["12.4/0.3.16"]["verdict"] == "chosen"


def test_a_pin_and_a_gpu_only_ptx_covers(tmp_path, server, libs):
    root, base = server
    official_pages(
        root,
        "cu124",
        {
            "v0.3.16": [publish(root, base, "cu124", "0.3.16", libs["sm90-ptx90"])],
            "v0.3.15": [publish(root, base, "cu124", "0.3.15", libs["ptx80"])],
        },
    )
    folder = f"{base}/llama-cpp-python/whl/cu124/"
    r = dry_run(tmp_path, folder, machine=NEW_DRIVER)
    c = by_cuda(r.json())
    # sm_90 / compute_90 cannot run on 8.9; compute_80 PTX can, through the JIT (driver 596.36 knows PTX ISA 9.0)
    assert "no device code for NVIDIA GeForce RTX 4060 Ti (compute capability 8.9)" in c["12.4/0.3.16"]["reason"]
    assert c["12.4/0.3.15"]["verdict"] == "chosen" and "through PTX JIT (compute_80)" in c["12.4/0.3.15"]["reason"]
    pinned = dry_run(tmp_path, folder, spec="llama-cpp-python==0.3.16", machine=NEW_DRIVER).json()
    assert pinned["prebuilt"]["chosen"] is None and pinned["build"]["needed"] is True
    assert by_cuda(pinned)["12.4/0.3.15"]["reason"] == "version 0.3.15 does not match ==0.3.16"


def test_hostile_indexes_truncated_wheel_wrong_hash_and_a_page_that_is_not_pep_503(tmp_path, server, libs):
    root, base = server
    good = publish(root, base, "cu124", "0.3.16", libs["sm75-sm89"])
    cut = publish(root, base, "cu125", "0.3.16", libs["sm75-sm89"])
    path = root / cut.split(base + "/", 1)[1]
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    official_pages(root, "cu125", {"v0.3.16": [cut]})
    # a mirror that publishes hashes (PEP 503 #sha256=): the one for cu124 is wrong
    official_pages(root, "cu124", {"v0.3.16": [good + "#sha256=" + hashlib.sha256(b"other").hexdigest()]})
    (root / "llama-cpp-python" / "whl" / "cu123" / "llama-cpp-python").mkdir(parents=True)
    (root / "llama-cpp-python" / "whl" / "cu123" / "llama-cpp-python" / "index.html").write_text('{"not": "html"}')
    folders = [f"{base}/llama-cpp-python/whl/{cu}/" for cu in ("cu125", "cu124", "cu123")]
    r = dry_run(tmp_path, *folders)
    assert r.code == 0 and "Traceback" not in r.stderr
    data = r.json()
    c = by_cuda(data)
    assert c["12.5/0.3.16"]["verdict"] == "refused" and "not a readable wheel" in c["12.5/0.3.16"]["reason"]
    assert c["12.4/0.3.16"]["verdict"] == "refused"
    assert "does not match the index's sha256" in c["12.4/0.3.16"]["reason"]
    assert "lists no wheels (not a PEP 503 project page" in data["prebuilt"]["indexes"][2]["problem"]
    assert data["prebuilt"]["chosen"] is None and data["build"]["needed"] is True


def test_no_index_reachable_is_one_line_then_the_build_route(tmp_path):
    dead = "http://127.0.0.1:9/llama-cpp-python/whl/"
    r = dry_run(tmp_path, dead + "cu124/", dead + "cu125/", dead + "cu130/")
    assert r.code == 0, r.stderr
    lines = [x for x in r.stderr.splitlines() if "cannot be reached" in x or "not asked" in x]
    assert len(lines) == 1 and "cu124" in lines[0]
    assert r.json()["prebuilt"]["note"] == "no prebuilt index could be reached"
    assert "route 4, build:" in r.stderr


def test_the_chosen_wheel_is_cached_like_a_built_one_and_installed(tmp_path, server, libs):
    """Not a dry run: the wheel goes into the wheel cache with its key (source = its URL, CUDA = the folder's,
    architectures = its device code) and pip installs it into the target venv; verify then fails (the
    package is the test's stand-in, and there is no GPU here), which the flow reports with exit 1."""
    from tests.linux.test_wheels_e2e import make_venv

    root, base = server
    url = publish(root, base, "cu124", "0.3.16", libs["sm75-sm89"])
    official_pages(root, "cu124", {"v0.3.16": [url]})
    py = make_venv(tmp_path / "venv")
    env = {
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "ENVMGR_WHEEL_INDEX": "",
        "ENVMGR_PREBUILT_INDEX": f"{base}/llama-cpp-python/whl/cu124/",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    r = run_cli("--machine", str(MACHINE), "install", "--python", str(py), "--json", "llama-cpp-python", env=env)
    assert r.code == 1 and "Traceback" not in r.stderr, r.stderr
    wheel = r.json()["wheel"]
    assert wheel["origin"] == "prebuilt" and wheel["url"] == url and wheel["runs"] == "native"
    entry = json.loads(next((tmp_path / "cache" / "wheels").glob("*/entry.json")).read_text())
    assert entry["key"]["source"] == f"prebuilt:{url}" and entry["key"]["cuda"] == "12.4"
    assert entry["key"]["archs"] == "sm_75;sm_89" and entry["key"]["generator"] == "prebuilt"
    assert entry["device_code"]["cubin"] == ["sm_75", "sm_89"]  # recorded by the cache (issue 21)
    assert entry["sha256"] == hashlib.sha256((root / url.split(base + "/", 1)[1]).read_bytes()).hexdigest()
    site = subprocess.run(
        [str(py), "-c", "import llama_cpp, sys; sys.stdout.write(llama_cpp.__file__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert site.stdout.startswith(str(tmp_path / "venv"))
    assert "prebuilt wheel from" in " ".join(r.json()["report"]) and "nothing built" in " ".join(r.json()["report"])
