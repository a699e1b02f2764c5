"""The wheel cache (envmgr/wheels/store.py) and `envmgr wheels list|clear`.

The wheels here are put together with zipfile from real binaries (tests/corpus/devicecode): a library
nvcc 13.0 built with a CUDA kernel, and one gcc built without; the CUDA check reads what they hold.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from envmgr.wheels import store as wheels
from envmgr.errors import CheckFailed
from envmgr.host.live import LiveHost
from tests.conftest import CUDA_SO, PLAIN_SO, sample_bytes

LIVE = LiveHost()

KEY = wheels.WheelKey(
    package="llama-cpp-python",
    version="0.3.36",
    source="index",
    cuda="13.0",
    archs="90",
    generator="Ninja",
    cmake_args="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90",
    python_tag="cp312",
    platform="linux_x86_64",
)


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVMGR_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def fake_wheel(
    folder: Path, *, cuda: bool = True, name: str = "llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl"
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("llama_cpp/__init__.py", "__version__ = '0.3.36'\n")
        zf.writestr("llama_cpp/lib/libllama.so", sample_bytes(PLAIN_SO))
        zf.writestr("llama_cpp/lib/libggml-cpu.so", sample_bytes(PLAIN_SO))
        if cuda:
            zf.writestr("llama_cpp/lib/libggml-cuda.so", sample_bytes(CUDA_SO))
    return path


def no_warn(message):
    raise AssertionError(f"unexpected warning: {message}")


# --- keys -------------------------------------------------------------------------------------


def test_key_digest_is_stable_and_ignores_nothing_that_matters():
    assert KEY.digest() == replace(KEY).digest()
    assert len(KEY.digest()) == 20
    for field, value in (
        ("version", "0.3.35"),
        ("cuda", "12.8"),
        ("archs", "86;89"),
        ("generator", "default"),
        ("python_tag", "cp313"),
        ("platform", "win_amd64"),
        ("source", "file:abc"),
        ("cmake_args", "-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_CUDA_FA_ALL_QUANTS=on"),
    ):
        assert replace(KEY, **{field: value}).digest() != KEY.digest(), field


def test_parse_spec_requirement_pinned_and_unpinned():
    assert wheels.parse_spec("llama-cpp-python==0.3.36", LIVE) == wheels.SpecInfo("llama-cpp-python", "0.3.36", "index")
    assert wheels.parse_spec("Llama_CPP.python", LIVE) == wheels.SpecInfo("llama-cpp-python", None, "index")
    assert wheels.parse_spec("llama-cpp-python>=0.3", LIVE) == wheels.SpecInfo("llama-cpp-python", None, "index")
    assert wheels.parse_spec("llama-cpp-python==0.3.*", LIVE).version is None


def test_parse_spec_local_sdist_is_keyed_by_its_content(tmp_path):
    sdist = tmp_path / "llama_cpp_python-0.3.36.tar.gz"
    sdist.write_bytes(b"one")
    info = wheels.parse_spec(str(sdist), LIVE)
    assert (info.name, info.version) == ("llama-cpp-python", "0.3.36")
    assert info.source.startswith("file:")
    sdist.write_bytes(b"two")
    assert wheels.parse_spec(str(sdist), LIVE).source != info.source


def test_parse_spec_source_folder_is_never_cached(tmp_path):
    assert wheels.parse_spec(str(tmp_path), LIVE) == wheels.SpecInfo(None, None, None)


def test_parse_wheel_name():
    assert wheels.parse_wheel_name("llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl") == (
        "llama-cpp-python",
        "0.3.36",
        "py3-none-linux_x86_64",
    )
    assert wheels.parse_wheel_name("pkg-1.0-1-cp312-cp312-win_amd64.whl")[:2] == ("pkg", "1.0")
    with pytest.raises(ValueError):
        wheels.parse_wheel_name("not-a-wheel.zip")


def test_build_facts_reads_the_recipe_environment():
    env = {"CMAKE_ARGS": "-DGGML_CUDA=on '-DCMAKE_CUDA_ARCHITECTURES=86;89'", "CMAKE_GENERATOR": "Ninja"}
    assert wheels.build_facts(env) == ("86;89", "Ninja", env["CMAKE_ARGS"])
    assert wheels.build_facts({"TORCH_CUDA_ARCH_LIST": "8.6"}) == ("8.6", "default", "")


# --- store and lookup ---------------------------------------------------------------------------


def test_store_then_lookup_hits(tmp_path):
    entry = wheels.store(KEY, fake_wheel(tmp_path / "built"), 231.4, True, "2026-11-22T00:00:00Z")
    assert entry.folder.name == KEY.digest()
    hit = wheels.lookup(KEY, True, no_warn)
    assert hit is not None and hit.path.is_file() and hit.sha256 == entry.sha256
    assert hit.build_seconds == 231.4
    sidecar = json.loads((entry.folder / "entry.json").read_text())
    assert sidecar["key"]["cmake_args"] == KEY.cmake_args and sidecar["sha256"] == entry.sha256


def test_a_different_key_misses(tmp_path):
    wheels.store(KEY, fake_wheel(tmp_path / "built"), 1.0, True, "t")
    assert wheels.lookup(replace(KEY, archs="86"), True, no_warn) is None
    assert wheels.lookup(replace(KEY, python_tag="cp313"), True, no_warn) is None


def test_cpu_only_wheel_is_refused_for_a_cuda_request(tmp_path, cache_dir):
    with pytest.raises(CheckFailed, match="CPU-only"):
        wheels.store(KEY, fake_wheel(tmp_path / "built", cuda=False), 1.0, True, "t")
    assert wheels.entries() == []


def test_cpu_wheel_is_fine_for_a_cpu_request(tmp_path):
    key = replace(KEY, cuda="", archs="", cmake_args="")
    wheels.store(key, fake_wheel(tmp_path / "built", cuda=False), 1.0, False, "t")
    assert wheels.lookup(key, False, no_warn) is not None


def wheel_of(tmp_path: Path, members: dict[str, bytes], name: str = "pkg-1.0-cp312-cp312-linux_x86_64.whl") -> Path:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as zf:
        for member, data in members.items():
            zf.writestr(member, data)
    return path


def test_a_wheel_is_judged_by_its_device_code_not_its_file_names(tmp_path):
    """Issue 21: a torch extension's _C.so or stable-diffusion's libstable-diffusion.so has no `cuda` in its
    name; a library named *cuda* with nothing of CUDA in it is no CUDA build."""
    ext = wheel_of(tmp_path, {"pkg/_C.cpython-312-x86_64-linux-gnu.so": sample_bytes(CUDA_SO)})
    assert wheels.check_wheel(ext, "pkg", True) == []
    code, _ = wheels.inspect_wheel(ext)
    assert code.cubin == ("sm_75", "sm_90a") and code.ptx == ("compute_90",)
    named = wheel_of(tmp_path, {"pkg/lib/libpkg_cuda.so.1": sample_bytes(PLAIN_SO)}, "named-1.0-py3-none-any.whl")
    [why] = wheels.check_wheel(named, "pkg", True)
    assert "CPU-only" in why and "libpkg_cuda.so.1" in why and ".nv_fatbin" in why and "cudart" in why


def test_a_windows_dll_with_device_code_counts_as_cuda(tmp_path):
    dll = wheel_of(
        tmp_path,
        {"pkg/lib/kernels.dll": sample_bytes("tiny_cuda-pe-with-nvcc13.0-fatbin.dll")},
        "pkg-1.0-cp312-cp312-win_amd64.whl",
    )
    assert wheels.check_wheel(dll, "pkg", True) == []


def test_a_wheel_without_native_code_says_so(tmp_path):
    pure = wheel_of(tmp_path, {"pkg/__init__.py": b"x = 1\n"}, "pure-1.0-py3-none-any.whl")
    [why] = wheels.check_wheel(pure, "pkg", True)
    assert "no native library" in why


def test_not_a_zip_is_a_problem_not_an_exception(tmp_path):
    bad = tmp_path / "bad-1.0-py3-none-any.whl"
    bad.write_bytes(b"PK\x03\x04 but nothing else")
    [why] = wheels.check_wheel(bad, "pkg", True)
    assert "not a readable zip" in why


def test_the_entry_records_the_device_code(tmp_path):
    entry = wheels.store(KEY, fake_wheel(tmp_path / "built"), 1.0, True, "t")
    assert entry.device_code.cubin == ("sm_75", "sm_90a")
    again = wheels.lookup(KEY, True, no_warn)
    assert again.device_code.cubin == ("sm_75", "sm_90a") and again.device_code.ptx == ("compute_90",)
    sidecar = json.loads((entry.folder / "entry.json").read_text())
    assert sidecar["device_code"]["cubin"] == ["sm_75", "sm_90a"] and sidecar["device_code"]["ptx_isa"] == "9.0"


def test_wrong_hash_is_discarded_with_a_warning(tmp_path):
    entry = wheels.store(KEY, fake_wheel(tmp_path / "built"), 1.0, True, "t")
    with open(entry.path, "ab") as fh:
        fh.write(b"tampered")
    warnings = []
    assert wheels.lookup(KEY, True, warnings.append) is None
    assert "sha256" in warnings[0] and "rebuilt" in warnings[0]
    assert not entry.folder.exists()


def test_bad_zip_is_discarded_even_when_its_hash_matches(tmp_path):
    entry = wheels.store(KEY, fake_wheel(tmp_path / "built"), 1.0, True, "t")
    entry.path.write_bytes(b"this is not a zip file")
    data = json.loads((entry.folder / "entry.json").read_text())
    data["sha256"] = wheels.file_sha256(entry.path)
    (entry.folder / "entry.json").write_text(json.dumps(data))
    warnings = []
    assert wheels.lookup(KEY, True, warnings.append) is None
    assert "zip" in warnings[0]
    assert not entry.folder.exists()


def test_unreadable_sidecar_is_discarded(tmp_path):
    entry = wheels.store(KEY, fake_wheel(tmp_path / "built"), 1.0, True, "t")
    (entry.folder / "entry.json").write_text("{not json")
    warnings = []
    assert wheels.lookup(KEY, True, warnings.append) is None and warnings


def test_store_interrupted_midway_leaves_nothing_in_the_cache(tmp_path, monkeypatch):
    def ctrl_c(_path):
        raise KeyboardInterrupt

    monkeypatch.setattr(wheels, "file_sha256", ctrl_c)  # Ctrl+C while the wheel is hashed
    with pytest.raises(KeyboardInterrupt):
        wheels.store(KEY, fake_wheel(tmp_path / "built"), 1.0, True, "t")
    assert list(wheels.wheels_dir().iterdir()) == []


def test_newest_for_package(tmp_path):
    wheels.store(KEY, fake_wheel(tmp_path / "a"), 1.0, True, "2026-01-01T00:00:00Z")
    wheels.store(replace(KEY, archs="86"), fake_wheel(tmp_path / "b"), 1.0, True, "2026-02-01T00:00:00Z")
    assert wheels.newest_for("llama-cpp-python").key.archs == "86"
    assert wheels.newest_for("torch") is None


# --- the CLI ------------------------------------------------------------------------------------


def test_cli_list_and_clear(cli, tmp_path, cache_dir):
    env = {"ENVMGR_CACHE_DIR": str(cache_dir)}
    assert "0 cached wheel(s)" in cli("wheels", "list", env=env).stdout
    wheels.store(KEY, fake_wheel(tmp_path / "built"), 12.0, True, "2026-11-22T00:00:00Z")
    out = cli("wheels", "list", env=env)
    assert out.code == 0 and "llama-cpp-python 0.3.36" in out.stdout and "CUDA 13.0 archs 90" in out.stdout
    data = cli("wheels", "list", "--json", env=env).json()
    assert data["schema"] == 1 and data["wheels"][0]["key"]["archs"] == "90"
    assert data["wheels"][0]["digest"] == KEY.digest()
    assert "removed 1 cached wheel(s)" in cli("wheels", "clear", env=env).stdout
    assert cli("wheels", "list", "--json", env=env).json()["wheels"] == []


def test_cli_install_needs_a_recipe(cli):
    out = cli("install", "numpy==2.0")  # llama-cpp-python takes its recipe by itself (issue 15)
    assert out.code == 2 and "--recipe" in out.stderr
