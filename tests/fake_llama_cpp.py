"""Hand-made llama_cpp packages for verify's child (no CPU-only build of llama-cpp-python fits in a unit test):
they behave as a CPU-only build does at the level verify looks at (import outcome,
llama_supports_gpu_offload(), the lib folder's files, a model that does not run on the GPU)."""

from __future__ import annotations

import textwrap
from pathlib import Path

CPU_ONLY = """
    def llama_supports_gpu_offload(): return False
    def llama_print_system_info(): return b"CPU : SSE3 = 1 | AVX2 = 1 |"
    class Llama:
        def __init__(self, **kw):
            import sys
            print("load_tensors: offloaded 0/3 layers to GPU", file=sys.stderr)
            raise ValueError("this fake does not run models")
    """


def cpu_only_package(root: Path) -> Path:
    """A folder to put on PYTHONPATH holding a CPU-only llama_cpp (its lib folder has the usual names, empty)."""
    pkg = root / "site" / "llama_cpp"
    (pkg / "lib").mkdir(parents=True)
    for name in ("libllama.so", "libggml.so", "libggml-base.so", "libggml-cpu.so"):
        (pkg / "lib" / name).write_bytes(b"")
    (pkg / "__init__.py").write_text(textwrap.dedent(CPU_ONLY).lstrip() + "\n__version__ = '0.0-fake'\n")
    return root / "site"


def native_package(lib: Path, link: str, c_source: str, api: str) -> None:
    """A llama_cpp in lib's parent whose `libpkg.so` (gcc-built from c_source) needs the library `link` from its own
    folder (RUNPATH $ORIGIN), beside the usual library names (empty); `api` is its __init__.py (dedented)."""
    import subprocess

    (lib / "pkg.c").write_text(c_source)
    cmd = ["gcc", "-shared", "-fPIC", "-o", str(lib / "libpkg.so"), str(lib / "pkg.c"), f"-L{lib}", f"-l:{link}"]
    subprocess.run([*cmd, "-Wl,-rpath,$ORIGIN"], check=True)
    for name in ("libllama.so", "libggml.so", "libggml-base.so"):
        (lib / name).write_bytes(b"")
    (lib.parent / "__init__.py").write_text(textwrap.dedent(api).lstrip())
