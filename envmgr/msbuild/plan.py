"""The plan: which CUDA integration files each VS instance lacks, has stale, or no longer needs.

`gather` is the only part that reads the machine (through the Host); `make_plan` is pure: facts in,
frozen dataclasses out. File contents are compared by SHA-256.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from envmgr.discover.limits import read_limits
from envmgr.discover.model import CudaToolkit, Inventory, VsInstance
from envmgr.errors import NoMatchError
from envmgr.host.base import Host, join
from envmgr.knowledge import HostLimits
from envmgr.msbuild.names import expected_names, extensions_dir, integration_version, same, support_problem
from envmgr.snapshot.select import match_cuda, match_vs

OK, MISSING, STALE, ORPHAN, UNKNOWN = "ok", "missing", "stale", "orphan", "unknown"
# Pair states: files to copy, nothing to do, or why nothing will be copied.
WORK, DONE, UNSUPPORTED, NO_SOURCE, INCOMPLETE, NO_FOLDER, LINKED = (
    "work",
    "ok",
    "unsupported",
    "no-extensions",
    "incomplete-extensions",
    "no-folder",
    "linked-folder",
)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class FileFact:
    name: str
    sha256: str | None  # None: unreadable (e.g. a recorded `{size=N}` entry)
    problem: str = ""


@dataclass(frozen=True)
class FolderFacts:
    path: str
    exists: bool
    linked: bool  # the folder, or one above it, is a link or junction
    files: tuple[FileFact, ...]  # integration-named files only

    def find(self, name: str) -> FileFact | None:
        return next((f for f in self.files if f.name.lower() == name.lower()), None)


@dataclass(frozen=True)
class Facts:
    platform: str
    instances: tuple[VsInstance, ...]
    toolkits: tuple[CudaToolkit, ...]
    folders: tuple[FolderFacts, ...]
    limits: tuple[tuple[str, HostLimits | None], ...]  # toolkit path -> host compiler limits

    def folder(self, path: str) -> FolderFacts:
        return next((f for f in self.folders if same(f.path, path)), FolderFacts(path, False, False, ()))

    def limits_of(self, kit: CudaToolkit) -> HostLimits | None:
        return next((lim for p, lim in self.limits if same(p, kit.path)), None)


@dataclass(frozen=True)
class FileAction:
    name: str
    status: str  # ok | missing | stale | orphan | unknown
    dest: str
    source: str | None
    source_sha256: str | None
    dest_sha256: str | None
    note: str = ""


@dataclass(frozen=True)
class PairPlan:
    vs_id: str
    vs_label: str
    vs_path: str
    vs_major: int | None
    folder: str
    cuda: str  # short version, 12.4
    cuda_path: str
    extensions: str
    status: str  # work | ok | unsupported | no-extensions | incomplete-extensions | no-folder ...
    reason: str
    files: tuple[FileAction, ...]

    @property
    def copies(self) -> tuple[FileAction, ...]:
        if self.status != WORK:
            return ()
        return tuple(f for f in self.files if f.status in (MISSING, STALE))


@dataclass(frozen=True)
class Plan:
    platform: str
    pairs: tuple[PairPlan, ...]
    orphans: tuple[FileAction, ...]
    notes: tuple[str, ...] = ()

    @property
    def copies(self) -> tuple[FileAction, ...]:
        return tuple(f for p in self.pairs for f in p.copies)


# ---- reading the machine -------------------------------------------------------------------------
def _is_linked(host: Host, path: str) -> bool:
    try:
        return not same(host.realpath(path), path)
    except OSError:
        return False


def read_folder(host: Host, path: str) -> FolderFacts:
    if not host.is_dir(path):
        return FolderFacts(path, False, False, ())
    files = []
    for name in sorted(host.listdir(path)):
        if integration_version(name) is None:
            continue
        try:
            files.append(FileFact(name, sha256(host.read_bytes(join(host, path, name)))))
        except OSError as exc:
            files.append(FileFact(name, None, f"cannot read: {exc.strerror or exc}"))
    return FolderFacts(path, True, _is_linked(host, path), tuple(files))


def gather(host: Host, inv: Inventory) -> Facts:
    instances = tuple(v for v in inv.visual_studio if v.build_customizations is not None)
    paths = [v.build_customizations.dir for v in instances if v.build_customizations is not None] + [
        extensions_dir(k.path) for k in inv.cuda
    ]
    folders = tuple(read_folder(host, p) for p in dict.fromkeys(paths))
    limits = read_limits(host, inv).host
    return Facts(
        inv.platform,
        tuple(inv.visual_studio),
        tuple(inv.cuda),
        folders,
        tuple((k.path, limits.get(k.path)) for k in inv.cuda),
    )


# ---- the pure part ----------------------------------------------------------------------------------
def select_instances(facts: Facts, queries: tuple[str, ...]) -> tuple[VsInstance, ...]:
    if not queries:
        found = tuple(v for v in facts.instances if v.toolsets)
        if not found:
            raise NoMatchError(
                "no Visual Studio instance with C++ tools found",
                "install the 'Desktop development with C++' workload (or Build Tools with it)",
                details=tuple(f"{v.label}  {v.path}  (no C++ tools)" for v in facts.instances)
                or ("(no Visual Studio found)",),
            )
        return found
    found = tuple(v for v in facts.instances if any(match_vs(v, q) for q in queries))
    if not found:
        raise NoMatchError(
            f"no Visual Studio instance matches --vs {' '.join(queries)}",
            "pick one below",
            details=tuple(f"{v.label}  [{v.instance_id}] {v.path}" for v in facts.instances)
            or ("(no Visual Studio found)",),
        )
    return found


def select_toolkits(facts: Facts, queries: tuple[str, ...]) -> tuple[CudaToolkit, ...]:
    found = tuple(k for k in facts.toolkits if not queries or any(match_cuda(k, q) for q in queries))
    if not found:
        what = f"matches --cuda {' '.join(queries)}" if queries else "found"
        raise NoMatchError(
            f"no CUDA toolkit {what}",
            "install the CUDA Toolkit, or pick one below with --cuda",
            details=tuple(f"CUDA {k.version}  {k.path}" for k in facts.toolkits) or ("(none found)",),
        )
    return found


def _compare(name: str, src: FileFact | None, dst: FileFact | None, src_dir: str, dst_dir: str) -> FileAction:
    source = join_win(src_dir, src.name) if src else None
    dest = join_win(dst_dir, dst.name if dst else name)
    if dst is None:
        status = MISSING
    elif src is None or src.sha256 is None or dst.sha256 is None:
        status = UNKNOWN
    else:
        status = OK if src.sha256 == dst.sha256 else STALE
    note = (dst.problem if dst else "") or (src.problem if src else "")
    return FileAction(name, status, dest, source, src.sha256 if src else None, dst.sha256 if dst else None, note)


def join_win(folder: str, name: str) -> str:
    return folder.rstrip("\\") + "\\" + name


def _why_not(facts: Facts, vs: VsInstance, kit: CudaToolkit, src: FolderFacts, dst: FolderFacts) -> tuple[str, str]:
    expected = expected_names(kit.short)
    if not dst.exists:
        return NO_FOLDER, f"{dst.path} does not exist (are the instance's C++ MSBuild targets installed?)"
    if dst.linked or src.linked:
        return LINKED, "a link or junction is in the way; fix-msbuild only writes to real folders"
    if problem := support_problem(vs, kit, facts.limits_of(kit)):
        return UNSUPPORTED, problem
    if not src.exists or not src.files:
        return NO_SOURCE, (
            f"CUDA {kit.short} has no {src.path} (pip/conda CUDA ships none): use the Ninja "
            "route, or reinstall CUDA with its Visual Studio Integration component"
        )
    lacking = [n for n in expected if src.find(n) is None]
    if lacking:
        return INCOMPLETE, (
            f"the toolkit's MSBuildExtensions lacks {', '.join(lacking)}: reinstall its Visual Studio Integration"
        )
    return "", ""


def _bc_dir(vs: VsInstance) -> str:
    """The instance's BuildCustomizations folder: the instances planned for are the ones that have one."""
    assert vs.build_customizations is not None
    return vs.build_customizations.dir


def plan_pair(facts: Facts, vs: VsInstance, kit: CudaToolkit) -> PairPlan:
    dst = facts.folder(_bc_dir(vs))
    src = facts.folder(extensions_dir(kit.path))
    names = list(expected_names(kit.short))
    names += [
        f.name
        for f in src.files
        if integration_version(f.name) == kit.short and f.name.lower() not in {n.lower() for n in names}
    ]
    files = tuple(
        _compare(n, src.find(n), dst.find(n), src.path, dst.path)
        for n in names
        if src.find(n) is not None or dst.find(n) is not None
    )
    status, reason = _why_not(facts, vs, kit, src, dst)
    if not status:
        status = WORK if any(f.status in (MISSING, STALE) for f in files) else DONE
        unknown = [f.name for f in files if f.status == UNKNOWN]
        reason = f"cannot compare {', '.join(unknown)} (content not readable)" if unknown else ""
    return PairPlan(
        vs.instance_id, vs.label, vs.path, vs.major, dst.path, kit.short, kit.path, src.path, status, reason, files
    )


def orphans_of(facts: Facts, vs: VsInstance) -> tuple[FileAction, ...]:
    installed = {k.short for k in facts.toolkits}
    folder = facts.folder(_bc_dir(vs))
    return tuple(
        FileAction(
            f.name,
            ORPHAN,
            join_win(folder.path, f.name),
            None,
            None,
            f.sha256,
            f"CUDA {integration_version(f.name)} is not installed",
        )
        for f in folder.files
        if integration_version(f.name) not in installed
    )


def make_plan(facts: Facts, vs_queries: tuple[str, ...] = (), cuda_queries: tuple[str, ...] = ()) -> Plan:
    instances = select_instances(facts, vs_queries)
    kits = select_toolkits(facts, cuda_queries)
    notes = [
        f"{v.label}: no BuildCustomizations folder known for this version"
        for v in instances
        if v.build_customizations is None
    ]
    usable = [v for v in instances if v.build_customizations is not None]
    pairs = tuple(plan_pair(facts, v, k) for v in usable for k in kits)
    orphans = tuple(o for v in usable for o in orphans_of(facts, v))
    return Plan(facts.platform, pairs, orphans, tuple(notes))
