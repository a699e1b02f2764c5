"""Install from a team's wheel index vs building, on this machine (issue 16).

    python bench/wheel_index.py [--repeat N] [--arch 90]

A real CUDA build: a tiny CMake project (tests/linux/tinycuda: one kernel compiled by this
machine's nvcc into a shared library) packaged by an in-tree PEP 517 backend, so no network is
needed. Each sample uses a fresh venv and an empty envmgr wheel cache (venv creation is not timed):
  build   `envmgr install --recipe tiny-cuda --publish INDEX SDIST`    (pip wheel: cmake + nvcc + pip install)
  index   `envmgr install --recipe tiny-cuda --wheel-index URL SDIST`  (key hit: download, checks, pip install)
  pip     `python -m pip install --index-url URL tinycuda==0.1.0`       (plain pip on the same index)
The index is served by `python -m http.server` on 127.0.0.1. The ratio is build / index, medians.
Writes bench/results/<date>-wheel-index-<machine>.md and .json. Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import venv
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from run import machine_name  # noqa: E402

BACKEND = """
import base64, hashlib, os, shlex, subprocess, tempfile, zipfile

def _line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    build = tempfile.mkdtemp()
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.check_call(["cmake", "-S", here, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                           *shlex.split(os.environ.get("CMAKE_ARGS", ""))])
    subprocess.check_call(["cmake", "--build", build])
    with open(os.path.join(build, "libtiny.so"), "rb") as fh:
        files = {"tinycuda/__init__.py": b"", "tinycuda/lib/libtiny_cuda.so": fh.read()}
    dist = "tinycuda-0.1.0.dist-info"
    files[dist + "/METADATA"] = b"Metadata-Version: 2.1\\nName: tinycuda\\nVersion: 0.1.0\\n"
    files[dist + "/WHEEL"] = b"Wheel-Version: 1.0\\nGenerator: bench\\nRoot-Is-Purelib: false\\nTag: py3-none-any\\n"
    files[dist + "/RECORD"] = ("\\n".join([_line(n, d) for n, d in files.items()] + [dist + "/RECORD,,"]) + "\\n").encode()
    name = "tinycuda-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as zf:
        for n, d in files.items():
            zf.writestr(n, d)
    return name
"""
RECIPE = (
    'schema = 1\nname = "tiny-cuda"\ndescription = "bench"\nkind = "cmake"\n'
    'cmake_args = ["-DGGML_CUDA=on"]\ncuda_architectures = true\ngenerator = "auto"\n'
)


def make_sdist(base: Path) -> Path:
    src = base / "tinycuda-0.1.0"
    src.mkdir()
    for name in ("CMakeLists.txt", "tiny.cu"):
        shutil.copy(ROOT / "tests" / "linux" / "tinycuda" / name, src / name)
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
    )
    (src / "backend.py").write_text(BACKEND)
    sdist = base / "tinycuda-0.1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tf:
        tf.add(src, arcname="tinycuda-0.1.0")
    return sdist


def timed(argv: list[str], env: dict) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1800)
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--arch", default="90", help="CUDA architecture list for the build")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="envmgr-bench-index-"))
    sdist = make_sdist(base)
    (base / "config" / "recipes").mkdir(parents=True)
    (base / "config" / "recipes" / "tiny.toml").write_text(RECIPE)
    index = base / "index"
    index.mkdir()
    server = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "--bind", "127.0.0.1", "0", "--directory", str(index)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    port = re.search(r"port (\d+)", server.stdout.readline()).group(1)
    url = f"http://127.0.0.1:{port}/"
    samples: dict[str, list[float]] = {"build": [], "index": [], "pip": []}
    try:
        for i in range(args.repeat):
            for kind in samples:
                py = base / f"venv-{kind}-{i}" / "bin" / "python"
                venv.EnvBuilder(with_pip=False, system_site_packages=True).create(py.parent.parent)
                env = {
                    **os.environ,
                    "ENVMGR_CONFIG_DIR": str(base / "config"),
                    "PYTHONPATH": str(ROOT),
                    "ENVMGR_CACHE_DIR": str(base / f"cache-{kind}-{i}"),
                    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                    "PIP_NO_CACHE_DIR": "1",
                    "NO_COLOR": "1",
                }
                common = [
                    sys.executable,
                    "-m",
                    "envmgr",
                    "install",
                    "--recipe",
                    "tiny-cuda",
                    "--arch-list",
                    args.arch,
                    "--python",
                    str(py),
                ]
                if kind == "build":
                    argv = [*common, "--wheel-index", "", "--publish", str(index), "--no-index", str(sdist)]
                elif kind == "index":
                    argv = [*common, "--wheel-index", url, "--no-index", str(sdist)]
                else:
                    argv = [str(py), "-m", "pip", "install", "--no-deps", "--index-url", url, "tinycuda==0.1.0"]
                seconds, out = timed(argv, env)
                ok = out.returncode == 0 and (
                    kind != "index" or ("downloaded" in out.stderr and "building" not in out.stderr)
                )
                if not ok:
                    sys.exit(f"{kind} sample {i} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
                samples[kind].append(seconds)
                print(f"{kind:5} sample {i}: {seconds:.2f} s", flush=True)
    finally:
        server.terminate()
        server.wait()
    report(samples, args, base)
    shutil.rmtree(base, ignore_errors=True)


def report(samples: dict[str, list[float]], args, base: Path) -> None:
    med = {k: statistics.median(v) for k, v in samples.items()}
    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    now = datetime.now(timezone.utc)
    data = {
        "schema": 1,
        "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine_name(),
        "nvcc": nvcc,
        "arch_list": args.arch,
        "repeat": args.repeat,
        "samples_s": samples,
        "median_s": med,
        "ratio_build_over_index": med["build"] / med["index"],
        "ratio_build_over_pip": med["build"] / med["pip"],
    }
    stem = ROOT / "bench" / "results" / f"{now:%Y-%m-%d}-wheel-index-{machine_name()}"
    stem.with_suffix(".json").write_text(json.dumps(data, indent=2) + "\n")
    lines = [
        f"# Install from the wheel index vs build ({data['date']}, {machine_name()})",
        "",
        f"`python bench/wheel_index.py --repeat {args.repeat} --arch {args.arch}`; nvcc: {nvcc}.",
        "Package: tests/linux/tinycuda (one kernel, CMake + nvcc) via an in-tree PEP 517 backend;",
        "fresh venv and empty wheel cache per sample; index served by `python -m http.server` on 127.0.0.1.",
        "",
        "| step | median s | samples s |",
        "|---|---|---|",
    ]
    for kind, label in (
        ("build", "`envmgr install --publish` (build)"),
        ("index", "`envmgr install --wheel-index` (key hit)"),
        ("pip", "plain `pip install --index-url`"),
    ):
        lines.append(f"| {label} | {med[kind]:.2f} | {', '.join(f'{s:.2f}' for s in samples[kind])} |")
    lines += [
        "",
        f"**Install from the index is {data['ratio_build_over_index']:.1f}x faster than building** "
        f"(plain pip from the same index: {data['ratio_build_over_pip']:.1f}x).",
        "This build is seconds; a CUDA llama-cpp-python build is minutes (README: 223-280 s on an H200 host), "
        "so there the ratio should be far larger (not measured here). Two cores shared with other work: timings are noisy.",
    ]
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
