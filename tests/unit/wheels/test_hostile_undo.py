"""Audit hostile-input-2026-12 N18, N19, N29: the DLL fix's undo and apply (wheels/closure.py) on manifests
and folders made to hurt, with the audit's repros run in-process on real files."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from envmgr.errors import InputFileError
from envmgr.wheels import closure
from tests.conftest import run_cli

pytestmark = pytest.mark.posix


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _manifest(tmp_path: Path, *paths: Path | str) -> Path:
    added = [{"path": str(p), "sha256": _sha(Path(p)) if os.path.isfile(p) else "0" * 64} for p in paths]
    out = tmp_path / "m.json"
    out.write_text(json.dumps({"schema": 1, "added": added}))
    return out


def test_n18_undo_removes_nothing_but_a_cuda_dll_in_llama_cpp_lib(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "home" / ".ssh").mkdir(parents=True)
    keys, thesis = tmp_path / "home" / ".ssh" / "authorized_keys", tmp_path / "thesis.txt"
    keys.write_text("ssh-ed25519 AAAA me\n")
    thesis.write_text("my thesis\n")
    lib = tmp_path / "llama_cpp" / "lib"
    lib.mkdir(parents=True)
    (lib / "cudart64_12.dll").write_bytes(b"MZ cudart")
    (lib / "llama.dll").write_bytes(b"MZ llama")  # in the folder, but not a CUDA DLL
    (tmp_path / "cublas64_12.dll").write_bytes(b"MZ elsewhere")  # a CUDA DLL, not in llama_cpp/lib
    # The audit's manifest: a relative path and an absolute one, with their true hashes.
    relative = Path("home/.ssh/authorized_keys")
    doc = {
        "schema": 1,
        "added": [
            {"path": str(relative), "sha256": _sha(keys)},
            {"path": str(thesis), "sha256": _sha(thesis)},
            {"path": str(lib / "llama.dll"), "sha256": _sha(lib / "llama.dll")},
            {"path": str(tmp_path / "cublas64_12.dll"), "sha256": _sha(tmp_path / "cublas64_12.dll")},
            {"path": str(lib / "cudart64_12.dll"), "sha256": _sha(lib / "cudart64_12.dll")},
        ],
    }
    (tmp_path / "m.json").write_text(json.dumps(doc))
    result = run_cli("install", "--undo-dll-fix", str(tmp_path / "m.json"))
    assert result.code == 0, result.stderr
    assert keys.read_text() == "ssh-ed25519 AAAA me\n" and thesis.read_text() == "my thesis\n"
    assert (lib / "llama.dll").exists() and (tmp_path / "cublas64_12.dll").exists()
    assert not (lib / "cudart64_12.dll").exists()
    assert result.stderr.count("skipped (not a file a DLL fix adds)") == 4, result.stderr
    assert f"removed {lib / 'cudart64_12.dll'}" in result.stderr


def test_n18_undo_never_follows_a_link_or_a_changed_file(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    lib = tmp_path / "llama_cpp" / "lib"
    lib.mkdir(parents=True)
    (lib / "cudart64_12.dll").symlink_to(victim)
    (lib / "cublas64_12.dll").write_bytes(b"copied")
    manifest = _manifest(tmp_path, lib / "cudart64_12.dll", lib / "cublas64_12.dll")
    (lib / "cublas64_12.dll").write_bytes(b"the user's own since")
    lines = closure.undo(manifest)
    assert lines == [
        f"{lib / 'cudart64_12.dll'}: skipped (not a file a DLL fix adds)",
        f"{lib / 'cublas64_12.dll'}: changed since the fix copied it: left as it is",
    ]
    assert victim.read_text() == "keep me" and (lib / "cudart64_12.dll").is_symlink()


def test_n19_a_deep_manifest_is_one_line(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text('{"schema":1,"added":' + "[" * 100000 + "]" * 100000 + "}")
    result = run_cli("install", "--undo-dll-fix", str(deep))
    assert result.code == 2 and "Traceback" not in result.stderr
    assert "nested too deeply" in result.stderr and str(deep) in result.stderr


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root removes from a read-only folder")
def test_n19_a_file_that_cannot_be_removed_is_one_line_and_the_rest_is_removed(tmp_path):
    ro, rw = tmp_path / "ro" / "llama_cpp" / "lib", tmp_path / "rw" / "llama_cpp" / "lib"
    ro.mkdir(parents=True)
    rw.mkdir(parents=True)
    (ro / "cudart64_12.dll").write_bytes(b"x\n")
    (rw / "cublas64_12.dll").write_bytes(b"y\n")
    manifest = _manifest(tmp_path, ro / "cudart64_12.dll", rw / "cublas64_12.dll")
    ro.chmod(0o555)
    try:
        result = run_cli("install", "--undo-dll-fix", str(manifest))
    finally:
        ro.chmod(0o755)
    assert result.code == 0 and "Traceback" not in result.stderr
    assert f"{ro / 'cudart64_12.dll'}: cannot be removed: Permission denied" in result.stderr
    assert (ro / "cudart64_12.dll").exists() and not (rw / "cublas64_12.dll").exists()


def test_n19_unremovable_file_function_level(tmp_path, monkeypatch):
    """The same line where a read-only folder cannot be made (root, Windows): os.remove refused."""
    lib = tmp_path / "llama_cpp" / "lib"
    lib.mkdir(parents=True)
    (lib / "cudart64_12.dll").write_bytes(b"x")
    manifest = _manifest(tmp_path, lib / "cudart64_12.dll")

    def refuse(path: str) -> None:
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(closure.os, "remove", refuse)
    assert closure.undo(manifest) == [
        f"{lib / 'cudart64_12.dll'}: cannot be removed: Permission denied; the other files were handled"
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs mkfifo")
def test_n19_a_fifo_or_folder_manifest_is_not_a_regular_file(tmp_path):
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "dir.json").mkdir()
    for name, why in (("fifo.json", ("not a regular file",)), ("dir.json", ("it is a folder", "Is a directory"))):
        started = time.monotonic()
        result = run_cli("install", "--undo-dll-fix", str(tmp_path / name))
        assert result.code == 2 and any(w in result.stderr for w in why), result.stderr
        assert "no such file" not in result.stderr
        assert time.monotonic() - started < 5
    result = run_cli("install", "--undo-dll-fix", str(tmp_path / "absent.json"))
    assert result.code == 2 and "no such file" in result.stderr


def test_n19_manifest_with_nan_or_wrong_shape_is_refused(tmp_path):
    for text in ('{"schema": 1, "added": NaN}', '{"schema": 1, "added": {}}', "[]"):
        (tmp_path / "m.json").write_text(text)
        with pytest.raises(InputFileError):
            closure.undo(tmp_path / "m.json")


def _plan(src: Path, lib: Path, *names: str) -> closure.FixPlan:
    return closure.FixPlan(tuple(closure.Copy(n, str(src / n), str(lib / n)) for n in names), (), "")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to itself is POSIX")
def test_n29_an_interrupted_fix_leaves_no_partial_dll_and_undo_removes_what_was_copied(tmp_path):
    src, lib = tmp_path / "src", tmp_path / "llama_cpp" / "lib"
    src.mkdir()
    lib.mkdir(parents=True)
    (src / "cudart64_12.dll").write_bytes(b"x")
    with open(src / "cublas64_12.dll", "wb") as fh:
        fh.truncate(300 << 20)  # sparse: large enough that the interrupt lands mid-copy
    real_copy = closure.shutil.copyfile

    def copy_then_interrupt(source: str, dest: str) -> object:
        if source.endswith("cublas64_12.dll"):
            with open(dest, "wb") as out:
                out.write(b"half")
            threading.Thread(target=lambda: os.kill(os.getpid(), signal.SIGINT)).start()
            time.sleep(5)
        return real_copy(source, dest)

    closure.shutil.copyfile = copy_then_interrupt  # restored below; the interrupt must land inside a copy
    try:
        with pytest.raises(KeyboardInterrupt):
            closure.apply(_plan(src, lib, "cudart64_12.dll", "cublas64_12.dll"), tmp_path / "manifests")
    finally:
        closure.shutil.copyfile = real_copy
    assert sorted(os.listdir(lib)) == ["cudart64_12.dll"]
    [manifest] = (tmp_path / "manifests").iterdir()
    assert closure.undo(manifest) == [f"removed {lib / 'cudart64_12.dll'}"]
    assert os.listdir(lib) == []


def test_n29_a_copy_that_fails_is_one_line_and_the_manifest_keeps_what_was_done(tmp_path, monkeypatch):
    src, lib = tmp_path / "src", tmp_path / "llama_cpp" / "lib"
    src.mkdir()
    lib.mkdir(parents=True)
    for name in ("cudart64_12.dll", "cublas64_12.dll", "cublasLt64_12.dll"):
        (src / name).write_bytes(name.encode())
    real_copy = closure.shutil.copyfile

    def full_disk(source: str, dest: str) -> object:
        if "cublas64" in source:
            with open(dest, "wb") as out:
                out.write(b"partial")
            raise OSError(28, "No space left on device")
        return real_copy(source, dest)

    monkeypatch.setattr(closure.shutil, "copyfile", full_disk)
    lines, manifest = closure.apply(
        _plan(src, lib, "cudart64_12.dll", "cublas64_12.dll", "cublasLt64_12.dll"), tmp_path / "manifests"
    )
    assert lines == [
        f"copied {src / 'cudart64_12.dll'} -> {lib / 'cudart64_12.dll'}",
        f"could not copy {src / 'cublas64_12.dll'} -> {lib / 'cublas64_12.dll'}: "
        "No space left on device; nothing more was copied",
    ]
    assert sorted(os.listdir(lib)) == ["cudart64_12.dll"]
    assert [x["path"] for x in json.loads(manifest.read_text())["added"]] == [str(lib / "cudart64_12.dll")]


def test_n18_undo_of_f24_components_stays_inside_a_toolkit_or_site_packages_nvidia(tmp_path):
    """F24's --fix (commands/install_components.py) adds files to a toolkit made of wheels (include/, lib/,
    dist-info/) or to a pip toolkit's site-packages/nvidia: undo removes those, judged from the file system,
    and still nothing outside (the toolkit's own bin/, a file beside the toolkit)."""
    kit = tmp_path / "cuda-13.0"
    (kit / "bin").mkdir(parents=True)
    (kit / "bin" / "nvcc").write_bytes(b"\x7fELF nvcc")
    (kit / "include").mkdir()
    (kit / "lib").mkdir()
    (kit / "dist-info" / "nvidia_cublas-13.0.0.dist-info").mkdir(parents=True)
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    (site / "nvidia" / "cublas" / "lib").mkdir(parents=True)
    (site / "nvidia_cublas-13.0.0.dist-info").mkdir()
    added = [
        kit / "include" / "cublas_v2.h",
        kit / "lib" / "libcublas.so.13",
        kit / "dist-info" / "nvidia_cublas-13.0.0.dist-info" / "RECORD",
        site / "nvidia" / "cublas" / "lib" / "libcublas.so.13",
        site / "nvidia_cublas-13.0.0.dist-info" / "RECORD",
    ]
    kept = [kit / "bin" / "nvcc", tmp_path / "notes.txt", site / "other.py"]
    for p in [*added, *kept[1:]]:
        p.write_bytes(b"content of " + p.name.encode())
    lines = closure.undo(_manifest(tmp_path, *added, *kept))
    assert [p for p in added if p.exists()] == []
    assert all(p.exists() for p in kept), lines
    assert sum("skipped (not a file a DLL fix adds)" in ln for ln in lines) == len(kept), lines
