"""Machine-aware verdicts (issue 36 part 2) on recorded machines: a Mac, an ARM board and an x86 Linux without an
NVIDIA GPU, a GTX 1080 whose installed llama_cpp has no code it can run and a T4 that runs the same code. The logs
are real ones from the corpus's train split (tests/corpus/logs/INDEX.tsv); the flows' own code path (run --log,
install, install --recipe: commands/run.py `diagnose`) and `doctor --log FILE --machine RECORD` are run on them."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

from envmgr.commands.run import diagnose
from envmgr.doctor.machine import read_machine
from envmgr.host.recorded import load_machine
from tests.conftest import CORPUS, MACHINES

VERDICTS = MACHINES / "verdicts"
MAC, ARM, NO_GPU = (
    str(VERDICTS / f"{n}.toml") for n in ("macos-apple-silicon", "linux-arm64-no-gpu", "linux-x86-no-gpu")
)
GTX1080, T4 = (str(VERDICTS / f"{n}.toml") for n in ("linux-gtx1080-llama-sm75", "linux-t4-llama-sm75"))
OLD_DRIVER = str(MACHINES / "doctor" / "classic-rtx5090-old-driver.toml")

# train logs (INDEX.tsv split=train)
CPU_RUN = str(CORPUS / "llama.cpp-load_tensors-offloaded-0-of-29-layers-cpu-mapped-EXCERPT.txt")  # F18
NO_CUBLAS = str(CORPUS / "llama-server-libcublas.so.11-cannot-open-shared-object-llama.cpp-EXCERPT.txt")  # F23
NO_KERNEL = str(CORPUS / "llama-cpp-python-0.3.9-windows-no-kernel-image-rms_norm-EXCERPT.txt")  # F14
OLD_DRIVER_LOG = str(CORPUS / "cuda-driver-insufficient-cudaGetDeviceCount-linux-rpg_open_remode-EXCERPT.txt")  # F17


def _train(path: str) -> None:
    name = Path(path).relative_to(CORPUS).as_posix()
    row = next(
        line.split("\t")
        for line in (CORPUS / "logs" / "INDEX.tsv").read_text(encoding="utf-8").splitlines()
        if line.split("\t")[0] == name
    )
    assert row[4] == "train", name


@pytest.mark.parametrize("log", [CPU_RUN, NO_CUBLAS, NO_KERNEL, OLD_DRIVER_LOG])
def test_the_logs_are_train_logs(log):
    _train(log)


def test_verdict_machine_files_match_their_builder():
    sys.path.insert(0, str(VERDICTS))
    try:
        import build_verdict_machines as b
    finally:
        sys.path.remove(str(VERDICTS))
    for path, text in b.render_all().items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name}: run build_verdict_machines.py"


def judged(cli, log, record, *extra):
    result = cli("doctor", "--log", log, "--machine", record, "--json", *extra)
    assert result.code in (0, 1), result.stderr
    doc = result.json()
    return result.code, doc, {m["id"]: m["machine"] for m in doc["matches"]}


@pytest.mark.parametrize(
    "record, words",
    [
        (MAC, "macOS (arm64)"),
        (ARM, "an aarch64 machine has no NVIDIA GPU"),
        (NO_GPU, "this machine has no NVIDIA GPU (no nvidia-smi"),
    ],
)
@pytest.mark.parametrize("log, fid", [(CPU_RUN, "F18"), (NO_CUBLAS, "F23")])
def test_a_machine_without_an_nvidia_gpu_rules_out_the_cpu_family(cli, record, words, log, fid):
    code, doc, verdicts = judged(cli, log, record)
    assert code == 0 and doc["decisive"] is None and doc["ruled_out"] == [fid]
    assert verdicts[fid]["verdict"] == "contradicted"
    assert words in verdicts[fid]["machine"] and "a CPU run is expected" in verdicts[fid]["machine"]
    assert verdicts[fid]["log"].startswith("line ")
    assert doc["machine_facts"]["source"] == record and doc["machine_facts"]["gpus"] == []
    text = cli("doctor", "--log", log, "--machine", record)
    assert text.code == 0
    assert f"ruled out by the machine in {record}: {fid}: " in text.stdout and "no known failure stands" in text.stdout


def test_a_machine_with_a_gpu_leaves_a_cpu_run_unjudged(cli):
    code, doc, verdicts = judged(cli, CPU_RUN, GTX1080)
    assert code == 1 and doc["decisive"] == "F18" and doc["ruled_out"] == []
    assert verdicts["F18"] == {"verdict": "unjudged", "log": verdicts["F18"]["log"], "machine": None}
    assert doc["machine_facts"]["gpus"] == [{"name": "GPU 0 NVIDIA GeForce GTX 1080", "compute_capability": "6.1"}]


def test_no_kernel_image_is_confirmed_where_the_device_code_cannot_run_on_the_gpu(cli):
    code, doc, verdicts = judged(cli, NO_KERNEL, GTX1080)
    assert code == 1 and doc["decisive"] == "F14"
    v = verdicts["F14"]
    assert v["verdict"] == "confirmed"
    assert "cubin sm_75 sm_90a; PTX compute_90" in v["machine"] and "cannot run on sm_61" in v["machine"]
    assert "no kernel image" in v["log"]  # both pieces of evidence
    assert doc["machine_facts"]["fits"][0]["how"] == "none"
    text = cli("doctor", "--log", NO_KERNEL, "--machine", GTX1080).stdout
    assert text.startswith("F14  No kernel image for this GPU")
    assert f"confirmed by the machine in {GTX1080}: F14: the installed llama_cpp's device code" in text


def test_no_kernel_image_is_ruled_out_where_the_gpu_runs_the_device_code(cli):
    code, doc, verdicts = judged(cli, NO_KERNEL, T4)
    assert code == 0 and doc["ruled_out"] == ["F14"]
    assert (
        "runs on every GPU here (GPU 0 Tesla T4 (compute capability 7.5): native via sm_75)"
        in verdicts["F14"]["machine"]
    )


def test_an_old_driver_is_confirmed_by_the_driver_and_the_toolkit(cli):
    code, doc, verdicts = judged(cli, OLD_DRIVER_LOG, OLD_DRIVER)
    assert code == 1 and verdicts["F17"]["verdict"] == "confirmed"
    assert "the driver 522.06 is older than CUDA 12's minimum" in verdicts["F17"]["machine"]


def test_the_global_machine_option_means_the_same(cli):
    after = cli("doctor", "--log", CPU_RUN, "--machine", MAC, "--json")
    before = cli("--machine", MAC, "doctor", "--log", CPU_RUN, "--json")
    assert before.code == after.code == 0 and before.json() == after.json()


def test_a_bad_record_is_one_line_and_exit_2(cli, tmp_path):
    result = cli("doctor", "--log", CPU_RUN, "--machine", str(tmp_path / "missing.toml"))
    assert result.code == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"envmgr: error: {tmp_path / 'missing.toml'}: ")
    two = cli("--machine", ARM, "doctor", "--log", CPU_RUN, "--machine", MAC)
    assert two.code == 2 and "two machine records" in two.stderr


def test_without_a_record_the_log_is_judged_alone(cli):
    result = cli("doctor", "--log", CPU_RUN, "--json")
    assert result.code == 1 and "machine_facts" not in result.json() and "ruled_out" not in result.json()


# ---- the flows' diagnosis (run --log, install, install --recipe: commands/run.py diagnose) -----------------


def _flow(log: str, record: str, capsys) -> str:
    diagnose(log, functools.partial(read_machine, load_machine(record), record))
    return capsys.readouterr().err


def test_the_flows_rule_out_a_cpu_run_on_a_mac(capsys):
    err = _flow(CPU_RUN, MAC, capsys)
    assert f"ruled out by the machine in {MAC}: F18: macOS (arm64)" in err
    assert "no known failure stands" in err and "cause:" not in err


def test_the_flows_confirm_no_kernel_image_with_both_evidences(capsys):
    err = _flow(NO_KERNEL, GTX1080, capsys)
    assert "F14  No kernel image for this GPU" in err and "cause:" in err
    assert f"confirmed by the machine in {GTX1080}: F14:" in err and "cannot run on sm_61" in err
    assert "  log: line 3: CUDA error: no kernel image is available" in err


def test_the_flows_read_the_machine_only_when_the_log_names_a_cause(tmp_path, capsys):
    log = tmp_path / "quiet.log"
    log.write_text("building...\nerror: something outside the catalog\n")
    asked = []
    diagnose(str(log), lambda: asked.append(1))
    assert asked == [] and "no known failure signature" in capsys.readouterr().err


def test_doctor_machine_after_the_command_is_the_global_option(cli):
    after = cli("doctor", "--machine", OLD_DRIVER, "--only", "F17", "--json")
    before = cli("--machine", OLD_DRIVER, "doctor", "--only", "F17", "--json")
    assert after.code == before.code == 1 and after.json() == before.json()
    assert after.json()["checks"][0]["status"] == "fail"


VS2026_LAPTOP = str(MACHINES / "vs2026-laptop-no-v143.toml")  # CUDA 12.8 with VS 2026's MSVC 14.50 only
F04_SAME_PAIR = str(CORPUS / "logs/F04/llama.cpp-17547-vs2026-msvc-19.50-cuda-12.8-toolset-cuda-path-broken.txt")
F04_OTHER_PAIR = str(
    CORPUS / "msbuild-cuda11.8-host_config-unsupported-msvc14.40-vs2022-buildtools-llama-cpp-python-EXCERPT.txt"
)


def test_a_compiler_id_is_confirmed_by_doctors_check_for_the_same_cuda_and_msvc(cli):
    _train(F04_SAME_PAIR)
    _train(F04_OTHER_PAIR)
    code, doc, verdicts = judged(cli, F04_SAME_PAIR, VS2026_LAPTOP)
    assert code == 1 and verdicts["F04"]["verdict"] == "confirmed"
    assert verdicts["F04"]["machine"].startswith(
        "doctor's check F04 fails here: every MSVC toolset of Community is too new for CUDA 12.8"
    )
    assert (doc["machine_facts"]["cuda"], doc["machine_facts"]["msvc"][:5]) == ("12.8", "14.50")
    # CUDA 11.8 with MSVC 14.40 in the log: doctor checked another pair here, so it confirms nothing (never rules out
    # a compiler's own #error either)
    code, doc, verdicts = judged(cli, F04_OTHER_PAIR, VS2026_LAPTOP)
    assert code == 1 and verdicts["F04"]["verdict"] == "unjudged"
