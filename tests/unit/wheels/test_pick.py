"""The prebuilt wheel pick (wheels/pick.py) over a matrix of machines, CUDA folders, Pythons and pins.

The GPUs and drivers are the recorded machines' (tests/machines: nvidia-smi CSV lines from the real
samples named in each record); the driver's CUDA is the real nvidia-smi tables' header
(tests/corpus/nvidia-smi-windows-*.txt). The device code of each folder is the architecture list
llama-cpp-python's build-wheels-cuda.yaml gives its wheels (abetlen/llama-cpp-python at 3691546f: CUDA 12
`60-real;…;90-real;90-virtual`, CUDA 13 `75-real;…;90-real;90-virtual`), as cubin/PTX lists; the
loopback tier (tests/linux/test_prebuilt_loopback.py) reads the same from real nvcc-built binaries.
The Python tags are packaging's own for the named interpreter and platform.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging import tags as ptags

from envmgr.discover.driver import parse_driver_cuda
from envmgr.discover.gpu import discover_gpus
from envmgr.host.recorded import load_machine
from envmgr.wheels import pick
from tests.conftest import corpus

MACHINES = Path(__file__).resolve().parents[2] / "machines"
CU12 = (("sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"), ("compute_90",))
CU13 = (("sm_75", "sm_80", "sm_86", "sm_89", "sm_90"), ("compute_90",))
BASE = "http://127.0.0.1:1/llama-cpp-python/whl"


@dataclass(frozen=True)
class Code:
    cubin: tuple[str, ...]
    ptx: tuple[str, ...]
    cuda_imports: tuple[str, ...] = ()


def recorded(name: str, driver_cuda: str = "", python=(3, 12), platform="win_amd64") -> pick.Machine:
    host = load_machine(MACHINES / name)
    gpus, _ = discover_gpus(host)
    tags = tuple(str(t) for t in ptags.cpython_tags(python, platforms=[platform])) + tuple(
        str(t) for t in ptags.compatible_tags(python, platforms=[platform])
    )
    return pick.Machine(
        tuple((g.name, g.compute_cap) for g in gpus),
        gpus[0].driver_version,
        driver_cuda,
        host.platform == "windows",
        tags,
        f"cp{python[0]}{python[1]} on {platform}",
    )


def wheel(folder: str, version: str = "0.3.16", tag: str = "py3-none-win_amd64") -> pick.Candidate:
    name = f"llama_cpp_python-{version}-{tag}.whl"
    url = f"https://github.com/abetlen/llama-cpp-python/releases/download/v{version}-{folder}/{name}"
    return pick.Candidate(url, name, f"{BASE}/{folder}/", pick.cuda_of_url(f"{BASE}/{folder}/"))


def reader(codes: dict[str, tuple]):
    """The device code by folder; records which wheels were read (each read is a download)."""
    seen = []

    def read(cand):
        seen.append(cand.filename + "@" + cand.index.rstrip("/").rsplit("/", 1)[-1])
        folder = cand.index.rstrip("/").rsplit("/", 1)[-1]
        if folder not in codes:
            raise pick.Unusable("the wheel is missing on the server (HTTP 404)")
        cubin, ptx = codes[folder]
        return Code(cubin, ptx)

    read.seen = seen
    return read


def verdicts(plan: pick.Plan) -> dict[str, str]:
    return {f"{j.cand.filename}@{j.cand.cuda}": j.verdict for j in plan.judged}


def test_the_driver_cuda_comes_from_the_real_nvidia_smi_header():
    assert parse_driver_cuda(corpus("nvidia-smi-windows-576.80-cuda12.9-rtx3080.txt")) == "12.9"
    assert parse_driver_cuda(corpus("nvidia-smi-windows-596.36-cuda13.2-rtx4060ti.txt")) == "13.2"
    assert parse_driver_cuda(corpus("nvidia-smi-query-gpu-compute_cap-csv-linux-570.86.15.txt")) == ""


def test_rtx4070_driver_576_takes_the_newest_cuda_it_runs_natively():
    m = recorded("community-buildtools-cuda124.toml", "12.9")
    cands = [wheel(f) for f in ("cu124", "cu125", "cu130", "cu132")]
    plan = pick.plan(
        cands, m, "llama-cpp-python", "", reader({"cu124": CU12, "cu125": CU12, "cu130": CU13, "cu132": CU13})
    )
    chosen = plan.chosen
    assert (chosen.cand.cuda, chosen.how, chosen.via) == ("12.5", "native", "sm_89")
    refused = {j.cand.cuda: j.reason for j in plan.judged if j.verdict == "refused"}
    assert set(refused) == {"13.0", "13.2"} and "runs CUDA <= 12.9" in refused["13.2"]
    assert verdicts(plan)["llama_cpp_python-0.3.16-py3-none-win_amd64.whl@12.4"] == "not examined"


def test_without_the_driver_cuda_the_table_minimum_decides():
    """Driver 576.80 without its header: >= 528.33 (CUDA 12 on Windows), < 580.00 (CUDA 13)."""
    m = recorded("community-buildtools-cuda124.toml")
    read = reader({"cu125": CU12, "cu130": CU13})
    plan = pick.plan([wheel("cu125"), wheel("cu130")], m, "llama-cpp-python", "", read)
    assert plan.chosen.cand.cuda == "12.5"
    assert "needs driver 580.00 or newer; this one is 576.80" in plan.judged[1].reason


def test_rtx5090_runs_the_official_wheels_only_through_ptx_jit_and_prefers_a_native_one():
    m = recorded("doctor/classic-rtx5090-old-driver.toml", "13.2")
    read = reader({"cu130": CU13, "cu132": CU13})
    plan = pick.plan([wheel("cu130"), wheel("cu132")], m, "llama-cpp-python", "", read)
    assert (plan.chosen.cand.cuda, plan.chosen.how, plan.chosen.via) == ("13.2", "ptx-jit", "compute_90")
    assert "through PTX JIT (compute_90)" in plan.chosen.reason
    # an older version with an sm_120 cubin beats the newest PTX-only one: native first
    native = wheel("cu132", "0.3.10")
    codes = {"cu130": CU13, "cu132": CU13}
    read = reader(codes)

    def by_version(cand):
        return Code(("sm_120",), ()) if "0.3.10" in cand.filename else read(cand)

    plan = pick.plan([wheel("cu130"), wheel("cu132"), native], m, "llama-cpp-python", "", by_version)
    assert plan.chosen.cand == native and plan.chosen.how == "native"
    assert {j.verdict for j in plan.judged if j.cand != native} == {"fits"}


def test_rtx5090_on_its_old_driver_is_refused_everything():
    m = recorded("doctor/classic-rtx5090-old-driver.toml")
    plan = pick.plan([wheel("cu124"), wheel("cu130")], m, "llama-cpp-python", "", reader({}))
    assert plan.chosen is None
    assert [j.reason for j in plan.judged] == [
        "CUDA 12.4 needs driver 528.33 or newer; this one is 522.06",
        "CUDA 13.0 needs driver 580.00 or newer; this one is 522.06",
    ]


def test_a_ptx_only_wheel_of_a_newer_minor_is_refused_under_minor_version_compatibility():
    m = recorded("community-buildtools-cuda124.toml", "12.4")
    plan = pick.plan([wheel("cu125")], m, "llama-cpp-python", "", reader({"cu125": ((), ("compute_80",))}))
    assert plan.chosen is None and "cannot be JIT-compiled" in plan.judged[0].reason
    plan = pick.plan([wheel("cu125")], m, "llama-cpp-python", "", reader({"cu125": CU12}))
    assert plan.chosen.how == "native" and plan.chosen.cand.cuda == "12.5"


def test_two_gpus_must_both_be_covered():
    """linux-two-toolkits: TITAN V (7.0) and RTX 5880 Ada (8.9), driver 570.86.15 (CUDA 13 needs 580.65.06)."""
    m = recorded("linux-two-toolkits.toml", platform="manylinux_2_17_x86_64")
    tag = "py3-none-manylinux_2_17_x86_64"
    codes = {"cu124": CU12, "cu125": ((("sm_75", "sm_89"), ("compute_75",)))}
    plan = pick.plan(
        [wheel("cu124", tag=tag), wheel("cu125", tag=tag), wheel("cu130", tag=tag)],
        m,
        "llama-cpp-python",
        "",
        reader(codes),
    )
    assert plan.chosen.cand.cuda == "12.4" and plan.chosen.via == "sm_70, sm_89"
    reasons = [j.reason for j in plan.judged]
    assert "no device code for NVIDIA TITAN V (compute capability 7.0)" in reasons[1]
    assert "needs driver 580.65.06 or newer" in reasons[2]


@pytest.mark.parametrize(
    "python, tag, fits",
    [
        ((3, 12), "py3-none-win_amd64", True),
        ((3, 9), "py3-none-win_amd64", True),
        ((3, 12), "cp312-cp312-win_amd64", True),
        ((3, 13), "cp312-cp312-win_amd64", False),
        ((3, 12), "cp312-cp312-manylinux_2_17_x86_64", False),
        ((3, 12), "py3-none-win_arm64", False),
    ],
)
def test_tags_fit_the_target_python(python, tag, fits):
    m = recorded("vs2026-vs2022.toml", "13.2", python=python)
    plan = pick.plan([wheel("cu130", tag=tag)], m, "llama-cpp-python", "", reader({"cu130": CU13}))
    assert (plan.chosen is not None) == fits
    if not fits:
        assert "do not fit the target Python" in plan.judged[0].reason


def test_a_pinned_version_is_taken_even_when_newer_ones_fit():
    m = recorded("vs2026-vs2022.toml", "13.2")
    cands = [wheel("cu130", v) for v in ("0.3.4", "0.3.16", "0.3.20")]
    plan = pick.plan(cands, m, "llama-cpp-python", "==0.3.16", reader({"cu130": CU13}))
    assert plan.chosen.version == "0.3.16"
    assert [j.reason for j in plan.judged if j.verdict == "refused"] == [
        "version 0.3.4 does not match ==0.3.16",
        "version 0.3.20 does not match ==0.3.16",
    ]
    newest = pick.plan(cands, m, "llama-cpp-python", "", reader({"cu130": CU13}))
    assert newest.chosen.version == "0.3.20"


def test_unreadable_wheels_are_refused_with_their_reason_and_the_next_one_is_read():
    m = recorded("vs2026-vs2022.toml", "13.2")
    read = reader({"cu130": CU13})
    plan = pick.plan([wheel("cu132"), wheel("cu130")], m, "llama-cpp-python", "", read)
    assert plan.judged[0].reason == "the wheel is missing on the server (HTTP 404)"
    assert plan.chosen.cand.cuda == "13.0" and len(read.seen) == 2


def test_no_gpu_refuses_without_downloading_and_the_limit_says_so():
    m = pick.Machine((), tags=("py3-none-win_amd64",), python="cp312 on win_amd64")
    read = reader({"cu130": CU13})
    plan = pick.plan([wheel("cu130")], m, "llama-cpp-python", "", read)
    assert plan.chosen is None and read.seen == [] and "no NVIDIA GPU visible" in plan.judged[0].reason
    m = recorded("vs2026-vs2022.toml", "13.2")
    plan = pick.plan(
        [wheel("cu130", f"0.3.{i}") for i in range(5)], m, "llama-cpp-python", "", reader({"cu130": ((), ())}), limit=2
    )
    assert [j.verdict for j in plan.judged].count("not examined") == 3
    assert "2 wheels were read already" in plan.judged[0].reason


@pytest.mark.parametrize(
    "cubin, cc, how",
    [
        (("sm_90a",), "9.0", "native"),
        (("sm_90a",), "9.1", ""),
        (("sm_86",), "8.9", "native"),
        (("sm_89",), "8.6", ""),
        (("sm_90",), "12.0", ""),
        (("sm_100f",), "10.3", "native"),
    ],
)
def test_cubin_rules_are_gpufits(cubin, cc, how):
    m = pick.Machine((("GPU", cc),), "596.36", "13.2")
    assert pick.covers(Code(cubin, ()), m, True)[0] == how


def test_cuda_from_folders_release_tags_and_imports():
    assert pick.cuda_of_url("https://abetlen.github.io/llama-cpp-python/whl/cu124/") == "12.4"
    assert pick.cuda_of_url("https://github.com/a/b/releases/download/v0.3.16-cu132/x.whl") == "13.2"
    assert pick.cuda_of_url("https://example.org/simple/") == ""
    assert pick.cuda_of_imports(("KERNEL32.dll", "cudart64_12.dll")) == "12"
    assert pick.cuda_of_imports(("libcublas.so.13",)) == "13"
