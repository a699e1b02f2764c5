"""Compiler variables that win over the environment envmgr selects: a stray CC or CXX (a MinGW gcc, an
old clang) is what setuptools, CMake and torch.utils.cpp_extension read before they search PATH, so the
compiler a snapshot puts first on PATH is never asked. Pure: `hook status` and `doctor` report them."""

from __future__ import annotations

from collections.abc import Mapping

from envmgr.snapshot.envdelta import EnvDelta
from envmgr.winenv import env_get

# variable -> who reads it before PATH
READERS = {
    "CC": "setuptools, CMake and cpp_extension take it as the C compiler",
    "CXX": "setuptools, CMake and torch.utils.cpp_extension take it as the C++ compiler",
    "CUDAHOSTCXX": "CMake passes it to nvcc as the host compiler",
    "NVCC_CCBIN": "nvcc takes it as the host compiler",
}


def compiler_overrides(
    env: Mapping[str, str], platform: str, delta: EnvDelta | None = None
) -> tuple[tuple[str, str, str], ...]:
    """(name, value, why) for each of READERS set (non-empty) in `env` that `delta` does not set itself."""
    fold = platform == "windows"
    own = {(op.name.upper() if fold else op.name) for op in (delta.ops if delta else ())}
    found = []
    for name, why in READERS.items():
        value = env_get(env, name, fold) or ""
        if value.strip() and (name.upper() if fold else name) not in own:
            found.append((name, value, why))
    return tuple(found)


def override_lines(found: tuple[tuple[str, str, str], ...]) -> list[str]:
    return [f"{name}={value} overrides the compiler on the selected PATH ({why})" for name, value, why in found]
