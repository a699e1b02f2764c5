"""`envmgr verify PACKAGE` for any distribution: run child_any.py in the target Python, read the device
code of the libraries it listed, ask nvidia-smi for the GPUs, and judge (anyjudge.py, pure).

Side effects, all here: one child process through the Host, the libraries' bytes read through the
Host, nvidia-smi (through discovery), and doctor's resolver on the first library that did not load.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from envmgr.binaries.devicecode import BinaryCode, DeviceCode, read_binary
from envmgr.binaries.dll import resolve_pe
from envmgr.binaries.dllsyms import entry_evidence
from envmgr.binaries.elf import resolve_elf
from envmgr.binaries.reuse import Reused
from envmgr.discover.gpu import discover_gpus, gpu_fits
from envmgr.errors import EnvmgrError, UsageError
from envmgr.host.base import WINDOWS, Host
from envmgr.verify.analyze import FAIL, WARN, Step, first_failure
from envmgr.verify.anyjudge import PROOF_WORDS, AnyInputs, judge
from envmgr.verify.anyschema import record_filter
from envmgr.verify.plain import PLAIN, plain_host
from envmgr.verify.report import ChildRun, death, parse_run
from envmgr.verify.runtimes import after_step, framed, package_roots, reuse_found, reuse_step, runtimes_step

CHILD = Path(__file__).with_name("child_any.py")
MAX_LIBRARY = 2 << 30


@dataclass(frozen=True)
class AnyVerdict:
    package: str
    python: str
    steps: tuple[Step, ...]
    run: ChildRun
    proof: str  # "loaded" | "reported" | "ran"; "" when not verified
    seconds: float
    model_bytes: int = 0
    environment: str = PLAIN  # verify/plain.py
    environment_words: str = ""
    reused: tuple[Reused, ...] = ()  # sonames bound to an --after module's copy (binaries/reuse.py)

    @property
    def ok(self) -> bool:
        return bool(self.proof)

    @property
    def failure(self) -> Step | None:
        return first_failure(self.steps)

    @property
    def proof_text(self) -> str:
        return PROOF_WORDS.get(self.proof, "")


def verify_any(
    host: Host, python: str, package: str, *, timeout: float, inherit_env: bool = False, after: tuple[str, ...] = ()
) -> AnyVerdict:
    """child_any.py in a plain new process of `python` (verify/plain.py), judged; `after`: the app's modules
    imported first in that process (verify --after; verify/runtimes.py)."""
    t0 = time.perf_counter()
    host, mode, words = plain_host(host, inherit_env)
    done = host.run([python, str(CHILD), package, ",".join(after)], timeout=timeout)
    if done.start_error:
        raise UsageError(
            f"--python {python}: cannot be run ({done.start_error})",
            "give a Python executable, e.g. --python .venv/bin/python",
        )
    run = parse_run(done.stdout, done.stderr, done.returncode, done.timed_out, record_filter())
    first = (
        after_step(run.records("after"), after, python, death(run.returncode, run.timed_out))
        if run.get("package").get("found")
        else None
    )
    if first is not None and first.status == FAIL:
        return AnyVerdict(package, python, (first,), run, "", time.perf_counter() - t0, 0, mode, words)
    libs = run.get("package").get("libraries") or []
    code = read_libraries(host, libs)
    gpus, problems = discover_gpus(host)
    windows = host.platform == WINDOWS
    fits = tuple(gpu_fits(code, gpus, windows))
    lines = tuple(
        f"nvidia-smi: GPU {g.index}: {g.name}, compute capability {g.compute_cap}, driver {g.driver_version}"
        for g in gpus
    ) or ("nvidia-smi: no NVIDIA GPU visible",)
    lines += tuple(f"nvidia-smi: {p}" for p in problems)
    dll_ev, dll_cmd = _dll_diagnosis(host, run, python)
    steps, proof = judge(AnyInputs(run, package, code, fits, lines, dll_ev, dll_cmd))
    if done.lingered:
        steps += (
            Step(
                "child",
                WARN,
                f"a process started by the import kept running: reading stopped at the "
                f"{timeout:g} s timeout (the child itself had ended)",
                ("it holds the child's output open: a server or daemon the package starts when imported",),
            ),
        )
    roots = package_roots(run)
    reused = reuse_found(host, run, roots, after)
    steps = framed(
        steps, first, runtimes_step(run.get("runtimes"), package, run.log, roots), reuse_step(reused, package)
    )
    return AnyVerdict(package, python, steps, run, proof, time.perf_counter() - t0, 0, mode, words, reused)


def read_libraries(host: Host, paths: list[str]) -> DeviceCode:
    binaries: list[BinaryCode] = []
    skipped: list[str] = []
    for path in [p for p in paths if isinstance(p, str)][:512]:  # the child's records are checked: anyschema.py
        try:
            size = host.stat(path).size
            if size > MAX_LIBRARY:
                skipped.append(f"{path} ({size >> 20} MiB: not read)")
                continue
            binaries.append(read_binary(host.read_bytes(path), path))
        except OSError as exc:
            skipped.append(f"{path} ({exc.strerror or exc})")
    return DeviceCode(tuple(binaries), tuple(skipped))


def _dll_diagnosis(host: Host, run: ChildRun, python: str) -> tuple[tuple[str, ...], str]:
    """doctor --dll on the first native library the real loader refused."""
    bad = [r for r in run.get("load").get("libraries") or [] if not r.get("ok")]
    if not bad:
        return (), ""
    path = str(bad[0].get("path"))
    try:
        if path.lower().endswith((".dll", ".pyd")):
            report = resolve_pe(host, path, python_exe=python, loader="ctypes")
        else:
            report = resolve_elf(host, path)
    except (EnvmgrError, OSError, ValueError) as exc:
        return (f"doctor --dll could not read {path}: {getattr(exc, 'message', exc)}",), ""
    ev = [f"missing: {m.name} ({m.why})" for m in report.missing()]
    ev += [f"cannot load: {m.name} at {m.path} ({m.bad})" for m in report.unloadable()]
    ev += [entry_evidence(e) for e in report.entries]
    ev.append(f"loader: {report.loader}")
    return tuple(ev), f"envmgr doctor --dll {path}"
