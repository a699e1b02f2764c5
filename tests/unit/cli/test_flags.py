"""envmgr/cli/flags.py: flag values click's types cannot check, each refused with exit 2 (or the input
file's code) and one line naming the flag."""

from __future__ import annotations

import sys

import pytest

from envmgr.cli import flags
from envmgr.errors import InputFileError, UsageError
from envmgr.host.live import LiveHost


@pytest.mark.parametrize("value", ["86", "8.6", "90a", "100f", "120", "86-real", "90-virtual", "86;89", "8.6, 8.9"])
def test_cuda_arch_lists_cmake_and_torch_take(value):
    flags.check_arch_list(value)


@pytest.mark.parametrize(
    ("value", "shown"),
    [("sm_86", "'sm_86' is not"), ("86;;89", "'' is not"), ("  ", "an empty list is not"), ("8.6.1", "'8.6.1' is not")],
)
def test_bad_cuda_arch_names_the_first_bad_entry(value, shown):
    with pytest.raises(UsageError) as caught:
        flags.check_arch_list(value)
    assert caught.value.message == f"--cuda-arch {value!r}: {shown} a CUDA architecture"
    assert caught.value.exit_code == 2


def test_recipe_flags_need_a_recipe():
    flags.check_recipe_flags("llama-cpp-python", "86", True, ("lib_path=/x",))
    flags.check_recipe_flags(None, None, False, ())
    with pytest.raises(UsageError, match="^--recipe needs a name$"):
        flags.check_recipe_flags(" ", None, False, ())
    with pytest.raises(UsageError, match="^--recipe-param only applies with --recipe$"):
        flags.check_recipe_flags(None, None, False, ("a=b",))
    with pytest.raises(UsageError, match="^--allow-unsupported-compiler only applies"):
        flags.check_recipe_flags(None, None, True, ())


def test_selector_flags():
    flags.check_selector_flags("snap.toml", True)
    with pytest.raises(UsageError, match="^--from needs a file name$"):
        flags.check_selector_flags("", False)
    with pytest.raises(UsageError, match="^--strict only applies with --from$"):
        flags.check_selector_flags(None, True)


def test_pythons_must_run_as_python(tmp_path):
    host = LiveHost()
    flags.check_pythons(host, [sys.executable])
    with pytest.raises(UsageError, match=r"not a Python envmgr can run \(no such file\)"):
        flags.check_pythons(host, [str(tmp_path / "python9")])
    text = tmp_path / "notes.txt"
    text.write_text("not a program\n")
    said = r"--pip-cuda-python .*notes.txt: not a Python envmgr can run \(it did not run"
    with pytest.raises(UsageError, match=said):
        flags.check_pythons(host, [str(text)], "--pip-cuda-python")
    with pytest.raises(UsageError, match="^--python needs a path$"):
        flags.check_pythons(host, [" "])


def test_output_file_and_wine_prefix(tmp_path):
    flags.check_output_file(str(tmp_path / "machine.toml"), "--output")
    with pytest.raises(InputFileError, match="is a folder"):
        flags.check_output_file(str(tmp_path), "--output")
    with pytest.raises(UsageError, match="needs a file name"):
        flags.check_output_file("", "--output")
    with pytest.raises(InputFileError, match="no such folder"):
        flags.check_wine_prefix(str(tmp_path / "missing"))
    (tmp_path / "file").write_text("")
    with pytest.raises(InputFileError, match="not a folder"):
        flags.check_wine_prefix(str(tmp_path / "file"))
    with pytest.raises(InputFileError, match=r"not a Wine prefix \(no system.reg\)"):
        flags.check_wine_prefix(str(tmp_path))
    (tmp_path / "drive_c").mkdir()  # a prefix whose registry Wine has not flushed yet
    flags.check_wine_prefix(str(tmp_path))
