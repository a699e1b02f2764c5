"""The DLL oracle: `envmgr doctor --dll` against the real Windows loader, with NVIDIA's real DLLs.

For each configuration, Windows CPython (under Wine) runs tests/winpy/dll_probe.py, which loads
ctransformers 0.2.27's MSVC-built CUDA DLL with ctypes the way a program does, and `envmgr doctor --dll
... --json` with the same DLL directories, PATH and CUDA_PATH. The verdicts must agree: loads or not,
which DLLs are missing, which were found but cannot load. Which DLLs the loader missed comes from the
loader itself: Wine's `err:module:import_dll` lines (ctypes' message names none). The measured table is
in docs/doctor.md, "What the Windows loader does, measured". DLLs: tests/setup/fetch-dll-oracle.sh.
"""

from __future__ import annotations

import json
import re
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.winpy.conftest import windows_path

pytestmark = [pytest.mark.wine, pytest.mark.winpy]

PROBE = ROOT / "tests" / "winpy" / "dll_probe.py"
CT = "ctransformers/cuda/ctransformers.dll"
# Wine also says "Library X ... not found" for an X it found whose own import is missing (the status
# propagates): X is then the importer ("needed by") of another line, a consequence, not a cause.
_NOT_FOUND = re.compile(
    r'err:module:import_dll Library (\S+) \(which is needed by L"(?:[^"]*\\)?([^"\\]*)"\) not found'
)
# 0xc000007b STATUS_INVALID_IMAGE_FORMAT: found, but another machine or cut short.
_BAD_IMAGE = re.compile(
    r"err:module:import_dll Loading library (\S+) \(which is needed by [^)]*\) failed "
    r"\(error c000007b\)"
)


@pytest.fixture(scope="module")
def dlls(tmp_path_factory) -> dict[str, Path]:
    done = subprocess.run(
        ["bash", str(ROOT / "tests" / "setup" / "fetch-dll-oracle.sh")], capture_output=True, text=True, timeout=1800
    )
    if done.returncode != 0:
        pytest.fail(f"fetch-dll-oracle.sh failed ({done.returncode}):\n{done.stderr}")
    base = Path(done.stdout.strip().splitlines()[-1])
    odd = tmp_path_factory.mktemp("odd-dlls")
    cudart = (base / "cudart" / "cudart64_12.dll").read_bytes()
    root = (base / CT).read_bytes()
    # No ARM64 (or i686) compiler here: the Machine field of a copy is patched to ARM64 (0xAA64). The rest
    # stays a valid PE32+ image, which is what an ARM64 build of the DLL is, to the x64 loader.
    put(odd / "cudart-arm64" / "cudart64_12.dll", machine(cudart, 0xAA64))
    put(odd / "cudart-cut" / "cudart64_12.dll", cudart[: 64 * 1024])
    put(odd / "root-arm64" / "ctransformers.dll", machine(root, 0xAA64))
    put(odd / "root-cut" / "ctransformers.dll", root[: 1024 * 1024])
    put(odd / "cuda-stale" / "bin" / "cudart64_12.dll", cudart)  # bin kept, lib removed by an uninstaller
    return {"base": base, "odd": odd}


def put(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def machine(data: bytes, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into("<H", out, struct.unpack_from("<I", out, 0x3C)[0] + 4, value)
    return bytes(out)


@dataclass(frozen=True)
class Config:
    name: str
    loader: str  # doctor's --loader: how the program loads the DLL
    dll: str = CT  # relative to the cache folder, or "odd:" + relative to the odd folder
    dll_dirs: tuple[str, ...] = ()  # os.add_dll_directory folders (same notation)
    path: tuple[str, ...] = ()  # folders put first on PATH (WINEPATH: both processes see them)
    cuda_path: str | None = None
    expect: dict = field(default_factory=dict)  # what the loader did, measured (the table in docs/doctor.md)


CONFIGS = [
    Config(
        "a: nothing added",
        "ctypes",
        expect={"loads": False, "missing": ["cublas64_12.dll", "cudart64_12.dll"], "unloadable": []},
    ),
    Config(
        "b: cudart only",
        "ctypes",
        dll_dirs=("cudart",),
        expect={"loads": False, "missing": ["cublas64_12.dll"], "unloadable": []},
    ),
    Config(
        "c: cudart + cublas, add_dll_directory",
        "ctypes",
        dll_dirs=("cudart", "cublas"),
        expect={"loads": True, "missing": [], "unloadable": []},
    ),
    Config(
        "c2: cudart + cublas without cublasLt",
        "ctypes",
        dll_dirs=("cudart", "cublas-only"),
        expect={"loads": False, "missing": ["cublaslt64_12.dll"], "unloadable": []},
    ),
    Config(
        "d: cudart + cublas on PATH only",
        "ctypes",
        path=("cudart", "cublas"),
        expect={"loads": False, "missing": ["cublas64_12.dll", "cudart64_12.dll"], "unloadable": []},
    ),
    Config(
        "d2: on PATH, winmode=0",
        "winmode0",
        path=("cudart", "cublas"),
        expect={"loads": True, "missing": [], "unloadable": []},
    ),
    Config(
        "d3: add_dll_directory, winmode=0",
        "winmode0",
        dll_dirs=("cudart", "cublas"),
        expect={"loads": False, "missing": ["cublas64_12.dll", "cudart64_12.dll"], "unloadable": []},
    ),
    Config(
        "e: llama_cpp's loader, CUDA_PATH set",
        "llama_cpp",
        cuda_path="cuda-12.9",
        expect={"loads": False, "missing": ["cublas64_12.dll", "cudart64_12.dll"], "unloadable": []},
    ),
    Config(
        "e2: llama_cpp's loader, CUDA_PATH\\bin also on PATH",
        "llama_cpp",
        cuda_path="cuda-12.9",
        path=("cuda-12.9/bin",),
        expect={"loads": True, "missing": [], "unloadable": []},
    ),
    Config(
        "e3: ctransformers' loader: add_dll_directory(CUDA_PATH\\bin)",
        "ctypes",
        cuda_path="cuda-12.9",
        dll_dirs=("cuda-12.9/bin",),
        expect={"loads": True, "missing": [], "unloadable": []},
    ),
    Config(
        "e4: llama_cpp's loader, stale CUDA_PATH (no lib)",
        "llama_cpp",
        cuda_path="odd:cuda-stale",
        path=("cudart", "cublas"),
        expect={"loads": False, "missing": [], "unloadable": [], "blocked": True},
    ),
    Config(
        "f: ARM64 cudart64_12.dll",
        "ctypes",
        dll_dirs=("odd:cudart-arm64", "cublas"),
        expect={"loads": False, "missing": [], "unloadable": ["cudart64_12.dll"]},
    ),
    Config(
        "f2: truncated cudart64_12.dll",
        "ctypes",
        dll_dirs=("odd:cudart-cut", "cublas"),
        expect={"loads": False, "missing": [], "unloadable": ["cudart64_12.dll"]},
    ),
    Config(
        "f3: ARM64 cudart on PATH before a good one",
        "winmode0",
        path=("odd:cudart-arm64", "cudart", "cublas"),
        expect={"loads": False, "missing": [], "unloadable": ["cudart64_12.dll"]},
    ),
    Config(
        "f4: ARM64 ctransformers.dll itself",
        "ctypes",
        dll="odd:root-arm64/ctransformers.dll",
        dll_dirs=("cudart", "cublas"),
        expect={"loads": False, "missing": [], "unloadable": ["ctransformers.dll"]},
    ),
]


def where(dlls: dict[str, Path], rel: str) -> str:
    base = dlls["odd"] if rel.startswith("odd:") else dlls["base"]
    return windows_path(base / rel.removeprefix("odd:"))


def env_for(dlls, cfg: Config) -> dict:
    env = {"WINEDEBUG": "-all,err+module"}
    if cfg.path:
        env["WINEPATH"] = ";".join(where(dlls, p) for p in cfg.path)
    if cfg.cuda_path:
        env["CUDA_PATH"] = where(dlls, cfg.cuda_path)
    return env


def loader_verdict(winpy, dlls, cfg: Config) -> dict:
    """What ctypes.CDLL did, and which DLLs the loader reported (Wine's err:module lines)."""
    probe = {
        "dll": where(dlls, cfg.dll),
        "dll_dirs": [where(dlls, d) for d in cfg.dll_dirs],
        "winmode": 0 if cfg.loader == "winmode0" else None,
        "llama_cpp": cfg.loader == "llama_cpp",
    }
    done = winpy.run(windows_path(PROBE), json.dumps(probe), env=env_for(dlls, cfg))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    lines = _NOT_FOUND.findall(done.stderr)
    importers = {needer.lower() for _, needer in lines}
    missing = sorted({name.lower() for name, _ in lines} - importers)
    bad = sorted({m.lower() for m in _BAD_IMAGE.findall(done.stderr)})
    if out["winerror"] == 193:  # the DLL itself: "[WinError 193] Bad EXE format for %1"
        bad.append(Path(cfg.dll.removeprefix("odd:")).name.lower())
    verdict = {"loads": out["loaded"], "missing": missing, "unloadable": bad}
    if out["blocked"]:
        verdict["blocked"] = True
    if out["loaded"]:
        assert out["cudart"] == 12090, out  # NVIDIA's cudart 12.9 answered from inside the process
    return verdict


def doctor_verdict(winpy, dlls, cfg: Config) -> tuple[dict, dict]:
    args = ["doctor", "--dll", where(dlls, cfg.dll), "--loader", cfg.loader, "--json"]
    for d in cfg.dll_dirs:
        args += ["--add-dll-dir", where(dlls, d)]
    done = winpy.envmgr(*args, env=env_for(dlls, cfg))
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(done.stdout)
    assert done.returncode == (0 if data["loads"] else 1)
    verdict = {
        "loads": data["loads"],
        "missing": sorted(m["name"].lower() for m in data["missing"]),
        "unloadable": sorted(m["name"].lower() for m in data["unloadable"]),
    }
    if data["blocked"]:
        verdict["blocked"] = True
    return verdict, data


@pytest.mark.parametrize("cfg", CONFIGS, ids=[c.name.split(":")[0] for c in CONFIGS])
def test_doctor_agrees_with_the_windows_loader(winpy, dlls, cfg):
    real = loader_verdict(winpy, dlls, cfg)
    assert real == cfg.expect, f"the loader itself changed: {real}"
    doctor, data = doctor_verdict(winpy, dlls, cfg)
    assert doctor == real, json.dumps(data, indent=1)[:4000]


def test_doctor_says_why_a_folder_given_to_add_dll_directory_is_not_enough(winpy, dlls):
    cfg = next(c for c in CONFIGS if c.name.startswith("e:"))  # llama_cpp, CUDA_PATH set, nothing on PATH
    _, data = doctor_verdict(winpy, dlls, cfg)
    why = {m["name"].lower(): m["why"] for m in data["missing"]}
    assert "is not on PATH" in why["cudart64_12.dll"] and "winmode=0" in why["cudart64_12.dll"]


def bad_input(done) -> str:
    """Exit 2, nothing on stdout, one error line on stderr (the CLI may add its "fix:" hint), no traceback."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and done.stdout == ""
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, done.stderr
    return errors[0]


def test_a_missing_dll_path_is_one_line_exit_2(winpy, dlls):
    missing = where(dlls, "odd:nowhere/ctransformers.dll")
    real = winpy.run("-c", f"import ctypes; ctypes.CDLL({missing!r})")
    assert "Could not find module" in real.stderr
    first = bad_input(winpy.envmgr("doctor", "--dll", missing, "--loader", "ctypes"))
    assert "no such file" in first


def test_a_truncated_dll_is_one_line_exit_2(winpy, dlls):
    cut = where(dlls, "odd:root-cut/ctransformers.dll")
    real = winpy.run(windows_path(PROBE), json.dumps({"dll": cut}))
    assert json.loads(real.stdout)["winerror"] == 193  # the loader refuses it too
    first = bad_input(winpy.envmgr("doctor", "--dll", cut, "--loader", "ctypes", "--json"))
    assert "truncated PE file" in first


# F15 and F16 (`envmgr doctor --only F15,F16`) on an installed llama_cpp: LLAMA_CPP_LIB_PATH points at a
# lib folder whose llama.dll is ctransformers' CUDA DLL under llama_cpp's name (same imports as a CUDA
# build of llama.dll: cudart64_12, cublas64_12, the VC++ runtime). The loader runs as llama_cpp 0.3.x does.
CHECKS = [
    ("CUDA_PATH set, nothing on PATH", "cuda-12.9", (), {"loads": False, "F15": "fail", "F16": "ok"}),
    ("CUDA_PATH\\bin on PATH", "cuda-12.9", ("cuda-12.9/bin",), {"loads": True, "F15": "ok", "F16": "ok"}),
    (
        "stale CUDA_PATH (no lib)",
        "odd:cuda-stale",
        ("cudart", "cublas"),
        {"loads": False, "F15": "fail", "F16": "fail"},
    ),
]


@pytest.mark.parametrize("case", CHECKS, ids=[c[0] for c in CHECKS])
def test_f15_f16_agree_with_llama_cpps_loader(winpy, dlls, case):
    _, cuda_path, path, expect = case
    lib = dlls["odd"] / "llama_cpp" / "lib"
    if not (lib / "llama.dll").exists():
        put(lib / "llama.dll", (dlls["base"] / CT).read_bytes())
    cfg = Config("llama", "llama_cpp", dll="odd:llama_cpp/lib/llama.dll", path=path, cuda_path=cuda_path)
    real = loader_verdict(winpy, dlls, cfg)
    assert real["loads"] is expect["loads"], real
    env = {**env_for(dlls, cfg), "LLAMA_CPP_LIB_PATH": windows_path(lib)}
    done = winpy.envmgr("doctor", "--only", "F15,F16", "--json", env=env)
    assert done.returncode == (0 if expect["loads"] else 1), done.stderr
    checks = {c["id"]: c for c in json.loads(done.stdout)["checks"]}
    assert {i: checks[i]["status"] for i in ("F15", "F16")} == {"F15": expect["F15"], "F16": expect["F16"]}
    if real.get("blocked"):
        assert "stops before loading" in checks["F15"]["summary"]
    elif not real["loads"]:
        named = {m.lower() for m in re.findall(r"[\w.]+\.dll", checks["F15"]["summary"])}
        assert named == set(real["missing"]), (checks["F15"]["summary"], real)
