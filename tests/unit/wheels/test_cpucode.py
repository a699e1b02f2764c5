"""The CPU code of a wheel (wheels/cpucode.py): the scanner's verdict on objects this machine's compilers build
at test time with and without AVX-512 / AVX2+FMA+F16C (gcc for ELF, mingw-w64 for PE), ggml's run-time CPU
variants, and the CPU as the target Python reads it.

The kernels are small loops gcc -O3 vectorizes (a saxpy, an integer add, a half-to-float conversion, a dot
product): with -mavx512f its vector code is EVEX, with -mavx2 -mfma -mf16c VEX.256 / FMA / VCVTPH2PS, without
either flag SSE2 only (x86-64's baseline). The big binaries are this machine's own, read as they are.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
import tomlkit

from envmgr.binaries.devicecode import BinaryCode, DeviceCode, FatEntry
from envmgr.files.wheelzip import open_wheel
from envmgr.wheels import cpucode, pick
from tests.conftest import need, run_cli

MACHINES = Path(__file__).resolve().parents[2] / "machines"

KERNEL = """
void saxpy(float *restrict y, const float *restrict x, float a, int n) { for (int i = 0; i < n; i++) y[i] += a * x[i]; }
void iadd(int *restrict y, const int *restrict x, int n) { for (int i = 0; i < n; i++) y[i] += x[i] * 3; }
void h2f(float *restrict y, const _Float16 *restrict x, int n) { for (int i = 0; i < n; i++) y[i] = (float)x[i]; }
double dot(const double *a, const double *b, int n) { double s = 0; for (int i = 0; i < n; i++) s += a[i] * b[i];
                                                      return s; }
"""
FLAGS = {"plain": [], "avx2": ["-mavx2", "-mfma", "-mf16c"], "avx512": ["-mavx512f", "-mavx512vl", "-mfma", "-mf16c"]}
COMPILERS = {"so": "gcc", "dll": "x86_64-w64-mingw32-gcc"}
EXPECTED = {"plain": (), "avx2": ("avx2", "fma", "f16c"), "avx512": ("avx512f", "avx2", "fma", "f16c")}


@pytest.fixture(scope="session")
def kernels(tmp_path_factory) -> dict[str, bytes]:
    """{"avx2.so": bytes, "plain.dll": bytes, ...}: one shared library per flag set and compiler."""
    out: dict[str, bytes] = {}
    folder = tmp_path_factory.mktemp("cpukernels")
    (folder / "k.c").write_text(KERNEL)
    for ext, cc in COMPILERS.items():
        need(shutil.which(cc) is not None, f"{cc} is not installed")
        for name, flags in FLAGS.items():
            lib = folder / f"{name}.{ext}"
            done = subprocess.run(
                [
                    cc,
                    "-O3",
                    "-shared",
                    *(["-fPIC"] if ext == "so" else []),
                    *flags,
                    str(folder / "k.c"),
                    "-o",
                    str(lib),
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            assert done.returncode == 0, done.stderr
            out[lib.name] = lib.read_bytes()
    return out


@pytest.mark.linux
@pytest.mark.parametrize("ext", ["so", "dll"])
@pytest.mark.parametrize("name", list(FLAGS))
def test_the_scanner_finds_what_the_compiler_was_told_to_use(kernels, name, ext):
    scan = cpucode.scan_binary(kernels[f"{name}.{ext}"], f"{name}.{ext}")
    assert scan.problem == "" and scan.code_bytes > 0
    code = cpucode.judge_scans([scan])
    assert code.how == "scan" and code.requires == EXPECTED[name] and code.certain is False
    if code.requires:
        words = code.words()
        assert words.startswith("likely requires ") and f"{name}.{ext}+0x" in words  # the evidence: a sample
        for e in code.evidence:  # the sample offset lies in an executable section of that file
            spans, _ = cpucode.code_spans(kernels[f"{name}.{ext}"])
            offset = int(e.sample.rsplit("+0x", 1)[1], 16)
            assert any(a <= offset < b for a, b in spans) and e.hits >= 1
    else:
        assert code.words().startswith("no AVX-512/AVX2/FMA/F16C code found")


@pytest.mark.linux
def test_the_pe_and_elf_of_one_kernel_agree_and_the_wheel_reader_scans_every_library(kernels, tmp_path):
    path = tmp_path / "w.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("pkg/lib/libplain.so", kernels["plain.so"])
        zf.writestr("pkg/lib/ggml.dll", kernels["avx512.dll"])
        zf.writestr("pkg/__init__.py", "")
    with open_wheel(path) as zf:  # every wheel through the one reader (issue 34)
        code = cpucode.read_wheel(zf)
    assert code.requires == EXPECTED["avx512"] and "2 libraries" in code.words()
    assert {e.sample.split("+")[0] for e in code.evidence} == {"pkg/lib/ggml.dll"}


@pytest.mark.linux
@pytest.mark.parametrize("path", ["/usr/bin/cmake", "/usr/bin/python3.11", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"])
def test_stray_matches_in_big_binaries_without_avx_code_stay_below_the_floor(path):
    """Large x86-64 binaries built for the baseline: a linear sweep matches VEX/EVEX byte patterns in their
    data and inside other instructions (counted below), and the verdict still says none."""
    need(os.path.isfile(path), f"{path} is not installed")
    data = Path(path).read_bytes()
    scan = cpucode.scan_binary(data, path)
    assert scan.code_bytes > 500_000
    assert sum(count for _isa, count, _c, _o in scan.hits) > 0  # the noise is real...
    assert cpucode.judge_scans([scan]).requires == ()  # ...and stays below the floor


def test_hostile_or_foreign_bytes_give_no_verdict_and_no_exception():
    for data in (b"", b"MZ", b"\x7fELF", b"\x7fELF\x02\x01" + b"\0" * 60, b"MZ" + b"\xff" * 200, os.urandom(4096)):
        scan = cpucode.scan_binary(data, "x")
        assert scan.code_bytes == 0 and scan.problem
        assert cpucode.judge_scans([scan]).how == ""


def test_the_variants_a_wheel_carries_decide_and_ggml_takes_the_best_this_cpu_has():
    names = [
        "llama_cpp/lib/ggml-cpu-skylakex.dll",
        "llama_cpp/lib/ggml-cpu-haswell.dll",
        "llama_cpp/lib/ggml-cpu-x64.dll",
        "llama_cpp/lib/ggml-cpu-sse42.dll",
        "llama_cpp/lib/ggml-cuda.dll",
        "llama_cpp/lib/libggml-cpu-icelake.so",
    ]
    assert cpucode.variants_of(names) == ("x64", "sse42", "haswell", "skylakex", "icelake")
    haswell = cpucode.Cpu(frozenset({"sse4_2", "avx", "avx2", "fma", "f16c", "bmi2"}), "test")
    assert cpucode.ggml_choice(cpucode.variants_of(names), haswell) == "haswell"
    windows_avx512 = cpucode.Cpu(
        frozenset({"avx", "avx2", "avx512f"}), "IsProcessorFeaturePresent", frozenset({"avx", "avx2", "avx512f"})
    )
    assert cpucode.ggml_choice(("haswell", "skylakex", "icelake"), windows_avx512) == "skylakex"
    assert cpucode.ggml_choice(("haswell",), cpucode.UNKNOWN) == ""


AVX2_SET = {"sse4_2", "avx", "avx2", "fma", "f16c", "bmi2"}


def test_ggml_scores_variants_as_cpu_feats_does_avx512_needs_five_sets_and_outranks_avx_vnni():
    """ggml-org/llama.cpp ggml/src/ggml-cpu/arch/x86/cpu-feats.cpp (3d3e8e372c41): GGML_AVX512 scores only with
    AVX512F, CD, VL, DQ and BW; AVX512 is bit 7, AVX_VNNI bit 6, so skylakex wins over alderlake on a CPU with
    both, although both have seven feature sets."""
    knl = cpucode.Cpu(frozenset(AVX2_SET | {"avx512f", "avx512cd"}), "Xeon Phi-like /proc/cpuinfo")
    assert cpucode.ggml_choice(("x64", "haswell", "skylakex"), knl) == "haswell"
    full = AVX2_SET | {"avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw", "avx_vnni"}
    assert cpucode.ggml_choice(("haswell", "alderlake", "skylakex"), cpucode.Cpu(frozenset(full), "t")) == "skylakex"
    ice = cpucode.Cpu(frozenset(full | {"avx512vbmi", "avx512_vnni"}), "t")
    assert cpucode.ggml_choice(tuple(cpucode.VARIANTS), ice) == "icelake"
    assert len(cpucode.VARIANTS) == 14 and cpucode.VARIANTS["sapphirerapids"][-2:] == ("amx_tile", "amx_int8")


def test_a_variant_wheel_requires_only_its_lowest_and_a_cpu_without_it_is_refused(tmp_path):
    path = tmp_path / "v.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for v in ("skylakex", "haswell"):
            zf.writestr(f"llama_cpp/lib/libggml-cpu-{v}.so", b"\x7fELF not read")
    with open_wheel(path) as zf:  # every wheel through the one reader (issue 34)
        code = cpucode.read_wheel(zf)
    assert code.how == "variants" and code.certain and code.variants == ("haswell", "skylakex")
    assert set(code.requires) == {"sse4_2", "avx", "f16c", "avx2", "bmi2", "fma"}
    sandy = cpucode.Cpu(frozenset({"sse4_2", "avx"}), "the record's meta.cpu_flags")
    ok, why = cpucode.runs(code, sandy)
    assert ok is False and why.startswith("needs F16C, AVX2, BMI2, FMA; this CPU has AVX only")
    assert cpucode.runs(code, cpucode.UNKNOWN)[0] is None


def test_runs_names_what_is_missing_and_what_the_cpu_has():
    code = cpucode.CpuCode("scan", ("avx512f", "avx2"), False, (), (cpucode.Evidence("avx512f", 40, 900.0, "a+0x10"),))
    avx2 = cpucode.parse_cpu({"platform": "linux", "flags": ["fpu", "avx", "avx2", "fma"]}, "the target Python")
    ok, why = cpucode.runs(code, avx2)
    assert ok is False and why == "likely needs AVX-512F; this CPU has AVX2 only (the target Python (/proc/cpuinfo))"
    win = cpucode.parse_cpu({"platform": "win32", "features": {"avx": True, "avx2": True, "avx512f": False}}, "py")
    assert win.known == frozenset({"avx", "avx2", "avx512f"}) and cpucode.runs(code, win)[0] is False
    fits = cpucode.parse_cpu({"platform": "win32", "features": {"avx": True, "avx2": True, "avx512f": True}}, "py")
    assert cpucode.runs(code, fits) == (True, "")
    assert cpucode.parse_cpu({"error": "no /proc"}, "py").flags is None and cpucode.parse_cpu("x", "py").flags is None


def test_the_target_python_reads_its_own_cpu():
    """The CPU_SCRIPT as install runs it (a child of the target interpreter; here this one): /proc/cpuinfo's
    flags on Linux, IsProcessorFeaturePresent on Windows (the Windows-CPython tier runs this too)."""
    done = subprocess.run(
        [sys.executable, "-c", cpucode.CPU_SCRIPT], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    cpu = cpucode.parse_cpu(json.loads(done.stdout), "this Python")
    assert cpu.flags is not None
    if sys.platform == "win32":
        assert cpu.known == frozenset({"avx", "avx2", "avx512f"})
    else:
        line = next(x for x in Path("/proc/cpuinfo").read_text().splitlines() if x.startswith("flags"))
        assert cpu.flags == frozenset(line.split(":", 1)[1].split())


def test_record_keeps_this_cpu_and_a_rerecorded_record_keeps_its_own(tmp_path):
    """`envmgr record` writes meta.cpu_flags (the target CPU under --machine later); re-recording a record
    (--machine) keeps the record's flags, never this machine's."""
    env = {"ENVMGR_CACHE_DIR": str(tmp_path / "c"), "ENVMGR_CONFIG_DIR": str(tmp_path / "cfg")}
    r = run_cli("record", "-o", str(tmp_path / "here.toml"), env=env)
    assert r.code == 0, r.stderr
    flags = tomlkit.parse((tmp_path / "here.toml").read_text(encoding="utf-8"))["meta"]["cpu_flags"]
    done = subprocess.run(
        [sys.executable, "-c", cpucode.CPU_SCRIPT], capture_output=True, text=True, timeout=60, check=False
    )
    assert sorted(flags) == cpucode.record_flags(cpucode.parse_cpu(json.loads(done.stdout), "here"))
    src = tomlkit.parse((MACHINES / "community-buildtools-cuda124.toml").read_text(encoding="utf-8"))
    src["meta"]["cpu_flags"] = ["sse4_2", "avx"]
    (tmp_path / "m.toml").write_text(tomlkit.dumps(src), encoding="utf-8")
    plain = MACHINES / "community-buildtools-cuda124.toml"
    for given, want in ((tmp_path / "m.toml", ["sse4_2", "avx"]), (plain, None)):
        r = run_cli("--machine", str(given), "record", "-o", str(tmp_path / "again.toml"), env=env)
        assert r.code == 0, r.stderr
        meta = tomlkit.parse((tmp_path / "again.toml").read_text(encoding="utf-8"))["meta"]
        assert meta.get("cpu_flags") == want


ORACLE = Path(__file__).resolve().parents[3] / ".cache" / "dll-oracle"  # tests/setup/fetch-dll-oracle.sh


@pytest.mark.linux
def test_published_windows_binaries_ctransformers_needs_avx2_and_nvidia_s_cublaslt_is_a_dispatcher(tmp_path):
    """ctransformers 0.2.27's CUDA DLL (MSVC-built, from PyPI) is the build that dies with an illegal instruction
    on CPUs without AVX2 (tests/corpus/logs/clean/ctransformers-198-…-illegal-instruction-no-avx2.txt); NVIDIA's
    cublasLt64_12.dll (nvidia-cublas-cu12 12.9.2.10) carries AVX-512 paths it picks at run time: scanned alone
    it looks like an AVX-512 build, so a wheel's NVIDIA libraries are not scanned."""
    ct, lt = ORACLE / "ctransformers" / "cuda" / "ctransformers.dll", ORACLE / "cublas" / "cublasLt64_12.dll"
    if not (ct.is_file() and lt.is_file()):  # fetched (PyPI, kept in .cache) as the winpy oracle tests do
        subprocess.run(
            ["bash", str(ORACLE.parents[1] / "tests" / "setup" / "fetch-dll-oracle.sh")],
            capture_output=True,
            text=True,
            timeout=1800,
        )
    need(ct.is_file() and lt.is_file(), "the DLL oracle is not fetched (tests/setup/fetch-dll-oracle.sh)")
    assert cpucode.judge_scans([cpucode.scan_binary(ct.read_bytes(), ct.name)]).requires == ("avx2", "fma", "f16c")
    assert cpucode.judge_scans([cpucode.scan_binary(lt.read_bytes(), lt.name)]).requires == ("avx512f",)
    path = tmp_path / "w.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.write(ct, "ctransformers/lib/cuda/ctransformers.dll")
        zf.write(lt, "ctransformers/lib/cuda/cublasLt64_12.dll")
    with open_wheel(path) as zf:  # every wheel through the one reader (issue 34)
        code = cpucode.read_wheel(zf)
    assert code.requires == ("avx2", "fma", "f16c") and code.dispatchers == ("cublasLt64_12.dll",)
    assert "not scanned: cublasLt64_12.dll (NVIDIA's libraries pick their CPU code at run time)" in code.words()


def test_the_plan_refuses_a_wheel_this_cpu_cannot_run_and_takes_the_next_one():
    """wheels/pick.py with the CPU judgement, pure: the newer wheel's CPU code needs AVX-512F, the CPU has AVX2."""
    device = DeviceCode(
        (BinaryCode("libggml-cuda.so", "elf", entries=(FatEntry("cubin", "sm_89"),), imports=("libcudart.so.12",)),)
    )
    evidence = (cpucode.Evidence("avx512f", 40, 900.0, "lib/libggml-cpu.so+0x10"),)
    cpus = {
        "0.3.16": cpucode.CpuCode("scan", ("avx512f",), False, (), evidence, "1 library"),
        "0.3.15": cpucode.CpuCode("scan", ("avx2", "fma"), False, (), (), "1 library"),
    }
    names = [f"llama_cpp_python-{v}-py3-none-any.whl" for v in cpus]
    cands = [pick.Candidate(f"http://127.0.0.1:1/cu124/{n}", n, "http://127.0.0.1:1/cu124/", "12.4") for n in names]
    avx2 = cpucode.Cpu(frozenset({"sse4_2", "avx", "avx2", "fma", "f16c"}), "the target Python")
    m = pick.Machine((("RTX 4070", "8.9"),), "576.80", "12.9", False, ("py3-none-any",), "cp312", avx2)

    def read_cpu(cand: pick.Candidate) -> cpucode.CpuCode:
        return cpus[cand.filename.split("-")[1]]

    plan = pick.plan(cands, m, "llama-cpp-python", "", lambda c: device, read_cpu=read_cpu)
    newer, older = plan.judged
    assert newer.verdict == pick.REFUSED and newer.how == ""
    assert newer.reason.startswith("its CPU code likely needs AVX-512F; this CPU has AVX2 only (the target Python)")
    assert newer.to_json()["cpu_code"]["evidence"][0]["sample"] == "lib/libggml-cpu.so+0x10"
    assert older.verdict == pick.CHOSEN and older.how == pick.NATIVE
    assert "CPU: likely requires AVX2, FMA" in older.reason
    unknown = pick.plan(
        cands, replace(m, cpu=cpucode.UNKNOWN), "llama-cpp-python", "", lambda c: device, read_cpu=read_cpu
    )
    assert unknown.chosen is not None and unknown.chosen.version == "0.3.16"
    assert "this CPU's instruction sets are unknown (not read)" in unknown.chosen.reason
