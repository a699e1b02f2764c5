"""The prebuilt route of `envmgr install llama-cpp-python`: the machine's facts (GPUs, driver, the target
Python's tags), the plan over the prebuilt indexes (wheels/pick.py), and the chosen wheel stored in the
wheel cache like a built one and installed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import parse_wheel_filename

from envmgr.cli.main import Ctx
from envmgr.commands.install_build import Installed, _pip_install
from envmgr.discover.driver import driver_cuda
from envmgr.doctor.checks import Facts
from envmgr.errors import CheckFailed, EnvmgrError, UsageError
from envmgr.files.nested import loads_json
from envmgr.host.base import Host
from envmgr.host.process import setting
from envmgr.output import say
from envmgr.wheels import cpucode, pick, prebuilt, pytags, remote
from envmgr.wheels import store as wheels
from envmgr.wheels.url import IndexUrl


@dataclass
class Route:
    """What the prebuilt route saw and chose; the plan's JSON and the report come from it."""

    indexes: tuple[IndexUrl, ...]
    source: str
    listings: list[prebuilt.Listing] = field(default_factory=list)
    plan: pick.Plan | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        m = self.plan.machine if self.plan else None
        return {
            "indexes_from": self.source,
            "indexes": [
                {"index": str(x.index), "wheels": len(x.candidates), "problem": x.problem or None}
                for x in self.listings
            ],
            "machine": None
            if m is None
            else {
                "gpus": [{"name": n, "compute_capability": c} for n, c in m.gpus],
                "driver": m.driver or None,
                "driver_cuda": m.driver_cuda or None,
                "python": m.python,
                "cpu": m.cpu.to_json(),
            },
            "candidates": [j.to_json() for j in self.plan.judged] if self.plan else [],
            "chosen": self.plan.chosen.to_json() if self.plan and self.plan.chosen else None,
            "note": self.note or None,
        }


def target_tags(local: Host, python: str) -> tuple[tuple[str, ...], str]:
    """(every tag the TARGET Python accepts, best first; "cp312 on linux_x86_64"), from a bounded child run of
    it (wheels/pytags.py): its own sys_tags() when it has packaging or pip, else derived from its facts."""
    done = local.run([python, "-c", pytags.FACTS_SCRIPT], timeout=60)
    lines = done.stdout.strip().splitlines()[:2]
    facts, own = (_json_line(lines, i) for i in (0, 1))  # a crash after line 1 leaves the facts (pytags.py)
    why_not = (
        ""
        if done.ok
        else (
            "its own packaging.tags did not answer: "
            + ("timed out" if done.timed_out else f"exit code {done.returncode}")
        )
    )
    tags, words = (
        pytags.accepted(facts, own if isinstance(own, list) else None, why_not) if isinstance(facts, dict) else ((), "")
    )
    if not tags:
        return (), f"{python} (its tags could not be read: {done.describe_failure() if not done.ok else 'no answer'})"
    return tags, words


def _json_line(lines: list[str], i: int) -> Any:
    try:
        return loads_json(lines[i]) if i < len(lines) else None
    except ValueError:
        return None


def machine(host: Host, local: Host, facts: Facts | None, python: str) -> pick.Machine:
    """The facts a pick needs: GPUs and driver from doctor's inventory (the --machine record too), the
    driver's CUDA from nvidia-smi's header, the tags from the target Python (on this machine)."""
    gpus = tuple((g.name, g.compute_cap or "0.0") for g in facts.inv.gpus) if facts is not None else ()
    driver = next((g.driver_version for g in facts.inv.gpus if g.driver_version), "") if facts is not None else ""
    tags, words = target_tags(local, python)
    return pick.Machine(
        gpus,
        driver,
        driver_cuda(host) if gpus else "",
        host.platform == "windows",
        tags,
        words,
        target_cpu(host, local, python),
    )


def target_cpu(host: Host, local: Host, python: str) -> cpucode.Cpu:
    """The CPU's instruction sets: a record's `meta.cpu_flags` under --machine (absent: unknown), else what the
    target Python reads of its own CPU in a bounded child run (wheels/cpucode.py's CPU_SCRIPT), never assumed."""
    if not host.runs_programs:
        flags = host.cpu_flags
        return (
            cpucode.parse_cpu(list(flags), "the record's meta.cpu_flags")
            if flags is not None
            else cpucode.Cpu(None, "the record has no meta.cpu_flags")
        )
    done = local.run([python, "-c", cpucode.CPU_SCRIPT], timeout=60)
    lines = done.stdout.strip().splitlines()[:1]
    if not done.ok or not lines:
        return cpucode.Cpu(None, f"{python} did not answer ({done.describe_failure() if not done.ok else 'no output'})")
    return cpucode.parse_cpu(_json_line(lines, 0), f"the target Python {python}")


def _cpu_words(cpu: cpucode.Cpu) -> str:
    if cpu.flags is None:
        return f"unknown ({cpu.source})"
    has = [cpucode.WORDS[f] for f in cpucode.SCANNED if f in cpu.flags]
    return f"{' '.join(has) or 'no AVX2/AVX-512'} ({cpu.source})"


def spec_set(spec: str, package: str) -> SpecifierSet:
    try:
        req = Requirement(spec)
    except InvalidRequirement:
        return SpecifierSet()
    if wheels.normalize(req.name) != package:
        return SpecifierSet()
    try:
        req.specifier.contains("0", prereleases=True)  # parses every version the spec names
    except ValueError as exc:  # `==0.3.999…` with 5,000 digits: int()'s limit (N15)
        raise UsageError(
            f"the spec {spec[:60]}{'…' if len(spec) > 60 else ''} names a version envmgr cannot read "
            f"({' '.join(str(exc).split())[:80]})",
            "give a version like 0.3.36",
        ) from None
    return req.specifier


def plan_route(
    m: pick.Machine, package: str, spec: str, indexes: tuple[str | IndexUrl, ...], source: str, pre: bool = False
) -> Route:
    """Read the indexes and judge every wheel (downloading, in rank order, the ones worth reading), all
    within one deadline (N12); `pre` is pip's --pre (N14)."""
    route = Route(tuple(map(IndexUrl.of, indexes)), source)
    if not indexes:
        route.note = f"off ({source})"
        return route
    deadline = remote.Deadline(prebuilt.PLAN_DEADLINE_S)
    route.listings = prebuilt.list_all(route.indexes, package, lambda s: say(f"envmgr: {s}"), deadline)
    cands = [c for x in route.listings for c in x.candidates]
    if not cands:
        route.note = (
            "no prebuilt index could be reached"
            if all(x.unreachable for x in route.listings)
            else "no prebuilt index listed a wheel"
        )
        return route
    route.plan = pick.plan(
        cands, m, package, spec_set(spec, package), prebuilt.code_reader(deadline), pre=pre, read_cpu=prebuilt.read_cpu
    )
    if deadline.spent():
        route.note = f"prebuilt indexes: {deadline.words()}"
        say(f"envmgr: {route.note}")
    return route


def say_plan(route: Route) -> None:
    """Every candidate with its verdict, on stderr (the plan's text form)."""
    if route.plan is None:
        say(f"envmgr: prebuilt: {route.note}")
        return
    for j in route.plan.judged:
        cuda = f"CUDA {j.cand.cuda}" if j.cand.cuda else "CUDA ?"
        say(f"envmgr:   {j.verdict:<12} {j.cand.filename} ({cuda}): {j.reason}")
    chosen = route.plan.chosen
    words = f"chose {chosen.cand.filename} from {chosen.cand.index}" if chosen else "no wheel fits this machine"
    say(f"envmgr: prebuilt: {words}")


def store_chosen(chosen: pick.Judged, package: str) -> wheels.Entry:
    """The chosen wheel into the wheel cache, keyed like a built one (its source is its URL)."""
    path, _ = prebuilt.downloaded(chosen.cand)
    _, _, _, tags = parse_wheel_filename(chosen.cand.filename)
    tag = min(str(t) for t in tags).split("-")
    code = prebuilt.read_code(chosen.cand)
    # the key records where the wheel came from without its credentials (N2): it is published
    key = wheels.WheelKey(
        package,
        chosen.version,
        f"prebuilt:{IndexUrl.of(chosen.cand.url).key()}",
        chosen.cand.cuda or pick.cuda_of_imports(code.cuda_imports),
        ";".join(code.cubin + code.ptx),
        "prebuilt",
        "",
        tag[0],
        tag[2],
    )
    try:
        return wheels.store(key, path, 0.0, True, datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    except OSError as exc:
        raise CheckFailed(
            f"the wheel cache cannot be written ({exc.strerror or exc})",
            "set ENVMGR_CACHE_DIR to a folder you can write",
        ) from None


@dataclass(frozen=True)
class Options:
    indexes: tuple[str, ...] = ()  # --prebuilt-index (repeatable)
    off: bool = False  # --no-prebuilt
    dry_run: bool = False


def applies(recipe: str | None, spec: str, package: str) -> bool:
    """The prebuilt route serves a requirement of the package with its own recipe (not --recipe R, whose
    build is what was asked for, nor a source folder, archive or URL, which only a build can honour)."""
    if recipe is not None:
        return False
    try:
        req = Requirement(spec)
    except InvalidRequirement:
        return False
    return req.url is None and wheels.normalize(req.name) == package


def sources(opts: Options) -> tuple[tuple[str, ...], str]:
    """--no-prebuilt, --prebuilt-index, ENVMGR_PREBUILT_INDEX (';'-separated, '' off), [wheels] prebuilt, default."""
    if not opts.off and not opts.indexes:
        given = setting("ENVMGR_PREBUILT_INDEX")
        if given is not None:
            found = tuple(x.strip() for x in given.split(";") if x.strip())
            return _usable(found, "ENVMGR_PREBUILT_INDEX"), (
                "ENVMGR_PREBUILT_INDEX" if found else "ENVMGR_PREBUILT_INDEX (empty: off)"
            )
    indexes, source = prebuilt.configured(opts.indexes, opts.off)
    return _usable(indexes, source), source


def _usable(indexes: tuple[str, ...], source: str) -> tuple[str, ...]:
    """The indexes as given, after refusing one that is no URL (`http://[::1`: N5) in one line, exit 2."""
    for index in map(IndexUrl, indexes):
        if index.problem():
            raise UsageError(
                f"prebuilt index {index} ({source}): {index.problem()}",
                "give an http(s):// or file:// URL, or a folder",
            )
    return indexes


class Chooser:
    """The route between the team index and a build, as install_wheel's before_build: plan, then store and
    pip install the chosen wheel; with nothing chosen, the build's own doctor blockers stop the flow there."""

    def __init__(
        self,
        obj: Ctx,
        facts: Facts | None,
        package: str,
        spec: str,
        opts: Options,
        build_error: EnvmgrError | None,
        python: str,
    ) -> None:
        self.obj, self.facts, self.package, self.spec, self.opts = obj, facts, package, spec, opts
        self.python = python
        self.build_error = build_error
        self.route: Route | None = None
        self.entry: wheels.Entry | None = None
        self.ran = False
        self.skipped = ""  # why routes 1-2 were skipped (no build environment to key the cache by)

    def __call__(self, python: str, pip_opts: list[str], no_deps: bool, env: dict[str, str]) -> Installed | None:
        self.ran = True
        indexes, source = sources(self.opts)
        m = machine(self.obj.host, self.obj.local, self.facts, python)
        say(
            f"envmgr: route 3, prebuilt indexes ({source}): {len(indexes)} to read; GPU(s) "
            f"{', '.join(f'{n} ({c})' for n, c in m.gpus) or 'none'}, driver {m.driver or 'none'}"
            f"{' (CUDA ' + m.driver_cuda + ')' if m.driver_cuda else ''}, Python {m.python}, CPU {_cpu_words(m.cpu)}"
        )
        self.route = plan_route(m, self.package, self.spec, indexes, source, pre="--pre" in pip_opts)
        say_plan(self.route)
        chosen = self.route.plan.chosen if self.route.plan else None
        if self.opts.dry_run:
            say(
                f"envmgr: route 4, build: {self._build_words()}"
                if chosen is None
                else "envmgr: route 4, build: not needed"
            )
            return Installed(0, "plan", chosen.cand.filename if chosen else "", "", 0.0)
        if chosen is None:
            if self.build_error is not None:
                raise self.build_error
            say("envmgr: route 4, build: no prebuilt wheel fits: building")
            return None
        self.entry = store_chosen(chosen, self.package)
        say(
            f"envmgr: installing the prebuilt {chosen.cand.filename} ({chosen.reason}); "
            f"cached as {self.entry.key.digest()}"
        )
        return Installed(
            _pip_install(python, self.entry.path, pip_opts, no_deps, env),
            "prebuilt",
            self.entry.wheel,
            str(self.entry.path),
            0.0,
            self.entry.folder.name,
            str(chosen.cand.index),
        )

    @property
    def chosen(self) -> pick.Judged | None:
        return self.route.plan.chosen if self.route is not None and self.route.plan is not None else None

    def _build_words(self) -> str:
        if self.build_error is None:
            return "would build with the recipe"
        return f"blocked: {self.build_error.message}"
