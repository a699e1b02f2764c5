"""The facts a machine-aware verdict reads (doctor/verdict.py), from doctor's facts and checks of one run: the
OS and processor (`Host.system`), the NVIDIA GPUs and driver (nvidia-smi, through discovery), the toolkits and the
chosen one, the installed llama_cpp's device code and how each GPU runs it, and the checks that found something.
Read through the Host, so a record (`doctor --log FILE --machine RECORD`) answers as the machine did."""

from __future__ import annotations

from collections.abc import Sequence

from envmgr.binaries.devicecode import BINARY_NAME
from envmgr.binaries.gpufit import Fit, fit
from envmgr.discover.gpu import container_mark, smi_path
from envmgr.discover.model import Gpu
from envmgr.doctor.checks import FAIL, WARN, Facts, Finding
from envmgr.doctor.checks_install import llama_lib_dir
from envmgr.doctor.run import gather, run_checks
from envmgr.doctor.verdict import THIS, Check, MachineFacts
from envmgr.errors import EnvmgrError
from envmgr.host.base import WINDOWS, Host, join, safe_listdir
from envmgr.snapshot.selectors import Selectors
from envmgr.verify.anyrun import read_libraries


def read_machine(
    host: Host, source: str = THIS, selectors: Selectors | None = None, target_python: str | None = None
) -> MachineFacts | None:
    """doctor's facts and checks on `host`, as verdict facts; None where they cannot be read (a selector that
    names nothing here: the verdicts are then left out, the log's report stands)."""
    try:
        facts = gather(host, selectors or Selectors(), target_python)
        return from_doctor(facts, run_checks(facts), source)
    except EnvmgrError:
        return None


def from_doctor(facts: Facts, findings: Sequence[Finding], source: str = THIS) -> MachineFacts:
    host, inv = facts.host, facts.inv
    os_name, arch = host.system or ("win32" if host.platform == WINDOWS else "", "")
    gpus = tuple((f"GPU {g.index} {g.name}", g.compute_cap or "") for g in inv.gpus)
    probe, known = _probe(host, facts)
    device, fits = _device(facts, inv.gpus)
    return MachineFacts(
        source,
        os_name,
        arch,
        gpus,
        probe,
        known,
        next((g.driver_version for g in inv.gpus if g.driver_version), ""),
        tuple(k.short for k in inv.cuda),
        facts.cuda.short if facts.cuda else "",
        _msvc(facts),
        host.platform == WINDOWS,
        device,
        fits,
        tuple(Check(f.id, f.status, f.summary) for f in findings if f.status in (FAIL, WARN)),
        container_mark(host),
    )


def _msvc(facts: Facts) -> str:
    """The MSVC toolset the checks were for: the selection's, else the chosen instance's default."""
    if facts.choice is not None and facts.choice.toolset is not None:
        return facts.choice.toolset.version
    return (facts.vs.default_toolset or "") if facts.vs is not None else ""


def _probe(host: Host, facts: Facts) -> tuple[str, bool]:
    """(how the GPU list was read, whether it is complete): a failing nvidia-smi hides what is there."""
    gpus, problems = facts.inv.gpus, facts.inv.gpu_problems
    if gpus:
        return f"nvidia-smi lists {len(gpus)} GPU(s)", True
    if problems:
        return problems[0], False
    if smi_path(host) is None:
        return "no nvidia-smi: no NVIDIA driver is installed", True
    return "nvidia-smi lists no GPU", True


def _device(facts: Facts, gpus: Sequence[Gpu]) -> tuple[str, tuple[Fit, ...]]:
    """The installed llama_cpp's device code in words and how each GPU runs it; ("", ()) when unknown."""
    lib = llama_lib_dir(facts)
    if lib is None:
        return "", ()
    names, _ = safe_listdir(facts.host, lib)
    code = read_libraries(facts.host, [join(facts.host, lib, n) for n in sorted(names) if BINARY_NAME.search(n)])
    if not (code.cubin or code.ptx):
        return "", ()
    isa, driver = code.ptx_isa, next((g.driver_version for g in gpus if g.driver_version), "")
    fits = tuple(
        fit(
            code.cubin,
            code.ptx,
            g.compute_cap or "",
            f"GPU {g.index} {g.name} (compute capability {g.compute_cap})",
            isa,
            driver,
            facts.windows,
        )
        for g in gpus
        if g.compute_cap
    )
    return f"{code.summary()} ({lib})", fits
