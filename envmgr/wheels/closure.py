"""The CUDA DLL closure of an installed llama_cpp on Windows: do the CUDA DLLs its libraries import resolve
under llama_cpp's own loader rules (doctor --dll's model: winmode=0, llama_cpp\\lib prepended to PATH,
os.add_dll_directory ignored) in a plain process of the target Python, and if not, the fix.

Why a fix is needed at all: the published Windows wheels do not bundle cudart/cuBLAS, and llama_cpp's
os.add_dll_directory(CUDA_PATH\\bin) is not consulted by a winmode=0 load, so `import llama_cpp` fails with
"Could not find module … (or one of its dependencies)" unless a toolkit's bin is on PATH (facts/failures
F15, facts/windows-python-under-wine.md). The fix copies each missing DLL into llama_cpp\\lib, the one
folder llama_cpp itself puts first on PATH, from a toolkit of the same CUDA major that envmgr found, or
from NVIDIA's runtime wheels in the target environment (site-packages\\nvidia\\*\\bin). It is a
transaction with a manifest: undo removes exactly the files it added, when they are still the ones it
copied (sha256).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from envmgr.binaries.devicecode import CUDA_LIBRARY
from envmgr.binaries.dll import IMPLIED, resolve_pe
from envmgr.binaries.dllsyms import MissingEntry
from envmgr.errors import InputFileError
from envmgr.files.atomic import atomic_write
from envmgr.files.jsondoc import dumps, read_json_file
from envmgr.host.base import Host, join

_DRIVER = re.compile(r"^nvcuda\.dll$", re.I)  # the driver's: never copied
_MAJOR = re.compile(r"^(?:cudart|cublas|cublasLt|cufft|curand|cusparse|cusolver|nvrtc|nvJitLink)64_(\d+)", re.I)
MANIFEST_SCHEMA = 1
_NVIDIA_DIST = re.compile(r"^nvidia_[\w.+-]+\.dist-info$")  # lower-cased folder names
# Runtimes whose stale copy elsewhere hides a needed entry point ([WinError 127], issue 37): the OpenMP and
# MSVC runtimes. Only these (and CUDA's) are copied into llama_cpp\lib by --fix, so undo can tell them
# from the package's own DLLs.
RUNTIME = re.compile(r"^(libomp\w*|libiomp5md|vcomp\d+|msvcp\d+\w*|vcruntime\d+\w*|concrt\d+)\.(x86_64\.)?dll$", re.I)


@dataclass(frozen=True)
class Closure:
    lib_dir: str
    checked: tuple[str, ...] = ()  # the DLLs of lib_dir that import CUDA libraries
    missing: tuple[str, ...] = ()  # CUDA DLLs that do not resolve (the driver's nvcuda.dll apart)
    why: tuple[str, ...] = ()  # doctor --dll's explanation, one per missing DLL
    driver_missing: bool = False  # nvcuda.dll does not resolve: no driver, nothing to copy
    entries: tuple[MissingEntry, ...] = ()  # imported functions the DLL that loads lacks (any DLL of lib_dir)


@dataclass(frozen=True)
class Copy:
    name: str
    source: str
    dest: str


@dataclass(frozen=True)
class FixPlan:
    copies: tuple[Copy, ...]
    unresolved: tuple[str, ...]  # missing DLLs no found toolkit or runtime wheel has
    offer: str  # the fix in words, for the report


def check(host: Host, python_exe: str | None, lib_dir: str) -> Closure:
    """Resolve the imports of every DLL in lib_dir the way llama_cpp loads them."""
    names = sorted(n for n in host.listdir(lib_dir) if n.lower().endswith(".dll")) if host.is_dir(lib_dir) else []
    checked: list[str] = []
    missing: dict[str, str] = {}
    why: dict[str, str] = {}
    driver = False
    entries: dict[tuple[str, str], MissingEntry] = {}
    for name in names[:256]:
        try:
            report = resolve_pe(host, join(host, lib_dir, name), python_exe=python_exe, loader="llama_cpp")
        except InputFileError:
            continue
        for e in report.entries:
            entries.setdefault((e.dll.lower(), e.function), e)
        lost = [n for n in report.missing() if CUDA_LIBRARY.match(n.name)]
        if not lost and not any(CUDA_LIBRARY.match(c.name) for c in report.root.children):
            continue
        checked.append(name)
        for node in lost:
            if _DRIVER.match(node.name):
                driver = True
            else:
                missing.setdefault(node.name.lower(), node.name)
                why.setdefault(node.name.lower(), node.why)
    return Closure(
        lib_dir, tuple(checked), tuple(missing.values()), tuple(why.values()), driver, tuple(entries.values())
    )


def plan_fix(
    host: Host, closure: Closure, toolkit_bins: dict[str, tuple[str, ...]], site_dirs: tuple[str, ...]
) -> FixPlan:
    """Where each missing DLL can come from: a toolkit of its CUDA major ({"12.4": (bin dirs)}), else
    NVIDIA's runtime wheels under a site-packages folder of the target Python."""
    copies, unresolved = [], []
    wheel_bins = [
        join(host, s, "nvidia", d, "bin")
        for s in site_dirs
        if host.is_dir(join(host, s, "nvidia"))
        for d in sorted(host.listdir(join(host, s, "nvidia")))
    ]
    implied = [t.format(m.group(1)) for n in closure.missing for rx, t in IMPLIED.items() if (m := rx.match(n))]
    for name in dict.fromkeys([*closure.missing, *implied]):
        m = _MAJOR.match(name)
        major = m.group(1)[:2] if m and len(m.group(1)) > 2 else (m.group(1) if m else "")
        bins = [b for v, dirs in sorted(toolkit_bins.items(), reverse=True) if v.split(".")[0] == major for b in dirs]
        source = next((join(host, b, name) for b in [*bins, *wheel_bins] if host.exists(join(host, b, name))), None)
        if source is None:
            if name in closure.missing:
                unresolved.append(name)
        else:
            copies.append(Copy(name, source, join(host, closure.lib_dir, name)))
    for e in closure.entries:
        if (
            e.fix_copy
            and (RUNTIME.match(e.dll) or CUDA_LIBRARY.match(e.dll))
            and all(c.name.lower() != e.dll.lower() for c in copies)
        ):
            copies.append(Copy(e.dll, e.fix_copy, join(host, closure.lib_dir, e.dll)))
    words = "; ".join(
        [f"copy {c.source} into {closure.lib_dir}" for c in copies]
        + [f"{e.function} in {e.dll}: {e.fix}" for e in closure.entries if not e.fix_copy]
    )
    if unresolved:
        wheels = ", ".join(sorted({_wheel_for(n) for n in unresolved}))
        words += ("; " if words else "") + (
            f"no toolkit or runtime wheel here has {', '.join(unresolved)}: "
            f"pip install {wheels} into the target Python, then run again with --fix"
        )
    return FixPlan(tuple(copies), tuple(unresolved), words)


def _wheel_for(name: str) -> str:
    m = _MAJOR.match(name)
    major = (m.group(1)[:2] if len(m.group(1)) > 2 else m.group(1)) if m else "12"
    base = name.lower().split("64_")[0]
    package = {
        "cudart": "nvidia-cuda-runtime",
        "cublaslt": "nvidia-cublas",
        "cublas": "nvidia-cublas",
        "nvrtc": "nvidia-cuda-nvrtc",
        "nvjitlink": "nvidia-nvjitlink",
    }.get(base, f"nvidia-{base}")
    return f"{package}-cu{major}" if major == "12" else f"{package}=={major}.*"


def apply(plan: FixPlan, manifest_dir: Path) -> tuple[list[str], Path]:
    """Copy the planned DLLs (local paths) and write the manifest that undo reads; (lines said, manifest).
    A copy that fails (a read-only llama_cpp\\lib, a full disk, Ctrl-C) leaves no partial file behind, and
    the manifest still lists every file copied before it (audit N29)."""
    done: list[dict[str, str]] = []
    lines: list[str] = []
    try:
        for c in plan.copies:
            if os.path.exists(c.dest):
                lines.append(f"{c.dest} exists already: left as it is")
                continue
            try:
                _copy(c.source, c.dest)
            except OSError as exc:
                lines.append(f"could not copy {c.source} -> {c.dest}: {exc.strerror or exc}; nothing more was copied")
                break
            done.append({"path": c.dest, "source": c.source, "sha256": _sha(c.dest)})
            lines.append(f"copied {c.source} -> {c.dest}")
    finally:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        manifest = manifest_dir / f"dll-closure-{stamp}.json"
        if done:
            manifest_dir.mkdir(parents=True, exist_ok=True)
            atomic_write(manifest, dumps({"schema": MANIFEST_SCHEMA, "added": done}, indent=1).encode(), backup=False)
    return lines, manifest


def _copy(source: str, dest: str) -> None:
    """source to dest through a temporary file that never outlives the call, whatever ends it."""
    tmp = dest + ".envmgr-tmp"
    os.makedirs(os.path.dirname(dest), exist_ok=True)  # F24's components: include/ subfolders, dist-info
    try:
        shutil.copyfile(source, tmp)
        os.replace(tmp, dest)
    finally:
        if os.path.lexists(tmp):
            try:
                os.remove(tmp)
            except OSError:
                pass


def undo(manifest: Path) -> list[str]:
    """Remove the files a fix added, each only if it is still the file that was copied and is a file a
    fix adds (_fix_added: a CUDA DLL in a llama_cpp\\lib folder, or F24's components in a toolkit). A manifest
    is input: one from a bug report must never remove ~/.ssh/authorized_keys because it names it with its
    public sha256 (N18)."""
    remedy = "give the manifest the --fix run named"
    data = read_json_file(manifest, "DLL-closure manifest", remedy)
    added = data.get("added") if isinstance(data, dict) and data.get("schema") == MANIFEST_SCHEMA else None
    if not isinstance(added, list):
        raise InputFileError(f"{manifest}: not an envmgr DLL-closure manifest", remedy)
    lines = []
    for item in added:
        path = str(item.get("path", "")) if isinstance(item, dict) else ""
        if not path or not os.path.lexists(path):
            lines.append(f"{path or '?'}: already gone")
        elif not _fix_added(path):
            lines.append(f"{path}: skipped (not a file a DLL fix adds)")
        elif _sha(path) != item.get("sha256"):
            lines.append(f"{path}: changed since the fix copied it: left as it is")
        else:
            lines.append(_remove(path))
    return lines


def _fix_added(path: str) -> bool:
    """A regular file (not a link), by an absolute path, where a fix puts files: a CUDA or RUNTIME DLL directly in
    llama_cpp/lib (the DLL closure), or one of F24's components (commands/install_components.py) inside a
    site-packages' nvidia/ folder or an nvidia_*.dist-info beside it, or inside a CUDA toolkit (a folder with
    bin/nvcc) under include/, lib*/, targets/ or dist-info/. Judged from the file system, never from the
    manifest's own words (a manifest is input, N18)."""
    if "\0" in path or not os.path.isabs(path) or os.path.islink(path) or not os.path.isfile(path):
        return False
    real = Path(os.path.realpath(path))
    folder = real.parent
    named = CUDA_LIBRARY.match(real.name) is not None or RUNTIME.match(real.name) is not None
    if (
        named
        and real.name.lower().endswith(".dll")
        and folder.name.lower() == "lib"
        and folder.parent.name.lower() == "llama_cpp"
    ):
        return True
    return _in_site_nvidia(real) or _in_toolkit(real)


def _in_site_nvidia(real: Path) -> bool:
    parts = [p.lower() for p in real.parts]
    for i in range(1, len(parts) - 1):
        if parts[i - 1] == "site-packages" and (parts[i] == "nvidia" or _NVIDIA_DIST.match(parts[i])):
            return True
    return False


def _in_toolkit(real: Path) -> bool:
    for depth, root in enumerate(real.parents):
        if depth > 8:
            return False
        if any(os.path.isfile(root / "bin" / n) for n in ("nvcc", "nvcc.exe")):
            top = real.relative_to(root).parts[0].lower()
            return top in ("include", "dist-info", "targets") or top.startswith("lib")
    return False


def _remove(path: str) -> str:
    try:
        os.remove(path)
    except OSError as exc:  # Windows: a DLL a running process has loaded; POSIX: a read-only folder
        return f"{path}: cannot be removed: {exc.strerror or exc}; the other files were handled"
    return f"removed {path}"


def _sha(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
