"""`envmgr verify`: run the child in the target Python, then judge what it reported.

The only side effects are here: the tiny model written to a temporary folder, one child process
through the Host, nvidia-smi (through discovery), and, when the library did not load, doctor's DLL/.so
resolver on the folder it loads from. Everything else is analyze.py (pure).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from envmgr.binaries.devicecode import BINARY_NAME, DeviceCode
from envmgr.binaries.dll import resolve_pe
from envmgr.binaries.dllsyms import entry_evidence
from envmgr.binaries.elf import resolve_elf
from envmgr.binaries.reuse import Reused
from envmgr.discover.gpu import discover_gpus, gpu_fits
from envmgr.errors import EnvmgrError, UsageError
from envmgr.files.nested import loads_json
from envmgr.host.base import LINUX, WINDOWS, Completed, Host, join
from envmgr.verify.analyze import FAIL, Inputs, Step, analyze, first_failure, passed
from envmgr.verify.anyrun import read_libraries
from envmgr.verify.cpuvariant import carried, cpu_step, loaded_variant
from envmgr.verify.gguf import TinyLlama, write_tiny_llama
from envmgr.verify.plain import PLAIN, plain_host
from envmgr.verify.report import ChildRun, death, parse_run
from envmgr.verify.runtimes import (
    after_step,
    alone_step,
    framed,
    package_roots,
    reuse_found,
    reuse_step,
    runtimes_step,
)
from envmgr.wheels import cpucode

CHILD = Path(__file__).with_name("child.py")
PACKAGES = {
    "llama-cpp-python": "llama-cpp-python",
    "llama_cpp_python": "llama-cpp-python",
    "llama_cpp": "llama-cpp-python",
    "llama-cpp": "llama-cpp-python",
}
TIMEOUT = 300.0
_DIST_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]{0,198}[A-Za-z0-9])?$")
N_TOKENS = 8


@dataclass(frozen=True)
class Verdict:
    package: str
    python: str
    steps: tuple[Step, ...]
    run: ChildRun
    model_bytes: int
    seconds: float
    environment: str = PLAIN  # verify/plain.py: "plain" (the user's own python) or "inherited"
    environment_words: str = ""
    reused: tuple[Reused, ...] = ()  # sonames bound to an --after module's copy (binaries/reuse.py)

    @property
    def ok(self) -> bool:
        return passed(self.steps)

    @property
    def failure(self) -> Step | None:
        return first_failure(self.steps)

    @property
    def proof(self) -> str:
        return "ran" if self.ok else ""  # the tiny model's layers offloaded: work ran on the GPU

    @property
    def proof_text(self) -> str:
        return ""  # said as "the GPU did the work"


def canonical_package(name: str | None) -> str:
    """llama-cpp-python (its own verifier, with the tiny model) for its aliases; any other distribution name
    as given (verify/anyrun.py)."""
    if name is None:
        return "llama-cpp-python"
    found = PACKAGES.get(name.strip().lower())
    if found is not None:
        return found
    if not _DIST_NAME.match(name):
        raise UsageError(
            f"{name!r} is not a distribution name",
            "envmgr verify PACKAGE, e.g. envmgr verify stable-diffusion-cpp-python (the name pip installed it under)",
        )
    return name


def lib_device_code(host: Host, run: ChildRun) -> DeviceCode:
    """The device code of the native libraries in llama_cpp's lib folder (the ones that loaded)."""
    lib_dir = run.get("package").get("lib_dir")
    names = [n for n in run.get("package").get("lib_files") or [] if BINARY_NAME.search(n)]
    return read_libraries(host, [join(host, lib_dir, n) for n in names]) if lib_dir else read_libraries(host, [])


def install_command(python: str | None) -> str:
    target = f" --python {_quote(python)}" if python else ""
    return f"envmgr install llama-cpp-python{target}"


def _quote(text: str) -> str:
    return f'"{text}"' if any(c in text for c in " ;&()'") else text


def verify(
    host: Host,
    python: str | None,
    package: str = "llama-cpp-python",
    *,
    n_tokens: int = N_TOKENS,
    timeout: float = TIMEOUT,
    extra_env: dict[str, str] | None = None,
    inherit_env: bool = False,
    after: tuple[str, ...] = (),
) -> Verdict:
    """Run the verifier's child in a plain new process of `python` (None: envmgr's own interpreter;
    verify/plain.py), with extra_env added (the install flow's LLAMA_CPP_LIB_PATH), and judge it. `after`:
    the app's modules imported first in that process (verify --after; verify/runtimes.py)."""

    exe = python or sys.executable
    host, mode, words = plain_host(host, inherit_env)
    t0 = time.perf_counter()
    done, size = _run_child(host, exe, n_tokens, after, timeout, {**host.env, **extra_env} if extra_env else None)
    run = parse_run(done.stdout, done.stderr, done.returncode, done.timed_out)
    first = (
        after_step(run.records("after"), after, exe, death(run.returncode, run.timed_out))
        if run.get("package").get("found")
        else None
    )
    if first is not None and first.status == FAIL:
        return Verdict(package, exe, (first,), run, size, time.perf_counter() - t0, mode, words)
    steps = _judge(host, run, exe, python, n_tokens)
    reused = reuse_found(host, run, package_roots(run), after, "llama_cpp")
    steps = framed(
        steps,
        first,
        runtimes_step(run.get("runtimes"), "llama_cpp", run.log, package_roots(run)),
        reuse_step(reused, "llama_cpp"),
    )
    if after and any(s.status == FAIL for s in steps):
        steps = _against_alone(host, (exe, python), n_tokens, timeout, extra_env, after, steps, reused)
    return Verdict(package, exe, steps, run, size, time.perf_counter() - t0, mode, words, reused)


def _against_alone(
    host: Host,
    target: tuple[str, str | None],
    n_tokens: int,
    timeout: float,
    extra_env: dict[str, str] | None,
    after: tuple[str, ...],
    steps: tuple[Step, ...],
    reused: tuple[Reused, ...],
) -> tuple[Step, ...]:
    """A run that failed with --after, run again without it, and (Linux, sonames reused) without it but with the
    app's copies first on LD_LIBRARY_PATH: the `alone` step says whether the failure follows the app, and a step
    that failed after the app but not alone points there for its fix. target: (the interpreter run, as given)."""
    exe, python = target
    env = {**host.env, **(extra_env or {})}
    done, _ = _run_child(host, exe, n_tokens, (), timeout, env if extra_env else None)
    alone = parse_run(done.stdout, done.stderr, done.returncode, done.timed_out)
    copies = None
    if reused and host.platform == LINUX:
        dirs = [*dict.fromkeys(r.mapped.rsplit("/", 1)[0] for r in reused)]
        ld = ":".join([*dirs, *[p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p]])
        done, _ = _run_child(host, exe, n_tokens, (), timeout, {**env, "LD_LIBRARY_PATH": ld})
        copies = parse_run(done.stdout, done.stderr, done.returncode, done.timed_out)
    step = alone_step(after, "llama_cpp", alone, copies, reused)
    if step.status != FAIL:
        return (*steps, step)
    also = {s.name for s in _judge(host, alone, exe, python, n_tokens) if s.status == FAIL}
    see = f"it does not fail without --after {','.join(after)}: see `alone` below"
    return (
        *(replace(s, fix=see, fix_command="") if s.status == FAIL and s.name not in also else s for s in steps),
        step,
    )


def _run_child(
    host: Host, exe: str, n_tokens: int, after: tuple[str, ...], timeout: float, env: dict[str, str] | None
) -> tuple[Completed, int]:
    """The child run on a tiny model written to a temporary folder: (its result, the model's size)."""
    spec = TinyLlama()
    folder = tempfile.mkdtemp(prefix="envmgr-verify-")
    try:
        model = os.path.join(folder, "tiny-llama.gguf")
        size = write_tiny_llama(model, spec)
        done = host.run([exe, str(CHILD), model, str(n_tokens), ",".join(after)], timeout=timeout, env=env)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if done.start_error:
        raise UsageError(
            f"--python {exe}: cannot be run ({done.start_error})",
            "give a Python executable, e.g. --python .venv/bin/python",
        )
    return done, size


def _judge(host: Host, run: ChildRun, exe: str, python: str | None, n_tokens: int) -> tuple[Step, ...]:
    """The steps of a run whose app modules (--after) imported: analyze's, then the CPU variant's."""
    gpus, gpu_problems = discover_gpus(host)
    dll_ev, dll_cmd = _dll_diagnosis(host, run, exe)
    code = lib_device_code(host, run)
    fits = tuple(gpu_fits(code, gpus, host.platform == WINDOWS))
    steps = analyze(
        Inputs(run, exe, install_command(python), gpus, gpu_problems, n_tokens, dll_ev, dll_cmd, fits, code.summary())
    )
    step = cpu_step(run.log, run.get("package").get("lib_files") or [], _cpu(host, run, exe))
    return (*steps, step) if step is not None else steps


def _cpu(host: Host, run: ChildRun, python: str) -> cpucode.Cpu:
    """The target Python's CPU, asked only where the cpu step needs it (variants carried, ggml's log silent)."""
    if not carried(run.get("package").get("lib_files") or []) or loaded_variant(run.log)[0]:
        return cpucode.UNKNOWN
    done = host.run([python, "-c", cpucode.CPU_SCRIPT], timeout=60)
    try:
        data = loads_json(done.stdout.strip().splitlines()[0]) if done.ok and done.stdout.strip() else None
    except ValueError:
        data = None
    return cpucode.parse_cpu(data, f"the target Python {python}")


def _dll_diagnosis(host: Host, run: ChildRun, python: str) -> tuple[tuple[str, ...], str]:
    """When import llama_cpp failed to load its library: doctor's resolver names the missing dependency."""
    imp, pkg = run.get("import"), run.get("package")
    lib_dir = pkg.get("lib_dir")
    if not imp or imp.get("ok") or not lib_dir:
        return (), ""
    names = pkg.get("lib_files") or []
    target = next((n for n in ("llama.dll", "libllama.dll", "libllama.so") if n in names), None)
    if target is None:
        return (), ""

    path = join(host, lib_dir, target)
    try:
        if target.endswith(".dll"):
            report = resolve_pe(host, path, python_exe=python, base_dir=lib_dir)
        else:
            report = resolve_elf(host, path)
    except (EnvmgrError, OSError, ValueError) as exc:
        return (f"doctor --dll could not read {path}: {getattr(exc, 'message', exc)}",), ""
    ev = [f"missing: {m.name} ({m.why})" for m in report.missing()]
    ev += [f"cannot load: {m.name} at {m.path} ({m.bad})" for m in report.unloadable()]
    ev += [entry_evidence(e) for e in report.entries]
    if report.blocked:
        ev.append(f"blocked: {report.blocked}")
    ev.append(f"loader: {report.loader}")
    return tuple(ev), f"envmgr doctor --dll {_quote(path)}"
