"""Which Python a package command acts on (install, verify): the user's, not envmgr's own.

envmgr is installed the way tools are (pipx, `uv tool install`): in a venv of its own. Its
sys.executable is then the one Python the user never runs, so it comes last. The order is uv's
(https://docs.astral.sh/uv/pip/environments/): --python, the active venv, the active conda
environment, a `.venv` in the working folder or a parent, then the first `python` (then `python3`)
on PATH. Everything is read through the Host (its environment and files), Windows layouts included:
a venv's Scripts\\python.exe, and conda's python.exe at the prefix root.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from envmgr.host.base import WINDOWS, Host, path_class, same_path

# why -> how the one line on stderr says it
WHY = {
    "--python": "--python",
    "project": "the project's python, from {where}",
    "VIRTUAL_ENV": "the active virtual environment (VIRTUAL_ENV)",
    "CONDA_PREFIX": "the active conda environment (CONDA_PREFIX)",
    ".venv": "the .venv of {where}",
    "PATH": "the first {name} on PATH",
    "envmgr": "envmgr's own Python: no venv, conda environment, .venv or python on PATH",
}


@dataclass(frozen=True)
class TargetPython:
    """The interpreter chosen, and why: `why` is one of WHY's keys; `detail` fills its words."""

    path: str
    why: str
    detail: str = ""
    passed: tuple[str, ...] = ()  # candidates passed over on the way, and why (-v prints them)

    def line(self) -> str:
        words = WHY[self.why].format(where=self.detail, name=self.detail)
        return f"envmgr: target Python {self.path} ({words})"

    def as_json(self) -> dict[str, str]:
        return {"path": self.path, "why": self.why}


def venv_python(platform: str, prefix: str) -> str:
    """A venv's interpreter: bin/python, or Scripts\\python.exe on Windows."""
    cls = path_class(platform)
    return str(cls(prefix, "Scripts", "python.exe") if platform == WINDOWS else cls(prefix, "bin", "python"))


def conda_python(platform: str, prefix: str) -> str:
    """A conda environment's interpreter: bin/python, or python.exe at the prefix root on Windows."""
    cls = path_class(platform)
    return str(cls(prefix, "python.exe") if platform == WINDOWS else cls(prefix, "bin", "python"))


def choose_python(host: Host, cwd: str, own: str, given: str | None = None) -> TargetPython:
    """The target: `given` (--python) first; `own` (envmgr's sys.executable) only when nothing else exists."""
    if given:
        return TargetPython(given, "--python")
    env, platform = host.env, host.platform
    passed: list[str] = []
    for var, python in (("VIRTUAL_ENV", venv_python), ("CONDA_PREFIX", conda_python)):
        prefix = env.get(var, "").strip()
        if prefix and host.exists(python(platform, prefix)):
            return TargetPython(python(platform, prefix), var, passed=tuple(passed))
        if prefix:
            passed.append(f"{var}={prefix}: no {python(platform, prefix)}")
    for folder in _upward(platform, cwd):
        exe = venv_python(platform, str(path_class(platform)(folder, ".venv")))
        if host.exists(exe):
            return TargetPython(exe, ".venv", folder, tuple(passed))
    passed.append(f"no .venv in {cwd} or its parents")
    found = first_on_path(host, own)
    if found is not None:
        return replace(found, passed=(*passed, *found.passed))
    passed.append("no python or python3 on PATH outside envmgr's own folder")
    return TargetPython(own, "envmgr", passed=tuple(passed))


def _upward(platform: str, cwd: str) -> Iterator[str]:
    here = path_class(platform)(cwd)
    yield str(here)
    yield from (str(p) for p in here.parents)


def first_on_path(host: Host, own: str) -> TargetPython | None:
    """The first python (then python3) on PATH that is not in envmgr's own bin folder (a pipx/uv tool
    venv whose bin is on PATH would otherwise answer with envmgr's own Python), nor Windows' App
    Execution Alias in ...\\Microsoft\\WindowsApps: without the Store's Python it opens the Store instead
    of running (https://docs.python.org/3/using/windows.html#the-microsoft-store-package), and the
    Host cannot tell the two apart without running it."""
    platform = host.platform
    cls = path_class(platform)
    sep = ";" if platform == WINDOWS else ":"
    own_dir = str(cls(own).parent)
    entries = [e.strip().strip('"') for e in host.env.get("PATH", "").split(sep)]
    passed: list[str] = []
    for name in ("python", "python3"):
        exe_name = name + ".exe" if platform == WINDOWS else name
        for entry in entries:
            if not entry or same_path(platform, entry, own_dir):
                continue
            candidate = str(cls(entry, exe_name))
            if not host.exists(candidate) or host.is_dir(candidate):
                continue
            if platform == WINDOWS and [p.lower() for p in cls(entry).parts[-2:]] == ["microsoft", "windowsapps"]:
                passed.append(f"{candidate}: the Microsoft Store's alias (give --python to use it)")
                continue
            return TargetPython(candidate, "PATH", name, tuple(passed))
    return None
