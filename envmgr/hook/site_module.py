"""envmgr's start-up hook: copied verbatim into the TARGET Python's site folder as `_envmgr_hook.py`,
imported by the one line of `_envmgr_hook.pth` when that Python starts (site processes .pth files).

It runs in the user's interpreter, which may be older than envmgr's and has no envmgr installed:
standard library only, and only `os` (json would import `re`: as much time as the interpreter's own
start). It reads `_envmgr_hook.env` beside it (written by `envmgr hook install`: one operation a line,
fields separated by tabs) and applies it to os.environ in this process, so a compiler that the process
starts later (cl, nvcc, gcc through setuptools or torch.utils.cpp_extension) finds its environment.

It never raises: a broken or missing env file leaves the environment as it was and prints one line on
stderr (the interpreter starts as if the hook were absent). ENVMGR_HOOK=0 turns it off for one run.
"""

import os

ENV_FILE = "_envmgr_hook.env"
HEADER = "envmgr-hook 1"


def _key(entry: str, fold: bool) -> str:
    entry = entry.rstrip("\\/") or entry
    return entry.lower() if fold else entry


def _apply_line(fields: "list[str]", sep: str, fold: bool) -> None:
    op, name, values = fields[0], fields[1], fields[2:]
    env = os.environ
    if op == "set":
        env[name] = values[0] if values else ""
    elif op == "unset":
        env.pop(name, None)
    elif op in ("prepend", "append", "remove"):
        drop = {_key(v, fold) for v in values}
        rest = [e for e in env.get(name, "").split(sep) if e.strip() and _key(e, fold) not in drop]
        merged = rest if op == "remove" else (values + rest if op == "prepend" else rest + values)
        seen, out = set(), []
        for entry in merged:
            k = _key(entry, fold)
            if k not in seen:
                seen.add(k)
                out.append(entry)
        env[name] = sep.join(out)
    else:
        raise ValueError("unknown operation " + repr(op))


def apply(path: "str | None" = None) -> bool:
    """Apply the env file (default: the one beside this module); True when it was applied."""
    if os.environ.get("ENVMGR_HOOK", "") == "0":
        return False
    path = path or os.path.join(os.path.dirname(os.path.abspath(__file__)), ENV_FILE)
    with open(path, "rb") as fh:
        text = fh.read().decode("utf-8")
    lines = text.split("\n")
    if lines[0].rstrip("\r") != HEADER:
        raise ValueError("not an envmgr hook file (first line " + repr(lines[0][:40]) + ")")
    fold = os.name == "nt"
    sep = ";" if fold else ":"
    ops = [ln.rstrip("\r").split("\t") for ln in lines[1:] if ln.strip() and not ln.startswith("#")]
    for fields in ops:  # checked whole before anything changes: a cut file applies nothing
        if len(fields) < 2 or not fields[1]:
            raise ValueError("a malformed line: " + repr("\t".join(fields)[:60]))
    for fields in ops:
        _apply_line(fields, sep, fold)
    return True


def _start() -> None:
    try:
        apply()
    except Exception as exc:  # the user's Python must start whatever became of the hook's file
        try:
            import sys

            sys.stderr.write("envmgr hook: not applied (%s); `envmgr hook status` says more\n" % (exc,))
        except Exception:
            pass


if __name__ == "_envmgr_hook":  # its name in the target; envmgr itself only copies this file
    _start()
