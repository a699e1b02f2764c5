"""`envmgr verify [PACKAGE] [--python EXE] [--json]`: prove that an installed CUDA package uses the GPU."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import click

from envmgr.binaries.runtimes import duplicates
from envmgr.cli.grammar import refuse_inapplicable
from envmgr.cli.main import Ctx
from envmgr.cli.options import say_target
from envmgr.discover.target import TargetPython, choose_python
from envmgr.errors import InputFileError, UsageError
from envmgr.files.atomic import write_user_file
from envmgr.host import dirs
from envmgr.output import Painter, Spinner, emit_json
from envmgr.verify.anyrun import AnyVerdict, verify_any
from envmgr.verify.render import render_verdict, verdict_json
from envmgr.verify.report import ChildRun
from envmgr.verify.run import Verdict, canonical_package, verify
from envmgr.verify.runtimes import package_roots
from envmgr.wheels import defer


@click.command("verify")
@click.argument("package", required=False, metavar="[PACKAGE]")
@click.option(
    "--python",
    "python",
    metavar="EXE",
    help="The Python to verify (default: the active venv or "
    "conda environment, a .venv here or above, the first python on PATH; envmgr's own last).",
)
@click.option(
    "--tokens",
    "n_tokens",
    type=click.IntRange(1, 64),
    default=8,
    show_default=True,
    help="Tokens the tiny model must generate on the GPU.",
)
@click.option(
    "--timeout",
    type=click.IntRange(10, 3600),
    default=300,
    show_default=True,
    metavar="SECONDS",
    help="Give up on the child Python after this long.",
)
@click.option(
    "--save-output",
    metavar="FILE",
    help="Also write the child's raw output (stage records, then llama.cpp's log) to FILE, e.g. for a bug report.",
)
@click.option(
    "--inherit-env",
    is_flag=True,
    help="Run the child in the environment envmgr runs in, as it is "
    "(default: a plain process: that environment less an active envmgr environment).",
)
@click.option(
    "--after",
    "after_text",
    metavar="MODULE[,MODULE]",
    help="Import these modules of your app first "
    "(e.g. torch), in the same process, then the package; report what they loaded and duplicate "
    "runtimes (two OpenMP runtimes, two CUDA runtime or cuBLAS majors) with both paths.",
)
@click.option(
    "--fix",
    "apply_fix",
    is_flag=True,
    help="With --after: where the package carries its own copy of an "
    "OpenMP runtime the app loaded too, make it a link to the app's copy (one runtime in the process; "
    "the original kept; undo with --undo-fix).",
)
@click.option("--undo-fix", "undo_fix", metavar="MANIFEST", help="Put back what --fix changed (the manifest it named).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (docs/json.md, verify).")
@click.pass_obj
def command(
    obj: Ctx,
    package: str | None,
    python: str | None,
    n_tokens: int,
    timeout: int,
    save_output: str | None,
    as_json: bool,
    inherit_env: bool = False,
    after_text: str | None = None,
    apply_fix: bool = False,
    undo_fix: str | None = None,
) -> None:
    """Prove that PACKAGE (default llama-cpp-python; any installed distribution) runs on the GPU.

    \b
    llama-cpp-python: in a child process of the target Python, import llama_cpp; report the library
    that loaded and from where, its backend (CUDA or CPU only), how the GPUs here run its device code
    (native cubin, PTX JIT or not at all), the CUDA devices the backend sees; then load a tiny llama
    model that envmgr writes itself (no download) with every layer on the GPU and count the offload.
    \b
    Any other PACKAGE: in a child of the target Python, import it and load its native libraries with
    the real loader (doctor --dll's diagnosis when one fails); read their device code (cubin/PTX) and
    say how the GPUs here run it; then a smoke test chosen by what it is: a torch extension is loaded
    in the torch process and a tensor computed on the GPU; a library with ggml inside (whisper.cpp,
    stable-diffusion.cpp and other ggml bindings) lists its ggml devices and computes a small add on
    its CUDA device; else the package's system info where envmgr knows it. The report names the level
    of proof reached: loaded, reported or ran.
    \b
    The child is a plain new process of the target Python: the environment envmgr was started in, less
    an envmgr environment active in it (envmgr shell, Enter-Envmgr), so no recipe's vcvars or CUDA
    PATH helps it; a pass means your own `python` works. --inherit-env keeps envmgr's environment.
    \b
    --after torch[,other] imports the app's modules first, in that process; duplicate runtimes are listed,
    and sonames the package bound to the app's copy. --fix makes the package's copy of an OpenMP runtime
    the app also loaded a link to the app's (--undo-fix MANIFEST puts it back).
    Exit codes: 0 proven; 1 not (not installed, no native code, CPU-only, no GPU, F14, --after fails); 2 bad usage.
    \b
      envmgr verify
      envmgr verify llama-cpp-python --python .venv/bin/python --json
      envmgr verify stable-diffusion-cpp-python --python .venv/bin/python --after torch
    """

    _refuse_replay(obj)
    if undo_fix is not None:
        return _undo(undo_fix, as_json)
    name = canonical_package(package)
    after = _after(after_text, apply_fix)
    target = _target(obj, name, python)
    verdict = _verify(obj, name, target.path, n_tokens, timeout, inherit_env, after)
    _report(verdict, target, save_output, apply_fix, as_json)


def _refuse_replay(obj: Ctx) -> None:
    """verify starts a real Python: a recorded machine (--machine, --wine-prefix) is refused."""
    if obj.machine or obj.wine_prefix:
        raise UsageError(
            "envmgr verify runs a Python on this machine; it cannot replay a recorded machine",
            "run it without --machine/--wine-prefix (envmgr doctor replays records)",
        )


def _target(obj: Ctx, name: str, python: str | None) -> TargetPython:
    """The Python to verify, said once; --tokens refused for a package other than llama-cpp-python."""
    if name != "llama-cpp-python":
        refuse_inapplicable(
            click.get_current_context(),
            ("n_tokens",),
            f"to {name} (the tiny model is llama-cpp-python's)",
            "drop {flag}",
        )
    if python is not None:
        _check_python(python)
    target = choose_python(obj.local, os.getcwd(), sys.executable, python)
    say_target(target)
    return target


def _verify(
    obj: Ctx, name: str, python: str, n_tokens: int, timeout: int, inherit_env: bool, after: tuple[str, ...]
) -> Verdict | AnyVerdict:
    """llama-cpp-python's tiny-model verifier, or the any-package one, under a spinner."""
    if name == "llama-cpp-python":
        with Spinner("verifying: import, backend, devices, a tiny model on the GPU"):
            return verify(
                obj.host, python, name, n_tokens=n_tokens, timeout=timeout, inherit_env=inherit_env, after=after
            )
    with Spinner(f"verifying {name}: import, native libraries, device code against the GPUs, smoke test"):
        return verify_any(obj.host, python, name, timeout=timeout, inherit_env=inherit_env, after=after)


def _report(
    verdict: Verdict | AnyVerdict, target: TargetPython, save_output: str | None, apply_fix: bool, as_json: bool
) -> None:
    """The child's output saved (--save-output), --fix applied, the verdict shown; exit 0 when proven, else 1."""
    if save_output:
        _save(save_output, verdict.run)
    _show(verdict, target.as_json(), _fix(verdict.run) if apply_fix else None, as_json)
    click.get_current_context().exit(0 if verdict.ok else 1)


def _show(verdict: Verdict | AnyVerdict, target: dict[str, Any], fixed: dict[str, Any] | None, as_json: bool) -> None:
    if as_json:
        emit_json({**verdict_json(verdict), "target_python": target, **({"fix": fixed} if fixed else {})})
        return
    click.echo(render_verdict(verdict, Painter(sys.stdout)), nl=False)
    for line in (fixed or {}).get("applied", []):
        click.echo(f"fix: {line}")
    if fixed and fixed["undo"]:
        click.echo(f"undo with: {fixed['undo']}; run verify --after again: one runtime")


_MODULE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def after_modules(text: str | None) -> tuple[str, ...]:
    """--after torch,numpy -> ("torch", "numpy"): importable module names, or one line saying which is not."""
    if text is None:
        return ()
    names = tuple(n.strip() for n in text.split(","))
    bad = next((n for n in names if not _MODULE.match(n)), None)
    if bad is not None:
        raise UsageError(
            f"--after {text}: {bad!r} is not a module name",
            "name the modules your app imports first, comma-separated: --after torch,numpy",
        )
    return tuple(dict.fromkeys(names))


def _after(text: str | None, apply_fix: bool) -> tuple[str, ...]:
    after = after_modules(text)
    if apply_fix and not after:
        raise UsageError(
            "--fix needs --after: it makes the package's runtime defer to the one the app loads",
            "name the app's modules: envmgr verify --after torch --fix",
        )
    return after


def _fix(run: ChildRun) -> dict[str, Any]:
    """--fix: the package's copies of an OpenMP runtime the app also loaded become links to the app's."""
    found = duplicates([str(m) for m in run.get("runtimes").get("modules") or []])
    plans = defer.plan(found, package_roots(run))
    if not plans:
        return {
            "applied": ["nothing to do: no OpenMP runtime of the package's that the app loaded too"],
            "manifest": None,
            "undo": None,
        }
    lines, manifest = defer.apply(plans, dirs.data_dir() / "runtime-fixes")
    return {
        "applied": lines,
        "manifest": str(manifest) if manifest else None,
        "undo": f"envmgr verify --undo-fix {manifest}" if manifest else None,
    }


def _undo(manifest: str, as_json: bool) -> None:
    lines = defer.undo(Path(manifest))
    if as_json:
        emit_json({"undo": lines})
    else:
        click.echo("\n".join(lines))


def _check_python(python: str) -> None:
    if not python.strip():
        raise UsageError("--python needs a path", "give a Python executable, e.g. --python .venv/bin/python")
    if not os.path.isfile(python) and shutil.which(python) is None:
        raise UsageError(
            f"--python {python}: no such file",
            "give a Python executable, e.g. --python .venv/bin/python or C:\\Python312\\python.exe",
        )


def _save(path: str, run: ChildRun) -> None:
    text = f"# stdout (exit code {run.returncode})\n{run.stdout}# stderr\n{run.log}"
    try:
        write_user_file(path, text.encode("utf-8"))
    except OSError as exc:
        raise InputFileError(
            f"--save-output {path}: cannot write: {exc.strerror or exc}", "choose a writable path"
        ) from None
