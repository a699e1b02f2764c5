"""CUDA toolkit discovery: candidates from every source -> merge by real path -> probe each one."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import PurePath

from envmgr.discover.cudaparse import (
    mixed_components,
    parse_dist_info_name,
    parse_nvcc_version,
    parse_version_json,
    parse_version_txt,
    short_version,
)
from envmgr.discover.model import CudaToolkit
from envmgr.host.base import WINDOWS, Host, host_path, join, safe_listdir, safe_read_text
from envmgr.knowledge import INTEGRATION_SUBDIR, integration_files
from envmgr.version import Version
from envmgr.winenv import expand

CUDA_REG = "HKLM\\SOFTWARE\\NVIDIA Corporation\\GPU Computing Toolkit\\CUDA"
MACHINE_ENV = "HKLM\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment"
USER_ENV = "HKCU\\Environment"
NVCC_TIMEOUT = 20.0
_ENV_NAME = re.compile(r"^CUDA_PATH(_V\d+_\d+)?$", re.I)
_VERSION_DIR = re.compile(r"^(?:v|cuda-)(\d+\.\d+)$", re.I)


@dataclass(frozen=True)
class Candidate:
    path: str
    source: str
    problem: str = ""


def _nvcc_name(host: Host) -> str:
    return "nvcc.exe" if host.platform == WINDOWS else "nvcc"


def _strip(host: Host, path: str) -> str:
    sep = "\\" if host.platform == WINDOWS else "/"
    return path.rstrip(sep) if len(path.rstrip(sep)) > 3 else path


def _from_nvcc(host: Host, nvcc: str, source: str) -> Candidate:
    """nvcc on PATH: follow symlinks and small wrapper scripts (`exec /usr/local/cuda-13.0/bin/nvcc "$@"`)."""
    real = host.realpath(nvcc)
    if host.platform != WINDOWS:
        try:
            small = host.stat(real).size < 4096
        except OSError:
            small = False
        text, _ = safe_read_text(host, real) if small else (None, None)
        if text and text.startswith("#!"):
            for target in re.findall(r"(/[^\s\"']+/nvcc)\b", text):
                if host.exists(target):
                    real = host.realpath(target)
                    source = f"{source} (wrapper {nvcc})"
                    break
    bin_dir = str(host_path_parent(host, real))
    return Candidate(str(host_path_parent(host, bin_dir)), source)


def host_path_parent(host: Host, path: str) -> PurePath:
    return host_path(host, path).parent


def _registry_candidates(host: Host) -> list[Candidate]:
    out = []
    for sub in host.reg_subkeys(CUDA_REG) or []:
        values = host.reg_values(f"{CUDA_REG}\\{sub}") or {}
        value = values.get("InstallDir")
        if value is None:
            continue
        if value.type not in ("REG_SZ", "REG_EXPAND_SZ") or not isinstance(value.data, str):
            pf = host.env.get("ProgramFiles") or "C:\\Program Files"
            out.append(
                Candidate(
                    join(host, pf, "NVIDIA GPU Computing Toolkit", "CUDA", sub),
                    f"registry {sub}",
                    f"registry {CUDA_REG}\\{sub} InstallDir is {value.type}, expected REG_SZ",
                )
            )
            continue
        out.append(Candidate(_expand(host, value.data), f"registry {sub}"))
    return out


def _expand(host: Host, text: str) -> str:
    return expand(text, host.env)


def _env_candidates(host: Host) -> list[Candidate]:
    out = [Candidate(v, k.upper()) for k, v in host.env.items() if _ENV_NAME.match(k) and v]
    if host.platform == WINDOWS:
        # A shell started before the CUDA install lacks these; the registry has them
        # (docs/knowledge.md#cuda-toolkits-on-windows).
        for key, label in ((MACHINE_ENV, "machine env"), (USER_ENV, "user env")):
            for name, value in (host.reg_values(key) or {}).items():
                if _ENV_NAME.match(name) and isinstance(value.data, str) and value.data:
                    out.append(Candidate(_expand(host, value.data), f"{label} {name.upper()}"))
    else:
        for name in ("CUDA_HOME", "CUDA_ROOT", "CUDAToolkit_ROOT"):
            if host.env.get(name):
                out.append(Candidate(host.env[name], name))
    return out


def _folder_candidates(host: Host) -> list[Candidate]:
    if host.platform == WINDOWS:
        pf = host.env.get("ProgramFiles") or "C:\\Program Files"
        root = join(host, pf, "NVIDIA GPU Computing Toolkit", "CUDA")
        names, _ = safe_listdir(host, root)
        return [Candidate(join(host, root, n), "default folder") for n in names if _VERSION_DIR.match(n)]
    out = []
    names, _ = safe_listdir(host, "/usr/local")
    out += [Candidate(f"/usr/local/{n}", "/usr/local") for n in names if _VERSION_DIR.match(n)]
    for fixed in ("/usr/local/cuda", "/opt/cuda"):
        if host.is_dir(fixed):
            out.append(Candidate(fixed, fixed))
    return out


def _python_candidates(host: Host, pythons: tuple[str | None, ...]) -> list[Candidate]:
    """pip wheels: nvidia/cu13 (CUDA 13 wheels) and nvidia/cuda_nvcc (12.x wheels) in site-packages."""
    out = []
    for python in pythons:
        interp = host.interpreter(python)
        if interp is None:
            continue
        label = f"pip ({interp.executable})"
        for site in interp.site_packages:
            nvidia = join(host, site, "nvidia")
            names, _ = safe_listdir(host, nvidia)
            for name in names:
                if re.fullmatch(r"cu\d+|cuda_nvcc", name):
                    root = join(host, nvidia, name)
                    if host.exists(join(host, root, "bin", _nvcc_name(host))):
                        out.append(Candidate(root, label))
    return out


def _conda_candidates(host: Host) -> list[Candidate]:
    prefix = host.env.get("CONDA_PREFIX")
    if not prefix:
        return []
    root = join(host, prefix, "Library") if host.platform == WINDOWS else prefix
    if host.exists(join(host, root, "bin", _nvcc_name(host))):
        return [Candidate(root, "conda (CONDA_PREFIX)")]
    return []


def candidates(host: Host, pythons: tuple[str | None, ...]) -> list[Candidate]:
    found = _registry_candidates(host) + _env_candidates(host) + _folder_candidates(host)
    nvcc = host.which("nvcc")
    if nvcc:
        found.append(_from_nvcc(host, nvcc, "nvcc on PATH"))
    return found + _conda_candidates(host) + _python_candidates(host, pythons)


def merge(host: Host, found: list[Candidate]) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """Group candidates by real path: (path, sources, problems), in first-seen order."""
    groups: dict[str, tuple[str, list[str], list[str]]] = {}
    for c in found:
        path = _strip(host, c.path)
        real = host.realpath(path) if host.exists(path) else path
        key = real.lower() if host.platform == WINDOWS else real
        entry = groups.setdefault(key, (_strip(host, real), [], []))
        if c.source not in entry[1]:
            entry[1].append(c.source)
        if c.problem and c.problem not in entry[2]:
            entry[2].append(c.problem)
    return [(p, tuple(s), tuple(pr)) for p, s, pr in groups.values()]


def _components(host: Host, root: str) -> tuple[tuple[str, str], ...]:
    """dist-info of pip-built toolkits: in `<root>/dist-info` (this kind of assembled toolkit) or next to nvidia/."""
    where = [join(host, root, "dist-info")]
    parent = host_path_parent(host, root)
    if parent.name == "nvidia":
        where.append(str(parent.parent))
    out = []
    for folder in where:
        names, _ = safe_listdir(host, folder)
        out += [p for n in names if (p := parse_dist_info_name(n))]
    return tuple(sorted(set(out)))


def probe(host: Host, path: str, sources: tuple[str, ...], given: tuple[str, ...]) -> CudaToolkit:
    problems = list(given)
    nvcc_path = join(host, path, "bin", _nvcc_name(host))
    exists = host.is_dir(path)
    nvcc = nvcc_path if host.exists(nvcc_path) else None
    if not exists:
        problems.append(f"{path} does not exist (named by {', '.join(sources)})")
    elif nvcc is None:
        problems.append(f"no {join(host, 'bin', _nvcc_name(host))}: a runtime-only or broken install")
    components = _components(host, path) if exists else ()
    version, how = _version(host, path, nvcc, components, problems)
    mixed = mixed_components(components)
    if mixed:
        problems.append(mixed)
    bin_dirs, lib_dirs, ext = _layout(host, path)
    short = short_version(version) if version else "?"
    if host.platform == WINDOWS and exists and version:
        want = integration_files(short)
        if ext and len([e for e in ext if e.lower() != "readme.txt"]) < want:
            problems.append(f"MSBuildExtensions holds {len(ext)} file(s), CUDA {short} ships {want}")
    return CudaToolkit(
        version or "?", short, path, nvcc, sources, how, bin_dirs, lib_dirs, ext, components, tuple(problems)
    )


def _version(
    host: Host, path: str, nvcc: str | None, components: tuple[tuple[str, str], ...], problems: list[str]
) -> tuple[str | None, str]:
    text, _ = safe_read_text(host, join(host, path, "version.json"))
    if text and (v := parse_version_json(text)):
        return v, "version.json"
    text, _ = safe_read_text(host, join(host, path, "version.txt"))
    if text and (v := parse_version_txt(text)):
        return v, "version.txt"
    if nvcc:
        done = host.run([nvcc, "--version"], timeout=NVCC_TIMEOUT)
        parsed = parse_nvcc_version(done.stdout) if done.ok else None
        if parsed:
            return parsed.full, "nvcc --version"
        problems.append(
            f"nvcc --version failed: {done.describe_failure()}"
            if not done.ok
            else "nvcc --version printed no version line"
        )
    nvcc_dist = dict(components).get("nvidia-cuda-nvcc")
    if nvcc_dist:
        return nvcc_dist, "dist-info"
    name = host_path_parent(host, join(host, path, "x")).name
    m = _VERSION_DIR.match(name)
    if m:
        return m.group(1), "folder name"
    return None, "unknown"


def _layout(host: Host, path: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    if host.platform == WINDOWS:
        bins = [join(host, path, "bin")]
        if host.is_dir(join(host, path, "bin", "x64")):  # CUDA 13 moved the DLLs (docs/knowledge.md)
            bins.append(join(host, path, "bin", "x64"))
        libs = [join(host, path, "lib", "x64")]
        ext_dir = join(host, path, *INTEGRATION_SUBDIR)
        ext, _ = safe_listdir(host, ext_dir)
        return tuple(bins), tuple(lib for lib in libs if host.is_dir(lib)), tuple(ext)
    libs = [join(host, path, d) for d in ("lib64", "lib", "targets/x86_64-linux/lib")]
    libs = [lib for lib in libs if host.is_dir(lib)]
    return (join(host, path, "bin"),), tuple(dict.fromkeys(host.realpath(lib) for lib in libs)), ()


def discover_cuda(host: Host, pythons: tuple[str | None, ...] = (None,)) -> tuple[CudaToolkit, ...]:
    groups = merge(host, candidates(host, pythons))
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(groups)))) as pool:
        kits = list(pool.map(lambda g: probe(host, *g), groups))
    return tuple(sorted(kits, key=_sort_key, reverse=True))


def _sort_key(kit: CudaToolkit) -> tuple[Version, str]:
    return (Version.of(kit.version), kit.path)
