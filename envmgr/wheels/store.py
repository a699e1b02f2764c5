"""The wheel cache: a CUDA wheel built once through a recipe, reused by every later install.

pip's own wheel cache keys a built wheel by the sdist alone: it ignores CMAKE_ARGS, the CUDA
toolkit and the GPU architectures, and happily hands back a CPU-only wheel for a CUDA request
(facts/failures.md F18/F19). Here the key holds everything that decides what the build produced:
package, version, where the source came from, CUDA version, CUDA architectures, generator, the
CMake arguments, Python tag and platform, and nothing that changes from run to run (no times, no
temporary paths). An entry is one folder, `<cache>/wheels/<digest>/`, with the wheel and
`entry.json` (sha256, the key, build time, CMAKE_ARGS). A wheel whose hash or zip is broken is
discarded, never installed.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from envmgr.binaries.devicecode import BINARY_NAME, LOOKED_FOR, BinaryCode, DeviceCode, from_json, read_binary
from envmgr.cache.store import cache_dir
from envmgr.errors import CheckFailed, InputFileError
from envmgr.files import names
from envmgr.files.atomic import atomic_write
from envmgr.files.jsondoc import dumps, read_json_file
from envmgr.files.wheelzip import MAX_MEMBER, BadWheel, Wheel, open_wheel, sha256_regular
from envmgr.host.base import Host

ENTRY_SCHEMA = 1
SIDECAR = "entry.json"
MAX_BUILD_SECONDS = 365 * 24 * 3600

MAX_BINARIES = 4096
PLACE_TRIES = 20  # renames of a new entry into place while other installs race for the same key


@dataclass(frozen=True)
class WheelKey:
    package: str  # PEP 503 normalized
    version: str
    source: str  # "index" for a requirement, "file:<sha256[:16]>" for a local archive
    cuda: str  # "13.0"; "" for a CPU build
    archs: str  # "90" / "86;89": CMAKE_CUDA_ARCHITECTURES or TORCH_CUDA_ARCH_LIST
    generator: str  # "Ninja", "Visual Studio 17 2022", or "default"
    cmake_args: str  # the CMAKE_ARGS the build ran with
    python_tag: str  # "cp312"
    platform: str  # "linux_x86_64", "win_amd64"

    def digest(self) -> str:
        blob = dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:20]


@dataclass(frozen=True)
class Entry:
    key: WheelKey
    folder: Path
    wheel: str  # file name inside folder
    sha256: str
    build_seconds: float
    created: str
    device_code: DeviceCode | None = None  # None: an entry written before device code was recorded

    @property
    def path(self) -> Path:
        return self.folder / self.wheel


@dataclass(frozen=True)
class SpecInfo:
    name: str | None  # normalized
    version: str | None  # None: not pinned, known only after the build
    source: str | None  # None: not cacheable (a source folder can change under the same version)


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wheels_dir() -> Path:
    return cache_dir() / "wheels"


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a regular file (files/wheelzip.py opens it: a FIFO or device is an OSError, never a hang)."""
    return sha256_regular(path)


_SDIST = re.compile(r"^(?P<name>.+?)-(?P<version>\d[^-]*?)\.(tar\.gz|tgz|tar\.bz2|tar\.xz|zip)$")


def parse_spec(spec: str, local: Host) -> SpecInfo:
    """What a pip argument says before anything is built: a requirement, or a local sdist/folder on `local`
    (the host pip runs on: this machine)."""
    if local.is_dir(spec):
        return SpecInfo(None, None, None)
    if local.exists(spec):
        m = _SDIST.match(Path(spec).name)
        if not m:
            return SpecInfo(None, None, None)
        digest = hashlib.sha256(local.read_bytes(spec)).hexdigest()
        return SpecInfo(normalize(m["name"]), m["version"], f"file:{digest[:16]}")

    try:
        req = Requirement(spec)
    except InvalidRequirement:
        return SpecInfo(None, None, None)
    if req.url:
        return SpecInfo(normalize(req.name), None, None)
    pins = [s.version for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
    return SpecInfo(normalize(req.name), pins[0] if len(pins) == 1 else None, "index")


def parse_wheel_name(filename: str) -> tuple[str, str, str]:
    """(normalized name, version, tags) from `name-version(-build)?-py-abi-plat.whl`."""
    parts = Path(filename).name[: -len(".whl")].split("-")
    if len(parts) not in (5, 6) or not filename.endswith(".whl"):
        raise ValueError(f"{filename}: not a wheel file name")
    return normalize(parts[0]), parts[1], "-".join(parts[-3:])


def read_device_code(wheel: Wheel) -> DeviceCode:
    """The device code and CUDA imports of every native library (.so/.pyd/.dll) in a wheel (BadWheel when
    a member is damaged or the wheel inflates past its budget: files/wheelzip.py)."""
    binaries: list[BinaryCode] = []
    skipped: list[str] = []
    for member in wheel.members:
        if member.is_dir or not BINARY_NAME.search(member.name):
            continue
        if member.size > MAX_MEMBER or len(binaries) >= MAX_BINARIES:
            skipped.append(f"{member.name} ({member.size // (1 << 20)} MiB: not read)")
            continue
        binaries.append(read_binary(wheel.read(member), member.name))
    return DeviceCode(tuple(binaries), tuple(skipped))


def inspect_wheel(path: Path) -> tuple[DeviceCode | None, list[str]]:
    """(its device code, []) or (None, [why it cannot be read])."""
    try:
        with open_wheel(path) as wheel:
            return read_device_code(wheel), []
    except BadWheel as exc:
        return None, [exc.reason]


def _zip_problems(path: Path) -> list[str]:
    try:
        with open_wheel(path):
            return []
    except BadWheel as exc:
        return [exc.reason]


def cuda_problems(code: DeviceCode) -> list[str]:
    """Why a wheel cannot be a CUDA build (empty: it has device code or imports a CUDA library)."""
    if code.is_cuda:
        return []
    if not code.binaries:
        return ["a CPU-only wheel: it holds no native library (.so/.pyd/.dll), so nothing in it runs on the GPU"]
    names = ", ".join(b.name.rsplit("/", 1)[-1] for b in code.binaries[:4])
    more = f" and {len(code.binaries) - 4} more" if len(code.binaries) > 4 else ""
    return [f"a CPU-only wheel: none of its native libraries ({names}{more}) holds {LOOKED_FOR}"]


def check_wheel(path: Path, package: str, cuda: bool) -> list[str]:
    """Problems that forbid offering this wheel (empty: it is good). `package` is kept for callers: the
    judgement is by what the wheel's binaries hold, never by the package's file names."""
    code, problems = inspect_wheel(path)
    if problems or not cuda or code is None:
        return problems
    return cuda_problems(code)


def key_from(data: object) -> WheelKey:
    """A WheelKey from parsed JSON: every field present and a string, the package a PEP 503 name
    (it becomes a folder name); TypeError or ValueError (names.BadName) otherwise."""
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise TypeError("a key is a table of strings")
    key = WheelKey(**data)
    names.project_name(key.package)
    return key


def _read_entry(folder: Path) -> Entry | None:
    """The entry in folder; None when its entry.json is unreadable, or names a key or a wheel that
    is not a name (a tampered or merged cache: `../x` must never become a path)."""
    try:
        data = read_json_file(folder / SIDECAR, "key file", "")  # a FIFO or /dev/zero: refused at once
        if not isinstance(data, dict) or data.get("schema") != ENTRY_SCHEMA:
            return None
        return Entry(
            key_from(data["key"]),
            folder,
            names.wheel_filename(data["wheel"]),
            str(data["sha256"]),
            seconds(data.get("build_seconds", 0.0)),
            str(data.get("created", "")),
            from_json(data.get("device_code")),
        )
    except (InputFileError, OSError, ValueError, KeyError, TypeError, RecursionError, MemoryError):
        return None


def wheel_problem(entry: Entry) -> str:
    """Why the entry's wheel is not the one recorded ("" when it is): missing, unreadable (a permission, a
    FIFO or a device in its place: audit N1, N10) or another file."""
    if not entry.path.exists():
        return "is missing"
    try:
        sha = file_sha256(entry.path)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    return "" if sha == entry.sha256 else "does not match its recorded sha256"


def lookup(key: WheelKey, cuda: bool, warn: Callable[[str], object]) -> Entry | None:
    """The cached entry for `key` when its wheel is intact; a broken one is discarded with a warning."""
    folder = wheels_dir() / key.digest()
    if not folder.is_dir():
        return None
    entry = _read_entry(folder)
    problems: list[str] = []
    if entry is None or entry.key != key:
        problems.append("its entry.json is missing, unreadable or for another key")
    elif why := wheel_problem(entry):
        problems.append(f"{entry.wheel} {why}")
    elif cuda and entry.device_code is not None:  # recorded when stored; the sha256 says it is the same wheel
        problems += _zip_problems(entry.path) or cuda_problems(entry.device_code)
    else:
        problems += check_wheel(entry.path, key.package, cuda)
    if problems:
        warn(f"discarding the cached wheel in {folder}: {'; '.join(problems)}; it will be rebuilt")
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return entry


def seconds(value: object) -> float:
    """A key file's build_seconds as a number fit to print: a finite, non-negative number below a year,
    else 0 (unknown). `1e999` is read as Infinity and `-1e308` prints as 309 digits (audit N11)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    number = float(value)
    return round(number, 1) if math.isfinite(number) and 0 <= number < MAX_BUILD_SECONDS else 0.0


def store(key: WheelKey, wheel: Path, build_seconds: float, cuda: bool, created: str) -> Entry:
    """Move a freshly built wheel into the cache; a CPU-only wheel for a CUDA request is refused."""
    build_seconds = seconds(build_seconds)
    code, problems = inspect_wheel(wheel)
    if code is not None and cuda:
        problems = cuda_problems(code)
    if problems:
        raise CheckFailed(
            f"{wheel.name} was not stored and will not be installed: {'; '.join(problems)}",
            "the build did not enable CUDA: check CMAKE_ARGS in `envmgr export --recipe ...` and "
            "the build log (`-v`) for 'CUDA not found' or old flags (envmgr doctor)",
        )
    folder = wheels_dir() / key.digest()
    staging = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.mkdir(parents=True)
        shutil.copyfile(wheel, staging / wheel.name)
        sha = file_sha256(staging / wheel.name)
        data = {
            "schema": ENTRY_SCHEMA,
            "key": asdict(key),
            "wheel": wheel.name,
            "sha256": sha,
            "build_seconds": build_seconds,
            "created": created,
            "device_code": code.to_json() if code is not None else None,
        }
        atomic_write(staging / SIDECAR, dumps(data, indent=2, sort_keys=True).encode("utf-8"), backup=False)
        won = _place(staging, folder, key, sha)
    except BaseException:  # Ctrl+C while copying included: no half-written staging folder stays
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return won or Entry(key, folder, wheel.name, sha, build_seconds, created, code)


def _same(folder: Path, key: WheelKey, sha: str | None) -> Entry | None:
    """The intact entry in folder for key (and with this wheel, unless sha is None)."""
    there = _read_entry(folder)
    if there is None or there.key != key or (sha is not None and there.sha256 != sha):
        return None
    return None if wheel_problem(there) else there


def _place(staging: Path, folder: Path, key: WheelKey, sha: str) -> Entry | None:
    """Rename staging into place; the entry another install of the same key placed first when it holds the
    same wheel (audit N17: two installs sharing a cache, "Directory not empty"; on Windows "Access denied").
    Only a folder seen broken (or holding another build) is removed, and it is renamed aside first, so an
    install never deletes the entry another one has just placed. None: ours is in place."""
    for attempt in range(PLACE_TRIES):
        if os.path.lexists(folder):
            there = _same(folder, key, sha if attempt == 0 else None)  # after a lost race: any intact build
            if there is not None:
                shutil.rmtree(staging, ignore_errors=True)
                return there
            discard(folder, attempt)
        try:
            os.replace(staging, folder)
            return None
        except OSError:
            if attempt == PLACE_TRIES - 1:
                raise
            time.sleep(0.02 * (attempt + 1))
    return None


def discard(folder: Path, attempt: int = 0) -> None:
    """Remove a cache folder: renamed aside (a name `clear` knows as a leftover), then deleted."""
    aside = folder.with_name(f".{folder.name}.{os.getpid()}{attempt:03d}.tmp")
    try:
        os.replace(folder, aside)
    except OSError:
        aside = folder
    shutil.rmtree(aside, ignore_errors=True)


def entries() -> list[Entry | Path]:
    """Every entry; a folder whose entry.json is unreadable comes back as its Path. Only folders
    named by a key digest are entries: anything else under <cache>/wheels is not envmgr's."""
    root = wheels_dir()
    out: list[Entry | Path] = []
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        if names.is_digest(folder.name) and folder.is_dir() and not folder.is_symlink():
            out.append(_read_entry(folder) or folder)
    return out


# envmgr's own leftovers: a build's or a download's temporary folder, a staging folder of store()
_LEFTOVER = re.compile(r"^\.(build-|download-|[0-9a-f]{20}\.\d+\.tmp$)")


def clear() -> int:
    """Remove envmgr's entries (a digest-named folder holding entry.json) and its own leftovers;
    nothing else: <cache>/wheels may sit in a folder others use too (a CI cache root)."""
    root = wheels_dir()
    count = 0
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        if not folder.is_dir() or folder.is_symlink():
            continue
        if names.is_digest(folder.name) and (folder / SIDECAR).is_file():
            shutil.rmtree(folder, ignore_errors=True)
            count += 1
        elif _LEFTOVER.match(folder.name):
            shutil.rmtree(folder, ignore_errors=True)
    return count


def newest_for(package: str) -> Entry | None:
    found = [e for e in entries() if isinstance(e, Entry) and e.key.package == package]
    return max(found, key=lambda e: e.created) if found else None


_ARCHS = re.compile(r"-DCMAKE_CUDA_ARCHITECTURES=(\S+)")


def build_facts(env: Mapping[str, str]) -> tuple[str, str, str]:
    """(archs, generator, cmake_args) as the build environment states them."""
    cmake_args = env.get("CMAKE_ARGS", "")
    m = _ARCHS.search(cmake_args)
    archs = m.group(1).strip("'\"") if m else env.get("TORCH_CUDA_ARCH_LIST", "")
    return archs, env.get("CMAKE_GENERATOR") or "default", cmake_args
