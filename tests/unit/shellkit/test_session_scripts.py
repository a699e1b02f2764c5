"""What users source or profile-load: the PowerShell module, the cmd/sh/fish activation scripts, the
init scripts `envmgr shell` writes, and activation/deactivation restoring exactly."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from envmgr.snapshot.activation import ACTIVE, activation_delta, deactivation_delta
from envmgr.snapshot.envdelta import PREPEND, REMOVE, SET, UNSET, EnvDelta, VarOp
from envmgr.shellkit.launch import build_session
from envmgr.shellkit.init import hook_script, profile_line, shells_dir
from tests.conftest import ROOT
from tests.unit.shellkit.test_shellkit_ps1 import literals, parse, ts_bat, ts_ps

DELTA = EnvDelta(
    "windows",
    (
        VarOp("CUDA_PATH", SET, "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4"),
        VarOp("PATH", REMOVE, ("C:\\CUDA\\v11.8\\bin",)),
        VarOp("PATH", PREPEND, ("C:\\CUDA\\v12.4\\bin",)),
        VarOp("CMAKE_ARGS", SET, "-DGGML_CUDA=on '-DX=a b'"),
        VarOp("LLAMA_CUBLAS", UNSET),
    ),
)
BEFORE = {"PATH": "C:\\CUDA\\v11.8\\bin;C:\\Windows", "LLAMA_CUBLAS": "1", "TEMP": "C:\\T"}


@pytest.mark.parametrize("name", ["Envmgr.psm1", "Envmgr.psd1"])
def test_powershell_module_parses_without_errors(name):
    source = (shells_dir() / name).read_text(encoding="utf-8")
    tree = parse(source, ts_ps)
    assert not tree.root_node.has_error, str(tree.root_node)


def test_powershell_module_functions_and_manifest_agree():
    psm1 = (shells_dir() / "Envmgr.psm1").read_text(encoding="utf-8")
    psd1 = (shells_dir() / "Envmgr.psd1").read_text(encoding="utf-8")
    for function in ("Enter-Envmgr", "Exit-Envmgr"):
        assert f"function {function}" in psm1 and f"'{function}'" in psd1
    assert "Get-EnvmgrScript (@('export', '--activate', '--format', 'ps1') + $list)" in psm1
    assert "Get-EnvmgrScript @('deactivate', '--format', 'ps1')" in psm1
    # envmgr's UTF-8 decoded as UTF-8, whatever the console's code page, and the code page put back
    helper = psm1[psm1.index("function Get-EnvmgrScript") :]
    helper = helper[: helper.index("\n}\n") + 3]
    assert (
        helper.index("[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false")
        < helper.index("& envmgr @EnvmgrArgs")
        < helper.index("finally")
        < helper.index("[Console]::OutputEncoding = $before")
    )
    assert "Register-ArgumentCompleter -Native -CommandName @('envmgr'" in psm1
    assert "RootModule        = 'Envmgr.psm1'" in psd1


def test_pwsh_init_script_parses_and_assigns_exactly_the_values(tmp_path):
    active = activation_delta(DELTA, BEFORE, "cuda-12.4 vs2022-community")
    session = build_session("pwsh", active, BEFORE, "cuda-12.4 vs2022-community")
    raw = open(os.path.join(session.folder, "init.ps1"), "rb").read()
    assert raw.startswith(b"\xef\xbb\xbf") and b"\r\n" in raw  # UTF-8 BOM and CRLF for PowerShell 5.1
    source = raw.decode("utf-8-sig")
    tree = parse(source, ts_ps)
    assert not tree.root_node.has_error, str(tree.root_node)
    got = set(literals(tree, source.encode("utf-8")))
    after = DELTA.apply(BEFORE)
    assert after["PATH"] == "C:\\CUDA\\v12.4\\bin;C:\\Windows"
    assert {after["CUDA_PATH"], after["PATH"], after["CMAKE_ARGS"], "cuda-12.4 vs2022-community"} <= got
    restore = json.loads(next(v for v in got if v.startswith("{")))
    assert restore == {"CUDA_PATH": None, "PATH": BEFORE["PATH"], "CMAKE_ARGS": None, "LLAMA_CUBLAS": "1"}
    assert "(envmgr cuda-12.4 vs2022-community) " in got  # the prompt marker
    assert session.argv[:3] == ("pwsh", "-NoLogo", "-NoExit")


@pytest.mark.parametrize("name", ["envmgr-activate.cmd", "envmgr-deactivate.cmd", "envmgr-init.cmd"])
def test_cmd_scripts_are_crlf_and_parse_with_tree_sitter_batch(name):
    raw = (shells_dir() / name).read_bytes()
    assert b"\r\n" in raw and b"\n" not in raw.replace(b"\r\n", b"")
    tree = parse(raw.decode("ascii"), ts_bat)
    assert not tree.root_node.has_error, str(tree.root_node)


def test_cmd_init_script_sets_the_prompt_and_values(tmp_path):
    active = activation_delta(DELTA, BEFORE, "cuda-12.4")
    session = build_session("cmd", active, BEFORE, "cuda-12.4")
    text = open(os.path.join(session.folder, "init.cmd"), "rb").read().decode("utf-8")
    assert '@set "PROMPT=(envmgr cuda-12.4) $P$G"' in text
    assert '@set "CUDA_PATH=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4"' in text
    assert session.argv[:3] == ("cmd.exe", "/d", "/k")


def test_activation_then_deactivation_restores_exactly_including_missing_variables():
    linux = EnvDelta(
        "linux", (VarOp("CUDA_HOME", SET, "/cuda"), VarOp("PATH", PREPEND, ("/cuda/bin",)), VarOp("OLD", UNSET))
    )
    before = {"PATH": "/usr/bin", "OLD": "x", "KEEP": "1"}
    active = activation_delta(linux, before, "cuda-13.0").apply(before)
    assert active["CUDA_HOME"] == "/cuda" and active["PATH"] == "/cuda/bin:/usr/bin" and "OLD" not in active
    assert active[ACTIVE] == "cuda-13.0"
    restored = deactivation_delta(active, "linux").apply(active)
    assert restored == before


def test_a_second_activation_replaces_the_first_without_stacking():
    first = EnvDelta(
        "linux", (VarOp("CUDA_HOME", SET, "/a"), VarOp("PATH", PREPEND, ("/a/bin",)), VarOp("ONLY_FIRST", SET, "1"))
    )
    second = EnvDelta("linux", (VarOp("CUDA_HOME", SET, "/b"), VarOp("PATH", PREPEND, ("/b/bin",))))
    before = {"PATH": "/usr/bin"}
    one = activation_delta(first, before, "a").apply(before)
    two = activation_delta(second, one, "b").apply(one)
    assert two["PATH"] == "/b/bin:/usr/bin" and "ONLY_FIRST" not in two and two["CUDA_HOME"] == "/b"
    assert deactivation_delta(two, "linux").apply(two) == before


@pytest.mark.posix
def test_sh_hook_activates_and_deactivates_in_real_bash(tmp_path):
    """envmgr_activate / envmgr_deactivate from `envmgr init bash --script`, in bash, with a snapshot."""
    snap = tmp_path / "env.toml"
    snap.write_text(
        'schema = 1\nplatform = "linux"\n[summary]\ncuda_short = "9.9"\n[env]\nCUDA_HOME = "/opt/c"\n'
        'GONE = "new"\n[env.PATH]\nprepend = ["/opt/c/bin"]\n',
        encoding="utf-8",
    )
    envmgr = f"{sys.executable} -m envmgr"
    script = (
        f'envmgr() {{ {envmgr} "$@"; }}\n'
        + hook_script("bash").replace("command envmgr", "envmgr")
        + f'\nbefore="$PATH|${{CUDA_HOME-unset}}|${{GONE-unset}}"\n'
        f'envmgr_activate --from {snap}\necho "IN $ENVMGR_ACTIVE|$CUDA_HOME|$GONE|$PATH"\n'
        f'envmgr_activate --from {snap}\necho "AGAIN $PATH"\n'
        'envmgr_deactivate\nafter="$PATH|${CUDA_HOME-unset}|${GONE-unset}"\n'
        '[ "$before" = "$after" ] && echo RESTORED || echo "DIFF $before vs $after"\n'
    )
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "GONE") and not k.startswith("ENVMGR_")}
    env.update(PYTHONPATH=str(ROOT), PATH="/usr/bin:/bin")
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stderr
    assert lines[0] == "IN cuda-9.9|/opt/c|new|/opt/c/bin:/usr/bin:/bin"
    assert lines[1] == "AGAIN /opt/c/bin:/usr/bin:/bin"
    assert lines[2] == "RESTORED"


@pytest.mark.posix
@pytest.mark.parametrize("user_env", [None, "$HOME/my env.sh"])
def test_sh_session_rc_sources_the_users_env_file_once_and_never_itself(tmp_path, user_env):
    """`envmgr shell --shell sh` hands sh its rc through ENV: the rc used to source "$ENV", itself,
    until dash overflowed its stack (exit 139)."""
    import shutil

    sh = shutil.which("dash") or shutil.which("sh")
    if sh is None:
        pytest.skip("no sh")
    (tmp_path / "my env.sh").write_text('N=$((${N:-0}+1)); PS1="u$ "\n')
    linux = EnvDelta("linux", (VarOp("CUDA_HOME", SET, "/opt/c"), VarOp("PATH", PREPEND, ("/opt/c/bin",))))
    before = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **({"ENV": user_env} if user_env else {})}
    session = build_session("sh", activation_delta(linux, before, "cuda-9.9"), before, "cuda-9.9")
    assert session.argv == ("sh", "-i") and session.env["ENV"].startswith(session.folder)
    done = subprocess.run(
        [sh, "-i"],
        input='echo "GOT $CUDA_HOME|${N-none}|${ENV-unset}"\nexit 5\n',
        capture_output=True,
        text=True,
        env=session.env,
        timeout=30,
    )
    assert done.returncode == 5, (done.returncode, done.stderr[-300:])
    assert f"GOT /opt/c|{'1|' + user_env if user_env else 'none|unset'}" in done.stdout.splitlines()
    assert ("(envmgr cuda-9.9) u$ " if user_env else "(envmgr cuda-9.9) ") in done.stderr


@pytest.mark.parametrize("shell,line", [("bash", ". '{}'"), ("zsh", ". '{}'"), ("fish", "source '{}'")])
def test_init_prints_one_profile_line_that_sources_a_static_file(cli, shell, line):
    # Issue 14: opening a shell must start no Python; the file is shipped in the package. The path is
    # this OS's (backslashes on Windows, for Git Bash or MSYS2's fish, where fish's quotes escape them).
    path = os.path.join(shells_dir(), "envmgr.fish" if shell == "fish" else "envmgr.sh")
    quoted = path.replace("\\", "\\\\") if shell == "fish" else path
    result = cli("init", shell)
    assert result.code == 0 and result.stdout.strip() == line.format(quoted) == profile_line(shell)


@pytest.mark.posix
@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_a_new_interactive_shell_with_the_profile_line_starts_no_envmgr(shell, tmp_path):
    import shutil

    if shutil.which(shell) is None:
        pytest.skip(f"no {shell}")
    log = tmp_path / "calls"
    (tmp_path / "envmgr").write_text(f'#!/bin/sh\necho "$*" >> "{log}"\n')
    (tmp_path / "envmgr").chmod(0o755)
    done = subprocess.run(
        [shell, "-i", "-c", profile_line(shell) + "\ntype envmgr_activate >/dev/null && echo OK"],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PATH": f"{tmp_path}:/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert "OK" in done.stdout and not log.exists(), done.stderr


def test_init_powershell_imports_the_module(cli):
    result = cli("init", "powershell")
    assert result.stdout.strip().startswith("Import-Module '") and result.stdout.strip().endswith("Envmgr.psd1'")


def test_completion_is_written_out_and_asks_envmgr_only_on_tab():
    assert "complete -o default -F _envmgr_complete envmgr" in hook_script("bash")
    assert "compdef _envmgr_complete envmgr" in hook_script("zsh")
    assert "complete -c envmgr -f -a '(__envmgr_complete)'" in hook_script("fish")
    assert all("complete-words" in hook_script(s) for s in ("bash", "zsh", "fish"))


def test_complete_words_answers_for_powershell(cli):
    result = cli("complete-words", "--incomplete", "fix", "--")
    assert "fix-msbuild" in result.stdout.split()
