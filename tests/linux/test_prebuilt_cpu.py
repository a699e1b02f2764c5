"""The prebuilt plan judges a wheel's CPU code (issue 37): `install llama-cpp-python --dry-run --json` against a
loopback copy of the official index layout (tests/linux/test_prebuilt_loopback.py's server and nvcc-built
CUDA library), offering wheels that differ only in their CPU library.

Each wheel holds the same nvcc 13.0 `libggml-cuda.so` (sm_75 + sm_89: native on the recorded RTX 4070 SUPER)
and one CPU library, gcc-built at test time from tests/unit/wheels/test_cpucode.py's kernels with -mavx512f or with
-mavx2 -mfma -mf16c, or a set of `libggml-cpu-<variant>.so` as GGML_BACKEND_DL wheels carry. The machine is
the recorded community-buildtools-cuda124 with `meta.cpu_flags` added: an AVX2 CPU without AVX-512 (the
flags of a Haswell-class /proc/cpuinfo), or left out (unknown).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
import tomlkit

from tests.conftest import run_cli
from tests.linux.test_prebuilt_loopback import MACHINE, TAG, libs, server  # noqa: F401 - fixtures
from tests.official_index import asset_dir, asset_url, official_pages
from tests.unit.wheels.test_cpucode import kernels  # noqa: F401 - a fixture

pytestmark = [pytest.mark.linux]
HASWELL = ["fpu", "sse2", "ssse3", "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "bmi2"]


def record(tmp_path: Path, flags: list[str] | None) -> Path:
    doc = tomlkit.parse(MACHINE.read_text(encoding="utf-8"))
    if flags is not None:
        doc["meta"]["cpu_flags"] = flags  # type: ignore[index]
    path = tmp_path / "machine.toml"
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return path


def publish(root: Path, base: str, version: str, cuda_lib: bytes, cpu_libs: dict[str, bytes]) -> str:
    name = f"llama_cpp_python-{version}-{TAG}.whl"
    folder = asset_dir(root, "cu124", version)
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / name, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("llama_cpp/__init__.py", f"__version__ = '{version}'\n")
        zf.writestr("llama_cpp/lib/libggml-cuda.so", cuda_lib)
        for member, data in cpu_libs.items():
            zf.writestr(f"llama_cpp/lib/{member}", data)
    return asset_url(base, "cu124", version, name)


def dry_run(tmp_path: Path, machine: Path, index: str):
    env = {
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "ENVMGR_CONFIG_DIR": str(tmp_path / "config"),
        "ENVMGR_WHEEL_INDEX": "",
        "ENVMGR_PREBUILT_INDEX": None,
    }
    return run_cli(
        "--machine",
        str(machine),
        "install",
        "--prebuilt-index",
        index,
        "--dry-run",
        "--json",
        "llama-cpp-python",
        env=env,
    )


def by_version(data: dict) -> dict[str, dict]:
    return {c["version"]: c for c in data["prebuilt"]["candidates"]}


def test_an_avx512_wheel_is_refused_on_an_avx2_cpu_and_the_avx2_build_is_chosen(tmp_path, server, libs, kernels):  # noqa: F811
    root, base = server
    official_pages(
        root,
        "cu124",
        {
            "v0.3.16": [publish(root, base, "0.3.16", libs["sm75-sm89"], {"libggml-cpu.so": kernels["avx512.so"]})],
            "v0.3.15": [publish(root, base, "0.3.15", libs["sm75-sm89"], {"libggml-cpu.so": kernels["avx2.so"]})],
        },
    )
    r = dry_run(tmp_path, record(tmp_path, HASWELL), f"{base}/llama-cpp-python/whl/cu124/")
    assert r.code == 0, r.stderr
    data = r.json()
    c = by_version(data)
    newer, older = c["0.3.16"], c["0.3.15"]
    assert newer["verdict"] == "refused"
    assert newer["reason"].startswith(
        "its CPU code likely needs AVX-512F; this CPU has AVX2 only (the record's meta.cpu_flags)"
    )
    assert "llama_cpp/lib/libggml-cpu.so+0x" in newer["reason"]  # the evidence: a sample offset
    assert newer["cpu_code"]["how"] == "scan" and newer["cpu_code"]["certain"] is False
    assert newer["cpu_code"]["requires"] == ["avx512f", "avx2", "fma", "f16c"]
    assert newer["cpu_code"]["evidence"][0]["isa"] == "avx512f" and newer["cpu_code"]["evidence"][0]["hits"] >= 3
    assert older["verdict"] == "chosen" and older["runs"] == "native"
    assert "CPU: likely requires AVX2, FMA, F16C" in older["reason"]
    assert data["prebuilt"]["machine"]["cpu"] == {
        "flags": sorted(["sse4_2", "avx", "avx2", "fma", "f16c", "bmi2"]),
        "source": "the record's meta.cpu_flags",
    }
    assert "refused      llama_cpp_python-0.3.16" in r.stderr and "likely needs AVX-512F" in r.stderr
    assert "CPU AVX2 FMA F16C (the record's meta.cpu_flags)" in r.stderr


def test_without_the_cpu_in_the_record_the_plan_says_unknown_and_keeps_the_newest(tmp_path, server, libs, kernels):  # noqa: F811
    root, base = server
    official_pages(
        root,
        "cu124",
        {"v0.3.16": [publish(root, base, "0.3.16", libs["sm75-sm89"], {"libggml-cpu.so": kernels["avx512.so"]})]},
    )
    r = dry_run(tmp_path, record(tmp_path, None), f"{base}/llama-cpp-python/whl/cu124/")
    assert r.code == 0, r.stderr
    data = r.json()
    chosen = data["prebuilt"]["chosen"]
    assert chosen["version"] == "0.3.16" and "likely requires AVX-512F" in chosen["reason"]
    assert "this CPU's instruction sets are unknown (the record has no meta.cpu_flags)" in chosen["reason"]
    assert data["prebuilt"]["machine"]["cpu"] == {"flags": None, "source": "the record has no meta.cpu_flags"}


def test_a_wheel_of_ggml_cpu_variants_needs_its_lowest_and_names_the_one_ggml_would_load(
    tmp_path,
    server,
    libs,  # noqa: F811
    kernels,
):  # noqa: F811
    root, base = server
    variants = {"libggml-cpu-haswell.so": kernels["avx2.so"], "libggml-cpu-skylakex.so": kernels["avx512.so"]}
    official_pages(root, "cu124", {"v0.3.16": [publish(root, base, "0.3.16", libs["sm75-sm89"], variants)]})
    index = f"{base}/llama-cpp-python/whl/cu124/"
    fits = by_version(dry_run(tmp_path, record(tmp_path, HASWELL), index).json())["0.3.16"]
    assert fits["verdict"] == "chosen" and fits["cpu_code"]["variants"] == ["haswell", "skylakex"]
    assert "requires only the lowest" in fits["reason"] and "ggml would load ggml-cpu-haswell here" in fits["reason"]
    old = by_version(dry_run(tmp_path, record(tmp_path, ["sse4_2", "avx"]), index).json())["0.3.16"]
    assert old["verdict"] == "refused" and old["cpu_code"]["certain"] is True
    assert old["reason"].startswith("its CPU code needs F16C, AVX2, BMI2, FMA; this CPU has AVX only")
