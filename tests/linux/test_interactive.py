"""`envmgr shell` driven through a real pseudo-terminal: prompt marker, values, nesting, exit code."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from tests.conftest import Lazy, need

pexpect = Lazy("pexpect")  # imported by the tests that drive a terminal, when they do
pytestmark = [pytest.mark.linux]

MARK = "(envmgr cuda-13.0)"


def spawn_shell(shell: str, tmp_path):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    # short prompts of the user's own: the marker must be added in front of them
    (home / ".bashrc").write_text("PS1='$ '\n")
    (home / ".zshrc").write_text("PROMPT='$ '\n")
    (home / ".config" / "fish").mkdir(parents=True, exist_ok=True)
    (home / ".config" / "fish" / "config.fish").write_text("function fish_prompt; echo -n '$ '; end\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA", "ENVMGR_"))}
    from tests.conftest import ROOT

    env.update(
        PYTHONPATH=str(ROOT),
        HOME=str(home),
        TERM="dumb",
        ENVMGR_CACHE_DIR=str(tmp_path / "cache"),
        NO_COLOR="1",
        PATH="/usr/local/bin:/usr/bin:/bin",
    )
    child = pexpect.spawn(
        sys.executable,
        ["-m", "envmgr", "shell", "--shell", shell, "--cuda", "13.0"],
        env=env,
        encoding="utf-8",
        timeout=30,
        cwd=str(tmp_path),
        dimensions=(40, 250),
    )
    return child


def ask(child, command: str, pattern: str) -> str:
    child.sendline(command)
    child.expect(pattern)
    return child.match.group(1) if child.match.groups() else child.after


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "sh"])
def test_shell_has_marker_values_no_stacking_and_returns_the_exit_code(shell, tmp_path, cuda_13_0):
    need(shutil.which(shell) is not None, f"{shell} is not installed (tests/setup/install-system.sh installs it)")
    child = spawn_shell(shell, tmp_path)
    child.expect_exact(MARK)
    assert ask(child, 'echo "HOME_IS=$CUDA_HOME"', r"HOME_IS=(/\S+)") == str(cuda_13_0)
    assert ask(child, 'echo "ACTIVE=$ENVMGR_ACTIVE"', r"ACTIVE=(cuda-13\.0)") == "cuda-13.0"
    child.expect_exact(MARK)
    # a nested start warns and replaces: the toolkit's bin is on PATH exactly once
    child.sendline(f"{sys.executable} -m envmgr shell --shell {shell} --cuda 13.0")
    child.expect("already inside an envmgr environment")
    child.expect(f"starting {shell}")
    child.expect_exact(MARK)
    # fish keeps PATH as a list: print its entries one per line there
    entries = "printf '%s\\n' $PATH" if shell == "fish" else "echo $PATH | tr ':' '\\n'"
    count = ask(
        child,
        f"echo N=({entries} | grep -c '^/usr/local/cuda-13.0/bin$')"
        if shell == "fish"
        else f"echo \"N=$({entries} | grep -c '^/usr/local/cuda-13.0/bin$')\"",
        r"N=(\d+)",
    )
    assert count == "1"
    child.sendline("exit")
    child.expect_exact(MARK)
    child.sendline("exit 3")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 3


def test_unknown_shell_lists_the_valid_ones(cli):
    result = cli("shell", "--shell", "tcsh")
    assert result.code == 2
    assert "unknown shell 'tcsh'" in result.stderr and "pwsh" in result.stderr


def test_ctrl_c_reaches_the_child_not_envmgr(tmp_path, cuda_13_0):
    need(shutil.which("bash") is not None, "bash is not installed")
    child = spawn_shell("bash", tmp_path)
    child.expect_exact(MARK)
    child.sendline("sleep 30")
    child.expect_exact("sleep 30")
    import time

    time.sleep(1)
    child.sendintr()  # Ctrl+C: interrupts sleep inside the shell
    child.expect_exact(MARK)  # envmgr and the shell are still there
    child.sendline('echo "STATUS-$?"')
    child.expect(r"STATUS-(\d+)")
    assert child.match.group(1) == "130"
    child.sendline("exit 0")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_run_passes_ctrl_c_to_the_command_and_returns_its_code(tmp_path, cuda_13_0):
    from tests.conftest import ROOT

    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA", "ENVMGR_"))}
    env.update(PYTHONPATH=str(ROOT), ENVMGR_CACHE_DIR=str(tmp_path / "cache"))
    child = pexpect.spawn(
        sys.executable,
        [
            "-m",
            "envmgr",
            "run",
            "--cuda",
            "13.0",
            "--",
            "bash",
            "-c",
            "trap 'echo GOT-INT; exit 42' INT; echo READY; sleep 30",
        ],
        env=env,
        encoding="utf-8",
        timeout=30,
    )
    child.expect("READY")
    child.sendintr()
    child.expect("GOT-INT")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 42
