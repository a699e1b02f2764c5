"""The smoke run of an installed envmgr-cuda wheel: what a user gets from `pip install envmgr-cuda`.

    python tests/wheel_smoke.py --python PY --machine RECORD [--export-machine RECORD]
                                [--not-under DIR] -- ENVMGR_COMMAND...

PY is the clean environment's interpreter; ENVMGR_COMMAND runs envmgr there (its console script, or
`PY -m envmgr` where no launcher exists, as under Wine). Checks, each one line on stdout:
  - PY imports envmgr from its own environment, not from DIR (the source tree), and the distribution
    envmgr-cuda carries the same version and its LICENSE;
  - `envmgr --version` prints that version; `envmgr list` and `envmgr --machine RECORD list` exit 0;
  - `envmgr --machine RECORD export` writes a snapshot (a Windows record needs a vcvars capture for
    that, `record --capture`; the Linux record exports as it is);
  - `envmgr doctor --json` writes one JSON document with its checks (exit 0 or 1: a finding may fail
    on a machine without a GPU).
Exit 0 when all hold, else 1 with what failed. Standard library only: it runs in the clean environment.
Used by tests/test_wheel_smoke.py (Linux, and Windows CPython under Wine) and .github/workflows/release.yml.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

DIST = "envmgr-cuda"


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONUTF8": "1"}
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def installed(python: str, not_under: str | None) -> tuple[str, list[str]]:
    """The installed version, and what is wrong with the install."""
    code = (
        "import json, envmgr, importlib.metadata as m\n"
        f"d = m.distribution({DIST!r})\n"
        "print(json.dumps({'file': envmgr.__file__, 'version': envmgr.__version__, 'dist': d.version,"
        " 'license': any(str(f).endswith('LICENSE') for f in d.files or ())}))"
    )
    done = run([python, "-c", code])
    if done.returncode != 0:
        return "", [f"{python} cannot import envmgr or find {DIST}: {done.stderr.strip()}"]
    facts = json.loads(done.stdout)
    problems = []
    where = os.path.normcase(os.path.abspath(facts["file"]))
    if not_under and where.startswith(os.path.normcase(os.path.abspath(not_under)) + os.sep):
        problems.append(f"envmgr was imported from the source tree ({facts['file']}), not from the wheel")
    if facts["dist"] != facts["version"]:
        problems.append(f"{DIST} {facts['dist']} but envmgr.__version__ {facts['version']}")
    if not facts["license"]:
        problems.append(f"{DIST}'s files hold no LICENSE")
    print(f"ok: {DIST} {facts['dist']} imported from {facts['file']}")
    return facts["version"], problems


def check(name: str, done: subprocess.CompletedProcess[str], ok_codes: tuple[int, ...], test) -> list[str]:
    if done.returncode not in ok_codes:
        return [f"{name}: exit {done.returncode}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"]
    why = test(done.stdout)
    if why:
        return [f"{name}: {why}\n{done.stdout[-2000:]}"]
    print(f"ok: {name} (exit {done.returncode})")
    return []


def doctor_json(out: str) -> str:
    try:
        data = json.loads(out)
    except ValueError as exc:
        return f"stdout is not one JSON document: {exc}"
    return "" if isinstance(data, dict) and data.get("checks") else "no checks in the report"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True)
    parser.add_argument("--machine", required=True, help="a recorded machine for list")
    parser.add_argument("--export-machine", help="a recorded machine for export (default: --machine)")
    parser.add_argument("--not-under", help="the source tree, which envmgr must not be imported from")
    parser.add_argument("command", nargs="+", help="how to start the installed envmgr")
    args = parser.parse_args(argv)
    envmgr = args.command
    version, problems = installed(args.python, args.not_under)
    if version:
        problems += check(
            "envmgr --version",
            run([*envmgr, "--version"]),
            (0,),
            lambda out: "" if version in out else f"does not print {version}",
        )
    problems += check("envmgr list", run([*envmgr, "list"]), (0,), lambda out: "")
    problems += check(
        "envmgr --machine RECORD list",
        run([*envmgr, "--machine", args.machine, "list"]),
        (0,),
        lambda out: "" if "CUDA" in out else "lists no CUDA toolkit",
    )
    exported = args.export_machine or args.machine
    problems += check(
        "envmgr --machine RECORD export",
        run([*envmgr, "--machine", exported, "export"]),
        (0,),
        lambda out: "" if "schema = 1" in out and "[env" in out else "no snapshot on stdout",
    )
    problems += check("envmgr doctor --json", run([*envmgr, "doctor", "--json"]), (0, 1), doctor_json)
    for problem in problems:
        print(f"FAILED: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
