"""The logic of this repository's GitHub Action (action.yml): envmgr doctor first, stopping the job
with doctor's findings as annotations when a check fails, then `envmgr export --format github`, which
appends the compiler environment to $GITHUB_ENV and $GITHUB_PATH for the later steps, and the selection
as step outputs ($GITHUB_OUTPUT).

    python .github/scripts/envmgr_action.py [ENVMGR GLOBAL OPTIONS, e.g. --machine FILE]

Inputs come from the environment, as action.yml passes them: INPUT_CUDA (X.Y, X.Y.Z or a folder),
INPUT_VS, INPUT_TOOLSET, INPUT_RECIPE, INPUT_CHECKS (doctor ids, e.g. F03,F04,F05; empty: all).
ENVMGR is the command that runs envmgr, split as a POSIX shell would (quote Windows paths; default:
this Python's `-m envmgr`). Exit codes: 0 ready,
1 a doctor check failed, otherwise envmgr's own (2 bad input, 3 nothing matched a selector).
Tested against recorded machines: tests/unit/test_github_action.py. Documented in docs/github-action.md.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys

FULL_VERSION = re.compile(r"^v?(\d+\.\d+)\.\d+$")   # a setup action's 12.8.1: envmgr matches X.Y


def selectors(env: dict[str, str]) -> list[str]:
    out = []
    cuda = env.get("INPUT_CUDA", "").strip()
    if cuda:
        m = FULL_VERSION.match(cuda)
        out += ["--cuda", m.group(1) if m else cuda]
    for name in ("vs", "toolset", "recipe"):
        value = env.get(f"INPUT_{name.upper()}", "").strip()
        if value:
            out += [f"--{name}", value]
    return out


def escape(text: str) -> str:
    """A workflow command's message: %, CR and LF escaped as the runner expects."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def annotate(check: dict) -> str:
    level = "error" if check["status"] == "fail" else "warning"
    lines = [check["summary"], *(check.get("evidence") or ())]
    if check.get("fix"):
        lines.append(f"fix: {check['fix']}")
    if check.get("fix_command"):
        lines.append(f"run: {check['fix_command']}")
    return f"::{level} title=envmgr doctor {check['id']} ({check['title']})::{escape(chr(10).join(lines))}"


def append(path: str | None, lines: list[str]) -> None:
    if path and lines:
        with open(path, "a", encoding="utf-8", newline="\n") as f:
            f.write("".join(f"{line}\n" for line in lines))


def doctor(envmgr: list[str], sel: list[str], checks: str) -> tuple[int, dict | None]:
    only = ["--only", checks] if checks else []
    done = subprocess.run([*envmgr, "doctor", "--json", *sel, *only], capture_output=True, text=True,
                          encoding="utf-8")
    sys.stderr.write(done.stderr)
    try:
        report = json.loads(done.stdout) if done.stdout.strip() else None
    except ValueError:
        report = None
    return done.returncode, report


def main(argv: list[str]) -> int:
    env = dict(os.environ)
    envmgr = shlex.split(env["ENVMGR"]) if env.get("ENVMGR") else [sys.executable, "-m", "envmgr"]
    envmgr += argv
    sel = selectors(env)
    code, report = doctor(envmgr, sel, env.get("INPUT_CHECKS", "").strip())
    if report is None:   # bad input or a selector that matches nothing: envmgr said why on stderr
        print(f"::error title=envmgr doctor::envmgr doctor {shlex.join(sel)} exited {code} (see the log above)")
        return code or 1
    for check in report["checks"]:
        if check["status"] in ("fail", "warn"):
            print(annotate(check))
    selection = report.get("selection") or {}
    picked = ", ".join(f"{k} {selection[k]}" for k in ("vs", "toolset", "cuda") if selection.get(k))
    print(f"envmgr doctor: {report['counts']['fail']} failed, {report['counts']['warn']} warning(s); "
          f"selection: {picked or 'none'}")
    if report["exit_code"] != 0:
        if selection.get("error"):
            print(f"::error title=envmgr selection::{escape(selection['error'])}")
        return report["exit_code"]
    done = subprocess.run([*envmgr, "export", "--format", "github", *sel])
    if done.returncode != 0:
        return done.returncode
    append(env.get("GITHUB_OUTPUT"), [f"{key.replace('_', '-')}={selection[key]}"
                                      for key in ("vs", "vs_path", "toolset", "cuda", "cuda_path")
                                      if selection.get(key)])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
