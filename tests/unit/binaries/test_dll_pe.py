"""`doctor --dll` on Windows DLLs: real PE files built with mingw-w64, laid out in a recorded Windows machine.

Import libraries for cudart64_12.dll, cublas64_12.dll and nvcuda.dll are made from .def files with
x86_64-w64-mingw32-dlltool, so ggml-cuda.dll imports exactly those names, as a real CUDA build does.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
import tomlkit

from envmgr.errors import InputFileError
from tests.conftest import need

pytestmark = pytest.mark.posix

GCC, DLLTOOL = "x86_64-w64-mingw32-gcc", "x86_64-w64-mingw32-dlltool"
CUDA = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA"
SITE = "C:\\Python312\\Lib\\site-packages"
LIB = f"{SITE}\\llama_cpp\\lib"
DEFS = {"cudart64_12": "cudaMalloc", "cublas64_12": "cublasCreate_v2", "nvcuda": "cuInit"}


def need_tools(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    need(not missing, f"needs {', '.join(missing)} (apt install gcc-mingw-w64-x86-64)")


@pytest.fixture(scope="module")
def dlls(tmp_path_factory) -> dict[str, bytes]:
    need_tools(GCC, DLLTOOL)
    d = tmp_path_factory.mktemp("pe")

    def run(*argv):
        subprocess.run(argv, cwd=d, check=True, capture_output=True)

    for name, func in DEFS.items():
        (d / f"{name}.def").write_text(f"LIBRARY {name}.dll\nEXPORTS\n    {func}\n")
        run(DLLTOOL, "-d", f"{name}.def", "-l", f"lib{name}.a", "-D", f"{name}.dll")
        (d / f"{name}.c").write_text(f"__declspec(dllexport) int {func}(void) {{ return 0; }}\n")
        run(GCC, "-shared", "-s", "-o", f"{name}.dll", f"{name}.c")
    (d / "ggml.c").write_text(
        "int cudaMalloc(void); int cublasCreate_v2(void); int cuInit(void);\n"
        "__declspec(dllexport) int ggml_cuda_init(void) "
        "{ return cudaMalloc() + cublasCreate_v2() + cuInit(); }\n"
    )
    run(GCC, "-shared", "-s", "-o", "ggml-cuda.dll", "ggml.c", "-L.", "-lcudart64_12", "-lcublas64_12", "-lnvcuda")
    (d / "llama.c").write_text(
        "int ggml_cuda_init(void);\n__declspec(dllexport) int llama_init(void) { return ggml_cuda_init(); }\n"
    )
    run(GCC, "-shared", "-s", "-o", "llama.dll", "llama.c", "-L.", "-l:ggml-cuda.dll")
    return {p.name: p.read_bytes() for p in d.glob("*.dll")}


def machine(tmp_path, dlls, *, cuda_path: str, path: list[str], files: dict[str, str], python_exe: str = "") -> str:
    """A Windows machine file: the DLLs (hex) at the given places; everything else minimal. python.exe is
    empty (machine unknown) unless `python_exe` names a PE whose header it gets."""
    doc = tomlkit.document()
    doc.add("schema", 1)
    doc.add("platform", "windows")
    doc.add(
        "env",
        {
            "SystemRoot": "C:\\Windows",
            "CUDA_PATH": cuda_path,
            "PATH": ";".join(path + ["C:\\Windows\\system32", "C:\\Windows"]),
        },
    )
    table = tomlkit.table()
    table.add("C:\\Python312\\python.exe", {"hex": dlls[python_exe].hex()} if python_exe else "")
    for where, name in files.items():
        item = tomlkit.inline_table()
        item.add("hex", dlls[name].hex() if name in dlls else name)
        table.add(where, item)
    doc.add("files", table)
    doc.add("python", {"executable": "C:\\Python312\\python.exe", "version": "3.12.4", "site_packages": [SITE]})
    out = tmp_path / "pe-machine.toml"
    out.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return str(out)


def layout(tmp_path, dlls, *, cuda_path: str, path: list[str]) -> str:
    """llama.dll + ggml-cuda.dll in llama_cpp\\lib; CUDA 12.4's DLLs in v12.4\\bin; 11.8 has only its own;
    nvcuda.dll in System32. Each toolkit has its lib folder, as installed (llama_cpp's loader calls
    os.add_dll_directory(CUDA_PATH\\lib), which raises when it is missing)."""
    return machine(
        tmp_path,
        dlls,
        cuda_path=cuda_path,
        path=path,
        files={
            f"{LIB}\\llama.dll": "llama.dll",
            f"{LIB}\\ggml-cuda.dll": "ggml-cuda.dll",
            f"{CUDA}\\v12.4\\bin\\cudart64_12.dll": "cudart64_12.dll",
            f"{CUDA}\\v12.4\\bin\\cublas64_12.dll": "cublas64_12.dll",
            f"{CUDA}\\v11.8\\bin\\cudart64_110.dll": "cudart64_12.dll",
            f"{CUDA}\\v12.4\\lib\\x64\\cudart.lib": "00",
            f"{CUDA}\\v11.8\\lib\\x64\\cudart.lib": "00",
            "C:\\Windows\\System32\\nvcuda.dll": "nvcuda.dll",
        },
    )


def test_pe_imports_of_a_real_mingw_dll(dlls):
    from envmgr.binaries.dll import binary_machine, pe_imports

    names = {n.lower() for n in pe_imports(dlls["ggml-cuda.dll"], "ggml-cuda.dll")}
    assert {"cudart64_12.dll", "cublas64_12.dll", "nvcuda.dll"} <= names
    assert binary_machine(dlls["ggml-cuda.dll"][:4096]) == ("x64", 64)


def test_missing_cuda_dlls_explained_when_cuda_path_is_118(cli, tmp_path, dlls):
    m = layout(tmp_path, dlls, cuda_path=f"{CUDA}\\v11.8", path=[f"{CUDA}\\v11.8\\bin"])
    result = cli("--machine", m, "doctor", "--dll", "llama_cpp", "--json")
    assert result.code == 1, result.stderr
    data = result.json()
    missing = {x["name"].lower(): x["why"] for x in data["missing"]}
    assert set(missing) == {"cudart64_12.dll", "cublas64_12.dll"}
    assert "CUDA_PATH points at 11.8" in missing["cublas64_12.dll"]
    tree = data["tree"]
    assert tree["name"] == "ggml-cuda.dll"
    nv = next(c for c in tree["children"] if c["name"].lower() == "nvcuda.dll")
    assert nv["path"].endswith("System32\\nvcuda.dll") and nv["found_by"] == "System32"


def test_cuda_bin_not_on_path_is_explained(cli, tmp_path, dlls):
    m = layout(tmp_path, dlls, cuda_path=f"{CUDA}\\v12.4", path=[])
    result = cli("--machine", m, "doctor", "--dll", f"{LIB}\\llama.dll")
    assert result.code == 1
    assert "is not on PATH" in result.stdout and "winmode=0" in result.stdout


def test_everything_resolves_through_path(cli, tmp_path, dlls):
    m = layout(tmp_path, dlls, cuda_path=f"{CUDA}\\v12.4", path=[f"{CUDA}\\v12.4\\bin"])
    result = cli("--machine", m, "doctor", "--dll", f"{LIB}\\llama.dll")
    assert result.code == 0, result.stdout
    assert "ggml-cuda.dll" in result.stdout and "llama_cpp's own PATH prepend" in result.stdout
    assert "0 missing" in result.stdout


def test_f15_check_uses_the_same_resolution(cli, tmp_path, dlls):
    bad = layout(tmp_path, dlls, cuda_path=f"{CUDA}\\v11.8", path=[f"{CUDA}\\v11.8\\bin"])
    data = cli("--machine", bad, "doctor", "--only", "F15", "--json").json()
    assert data["checks"][0]["status"] == "fail" and "cublas64_12.dll" in data["checks"][0]["summary"]
    good = layout(tmp_path, dlls, cuda_path=f"{CUDA}\\v12.4", path=[f"{CUDA}\\v12.4\\bin"])
    data = cli("--machine", good, "doctor", "--only", "F15", "--json").json()
    assert data["checks"][0]["status"] == "ok"


def test_not_a_pe_file_is_one_line(cli, tmp_path, dlls):
    m = machine(tmp_path, dlls, cuda_path="C:\\x", path=[], files={"C:\\t\\notes.dll": b"hello world".hex()})
    result = cli("--machine", m, "doctor", "--dll", "C:\\t\\notes.dll")
    assert result.code == 2 and "not a PE or ELF file" in result.stderr and "Traceback" not in result.stderr


def test_truncated_dll_is_one_line(cli, tmp_path, dlls):
    cut = dlls["ggml-cuda.dll"][: len(dlls["ggml-cuda.dll"]) // 2]
    m = machine(tmp_path, dlls, cuda_path="C:\\x", path=[], files={"C:\\t\\ggml-cuda.dll": cut.hex()})
    result = cli("--machine", m, "doctor", "--dll", "C:\\t\\ggml-cuda.dll")
    assert result.code == 2 and "truncated" in result.stderr and "Traceback" not in result.stderr


def test_pe_imports_rejects_garbage():
    from envmgr.binaries.dll import pe_imports

    with pytest.raises(InputFileError):
        pe_imports(b"MZ" + b"\0" * 10, "x.dll")


def test_ctypes_loader_searches_add_dll_directory_folders_not_path(cli, tmp_path, dlls):
    m = layout(tmp_path, dlls, cuda_path=f"{CUDA}\\v12.4", path=[f"{CUDA}\\v12.4\\bin"])
    data = cli("--machine", m, "doctor", "--dll", f"{LIB}\\ggml-cuda.dll", "--loader", "ctypes", "--json").json()
    assert not data["loads"]
    why = {x["name"].lower(): x["why"] for x in data["missing"]}
    assert set(why) == {"cudart64_12.dll", "cublas64_12.dll"}
    assert "not an os.add_dll_directory folder" in why["cudart64_12.dll"]
    result = cli(
        "--machine",
        m,
        "doctor",
        "--dll",
        f"{LIB}\\ggml-cuda.dll",
        "--loader",
        "ctypes",
        "--add-dll-dir",
        f"{CUDA}\\v12.4\\bin",
        "--json",
    )
    assert result.code == 0 and result.json()["loads"], result.stdout


def test_winmode0_ignores_add_dll_directory_and_says_so(cli, tmp_path, dlls):
    m = layout(tmp_path, dlls, cuda_path=f"{CUDA}\\v11.8", path=[])
    result = cli(
        "--machine",
        m,
        "doctor",
        "--dll",
        f"{LIB}\\llama.dll",
        "--loader",
        "winmode0",
        "--add-dll-dir",
        f"{CUDA}\\v12.4\\bin",
        "--json",
    )
    data = result.json()
    assert result.code == 1 and data["ignored_dll_dirs"] == [f"{CUDA}\\v12.4\\bin"]
    why = {x["name"].lower(): x["why"] for x in data["missing"]}
    assert "ggml-cuda.dll" in why  # winmode=0 does not search the DLL's own folder either
    assert why["ggml-cuda.dll"].startswith("not in the python.exe folder, System32")


def test_llama_cpp_loader_is_blocked_by_a_cuda_path_without_lib(cli, tmp_path, dlls):
    m = machine(
        tmp_path,
        dlls,
        cuda_path=f"{CUDA}\\v12.4",
        path=[f"{CUDA}\\v12.4\\bin"],
        files={
            f"{LIB}\\llama.dll": "llama.dll",
            f"{LIB}\\ggml-cuda.dll": "ggml-cuda.dll",
            f"{CUDA}\\v12.4\\bin\\cudart64_12.dll": "cudart64_12.dll",
            f"{CUDA}\\v12.4\\bin\\cublas64_12.dll": "cublas64_12.dll",
            "C:\\Windows\\System32\\nvcuda.dll": "nvcuda.dll",
        },
    )
    result = cli("--machine", m, "doctor", "--dll", "llama_cpp", "--json")
    data = result.json()
    assert result.code == 1 and not data["loads"] and data["missing"] == []
    assert "[WinError 3]" in data["blocked"] and "CUDA_PATH\\lib" in data["blocked"]
    f15 = cli("--machine", m, "doctor", "--only", "F15", "--json").json()["checks"][0]
    assert f15["status"] == "fail" and "stops before loading" in f15["summary"]


def test_a_wrong_machine_copy_first_in_the_search_order_cannot_load(cli, tmp_path, dlls):
    import struct

    arm = bytearray(dlls["cudart64_12.dll"])
    struct.pack_into("<H", arm, struct.unpack_from("<I", arm, 0x3C)[0] + 4, 0xAA64)
    m = machine(
        tmp_path,
        dlls,
        cuda_path=f"{CUDA}\\v12.4",
        path=["C:\\arm", f"{CUDA}\\v12.4\\bin"],
        python_exe="llama.dll",
        files={
            f"{LIB}\\llama.dll": "llama.dll",
            f"{LIB}\\ggml-cuda.dll": "ggml-cuda.dll",
            "C:\\arm\\cudart64_12.dll": bytes(arm).hex(),
            f"{CUDA}\\v12.4\\bin\\cudart64_12.dll": "cudart64_12.dll",
            f"{CUDA}\\v12.4\\bin\\cublas64_12.dll": "cublas64_12.dll",
            f"{CUDA}\\v12.4\\lib\\x64\\cudart.lib": "00",
            "C:\\Windows\\System32\\nvcuda.dll": "nvcuda.dll",
        },
    )
    result = cli("--machine", m, "doctor", "--dll", "llama_cpp", "--json")
    data = result.json()
    assert result.code == 1 and data["missing"] == []
    assert data["unloadable"] == [
        {"name": "cudart64_12.dll", "path": "C:\\arm\\cudart64_12.dll", "why": "ARM64 DLL, but python.exe is x64"}
    ]
    assert "cannot load: cudart64_12.dll" in cli("--machine", m, "doctor", "--dll", "llama_cpp").stdout


def test_loader_options_need_dll(cli):
    result = cli("doctor", "--loader", "ctypes")
    assert result.code == 2 and "go with --dll" in result.stderr
