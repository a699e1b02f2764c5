"""`envmgr install ... --fix` for F24: the CUDA libraries a toolkit lacks, laid into it from NVIDIA's PyPI wheels.

Where they go depends on how the toolkit was installed (doctor/checks_components.py install_kind):
  - pip (site-packages/nvidia/cu13, nvidia/cuda_nvcc...): the wheel's files into that same site-packages,
    exactly where `pip install nvidia-cublas==X.Y.*` would put them (dist-info included, so pip sees them);
  - wheels (a toolkit folder assembled from nvidia-* wheels, their dist-info in <root>/dist-info): each
    wheel's include/ into <root>/include, its lib/ into the toolkit's library folder (with the unversioned
    libcublas.so FindCUDAToolkit looks for), its dist-info into <root>/dist-info, as the other wheels were;
  - NVIDIA's installer (Windows, runfile, apt) and conda: not here; their own installer is the fix (F24's
    text says which command), and --fix leaves the finding blocking.
The wheels are fetched by this machine's pip (`pip install --no-deps --target TMP`, so pip's own
configuration applies: an index, PIP_FIND_LINKS, a proxy); the copy is the DLL-closure fix's transaction
(wheels/closure.py): only files that do not exist are written, and a manifest lists each with its sha256,
so `envmgr install --undo-dll-fix MANIFEST` removes exactly what was added.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from envmgr.commands.install_fix import FixReport
from envmgr.discover.model import CudaToolkit
from envmgr.doctor.checks import FAIL, Facts, Finding
from envmgr.doctor.checks_components import NEEDS, component_wheels, install_kind, missing_components
from envmgr.errors import CheckFailed
from envmgr.host import dirs
from envmgr.host.base import Host
from envmgr.wheels import closure

_SONAME = re.compile(r"^(lib[\w+-]+\.so)\.\d+$")  # libcublas.so.13 -> libcublas.so


@dataclass(frozen=True)
class ComponentFix:
    """What --fix does about F24, decided before anything is written."""

    kit: CudaToolkit
    kind: str  # pip | wheels
    components: tuple[str, ...]  # cublas, cublasLt...
    requirements: tuple[str, ...]  # nvidia-cublas==13.0.*
    where: str  # in words: the folders the files go to

    def offer(self) -> str:
        return f"add --fix to lay {' '.join(self.requirements)} into {self.where} (undoable)"


def decide(facts: Facts, findings: tuple[Finding, ...], recipe: str, here: bool) -> ComponentFix | None:
    """The fix for a failing F24 when this machine's toolkit can take NVIDIA's wheels; None otherwise."""
    f24 = next((f for f in findings if f.id == "F24" and f.status == FAIL), None)
    kit = facts.cuda
    if f24 is None or kit is None or not here or recipe not in NEEDS:
        return None
    comps = tuple(c for c, _ in missing_components(facts.host, kit, NEEDS[recipe]))
    kind = install_kind(kit)
    if not comps or kind not in ("pip", "wheels"):
        return None
    if kind == "pip":
        where = _site_packages(kit.path)
        if where is None or not os.access(where, os.W_OK):
            return None
        return ComponentFix(kit, kind, comps, component_wheels(kit, list(comps)), f"{where} (beside {kit.path})")
    lib = kit.lib_dirs[0] if kit.lib_dirs else os.path.join(kit.path, "lib")
    if not all(os.access(d, os.W_OK) for d in (kit.path, lib) if os.path.isdir(d)):
        return None
    return ComponentFix(
        kit,
        kind,
        comps,
        component_wheels(kit, list(comps)),
        f"{kit.path} (include/, {os.path.relpath(lib, kit.path)}/, dist-info/)",
    )


def _site_packages(kit_path: str) -> str | None:
    """The site-packages holding a pip toolkit's nvidia/ folder."""
    parts = Path(kit_path).parts
    return str(Path(*parts[: parts.index("nvidia")])) if "nvidia" in parts else None


def apply(local: Host, fix: ComponentFix, pip_opts: list[str], report: FixReport) -> list[str]:
    """Fetch the wheels, copy their files in (closure's transaction), check again; the report's lines."""
    tmp = Path(tempfile.mkdtemp(prefix="envmgr-components-"))
    try:
        argv = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--disable-pip-version-check",
            "--target",
            str(tmp),
            *pip_opts,
            *fix.requirements,
        ]
        done = local.run(argv, timeout=1800)
        if not done.ok:
            raise CheckFailed(
                f"--fix could not fetch {' '.join(fix.requirements)}: pip "
                f"{done.describe_failure()}: {(done.stderr or done.stdout).strip()[-300:]}",
                "give pip an index or PIP_FIND_LINKS that has them, or install the components "
                "with the toolkit's own installer (envmgr doctor --only F24 says how)",
            )
        copies = tuple(_copies(fix, tmp))
        lines, manifest = closure.apply(closure.FixPlan(copies, (), fix.offer()), dirs.data_dir() / "component-fixes")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    still = missing_components(local, fix.kit, fix.components)
    undo = f"envmgr install --undo-dll-fix {manifest}" if manifest.is_file() else None
    text = (
        f"laid {' '.join(fix.requirements)} into {fix.where}: {sum(ln.startswith('copied') for ln in lines)} "
        f"file(s); "
        + (
            f"still missing {', '.join(c for c, _ in still)}"
            if still
            else f"CUDA {fix.kit.short} now has {', '.join(fix.components)}"
        )
        + (f"; undo with: {undo}" if undo else "")
    )
    return [
        report.add(
            "F24",
            "components-added",
            text,
            requirements=list(fix.requirements),
            manifest=str(manifest) if undo else None,
            undo=undo,
        )
    ]


def _copies(fix: ComponentFix, tmp: Path) -> list[closure.Copy]:
    """Each file of the fetched wheels and its place in the toolkit (see the module's text)."""
    if fix.kind == "pip":
        site = _site_packages(fix.kit.path)
        assert site is not None  # decide() found it
        return [
            closure.Copy(p.name, str(p), os.path.join(site, str(p.relative_to(tmp))))
            for p in sorted(tmp.rglob("*"))
            if p.is_file() and p.parts[len(tmp.parts)] != "bin"
        ]
    lib = fix.kit.lib_dirs[0] if fix.kit.lib_dirs else os.path.join(fix.kit.path, "lib")
    out = []
    for p in sorted(tmp.rglob("*")):
        rel = p.relative_to(tmp).parts
        if not p.is_file():
            continue
        if rel[0].endswith(".dist-info"):
            out.append(closure.Copy(p.name, str(p), os.path.join(fix.kit.path, "dist-info", *rel)))
        elif len(rel) > 3 and rel[0] == "nvidia" and rel[2] in ("include", "lib"):
            dest = (
                os.path.join(fix.kit.path, "include", *rel[3:]) if rel[2] == "include" else os.path.join(lib, *rel[3:])
            )
            out.append(closure.Copy(p.name, str(p), dest))
            m = _SONAME.match(p.name) if rel[2] == "lib" else None
            if m and not (p.parent / m.group(1)).exists():
                out.append(closure.Copy(m.group(1), str(p), os.path.join(os.path.dirname(dest), m.group(1))))
    return out
