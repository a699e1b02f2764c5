"""`doctor --dll` on Linux: real .so files built with gcc, resolved via $ORIGIN RUNPATH, LD_LIBRARY_PATH,
the ld.so.cache and the default folders."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from envmgr.errors import InputFileError
from tests.conftest import need

pytestmark = pytest.mark.posix


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """lib/libggml-cuda.so (RUNPATH $ORIGIN) NEEDS libcudart.so.12 (next to it) and libcublas.so.12 (in cuda/)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("ELF loading is Linux's")
    need(shutil.which("gcc") is not None, "needs gcc")
    d = tmp_path_factory.mktemp("elf")
    (d / "lib").mkdir()
    (d / "cuda").mkdir()

    def so(name: str, soname: str, src: str, *extra: str) -> None:
        (d / f"{soname}.c").write_text(src)
        subprocess.run(
            ["gcc", "-shared", "-fPIC", "-o", str(d / name), f"-Wl,-soname,{soname}", str(d / f"{soname}.c"), *extra],
            check=True,
            capture_output=True,
        )

    so("lib/libcudart.so.12", "libcudart.so.12", "int cudaMalloc(void){return 0;}\n")
    so("cuda/libcublas.so.12", "libcublas.so.12", "int cublasCreate_v2(void){return 0;}\n")
    so(
        "lib/libggml-cuda.so",
        "libggml-cuda.so",
        "int cudaMalloc(void); int cublasCreate_v2(void); int ggml(void){return cudaMalloc()+cublasCreate_v2();}\n",
        f"-L{d / 'lib'}",
        f"-L{d / 'cuda'}",
        "-l:libcudart.so.12",
        "-l:libcublas.so.12",
        "-Wl,-rpath,$ORIGIN",
    )
    return d


def test_parse_elf_needed_and_runpath(tree):
    from envmgr.binaries.elf import parse_elf

    info = parse_elf((tree / "lib" / "libggml-cuda.so").read_bytes(), "libggml-cuda.so")
    assert {"libcudart.so.12", "libcublas.so.12"} <= set(info.needed)
    assert "$ORIGIN" in (info.runpath + info.rpath)


def test_missing_cublas_then_resolved_with_ld_library_path(cli, tree):
    target = str(tree / "lib" / "libggml-cuda.so")
    result = cli("doctor", "--dll", target, "--json", env={"LD_LIBRARY_PATH": ""})
    assert result.code == 1
    data = result.json()
    assert [m["name"] for m in data["missing"]] == ["libcublas.so.12"]
    cudart = next(c for c in data["tree"]["children"] if c["name"] == "libcudart.so.12")
    assert cudart["found_by"].startswith(("RUNPATH", "RPATH")) and cudart["path"].startswith(str(tree / "lib"))
    result = cli("doctor", "--dll", target, env={"LD_LIBRARY_PATH": str(tree / "cuda")})
    assert result.code == 0 and "LD_LIBRARY_PATH" in result.stdout and "0 missing" in result.stdout


def test_ldconfig_parse():
    from envmgr.binaries.elf import parse_ldconfig

    text = (
        "3 libs found in cache `/etc/ld.so.cache'\n"
        "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
        "\tlibcuda.so.1 (libc6) => /usr/lib/i386-linux-gnu/libcuda.so.1\n"
    )
    assert parse_ldconfig(text) == {"libcuda.so.1": "/usr/lib/x86_64-linux-gnu/libcuda.so.1"}
    assert parse_ldconfig(text, 32) == {"libcuda.so.1": "/usr/lib/i386-linux-gnu/libcuda.so.1"}


def test_not_elf_and_truncated_are_one_line(cli, tree, tmp_path):
    text = tmp_path / "notes.so"
    text.write_text("hello")
    result = cli("doctor", "--dll", str(text))
    assert result.code == 2 and "not a PE or ELF file" in result.stderr and "Traceback" not in result.stderr
    data = (tree / "lib" / "libggml-cuda.so").read_bytes()
    cut = tmp_path / "cut.so"
    cut.write_bytes(data[: len(data) // 3])
    result = cli("doctor", "--dll", str(cut))
    assert result.code == 2 and "Traceback" not in result.stderr
    assert "truncated" in result.stderr or "unreadable" in result.stderr


def test_missing_file_and_folder(cli, tmp_path):
    assert cli("doctor", "--dll", str(tmp_path / "nope.so")).code == 2
    assert cli("doctor", "--dll", str(tmp_path)).code == 2


def test_parse_elf_garbage():
    from envmgr.binaries.elf import parse_elf

    with pytest.raises(InputFileError):
        parse_elf(b"\x7fELF\x02\x01\x01" + b"\0" * 20, "x.so")
