"""`envmgr hook` (issue 38): the pure parts (the env file, the ._pth change, where the hook goes, the
overrides), the start-up module in a real interpreter, and the install -> status -> remove round trip
on a real venv (byte for byte), refusals and interruptions included."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from envmgr.errors import UnrepresentableValue
from envmgr.hook import apply, plan
from envmgr.snapshot.envdelta import APPEND, PREPEND, REMOVE, SET, UNSET, EnvDelta, VarOp
from envmgr.snapshot.overrides import compiler_overrides
from tests.conftest import EMBEDDED_PYTHON, run_cli

SITE_MODULE = Path(plan.__file__).with_name("site_module.py")
PLATFORM = "windows" if sys.platform == "win32" else "linux"
SEP = os.pathsep


def tree_hashes(root: Path) -> dict[str, str]:
    """Every file under root (and every folder, as a name), with its sha256: the venv 'byte for byte'."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        out[rel] = "<dir>" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def apply_in_child(env_file: Path, env: dict[str, str]) -> tuple[dict[str, str], str]:
    """site_module.apply(env_file) in a fresh interpreter started with `env`: (its environment after, stderr)."""
    code = (
        "import importlib.util, json, os, sys\n"
        f"spec = importlib.util.spec_from_file_location('hook_under_test', {str(SITE_MODULE)!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        f"m.apply({str(env_file)!r})\n"
        "print(json.dumps(dict(os.environ)))\n"
    )
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


# ---- the env file and the start-up module ---------------------------------------------------------
def test_the_module_applies_what_envdelta_applies(tmp_path):
    """The hook's in-process application equals EnvDelta.apply, the rule every export format follows."""
    delta = EnvDelta(
        PLATFORM,
        (
            VarOp("CUDA_PATH", SET, str(tmp_path / "cuda")),
            VarOp("STALE", UNSET),
            VarOp("PATH", REMOVE, (str(tmp_path / "old"),)),
            VarOp("PATH", PREPEND, (str(tmp_path / "cuda" / "bin"), str(tmp_path / "tools"))),
            VarOp("INCLUDE", APPEND, (str(tmp_path / "inc"),)),
        ),
    )
    start = {
        **{k: v for k, v in os.environ.items() if k in ("SYSTEMROOT", "SystemRoot", "HOME")},
        "PATH": SEP.join([str(tmp_path / "old"), str(tmp_path / "tools") + os.sep, sys.prefix]),
        "STALE": "1",
        "INCLUDE": str(tmp_path / "inc"),
    }
    env_file = tmp_path / plan.ENV
    env_file.write_text(plan.env_text(delta, ("a comment",)), encoding="utf-8")
    after, _ = apply_in_child(env_file, start)
    expected = delta.apply(start)
    for name in ("CUDA_PATH", "PATH", "INCLUDE"):
        assert after[name] == expected[name], name
    assert "STALE" not in after


def test_applying_twice_changes_nothing(tmp_path):
    """A child of a hooked Python (same venv) applies the hook again over the inherited environment."""
    delta = EnvDelta(PLATFORM, (VarOp("PATH", PREPEND, (str(tmp_path / "bin"),)),))
    env_file = tmp_path / plan.ENV
    env_file.write_text(plan.env_text(delta), encoding="utf-8")
    once, _ = apply_in_child(env_file, {**os.environ, "PATH": sys.prefix})
    twice, _ = apply_in_child(env_file, {**os.environ, "PATH": once["PATH"]})
    assert once["PATH"] == twice["PATH"] == SEP.join([str(tmp_path / "bin"), sys.prefix])


@pytest.mark.parametrize("value", ["a\tb", "a\nb", "a\rb", "a\0b"])
def test_a_value_the_file_cannot_hold_is_refused_at_install(value):
    with pytest.raises(UnrepresentableValue, match="hook: cannot represent the value of variable 'X'"):
        plan.env_text(EnvDelta("linux", (VarOp("X", SET, value),)))


# ---- embeddable Python: the ._pth ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            b"python311.zip\r\n.\r\n\r\n# Uncomment to run site.main() automatically\r\n#import site\r\n",
            b"python311.zip\r\n.\r\n\r\n# Uncomment to run site.main() automatically\r\nimport site\r\n",
        ),
        (b"python311.zip\n.\n", b"python311.zip\n.\nimport site\n"),
        (b"python311.zip\r\n.", b"python311.zip\r\n.\r\nimport site\r\n"),
        (b"python311.zip\n#  import site\n", b"python311.zip\nimport site\n"),
    ],
)
def test_enable_site_keeps_every_other_byte(before, after):
    assert plan.enable_site(before) == after


def test_a_pth_that_imports_site_already_is_left_alone():
    assert plan.enable_site(b"python311.zip\r\n.\r\nimport site\r\n") is None


def _probe(**kw: object) -> plan.Probe:
    base = {
        "executable": "/v/bin/python",
        "version": "3.11",
        "prefix": "/v",
        "base_prefix": "/usr",
        "purelib": "/v/lib/python3.11/site-packages",
        "sitepackages": ("/v/lib/python3.11/site-packages",),
        "path": ("/usr/lib/python3.11", "/v/lib/python3.11/site-packages"),
        "pth_files": (),
    }
    return plan.Probe(**{**base, **kw})  # type: ignore[arg-type]


def test_a_venv_gets_its_purelib():
    placed = plan.place(_probe(), lambda p: True, lambda p: b"")
    assert placed == plan.Placement("/v/lib/python3.11/site-packages", None)
    assert _probe().kind == "venv" and _probe(base_prefix="/v").kind == "installation"


def test_a_python_without_a_site_folder_on_its_path_is_refused():
    assert plan.place(_probe(path=("/usr/lib/python3.11",)), lambda p: True, lambda p: b"") is None


def test_an_embeddable_python_gets_its_own_folder_and_import_site():
    """python.org's embeddable build: site.getsitepackages() is [prefix, prefix\\Lib\\site-packages]; the
    first exists; the ._pth named after the DLL (python311._pth) gets `import site`."""
    probe = _probe(
        executable="C:\\app\\py\\python.exe",
        prefix="C:\\app\\py",
        base_prefix="C:\\app\\py",
        purelib="C:\\app\\py\\Lib\\site-packages",
        sitepackages=("C:\\app\\py", "C:\\app\\py\\Lib\\site-packages"),
        path=("C:\\app\\py\\python311.zip", "C:\\app\\py"),
        pth_files=("C:\\app\\py\\python311._pth",),
    )
    pth = b"python311.zip\r\n.\r\n#import site\r\n"
    placed = plan.place(probe, lambda p: p == "C:\\app\\py", lambda p: pth)
    assert probe.kind == "embeddable"
    assert placed == plan.Placement(
        "C:\\app\\py", "C:\\app\\py\\python311._pth", pth, b"python311.zip\r\n.\r\nimport site\r\n", ()
    )


# ---- overrides ------------------------------------------------------------------------------------
def test_a_stray_cc_is_an_override_unless_the_snapshot_sets_it():
    env = {"CC": "clang", "CXX": "", "CUDAHOSTCXX": "/usr/bin/g++-15", "PATH": "/usr/bin"}
    assert [n for n, _, _ in compiler_overrides(env, "linux")] == ["CC", "CUDAHOSTCXX"]
    own = EnvDelta("linux", (VarOp("CUDAHOSTCXX", SET, "/usr/bin/g++-13"),))
    assert [n for n, _, _ in compiler_overrides(env, "linux", own)] == ["CC"]
    assert [n for n, _, _ in compiler_overrides({"cc": "gcc"}, "windows")] == ["CC"]  # Windows: any case


# ---- the command, on a real venv (under the Windows-CPython tier: an app's embeddable Python) -----
# python.org's embeddable ._pth as shipped, with its entries made absolute (the copy's stdlib stays in the
# interpreter's own folder); CRLF as shipped.
SHIPPED_PTH = "{zip}\r\n{home}\r\n\r\n# Uncomment to run site.main() automatically\r\n#import site\r\n"


def copy_program(src: str | Path, dst: str | Path) -> None:
    """A program's bytes and mode. Not shutil.copy2: on Windows CPython 3.12+ it calls CopyFile2, which Wine 8 lacks
    (its debugger then waits, and the tier hangs)."""
    shutil.copyfile(src, dst)
    shutil.copymode(src, dst)


def app_python(root: Path) -> Path:
    """A Python as an app ships it: the embeddable build's executables and DLLs in the app's folder."""
    home = Path(sys.executable).parent
    folder = root / "app" / "python"
    folder.mkdir(parents=True)
    for f in home.iterdir():
        if f.suffix.lower() in (".exe", ".dll"):
            copy_program(f, folder / f.name)
    pth = next(home.glob("python3*._pth"))
    (folder / pth.name).write_bytes(SHIPPED_PTH.format(zip=home / (pth.stem + ".zip"), home=home).encode())
    return folder / "python.exe"


@pytest.fixture
def venv_python(tmp_path) -> Path:
    """A venv's python; the embeddable build makes no venv (no launcher), so there an app-style copy of it."""
    if EMBEDDED_PYTHON:
        return app_python(tmp_path)
    where = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(where)
    return where / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def snapshot_file(tmp_path: Path, tools: Path) -> Path:
    tools.mkdir(exist_ok=True)
    key = "windows" if sys.platform == "win32" else "linux"
    path = tmp_path / "snap.toml"
    path.write_text(
        f'schema = 1\nplatform = "{key}"\n[summary]\ncuda = "13.0"\n[env]\n'
        f"HOOK_TEST = 'on'\nPATH = {{ prepend = [{json.dumps(str(tools))}] }}\n",
        encoding="utf-8",
    )
    return path


def child_env(python: Path) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("HOOK_TEST", "ENVMGR_HOOK", "VIRTUAL_ENV")}


def test_round_trip_leaves_the_venv_byte_for_byte(tmp_path, venv_python):
    root = venv_python.parent.parent
    before = tree_hashes(root)
    snap = snapshot_file(tmp_path, tmp_path / "tools")
    done = run_cli("hook", "install", "--python", str(venv_python), "--from", str(snap), "--json")
    assert done.code == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["kind"] == ("embeddable" if EMBEDDED_PYTHON else "venv") and report["snapshot"]["origin"] == "file"
    code = "import os; print(os.environ.get('HOOK_TEST'), os.environ['PATH'].split(os.pathsep)[0])"
    started = subprocess.run([str(venv_python), "-c", code], capture_output=True, text=True, env=child_env(venv_python))
    assert started.stdout.split() == ["on", str(tmp_path / "tools")] and started.stderr == ""
    status = run_cli("hook", "status", "--python", str(venv_python), "--json")
    assert status.code == 0, status.stderr
    assert json.loads(status.stdout)["snapshot"]["state"] == "current"
    removed = run_cli("hook", "remove", "--python", str(venv_python))
    assert removed.code == 0, removed.stderr
    assert tree_hashes(root) == before
    again = run_cli("hook", "remove", "--python", str(venv_python), "--json")
    assert again.code == 0 and json.loads(again.stdout)["was_installed"] is False


def test_status_reports_a_changed_snapshot_and_a_stray_cc(tmp_path, venv_python):
    snap = snapshot_file(tmp_path, tmp_path / "tools")
    assert run_cli("hook", "install", "--python", str(venv_python), "--from", str(snap)).code == 0
    snapshot_file(tmp_path, tmp_path / "other-tools")
    done = run_cli("hook", "status", "--python", str(venv_python), env={"CC": "clang"})
    assert done.code == 1
    assert "changed: the selectors now give another environment" in done.stdout
    assert "CC=clang overrides the compiler" in done.stdout
    report = json.loads(run_cli("hook", "status", "--python", str(venv_python), "--json", env={"CC": "clang"}).stdout)
    assert [o["name"] for o in report["overrides"]] == ["CC"] and report["ok"] is False


def test_a_broken_env_file_never_stops_the_python(tmp_path, venv_python):
    snap = snapshot_file(tmp_path, tmp_path / "tools")
    assert run_cli("hook", "install", "--python", str(venv_python), "--from", str(snap)).code == 0
    site = Path(json.loads(run_cli("hook", "status", "--python", str(venv_python), "--json").stdout)["site"])
    (site / plan.ENV).write_bytes(b"garbage\n")
    started = subprocess.run(
        [str(venv_python), "-c", "print('alive')"], capture_output=True, text=True, env=child_env(venv_python)
    )
    assert started.returncode == 0 and started.stdout == "alive\n"
    assert started.stderr.count("\n") == 1 and started.stderr.startswith("envmgr hook: not applied")
    off = subprocess.run(
        [str(venv_python), "-c", "print('alive')"],
        capture_output=True,
        text=True,
        env={**child_env(venv_python), "ENVMGR_HOOK": "0"},
    )
    assert off.stderr == ""
    files = json.loads(run_cli("hook", "status", "--python", str(venv_python), "--json").stdout)["files"]
    assert {Path(f["path"]).name: f["state"] for f in files}[plan.ENV] == "changed"


def test_remove_refuses_when_a_hook_file_was_edited_and_changes_nothing(tmp_path, venv_python):
    snap = snapshot_file(tmp_path, tmp_path / "tools")
    assert run_cli("hook", "install", "--python", str(venv_python), "--from", str(snap)).code == 0
    root = venv_python.parent.parent
    site = next(root.rglob(plan.PTH)).parent
    (site / plan.PY).write_text("# mine now\n", encoding="utf-8")
    edited = tree_hashes(root)
    done = run_cli("hook", "remove", "--python", str(venv_python))
    assert (
        done.code == 1
        and "nothing was removed" in (done.stdout + done.stderr)
        and plan.PY in (done.stdout + done.stderr)
    )
    assert tree_hashes(root) == edited


def test_install_again_replaces_the_hook(tmp_path, venv_python):
    root = venv_python.parent.parent
    before = tree_hashes(root)
    snap = snapshot_file(tmp_path, tmp_path / "tools")
    for _ in range(2):
        assert run_cli("hook", "install", "--python", str(venv_python), "--from", str(snap)).code == 0
    assert run_cli("hook", "remove", "--python", str(venv_python)).code == 0
    assert tree_hashes(root) == before


def test_an_interrupted_install_leaves_nothing(tmp_path, venv_python, monkeypatch):
    root = venv_python.parent.parent
    before = tree_hashes(root)
    real = apply.atomic_write

    def stop_at_the_pth(path, data, **kw):
        if str(path).endswith(plan.PTH):
            raise KeyboardInterrupt
        return real(path, data, **kw)

    monkeypatch.setattr(apply, "atomic_write", stop_at_the_pth)
    snap = snapshot_file(tmp_path, tmp_path / "tools")
    done = run_cli("hook", "install", "--python", str(venv_python), "--from", str(snap))
    assert done.code != 0
    assert tree_hashes(root) == before


def test_without_a_venv_the_python_must_be_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = run_cli("hook", "status", env={"VIRTUAL_ENV": "", "CONDA_PREFIX": ""})
    assert done.code == 2 and "no virtual environment or conda environment here" in (done.stdout + done.stderr)


def test_a_python_that_does_not_run_is_one_line_exit_2(tmp_path):
    done = run_cli("hook", "install", "--python", str(tmp_path / "nope"), "--from", str(tmp_path / "x.toml"))
    assert done.code == 2 and "cannot ask it for its site folder" in (done.stdout + done.stderr)


def embeddable_python(tmp_path: Path) -> Path:
    """A Python beside a ._pth, site off, as an app ships it: on Windows python.org's embeddable build copied
    (app_python); on POSIX the real CPython binary copied next to a ._pth naming its standard library
    (CPython reads a ._pth on POSIX from 3.11 on: getpath.py)."""
    if sys.platform == "win32":
        if not EMBEDDED_PYTHON:
            pytest.skip("a full CPython: the embeddable layout is the Windows-CPython tier's")
        return app_python(tmp_path)
    if sys.version_info < (3, 11):
        pytest.skip("POSIX CPython reads a ._pth from 3.11 on (getpath.py)")
    import sysconfig

    app = tmp_path / "app" / "py"
    app.mkdir(parents=True)
    exe = app / "python"
    copy_program(os.path.realpath(sys.executable), exe)
    paths = sysconfig.get_paths()
    dynload = Path(paths["platstdlib"]) / "lib-dynload"
    (app / "python._pth").write_bytes(f"{paths['stdlib']}\n{dynload}\n.\n# import site\n".encode())
    probe = subprocess.run([str(exe), "-c", "import sys; print(sys.flags.no_site)"], capture_output=True, text=True)
    if probe.returncode != 0 or probe.stdout.strip() != "1":
        pytest.skip(f"this CPython does not start from a copy beside a ._pth: {probe.stderr[-200:]}")
    return exe


def test_an_embeddable_layout_round_trip(tmp_path):
    """An interpreter beside a ._pth (an app's portable Python). The hook turns `import site` on, makes the
    site folder it needs (POSIX), applies at start-up, and remove restores every byte and removes the folders
    it made."""
    exe = embeddable_python(tmp_path)
    app = exe.parent
    before = tree_hashes(tmp_path / "app")
    snap = snapshot_file(tmp_path, tmp_path / "tools")
    done = run_cli("hook", "install", "--python", str(exe), "--from", str(snap), "--json")
    assert done.code == 0, done.stderr
    assert json.loads(done.stdout)["pth_changed"] == str(next(app.glob("*._pth")))
    started = subprocess.run(
        [str(exe), "-c", "import os; print(os.environ.get('HOOK_TEST'))"],
        capture_output=True,
        text=True,
        env=child_env(exe),
    )
    assert started.stdout == "on\n", started.stderr
    assert run_cli("hook", "remove", "--python", str(exe)).code == 0
    assert tree_hashes(tmp_path / "app") == before


# ---- doctor's note --------------------------------------------------------------------------------
def test_doctor_notes_a_stray_cc_of_the_machine(tmp_path):
    """A recorded Linux machine whose environment sets CC and CXX: doctor's JSON and text name both; the
    exit code is the checks' alone (a deliberate CC is a choice, not a failure)."""
    from tests.conftest import MACHINES

    text = (MACHINES / "linux-two-toolkits.toml").read_text(encoding="utf-8")
    record = tmp_path / "machine.toml"
    record.write_text(text.replace("[env]\n", '[env]\nCC = "clang-18"\nCXX = "clang++-18"\n', 1), encoding="utf-8")
    plain = run_cli("--machine", str(MACHINES / "linux-two-toolkits.toml"), "doctor", "--json")
    done = run_cli("--machine", str(record), "doctor", "--json")
    assert done.code == plain.code
    assert [o["name"] for o in json.loads(done.stdout)["compiler_overrides"]] == ["CC", "CXX"]
    assert json.loads(plain.stdout)["compiler_overrides"] == []
    shown = run_cli("--machine", str(record), "doctor")
    assert "NOTE    CC=clang-18 overrides the compiler on the selected PATH" in shown.stdout


def test_the_snapshot_digest_is_the_same_for_a_capture_and_the_caches_copy():
    """A capture's operations come in capture order; the cache's TOML groups them per variable. `hook status`
    compares the two (a vcvars capture interleaves PATH with the rest: the Windows tier's status said
    'changed' for an unchanged cache before the digest was taken from the TOML form)."""
    from envmgr.hook.status import snapshot_digest
    from envmgr.snapshot.form import Snapshot, from_toml, to_toml

    delta = EnvDelta(
        "windows",
        (
            VarOp("PATH", PREPEND, ("C:\\VC\\bin",)),
            VarOp("INCLUDE", SET, "C:\\VC\\include"),
            VarOp("PATH", REMOVE, ("C:\\old",)),
            VarOp("LIB", APPEND, ("C:\\VC\\lib",)),
        ),
    )
    captured = to_toml(Snapshot("windows", delta))
    assert snapshot_digest(captured) == snapshot_digest(to_toml(from_toml(captured)))


def test_a_corrupt_record_is_one_line_exit_2(tmp_path, venv_python):
    snap = snapshot_file(tmp_path, tmp_path / "tools")
    assert run_cli("hook", "install", "--python", str(venv_python), "--from", str(snap)).code == 0
    record = next(venv_python.parent.parent.rglob(plan.RECORD))
    record.write_text('{"schema": 1, "created": [', encoding="utf-8")
    for sub in ("status", "remove"):
        done = run_cli("hook", sub, "--python", str(venv_python))
        assert done.code == 2 and "not a valid hook record" in done.stderr and "Traceback" not in done.stderr


def _walk_hashes(root: Path) -> dict[str, str]:
    """tree_hashes without following links (the stdlib linked into a conda-shaped prefix is not its own)."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            rel = path.relative_to(root).as_posix()
            out[rel] = (
                "-> " + os.readlink(path)
                if path.is_symlink()
                else "<dir>"
                if path.is_dir()
                else hashlib.sha256(path.read_bytes()).hexdigest()
            )
    return out


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX prefix layout (bin/, lib/pythonX.Y/)")
def test_a_conda_shaped_prefix_round_trip(tmp_path):
    """A conda environment is a whole prefix (sys.prefix == sys.base_prefix, conda-meta/ in it), not a venv:
    made here from this CPython (its binary copied into bin/, its standard library linked into lib/), with a
    site-packages of its own. HAND-MADE stand-in: no conda on this machine."""
    import sysconfig

    prefix = tmp_path / "envs" / "cu"
    lib = prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    (lib / "site-packages").mkdir(parents=True)
    (prefix / "conda-meta").mkdir()
    (prefix / "conda-meta" / "history").write_text("==> 2026-12-07 <==\n", encoding="utf-8")
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for entry in stdlib.iterdir():
        if entry.name != "site-packages":
            (lib / entry.name).symlink_to(entry)
    (prefix / "bin").mkdir()
    exe = prefix / "bin" / "python"
    copy_program(os.path.realpath(sys.executable), exe)
    probe = subprocess.run(
        [str(exe), "-c", "import sys; print(sys.prefix == sys.base_prefix == sys.argv[1])", str(prefix)],
        capture_output=True,
        text=True,
    )
    if probe.stdout.strip() != "True":
        pytest.skip(f"this CPython does not start from a copied prefix: {probe.stdout} {probe.stderr[-200:]}")
    before = _walk_hashes(prefix)
    snap = snapshot_file(tmp_path, tmp_path / "tools")
    done = run_cli("hook", "install", "--python", str(exe), "--from", str(snap), "--json")
    assert done.code == 0, done.stderr
    assert json.loads(done.stdout)["kind"] == "conda"
    assert json.loads(done.stdout)["site"] == str(lib / "site-packages")
    started = subprocess.run(
        [str(exe), "-c", "import os; print(os.environ.get('HOOK_TEST'))"],
        capture_output=True,
        text=True,
        env=child_env(exe),
    )
    assert started.stdout == "on\n", started.stderr
    assert run_cli("hook", "remove", "--python", str(exe)).code == 0
    assert _walk_hashes(prefix) == before


def test_a_remove_interrupted_after_restoring_the_pth_finishes_the_second_time(tmp_path, monkeypatch):
    """Ctrl-C in remove: the .pth is gone first (no hook runs), the ._pth restored; running remove again ends it."""
    venv_python = embeddable_python(tmp_path)
    root = tmp_path / "app"
    before = tree_hashes(root)
    snap = snapshot_file(tmp_path, tmp_path / "tools")
    assert run_cli("hook", "install", "--python", str(venv_python), "--from", str(snap)).code == 0
    real = apply._unlink

    def stop_at_the_module(path):
        if path.name == plan.PY:
            raise KeyboardInterrupt
        return real(path)

    monkeypatch.setattr(apply, "_unlink", stop_at_the_module)
    assert run_cli("hook", "remove", "--python", str(venv_python)).code != 0
    monkeypatch.setattr(apply, "_unlink", real)
    assert run_cli("hook", "remove", "--python", str(venv_python)).code == 0
    assert tree_hashes(root) == before


def test_the_active_venv_is_the_default_target(tmp_path, venv_python, monkeypatch):
    if EMBEDDED_PYTHON:
        pytest.skip("no venv under the embeddable build")
    monkeypatch.chdir(tmp_path)
    root = venv_python.parent.parent
    snap = snapshot_file(tmp_path, tmp_path / "tools")
    done = run_cli("hook", "install", "--from", str(snap), "--json", env={"VIRTUAL_ENV": str(root)})
    assert done.code == 0, done.stderr
    assert "(the active virtual environment (VIRTUAL_ENV))" in done.stderr
    assert Path(json.loads(done.stdout)["python"]).parent.parent == root
    assert run_cli("hook", "remove", env={"VIRTUAL_ENV": str(root)}).code == 0


def test_a_site_folder_that_cannot_be_written_is_one_line_and_nothing_stays(tmp_path, venv_python, monkeypatch):
    """A system Python named with --python, without the rights to its folder (root ignores modes, so the
    refusal is made where the write happens)."""
    root = venv_python.parent.parent
    before = tree_hashes(root)
    real = apply.atomic_write

    def refuse_the_env_file(path, data, **kw):
        if str(path).endswith(plan.ENV):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, data, **kw)

    monkeypatch.setattr(apply, "atomic_write", refuse_the_env_file)
    snap = snapshot_file(tmp_path, tmp_path / "tools")
    done = run_cli("hook", "install", "--python", str(venv_python), "--from", str(snap))
    assert done.code == 2 and "cannot write: Permission denied; nothing was installed" in done.stderr
    assert "Traceback" not in done.stderr
    assert tree_hashes(root) == before


def test_a_windows_venv_site_folder_is_found_however_it_is_spelled():
    probe = _probe(
        executable="C:\\v\\Scripts\\python.exe",
        prefix="C:\\v",
        base_prefix="C:\\Python312",
        purelib="C:\\v\\Lib\\site-packages",
        sitepackages=("C:\\v", "C:\\v\\Lib\\site-packages"),
        path=("C:\\Python312\\python312.zip", "c:\\v\\lib\\site-packages\\"),
    )
    assert plan.place(probe, lambda p: True, lambda p: b"") == plan.Placement("C:\\v\\Lib\\site-packages", None)
