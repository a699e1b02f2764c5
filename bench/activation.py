"""Activation at the speed of the shell (issue 14): envmgr against its baselines, direnv and mise.

    .venv/bin/python bench/activation.py [--rounds N] [--no-save] [--baseline CHECKOUT]

Every round runs every command once, in a new random order (alternating, so load drifts hit all
alike); each figure is min/median/max over the rounds and the median of per-round ratios or
differences against its baseline in the same round. envmgr runs as the console script
(.venv/bin/envmgr) with its bytecode compiled and checked; the Python baseline is the venv's own
interpreter (`.venv/bin/python -c pass`), never the pyenv shim. direnv (Debian package) and mise
(npm package @jdxcode/mise-linux-x64) are installed here when missing, each given 10 variables.
--baseline CHECKOUT adds another checkout of envmgr (with its own .venv holding its console script, e.g.
a `git worktree` of an earlier commit) to the same rounds: its --version, cached export, run and 100-instance
replay, each with its own cache folder, and the per-round ratios of this checkout's to its.
Writes results/<date>-activation-<machine>.md and .json. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv" / "bin"
WORK = ROOT / "bench" / "_work"
RESULTS = ROOT / "bench" / "results"
VARS = {f"BENCH_VAR_{i}": f"/opt/bench/value-{i}" for i in range(10)}


def ensure_direnv() -> str:
    found = shutil.which("direnv")
    if not found:
        subprocess.run(["apt-get", "update", "-qq"], check=False)
        subprocess.run(["apt-get", "install", "-y", "-qq", "direnv"], check=True)
        found = shutil.which("direnv")
    return found


def ensure_mise() -> str:
    exe = WORK / "npm" / "node_modules" / "@jdxcode" / "mise-linux-x64" / "bin" / "mise"
    if not exe.exists():
        subprocess.run(
            ["npm", "install", "--silent", "--prefix", str(WORK / "npm"), "@jdxcode/mise-linux-x64"], check=True
        )
    return str(exe)


def check_bytecode() -> None:
    subprocess.run([str(VENV / "python"), "-m", "compileall", "-q", str(ROOT / "envmgr")], check=True)
    tag = sys.implementation.cache_tag
    for mod in ("__init__", "fastpath/main", "cache/key"):
        pyc = ROOT / "envmgr" / Path(mod).parent / "__pycache__" / f"{Path(mod).name}.{tag}.pyc"
        if not pyc.exists():
            raise SystemExit(f"no bytecode for envmgr/{mod}.py ({pyc})")


def scaled_record(src: Path, copies: int, out: Path) -> Path:
    """The record with every VS instance copied `copies` times (own folder, id, files, vswhere entry)."""
    import tomlkit

    data = tomllib.loads(src.read_text(encoding="utf-8"))
    vswhere = next(c for c in data["commands"] if c["argv"][0].lower().endswith("vswhere.exe"))
    instances = json.loads(vswhere["stdout"])
    files = dict(data["files"])
    more = []
    for n in range(1, copies):
        for inst in instances:
            old_path, old_id = inst["installationPath"], inst["instanceId"]
            new_path, new_id = f"{old_path} {n}", f"{old_id}{n:03d}"
            text = json.dumps(inst).replace(json.dumps(old_path)[1:-1], json.dumps(new_path)[1:-1])
            more.append(json.loads(text.replace(old_id, new_id)))
            for path, value in data["files"].items():
                if path.lower().startswith(old_path.lower() + "\\") or old_id in path:
                    new = path.replace(old_path, new_path).replace(old_id, new_id)
                    files[new] = (
                        value.replace(old_path.replace("\\", "\\\\"), new_path.replace("\\", "\\\\"))
                        if isinstance(value, str)
                        else value
                    )
    vswhere["stdout"] = json.dumps(instances + more, indent=2)
    data["files"] = files
    out.write_text(tomlkit.dumps(data), encoding="utf-8")
    return out


def setup(tmp: Path) -> tuple[dict, dict]:
    """(commands: name -> (argv, env, cwd), facts)."""
    direnv, mise = ensure_direnv(), ensure_mise()
    check_bytecode()
    envmgr = str(VENV / "envmgr")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ENVMGR_", "DIRENV_", "MISE_", "CUDA"))}
    env = {
        **base,
        "ENVMGR_CACHE_DIR": str(tmp / "cache"),
        "NO_COLOR": "1",
        "HOME": str(tmp / "home"),
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "XDG_DATA_HOME": str(tmp / "data"),
        "XDG_CACHE_HOME": str(tmp / "xcache"),
        "MISE_YES": "1",
        "PATH": f"{VENV}:{base.get('PATH', '')}",
    }
    (tmp / "home").mkdir()
    subprocess.run(
        [envmgr, "export", "--cuda", "13.0", "--format", "sh"], env=env, check=True, stdout=subprocess.DEVNULL
    )  # the capture: writes the cache entry and KEY.fast
    assert list((tmp / "cache" / "snapshots").glob("*.fast")), "no fast-path file was written"
    hook = subprocess.run([envmgr, "init", "bash"], env=env, check=True, capture_output=True, text=True).stdout
    activate = f"{hook.strip()}\nenvmgr_activate --cuda 13.0"
    for _ in range(2):  # the first through envmgr (its fast path writes the slot), then without Python
        subprocess.run(["bash", "--norc", "--noprofile", "-c", activate], env=env, check=True)
    assert list((tmp / "cache" / "reactivate").glob("sh-*")), "no re-activation slot was written"
    envrc, misedir = tmp / "direnv", tmp / "mise"
    envrc.mkdir()
    misedir.mkdir()
    (envrc / ".envrc").write_text("".join(f"export {k}={v}\n" for k, v in VARS.items()))
    subprocess.run([direnv, "allow", str(envrc)], env=env, check=True, cwd=envrc)
    (misedir / "mise.toml").write_text("[env]\n" + "".join(f'{k} = "{v}"\n' for k, v in VARS.items()))
    subprocess.run([mise, "trust", str(misedir / "mise.toml")], env=env, check=True, cwd=misedir, capture_output=True)
    plain, hooked = tmp / "home-plain", tmp / "home-hook"
    for home, rc in ((plain, ""), (hooked, hook)):
        home.mkdir()
        (home / ".bashrc").write_text(rc)
    rec2 = ROOT / "tests" / "machines" / "vs2019-vs2022.toml"
    rec100 = scaled_record(rec2, 50, tmp / "vs-100-instances.toml")
    bash = ["bash", "--norc", "--noprofile", "-c"]
    commands = {
        "python -c pass": ([str(VENV / "python"), "-c", "pass"], env, None),
        "envmgr --version": ([envmgr, "--version"], env, None),
        "envmgr export --cuda 13.0 --format sh": ([envmgr, "export", "--cuda", "13.0", "--format", "sh"], env, None),
        "envmgr run --cuda 13.0 -- true": ([envmgr, "run", "--cuda", "13.0", "--", "true"], env, None),
        "direnv export bash": ([direnv, "export", "bash"], env, envrc),
        "mise env -s bash": ([mise, "env", "-s", "bash"], env, misedir),
        "bash -c true": ([*bash, "true"], env, None),
        "bash: envmgr_activate (re-activation, no Python)": ([*bash, activate], env, None),
        'bash: eval "$(mise env -s bash)"': ([*bash, f'eval "$({mise} env -s bash)"'], env, misedir),
        "bash -i -c true (no profile line)": (["bash", "-i", "-c", "true"], {**env, "HOME": str(plain)}, None),
        "bash -i -c true (envmgr profile line)": (["bash", "-i", "-c", "true"], {**env, "HOME": str(hooked)}, None),
        "envmgr --machine (2 VS instances) list": ([envmgr, "--machine", str(rec2), "list"], env, None),
        "envmgr --machine (100 VS instances) list": ([envmgr, "--machine", str(rec100), "list"], env, None),
        # A cache folder that cannot exist: the record is parsed on every run, as on its first replay.
        "envmgr --machine (100 VS instances) list, first replay": (
            [envmgr, "--machine", str(rec100), "list"],
            {**env, "ENVMGR_CACHE_DIR": "/dev/null/envmgr"},
            None,
        ),
    }
    if BASELINE is not None:
        commands.update(baseline_commands(BASELINE, env, tmp, rec100))
    listed = subprocess.run(
        [envmgr, "--machine", str(rec100), "list", "--json"], env=env, capture_output=True, text=True, check=True
    )
    facts = {
        "instances_in_scaled_record": len(json.loads(listed.stdout).get("visual_studio", [])),
        "direnv": subprocess.run([direnv, "version"], capture_output=True, text=True).stdout.strip(),
        "mise": subprocess.run(
            [mise, "--version"], capture_output=True, text=True, env=env, cwd=misedir
        ).stdout.strip(),
        "python": subprocess.run([str(VENV / "python"), "-V"], capture_output=True, text=True).stdout.strip(),
    }
    return commands, facts


BASELINE: Path | None = None
BASELINED = (
    "envmgr --version",
    "envmgr export --cuda 13.0 --format sh",
    "envmgr run --cuda 13.0 -- true",
    "envmgr --machine (100 VS instances) list",
)


def baseline_commands(checkout: Path, env: dict, tmp: Path, rec100: Path) -> dict:
    """The same envmgr commands run by another checkout's console script, with its own cache folder."""
    venv = checkout / ".venv" / "bin"
    subprocess.run([str(venv / "python"), "-m", "compileall", "-q", str(checkout / "envmgr")], check=True)
    benv = {**env, "ENVMGR_CACHE_DIR": str(tmp / "cache-baseline"), "PATH": f"{venv}:{env['PATH'].split(':', 1)[1]}"}
    exe = str(venv / "envmgr")
    subprocess.run([exe, "export", "--cuda", "13.0", "--format", "sh"], env=benv, check=True, stdout=subprocess.DEVNULL)
    argv = {
        "envmgr --version": ["--version"],
        "envmgr export --cuda 13.0 --format sh": ["export", "--cuda", "13.0", "--format", "sh"],
        "envmgr run --cuda 13.0 -- true": ["run", "--cuda", "13.0", "--", "true"],
        "envmgr --machine (100 VS instances) list": ["--machine", str(rec100), "list"],
    }
    return {f"baseline: {name}": ([exe, *argv[name]], benv, None) for name in BASELINED}


def timed(argv, env, cwd) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(
        argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{argv} exited {done.returncode}")
    return elapsed * 1e3


# (figure, command, baseline, kind, goal): kind "ratio" (per-round a/b) or "diff" (per-round a-b, ms).
FIGURES = [
    ("cached export vs direnv", "envmgr export --cuda 13.0 --format sh", "direnv export bash", "ratio", 1.0),
    ("profile hook cost", "bash -i -c true (envmgr profile line)", "bash -i -c true (no profile line)", "diff", 5.0),
    ("re-activation vs mise env", "bash: envmgr_activate (re-activation, no Python)", "mise env -s bash", "ratio", 1.0),
    (
        "re-activation vs eval mise env (both in bash)",
        "bash: envmgr_activate (re-activation, no Python)",
        'bash: eval "$(mise env -s bash)"',
        "ratio",
        None,
    ),
    ("run -- true over Python start", "envmgr run --cuda 13.0 -- true", "python -c pass", "diff", 40.0),
    ("--version over Python start", "envmgr --version", "python -c pass", "diff", 30.0),
    ("cached export over Python start", "envmgr export --cuda 13.0 --format sh", "python -c pass", "diff", None),
    (
        "replay 100 vs 2 instances",
        "envmgr --machine (100 VS instances) list",
        "envmgr --machine (2 VS instances) list",
        "ratio",
        2.0,
    ),
    (
        "replay 100 vs 2 instances, first replay (TOML parsed)",
        "envmgr --machine (100 VS instances) list, first replay",
        "envmgr --machine (2 VS instances) list",
        "ratio",
        2.0,
    ),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--baseline", type=Path, metavar="CHECKOUT", help="another envmgr checkout with its own .venv")
    a = ap.parse_args()
    global BASELINE
    BASELINE = a.baseline.resolve() if a.baseline else None
    tmp = Path(tempfile.mkdtemp(prefix="envmgr-bench-activation-"))
    try:
        commands, facts = setup(tmp)
        samples = {name: [] for name in commands}
        load_before = os.getloadavg()
        for name, (argv, env, cwd) in commands.items():  # warm-up: page cache, bytecode
            timed(argv, env, cwd)
        for _ in range(a.rounds):
            order = list(commands)
            random.shuffle(order)
            for name in order:
                samples[name].append(timed(*commands[name]))
        load_after = os.getloadavg()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows = {n: {"min": min(s), "median": statistics.median(s), "max": max(s)} for n, s in samples.items()}
    figures = []
    extra = [
        (f"{name} vs baseline checkout", name, f"baseline: {name}", "ratio", None)
        for name in BASELINED
        if f"baseline: {name}" in samples
    ]
    for title, cmd, base, kind, goal in FIGURES + extra:
        pairs = [x / y if kind == "ratio" else x - y for x, y in zip(samples[cmd], samples[base])]
        value = statistics.median(pairs)
        figures.append(
            {
                "figure": title,
                "command": cmd,
                "baseline": base,
                "kind": kind,
                "median": value,
                "goal": goal,
                "met": None if goal is None else value <= goal,
            }
        )
    stamp = datetime.now(timezone.utc)
    machine = f"{platform.system().lower()}-{platform.node().split('.')[0] or 'machine'}-{os.cpu_count()}cpu"
    report = render(rows, figures, facts, a.rounds, stamp, machine, load_before, load_after)
    print(report)
    if not a.no_save:
        RESULTS.mkdir(parents=True, exist_ok=True)
        stem = RESULTS / f"{stamp:%Y-%m-%d}-activation-{machine}"
        stem.with_suffix(".md").write_text(report, encoding="utf-8")
        stem.with_suffix(".json").write_text(
            json.dumps(
                {
                    "date": stamp.isoformat(),
                    "machine": machine,
                    "rounds": a.rounds,
                    "facts": facts,
                    "load_before": load_before,
                    "load_after": load_after,
                    "commands": rows,
                    "samples_ms": samples,
                    "figures": figures,
                },
                indent=2,
            ),
            encoding="utf-8",
        )
        print(f"wrote {stem}.md and .json")
    return 0


def render(rows, figures, facts, rounds, stamp, machine, load_before, load_after) -> str:
    out = [
        f"# Activation benchmark, {stamp:%Y-%m-%d %H:%M} UTC, {machine}",
        "",
        f"`bench/activation.py`: {rounds} rounds, every command once per round in a random order; "
        f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after. "
        f"{facts['python']}; direnv {facts['direnv']}; mise {facts['mise']}; scaled record: "
        f"{facts['instances_in_scaled_record']} VS instances. Times in ms.",
        "",
        "| command | min | median | max |",
        "|---|---:|---:|---:|",
    ]
    out += [f"| `{n}` | {r['min']:.1f} | {r['median']:.1f} | {r['max']:.1f} |" for n, r in rows.items()]
    out += ["", "| figure (median of per-round pairs) | value | goal | met |", "|---|---:|---:|---|"]
    for f in figures:
        unit = "x" if f["kind"] == "ratio" else " ms"
        goal = "" if f["goal"] is None else f"<= {f['goal']:g}{unit}"
        met = "" if f["met"] is None else ("yes" if f["met"] else "**no**")
        out.append(f"| {f['figure']} | {f['median']:.2f}{unit} | {goal} | {met} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
