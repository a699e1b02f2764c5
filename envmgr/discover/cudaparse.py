"""Pure parsers for what a CUDA toolkit says about itself: nvcc --version, version.json/.txt, dist-info."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from envmgr.files.nested import loads_json
from envmgr.version import Version

_RELEASE = re.compile(r"release (\d+)\.(\d+), V(\d+)\.(\d+)\.(\d+)")
_TOOLKIT_PART = re.compile(r"^nvidia-(cuda-[a-z-]+?|nvvm)(?:-cu\d+)?$")
_DIST_INFO = re.compile(r"^(nvidia[_-][\w.]*?)-(\d+(?:\.\d+)+)(?:\.post\d+)?\.dist-info$", re.I)


@dataclass(frozen=True)
class NvccVersion:
    short: str  # 12.4
    full: str  # 12.4.99


def parse_nvcc_version(text: str) -> NvccVersion | None:
    """`nvcc --version` (5 lines; CRLF or LF; a pasted prompt around it is fine)."""
    m = _RELEASE.search(text)
    if not m:
        return None
    return NvccVersion(f"{m.group(1)}.{m.group(2)}", ".".join(m.group(i) for i in (3, 4, 5)))


def parse_version_json(text: str) -> str | None:
    """The toolkit root's version.json (CUDA 11.1+): `{"cuda": {"version": "11.8.0"}, ...}`."""
    try:
        data = loads_json(text.lstrip("\ufeff"))
    except json.JSONDecodeError:
        return None
    cuda = data.get("cuda") if isinstance(data, dict) else None
    version = cuda.get("version") if isinstance(cuda, dict) else None
    return version if isinstance(version, str) and re.fullmatch(r"\d+\.\d+(\.\d+)*", version) else None


def parse_version_txt(text: str) -> str | None:
    """CUDA <= 11.0's version.txt: `CUDA Version 10.2.89`."""
    m = re.search(r"CUDA Version (\d+\.\d+(?:\.\d+)*)", text)
    return m.group(1) if m else None


def parse_dist_info_name(name: str) -> tuple[str, str] | None:
    """`nvidia_cuda_nvcc-13.0.88.dist-info` -> ("nvidia-cuda-nvcc", "13.0.88")."""
    m = _DIST_INFO.match(name)
    if not m:
        return None
    return m.group(1).replace("_", "-").lower(), m.group(2)


def short_version(full: str) -> str:
    """13.0.88 -> 13.0 (the X.Y every rule is keyed by); a version without a minor stays as it is."""

    v = Version.parse(full)
    return str(v.mm) if v is not None and len(v) >= 2 else full


def mixed_components(components: tuple[tuple[str, str], ...]) -> str | None:
    """A problem line when pip-installed CUDA components disagree on major.minor, else None."""
    groups: dict[str, list[str]] = {}
    for name, version in components:
        # Only the toolkit's own pieces follow its version: in a torch venv nvidia-cublas-cu12 12.1.3.1,
        # nvidia-cufft-cu12 11.0.2.54, nvidia-cudnn-cu12 9.1.0.70, nvidia-nvjitlink-cu12 12.9.86 sit
        # next to nvidia-cuda-runtime-cu12 12.1.105 and are not a mix.
        m = _TOOLKIT_PART.match(name)
        if not m or m.group(1) == "cuda-profiler-api":
            continue
        groups.setdefault(short_version(version), []).append(f"{name} {version}")
    if len(groups) <= 1:
        return None
    described = "; ".join(f"{v}: {', '.join(sorted(names))}" for v, names in sorted(groups.items()))
    return (
        f"pip CUDA components of different versions ({described}): install matching versions, "
        "e.g. pip install 'nvidia-cuda-nvcc==X.Y.*' 'nvidia-nvvm==X.Y.*' 'nvidia-cuda-crt==X.Y.*'"
    )
