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
import json
import os
import re
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from envmgr.doctor.devicecode import CUDA_LIBRARY
from envmgr.doctor.dll import IMPLIED, resolve_pe
from envmgr.errors import InputFileError
from envmgr.files.atomic import atomic_write
from envmgr.host.base import Host, join

_DRIVER = re.compile(r"^nvcuda\.dll$", re.I)      # the driver's: never copied
_MAJOR = re.compile(r"^(?:cudart|cublas|cublasLt|cufft|curand|cusparse|cusolver|nvrtc|nvJitLink)64_(\d+)", re.I)
MANIFEST_SCHEMA = 1


@dataclass(frozen=True)
class Closure:
    lib_dir: str
    checked: tuple[str, ...] = ()      # the DLLs of lib_dir that import CUDA libraries
    missing: tuple[str, ...] = ()      # CUDA DLLs that do not resolve (the driver's nvcuda.dll apart)
    why: tuple[str, ...] = ()          # doctor --dll's explanation, one per missing DLL
    driver_missing: bool = False       # nvcuda.dll does not resolve: no driver, nothing to copy


@dataclass(frozen=True)
class Copy:
    name: str
    source: str
    dest: str


@dataclass(frozen=True)
class FixPlan:
    copies: tuple[Copy, ...]
    unresolved: tuple[str, ...]        # missing DLLs no found toolkit or runtime wheel has
    offer: str                         # the fix in words, for the report


def check(host: Host, python_exe: str | None, lib_dir: str) -> Closure:
    """Resolve the imports of every DLL in lib_dir the way llama_cpp loads them."""
    names = sorted(n for n in host.listdir(lib_dir) if n.lower().endswith(".dll")) if host.is_dir(lib_dir) else []
    checked: list[str] = []
    missing: dict[str, str] = {}
    why: dict[str, str] = {}
    driver = False
    for name in names[:256]:
        try:
            report = resolve_pe(host, join(host, lib_dir, name), python_exe=python_exe, loader="llama_cpp")
        except InputFileError:
            continue
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
    return Closure(lib_dir, tuple(checked), tuple(missing.values()), tuple(why.values()), driver)


def plan_fix(host: Host, closure: Closure, toolkit_bins: dict[str, tuple[str, ...]],
             site_dirs: tuple[str, ...]) -> FixPlan:
    """Where each missing DLL can come from: a toolkit of its CUDA major ({"12.4": (bin dirs)}), else
    NVIDIA's runtime wheels under a site-packages folder of the target Python."""
    copies, unresolved = [], []
    wheel_bins = [join(host, s, "nvidia", d, "bin") for s in site_dirs if host.is_dir(join(host, s, "nvidia"))
                  for d in sorted(host.listdir(join(host, s, "nvidia")))]
    implied = [t.format(m.group(1)) for n in closure.missing for rx, t in IMPLIED.items() if (m := rx.match(n))]
    for name in dict.fromkeys([*closure.missing, *implied]):
        m = _MAJOR.match(name)
        major = m.group(1)[:2] if m and len(m.group(1)) > 2 else (m.group(1) if m else "")
        bins = [b for v, dirs in sorted(toolkit_bins.items(), reverse=True) if v.split(".")[0] == major
                for b in dirs]
        source = next((join(host, b, name) for b in [*bins, *wheel_bins] if host.exists(join(host, b, name))), None)
        if source is None:
            if name in closure.missing:
                unresolved.append(name)
        else:
            copies.append(Copy(name, source, join(host, closure.lib_dir, name)))
    words = "; ".join(f"copy {c.source} into {closure.lib_dir}" for c in copies)
    if unresolved:
        wheels = ", ".join(sorted({_wheel_for(n) for n in unresolved}))
        words += ("; " if words else "") + (f"no toolkit or runtime wheel here has {', '.join(unresolved)}: "
                                            f"pip install {wheels} into the target Python, then run again with --fix")
    return FixPlan(tuple(copies), tuple(unresolved), words)


def _wheel_for(name: str) -> str:
    m = _MAJOR.match(name)
    major = (m.group(1)[:2] if len(m.group(1)) > 2 else m.group(1)) if m else "12"
    base = name.lower().split("64_")[0]
    package = {"cudart": "nvidia-cuda-runtime", "cublaslt": "nvidia-cublas", "cublas": "nvidia-cublas",
               "nvrtc": "nvidia-cuda-nvrtc", "nvjitlink": "nvidia-nvjitlink"}.get(base, f"nvidia-{base}")
    return f"{package}-cu{major}" if major == "12" else f"{package}=={major}.*"


def apply(plan: FixPlan, manifest_dir: Path) -> tuple[list[str], Path]:
    """Copy the planned DLLs (local paths) and write the manifest that undo reads; (lines said, manifest)."""
    done, lines = [], []
    try:
        for c in plan.copies:
            if os.path.exists(c.dest):
                lines.append(f"{c.dest} exists already: left as it is")
                continue
            os.makedirs(os.path.dirname(c.dest), exist_ok=True)    # F24's components: include/ subfolders, dist-info
            shutil.copyfile(c.source, c.dest + ".envmgr-tmp")
            os.replace(c.dest + ".envmgr-tmp", c.dest)
            done.append({"path": c.dest, "source": c.source, "sha256": _sha(c.dest)})
            lines.append(f"copied {c.source} -> {c.dest}")
    finally:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        manifest = manifest_dir / f"dll-closure-{stamp}.json"
        if done:
            manifest_dir.mkdir(parents=True, exist_ok=True)
            atomic_write(manifest, json.dumps({"schema": MANIFEST_SCHEMA, "added": done}, indent=1).encode(),
                         backup=False)
    return lines, manifest


def undo(manifest: Path) -> list[str]:
    """Remove the files a fix added, each only if it is still the file that was copied."""
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        added = data["added"] if data.get("schema") == MANIFEST_SCHEMA else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        added = None
    if not isinstance(added, list):
        raise InputFileError(f"{manifest}: not an envmgr DLL-closure manifest", "give the file the fix named")
    lines = []
    for item in added:
        path = str(item.get("path", "")) if isinstance(item, dict) else ""
        if not path or not os.path.isfile(path):
            lines.append(f"{path or '?'}: already gone")
        elif _sha(path) != item.get("sha256"):
            lines.append(f"{path}: changed since the fix copied it: left as it is")
        else:
            os.remove(path)
            lines.append(f"removed {path}")
    return lines


def _sha(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
