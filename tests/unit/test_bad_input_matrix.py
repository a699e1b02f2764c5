"""Every command and option that takes a file, a path, a version or a name, against bad values:
each row is the exit code (design.md: 2 bad usage or input file, 3 no match) and the one line that
says what is wrong. No row may end in a traceback (run_cli does not catch exceptions, so one fails
the row). Rows that could hang (/dev/zero, a FIFO) or need a real process (stdin closed) run as a
subprocess with a timeout.

The files are made here (hand-made: they are bad inputs, not samples of real output); the UTF-16
and BOM rows expect success, as issue 11 item 7 made those encodings valid.
"""

from __future__ import annotations

import codecs
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, MACHINES, ROOT, run_cli

pytestmark = pytest.mark.posix  # FIFOs, /dev/zero, /proc, symlink loops

WIN = EXAMPLES / "community-buildtools-cuda124.toml"
LINUX = MACHINES / "linux-two-toolkits.toml"
HUGE = 65 * 1024 * 1024  # above readfile.TEXT_LIMIT; a sparse file, so it costs no disk


def _cut_pe() -> bytes:
    """A PE file cut right after its optional header: it declares 4 sections and holds none."""
    dos = b"MZ" + b"\0" * 58 + struct.pack("<I", 64)
    coff = b"PE\0\0" + struct.pack("<HHIIIHH", 0x8664, 4, 0, 0, 0, 240, 0x2022)
    opt = bytearray(240)
    struct.pack_into("<H", opt, 0, 0x20B)  # PE32+
    struct.pack_into("<I", opt, 32, 0x1000)  # SectionAlignment
    struct.pack_into("<I", opt, 36, 0x200)  # FileAlignment
    struct.pack_into("<I", opt, 56, 0x5000)  # SizeOfImage
    struct.pack_into("<I", opt, 60, 0x400)  # SizeOfHeaders
    struct.pack_into("<I", opt, 108, 16)  # NumberOfRvaAndSizes
    return dos + coff + bytes(opt)


@pytest.fixture(scope="module")
def bad(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("bad")
    (d / "empty.toml").write_bytes(b"")
    (d / "comments.toml").write_text("# nothing but a comment\n\n")
    (d / "folder.toml").mkdir()
    (d / "binary.toml").write_bytes(bytes(range(256)) * 4)
    (d / "garbage.toml").write_text("this is = = not toml [\n")
    (d / "json.toml").write_text('{"schema": 1, "platform": "linux"}\n')
    (d / "loop-a.toml").symlink_to(d / "loop-b.toml")
    (d / "loop-b.toml").symlink_to(d / "loop-a.toml")
    with open(d / "huge.toml", "wb") as fh:
        fh.truncate(HUGE)
    os.mkfifo(d / "fifo.toml")
    (d / "regular-file").write_text("not a folder\n")
    (d / "not-a-prefix").mkdir()
    (d / "build.log").write_text("")
    text = WIN.read_text(encoding="utf-8")
    (d / "machine-utf16.toml").write_bytes(codecs.BOM_UTF16_LE + text.replace("\n", "\r\n").encode("utf-16-le"))
    (d / "machine-bom.toml").write_bytes(codecs.BOM_UTF8 + text.encode("utf-8"))
    for name, body in {
        "m-platform.toml": 'schema = 1\nplatform = "mac"\n',
        "m-env-list.toml": 'schema = 1\nenv = ["PATH"]\n',
        "m-no-schema.toml": 'platform = "linux"\n',
        "m-schema-2.toml": 'schema = 2\nplatform = "linux"\n',
        "m-schema-str.toml": 'schema = "1"\n',
        "m-argv.toml": 'schema = 1\n[[commands]]\nargv = "nvcc --version"\n',
        "m-returncode.toml": 'schema = 1\n[[commands]]\nargv = ["x"]\nreturncode = "0"\n',
        "m-hex.toml": 'schema = 1\n[files]\n"C:\\\\a.dll" = { hex = "zz" }\n',
        "m-file-int.toml": 'schema = 1\n[files]\n"C:\\\\a.txt" = 5\n',
        "m-dword.toml": 'schema = 1\n[registry."HKLM\\\\SOFTWARE\\\\X"]\nA = { type = "REG_DWORD", value = "one" }\n',
        "m-encoding.toml": 'schema = 1\n[[commands]]\nargv = ["x"]\nstdout = { text = "a", encoding = "nope" }\n',
        # `from` reads only inside the record's folder (issue 22 S5): a FIFO there is still refused at once
        "m-from-fifo.toml": 'schema = 1\n[files]\n"C:\\\\a.txt" = { from = "fifo.toml" }\n',
        "m-from-zero.toml": 'schema = 1\n[files]\n"C:\\\\a.txt" = { from = "/dev/zero" }\n',
        "m-python.toml": 'schema = 1\nplatform = "linux"\n[python]\nexecutable = 5\n',
        "s-no-platform.toml": "schema = 1\n",
        "s-env-str.toml": 'schema = 1\nplatform = "linux"\nenv = "x"\n',
        "s-unset-yes.toml": 'schema = 1\nplatform = "linux"\n[env.FOO]\nunset = "yes"\n',
        "s-prepend-int.toml": 'schema = 1\nplatform = "linux"\n[env.PATH]\nprepend = ["/a", 3]\n',
        "s-notes.toml": 'schema = 1\nplatform = "linux"\nnotes = "x"\n',
        "s-windows.toml": 'schema = 1\nplatform = "windows"\n',
        "s-schema-7.toml": 'schema = 7\nplatform = "linux"\n',
        # nested 1,000 deep (2 kB) or a key of 20,000 dotted parts (40 kB): audit C4
        "m-deep.toml": 'schema = 1\nplatform = "linux"\n[meta]\nx = ' + "[" * 1000 + "]" * 1000 + "\n",
        "m-dotted.toml": 'schema = 1\nplatform = "linux"\n[meta]\n' + ".".join(["a"] * 20000) + " = 1\n",
        # variables no environment holds (C6), two operations on one (M8), a list entry with ':' (M3)
        "s-eq-name.toml": 'schema = 1\nplatform = "linux"\n[env]\n"A=B" = "x"\n',
        "s-nul-value.toml": 'schema = 1\nplatform = "linux"\n[env]\nX = "a\\u0000b"\n',
        "s-blank-name.toml": 'schema = 1\nplatform = "linux"\n[env]\n"" = "x"\n',
        "s-newline-name.toml": 'schema = 1\nplatform = "linux"\n[env]\n"B\\nC" = "x"\n',
        "s-nul-prepend.toml": 'schema = 1\nplatform = "linux"\n[env.PATH]\nprepend = ["/a\\u0000b"]\n',
        "s-set-prepend.toml": 'schema = 1\nplatform = "linux"\n[env.X]\nset = "a"\nprepend = ["/b"]\n',
        "s-unset-append.toml": 'schema = 1\nplatform = "linux"\n[env.X]\nunset = true\nappend = ["/b"]\n',
        "s-colon-entry.toml": 'schema = 1\nplatform = "linux"\n[env.PATH]\nprepend = ["/tmp/x:y", "/tmp/z"]\n',
        "s-deep.toml": 'schema = 1\nplatform = "linux"\nnotes = ' + "[" * 1000 + "]" * 1000 + "\n",
    }.items():
        (d / name).write_text(body, encoding="utf-8")
    snap = run_cli("--machine", str(LINUX), "export", "--cuda", "13.0")
    assert snap.code == 0, snap.stderr
    (d / "snap-utf16.toml").write_bytes(codecs.BOM_UTF16_LE + snap.stdout.replace("\n", "\r\n").encode("utf-16-le"))
    (d / "snap-bom.toml").write_bytes(codecs.BOM_UTF8 + snap.stdout.encode("utf-8"))
    js = run_cli("--machine", str(LINUX), "export", "--cuda", "13.0", "--format", "json")
    (d / "snap.json").write_text(js.stdout)
    # a Windows record holding a cut DLL (the loader model needs a Windows python.exe)
    cut = _cut_pe().hex()
    (d / "win-dlls.toml").write_text(
        text.replace(
            "\n[files]\n",
            f'\n[files]\n"C:\\\\x\\\\cut.dll" = {{ hex = "{cut}" }}\n"C:\\\\x\\\\text.dll" = "hello"\n',
            1,
        ),
        encoding="utf-8",
    )
    (d / "cfg").mkdir()
    # programs given as --python that answer the interpreter query oddly (C9) or print forever (C3)
    for name, body in {
        "p_dict": 'echo \'{"executable": "/x", "version": "3.11.0", "site": [{"a": 1}, 5, null]}\'',
        "p_nul": 'echo \'{"executable": "/x", "version": "3.11.0", "site": ["/tmp/a\\u0000b"]}\'',
        "p_notlist": 'echo \'{"executable": "/x", "version": "3.11.0", "site": "notalist"}\'',
        "p_list": "echo '[1, 2]'",
        "p_deep": f'{sys.executable} -c \'print("[" * 100000 + "]" * 100000)\'',
        "p_yes": "exec yes",
    }.items():
        (d / name).write_text(f"#!/bin/sh\n{body}\n")
        (d / name).chmod(0o755)
    (d / "cache-file").write_text("a file where the cache folder should be\n")
    return d


def _recipes(d: Path, files: dict[str, bytes | None]) -> Path:
    cfg = d / f"cfg-{abs(hash(tuple(files)))}"
    (cfg / "recipes").mkdir(parents=True, exist_ok=True)
    for name, body in files.items():
        if body is None:
            (cfg / "recipes" / name).mkdir(exist_ok=True)
        else:
            (cfg / "recipes" / name).write_bytes(body)
    return cfg


M, W = str(LINUX), str(WIN)
MISSING = "/nonexistent/envmgr/nosuch.toml"

# (id, argv with {d} for the bad-files folder, exit code, text the error must hold)
ROWS = [
    # --machine FILE
    ("machine-missing", ["--machine", MISSING, "list"], 2, "No such file"),
    ("machine-empty", ["--machine", "{d}/empty.toml", "list"], 2, "the machine file is empty"),
    ("machine-comments-only", ["--machine", "{d}/comments.toml", "list"], 2, "the machine file is empty"),
    ("machine-folder", ["--machine", "{d}/folder.toml", "list"], 2, "directory"),
    ("machine-binary", ["--machine", "{d}/binary.toml", "list"], 2, "not UTF-8 or UTF-16 text"),
    ("machine-garbage", ["--machine", "{d}/garbage.toml", "list"], 2, "line 1"),
    ("machine-json", ["--machine", "{d}/json.toml", "list"], 2, "not a valid TOML machine file"),
    ("machine-symlink-loop", ["--machine", "{d}/loop-a.toml", "list"], 2, "symbolic links"),
    ("machine-huge", ["--machine", "{d}/huge.toml", "list"], 2, "too large"),
    ("machine-utf16-bom", ["--machine", "{d}/machine-utf16.toml", "list"], 0, ""),
    ("machine-utf8-bom", ["--machine", "{d}/machine-bom.toml", "list"], 0, ""),
    ("machine-platform", ["--machine", "{d}/m-platform.toml", "list"], 2, '\'platform\' must be "windows" or "linux"'),
    ("machine-env-list", ["--machine", "{d}/m-env-list.toml", "list"], 2, "'env' must be a table"),
    ("machine-no-schema", ["--machine", "{d}/m-no-schema.toml", "list"], 2, "no 'schema' key"),
    ("machine-schema-2", ["--machine", "{d}/m-schema-2.toml", "list"], 2, "schema 2 is not one this envmgr reads"),
    ("machine-schema-str", ["--machine", "{d}/m-schema-str.toml", "list"], 2, 'a string ("1")'),
    ("machine-argv-str", ["--machine", "{d}/m-argv.toml", "list"], 2, "'commands[0].argv' must be a non-empty list"),
    (
        "machine-returncode-str",
        ["--machine", "{d}/m-returncode.toml", "list"],
        2,
        "'commands[0].returncode' must be an integer",
    ),
    ("machine-bad-hex", ["--machine", "{d}/m-hex.toml", "list"], 2, "must be a string of hex digits"),
    ("machine-file-int", ["--machine", "{d}/m-file-int.toml", "list"], 2, "must be a string or a table"),
    ("machine-dword-str", ["--machine", "{d}/m-dword.toml", "list"], 2, "(REG_DWORD) must be an integer"),
    ("machine-encoding", ["--machine", "{d}/m-encoding.toml", "list"], 2, "unknown stdout encoding"),
    ("machine-python-int", ["--machine", "{d}/m-python.toml", "list"], 2, "'python.executable' must be a string"),
    ("machine-deep", ["--machine", "{d}/m-deep.toml", "list"], 2, "nested too deeply"),
    (
        "machine-dotted-keys",
        ["--machine", "{d}/m-dotted.toml", "list"],
        2,
        "a key nested 100 or more levels deep (at line 4)",
    ),
    ("machine-doctor-empty", ["--machine", "{d}/empty.toml", "doctor"], 2, "the machine file is empty"),
    ("machine-export-folder", ["--machine", "{d}/folder.toml", "export"], 2, "directory"),
    # --from FILE (against the recorded Linux machine: no live discovery)
    ("from-missing", ["--machine", M, "export", "--from", MISSING], 2, "No such file"),
    ("from-empty-name", ["--machine", M, "export", "--from", ""], 2, "--from needs a file name"),
    ("from-empty", ["--machine", M, "export", "--from", "{d}/empty.toml"], 2, "the snapshot is empty"),
    ("from-folder", ["--machine", M, "export", "--from", "{d}/folder.toml"], 2, "directory"),
    ("from-binary", ["--machine", M, "export", "--from", "{d}/binary.toml"], 2, "not UTF-8 or UTF-16 text"),
    ("from-json", ["--machine", M, "export", "--from", "{d}/snap.json"], 2, "not a valid snapshot"),
    ("from-symlink-loop", ["--machine", M, "export", "--from", "{d}/loop-a.toml"], 2, "symbolic links"),
    ("from-huge", ["--machine", M, "export", "--from", "{d}/huge.toml"], 2, "too large"),
    ("from-utf16-bom", ["--machine", M, "export", "--from", "{d}/snap-utf16.toml"], 0, ""),
    ("from-utf8-bom", ["--machine", M, "export", "--from", "{d}/snap-bom.toml"], 0, ""),
    ("from-no-platform", ["--machine", M, "export", "--from", "{d}/s-no-platform.toml"], 2, "'platform' is missing"),
    (
        "from-env-string",
        ["--machine", M, "export", "--from", "{d}/s-env-str.toml"],
        2,
        "'env' must be a table, not a string",
    ),
    ("from-unset-yes", ["--machine", M, "export", "--from", "{d}/s-unset-yes.toml"], 2, "'env.FOO.unset' must be true"),
    (
        "from-prepend-int",
        ["--machine", M, "export", "--from", "{d}/s-prepend-int.toml"],
        2,
        "'env.PATH.prepend[1]' must be a string",
    ),
    (
        "from-notes-str",
        ["--machine", M, "export", "--from", "{d}/s-notes.toml"],
        2,
        "'notes' must be a list of strings",
    ),
    (
        "from-other-platform",
        ["--machine", M, "export", "--from", "{d}/s-windows.toml"],
        2,
        "this snapshot is for windows",
    ),
    ("from-deep", ["--machine", M, "export", "--from", "{d}/s-deep.toml"], 2, "nested too deeply"),
    (
        "from-eq-name",
        ["--machine", M, "export", "--from", "{d}/s-eq-name.toml"],
        2,
        'holds "A=B": a variable name cannot hold U+003D (EQUALS SIGN)',
    ),
    (
        "run-from-eq-name",
        ["run", "--from", "{d}/s-eq-name.toml", "--", "true"],
        2,
        'holds "A=B": a variable name cannot hold U+003D (EQUALS SIGN)',
    ),
    (
        "from-nul-value",
        ["--machine", M, "export", "--from", "{d}/s-nul-value.toml"],
        2,
        "'env.X': a value cannot hold U+0000 (NUL)",
    ),
    (
        "run-from-nul-value",
        ["run", "--from", "{d}/s-nul-value.toml", "--", "true"],
        2,
        "'env.X': a value cannot hold U+0000 (NUL)",
    ),
    (
        "from-blank-name",
        ["--machine", M, "export", "--from", "{d}/s-blank-name.toml"],
        2,
        "'env' holds a variable with an empty name",
    ),
    (
        "run-from-blank-name",
        ["run", "--from", "{d}/s-blank-name.toml", "--", "true"],
        2,
        "'env' holds a variable with an empty name",
    ),
    (
        "from-newline-name",
        ["--machine", M, "export", "--from", "{d}/s-newline-name.toml"],
        2,
        'holds "B\\u000AC": a variable name cannot hold U+000A (LINE FEED)',
    ),
    (
        "run-from-newline-name",
        ["run", "--from", "{d}/s-newline-name.toml", "--", "true"],
        2,
        'holds "B\\u000AC": a variable name cannot hold U+000A (LINE FEED)',
    ),
    (
        "from-nul-prepend",
        ["--machine", M, "export", "--from", "{d}/s-nul-prepend.toml"],
        2,
        "'env.PATH.prepend[0]': a value cannot hold U+0000",
    ),
    (
        "run-from-nul-prepend",
        ["run", "--from", "{d}/s-nul-prepend.toml", "--", "true"],
        2,
        "'env.PATH.prepend[0]': a value cannot hold U+0000",
    ),
    (
        "from-set-prepend",
        ["--machine", M, "export", "--from", "{d}/s-set-prepend.toml"],
        2,
        "'env.X': it has both set and prepend",
    ),
    (
        "run-from-set-prepend",
        ["run", "--from", "{d}/s-set-prepend.toml", "--", "true"],
        2,
        "'env.X': it has both set and prepend",
    ),
    (
        "from-unset-append",
        ["--machine", M, "export", "--from", "{d}/s-unset-append.toml"],
        2,
        "'env.X': it has both unset and append",
    ),
    (
        "run-from-unset-append",
        ["run", "--from", "{d}/s-unset-append.toml", "--", "true"],
        2,
        "'env.X': it has both unset and append",
    ),
    (
        "from-colon-entry",
        ["--machine", M, "export", "--from", "{d}/s-colon-entry.toml"],
        2,
        "'env.PATH.prepend[0]': \"/tmp/x:y\" holds ':', the path-list separator",
    ),
    (
        "run-from-colon-entry",
        ["run", "--from", "{d}/s-colon-entry.toml", "--", "true"],
        2,
        "'env.PATH.prepend[0]': \"/tmp/x:y\" holds ':', the path-list separator",
    ),
    (
        "install-from-eq-name",
        ["install", "--from", "{d}/s-eq-name.toml", "--recipe", "llama-cpp-python", "llama-cpp-python==0.3.36"],
        2,
        "a variable name cannot hold U+003D",
    ),
    ("from-schema-7", ["--machine", M, "export", "--from", "{d}/s-schema-7.toml"], 2, "schema 7 is not one"),
    ("strict-without-from", ["--machine", M, "export", "--strict"], 2, "--strict only applies with --from"),
    # selectors: versions and names
    ("cuda-99", ["--machine", M, "export", "--cuda", "99.9"], 3, "no CUDA toolkit matches --cuda 99.9"),
    ("cuda-missing-path", ["--machine", M, "export", "--cuda", "/nonexistent/cuda"], 3, "no CUDA toolkit matches"),
    ("vs-nosuch", ["--machine", W, "export", "--vs", "nosuch"], 3, "nosuch"),
    ("doctor-cuda-99", ["--machine", M, "doctor", "--cuda", "99.9"], 3, "99.9"),
    (
        "python-missing-list",
        ["list", "--python", "/nonexistent/py"],
        2,
        "--pip-cuda-python /nonexistent/py: not a Python",
    ),
    ("python-missing-export", ["--machine", M, "export", "--python", "/nonexistent/py"], 2, "not a Python"),
    ("python-site-dicts", ["list", "--python", "{d}/p_dict"], 2, "it did not run as Python"),
    ("python-site-nul", ["list", "--python", "{d}/p_nul"], 2, "it did not run as Python"),
    ("python-site-not-a-list", ["list", "--python", "{d}/p_notlist"], 2, "it did not run as Python"),
    ("python-answer-a-list", ["list", "--python", "{d}/p_list"], 2, "it did not run as Python"),
    ("python-answer-deep", ["list", "--python", "{d}/p_deep"], 2, "it did not run as Python"),
    ("python-prints-forever", ["list", "--python", "{d}/p_yes"], 2, "it did not run as Python"),
    ("python-not-python", ["list", "--python", "/bin/false"], 2, "it did not run as Python"),
    # recipes and their flags
    ("recipe-empty", ["--machine", M, "export", "--recipe", ""], 2, "--recipe needs a name"),
    ("recipe-unknown", ["--machine", M, "export", "--recipe", "nosuch"], 3, "unknown recipe 'nosuch'"),
    (
        "arch-list-abc",
        ["--machine", M, "export", "--recipe", "llama-cpp-python", "--arch-list", "abc"],
        2,
        "'abc' is not a CUDA architecture",
    ),
    (
        "arch-list-empty",
        ["--machine", M, "export", "--recipe", "llama-cpp-python", "--arch-list", ""],
        2,
        "an empty list is not a CUDA architecture",
    ),
    (
        "arch-list-without-recipe",
        ["--machine", M, "export", "--arch-list", "86"],
        2,
        "--cuda-arch only applies with --recipe",
    ),
    (
        "recipe-param-without-recipe",
        ["--machine", M, "export", "--recipe-param", "a=b"],
        2,
        "--recipe-param only applies with --recipe",
    ),
    (
        "unsupported-without-recipe",
        ["--machine", M, "export", "--allow-unsupported-compiler"],
        2,
        "--allow-unsupported-compiler only applies",
    ),
    (
        "recipe-param-no-equals",
        ["--machine", M, "export", "--recipe", "llama-cpp-python", "--recipe-param", "x"],
        2,
        "is not NAME=VALUE",
    ),
    # doctor --dll / --log
    ("dll-missing", ["doctor", "--dll", "/nonexistent/x.dll"], 2, "no such file"),
    ("dll-folder", ["doctor", "--dll", "{d}/folder.toml"], 2, "is a folder"),
    ("dll-empty", ["doctor", "--dll", "{d}/empty.toml"], 2, "not a PE or ELF file"),
    ("dll-text", ["doctor", "--dll", "{d}/garbage.toml"], 2, "not a PE or ELF file"),
    ("dll-symlink-loop", ["doctor", "--dll", "{d}/loop-a.toml"], 2, "symbolic links"),
    (
        "dll-truncated-pe",
        ["--machine", "{d}/win-dlls.toml", "doctor", "--dll", "C:\\x\\cut.dll"],
        2,
        "truncated PE file",
    ),
    (
        "dll-text-in-record",
        ["--machine", "{d}/win-dlls.toml", "doctor", "--dll", "C:\\x\\text.dll"],
        2,
        "not a PE or ELF",
    ),
    ("log-missing", ["doctor", "--log", "/nonexistent/build.log"], 2, "cannot read log file"),
    ("log-folder", ["doctor", "--log", "{d}/folder.toml"], 2, "cannot read log file"),
    ("log-binary", ["doctor", "--log", "{d}/binary.toml"], 2, "not a text log"),
    # a log of any size is streamed (issue 13); the sparse 65 MiB file is all NULs, so binary
    ("log-huge", ["doctor", "--log", "{d}/huge.toml"], 2, "not a text log (binary data)"),
    ("log-empty", ["doctor", "--log", "{d}/build.log"], 2, "is empty (0 bytes)"),
    ("doctor-only-bad", ["--machine", M, "doctor", "--only", "F999"], 2, "F999"),
    # record -o, --wine-prefix, run --log, install, fix-msbuild
    ("record-o-empty", ["--machine", M, "record", "-o", ""], 2, "-o needs a file name"),
    ("record-o-folder", ["--machine", M, "record", "-o", "{d}/folder.toml"], 2, "is a folder"),
    ("record-o-unwritable", ["--machine", M, "record", "-o", "/proc/nonexistent/m.toml"], 2, "cannot write"),
    (
        "record-cuda-without-capture",
        ["--machine", M, "record", "-o", "{d}/out.toml", "--cuda", "12"],
        2,
        "choose what --capture captures",
    ),
    (
        "record-capture-cuda-99",
        ["--machine", M, "record", "-o", "{d}/out2.toml", "--capture", "--cuda", "99.9"],
        3,
        "no CUDA toolkit matches --cuda 99.9",
    ),
    ("wine-prefix-file", ["--wine-prefix", "{d}/regular-file", "list"], 2, "not a folder"),
    ("wine-prefix-missing", ["--wine-prefix", "{d}/no-such-prefix", "list"], 2, "no such folder"),
    ("wine-prefix-not-a-prefix", ["--wine-prefix", "{d}/not-a-prefix", "list"], 2, "not a Wine prefix"),
    ("run-log-folder", ["run", "--log", "{d}/folder.toml", "--", "true"], 2, "--log {d}/folder.toml: cannot write it"),
    ("run-log-no-folder", ["run", "--log", "/proc/nonexistent/x.log", "--", "true"], 2, "No such file or directory"),
    ("run-log-empty", ["run", "--log", "", "--", "true"], 2, "--log needs a file name"),
    ("run-option-typo", ["run", "--cuad", "13.0", "--", "true"], 2, "No such option '--cuad'. Did you mean '--cuda'?"),
    ("run-no-json-option", ["run", "--json", "--", "true"], 2, "No such option '--json'"),
    ("run-machine", ["--machine", M, "run", "--", "true"], 2, "starts programs on this machine"),
    (
        "install-no-such-sdist",
        ["--machine", M, "install", "--recipe", "llama-cpp-python", "./nosuch.tar.gz"],
        2,
        "./nosuch.tar.gz: no such file or folder",
    ),
    (
        "install-no-such-folder",
        ["--machine", M, "install", "--recipe", "llama-cpp-python", "/nonexistent/src"],
        2,
        "no such file or folder",
    ),
    # llama-cpp-python takes the install flow (its recipe follows from the package); any other package needs one
    ("install-no-recipe", ["--machine", M, "install", "numpy==2.0.0"], 2, "needs --recipe NAME"),
    (
        "fix-msbuild-check-dry-run",
        ["--machine", W, "fix-msbuild", "--check", "--dry-run"],
        2,
        "--dry-run and --check do not combine",
    ),
    ("fix-msbuild-vs-nosuch", ["--machine", W, "fix-msbuild", "--dry-run", "--vs", "nosuch"], 3, "nosuch"),
    # an empty value is a mistake, never "not given" (E4)
    ("doctor-log-empty", ["doctor", "--log", ""], 2, "--log needs a file name"),
    ("doctor-dll-empty", ["doctor", "--dll", ""], 2, "--dll needs a path"),
    ("doctor-only-empty", ["--machine", M, "doctor", "--only", ""], 2, "--only needs check ids"),
    ("machine-empty-name", ["--machine", "", "list"], 2, "--machine needs a file name"),
    ("wine-prefix-empty", ["--wine-prefix", "", "list"], 2, "--wine-prefix needs a folder"),
    ("export-cuda-empty", ["--machine", M, "export", "--cuda", ""], 2, "--cuda needs a version or a folder"),
    ("export-vs-empty", ["--machine", W, "export", "--vs", ""], 2, "--vs needs a value"),
    (
        "fix-msbuild-cuda-empty",
        ["--machine", W, "fix-msbuild", "--dry-run", "--cuda", ""],
        2,
        "--cuda needs a version or a folder",
    ),
    ("wheels-publish-index-empty", ["wheels", "publish", "{d}/pub", "--package", ""], 2, "--package needs a name"),
    # a path component over 255 characters: pathlib raised ENAMETOOLONG from exists()/is_dir() (C8)
    ("publish-name-too-long", ["wheels", "publish", "{d}/" + "n" * 300], 2, "File name too long"),
    (
        "install-publish-name-too-long",
        ["--machine", M, "install", "--recipe", "llama-cpp-python", "--publish", "n" * 300, "llama-cpp-python==0.3.36"],
        2,
        "File name too long",
    ),
    ("export-format-bad", ["--machine", M, "export", "--format", "bat"], 2, "Invalid value for '--format'"),
    ("init-bad-shell", ["init", "tcsh"], 2, "Invalid value"),
    # hook: the target Python (docs/hook.md)
    (
        "hook-python-not-python",
        ["hook", "status", "--python", "{d}/regular-file"],
        2,
        "cannot ask it for its site folder",
    ),
    ("hook-python-missing", ["hook", "install", "--python", MISSING], 2, "cannot ask it for its site folder"),
    ("hook-python-empty", ["hook", "remove", "--python", ""], 2, "--python needs a path"),
    ("hook-machine", ["--machine", M, "hook", "status"], 2, "envmgr hook writes into a Python on this machine"),
]


def _fill(args, d: Path) -> list[str]:
    return [a.replace("{d}", str(d)) for a in args]


def _env(d: Path) -> dict:
    return {"ENVMGR_CONFIG_DIR": str(d / "cfg"), "ENVMGR_CACHE_DIR": str(d / "cache")}


def _assert_row(code: int, out: str, err: str, want_code: int, want_text: str) -> None:
    assert "Traceback" not in out + err
    assert code == want_code, f"exit {code}, wanted {want_code}\n{err}"
    if want_code in (2, 3):
        errors = [l for l in err.splitlines() if l.startswith(("envmgr: error:", "Error:"))]
        assert len(errors) == 1, err  # one line says what is wrong (plus its `fix:` line)
        assert want_text in err, err


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_bad_input(row, bad):
    _, args, want_code, want_text = row
    res = run_cli(*_fill(args, bad), env=_env(bad))
    _assert_row(res.code, res.stdout, res.stderr, want_code, want_text.replace("{d}", str(bad)))


def test_wine_prefix_typo_creates_nothing(bad):
    res = run_cli("--wine-prefix", str(bad / "mistyped-prefix"), "list", env=_env(bad))
    assert res.code == 2 and not (bad / "mistyped-prefix").exists()


# ---- user recipes: one bad file never hides the built-in recipes ---------------------------------
RECIPE_ROWS = [
    ("binary", {"bin.toml": bytes(range(256))}, "bin", "not UTF-8 or UTF-16 text"),
    ("folder", {"x.toml": None}, "x", "Is a directory"),
    (
        "name-int",
        {"n.toml": b'schema = 1\nkind = "cmake"\nname = 5\n'},
        "n",
        "'name' must be a string, not an integer (5)",
    ),
    (
        "drop-env-str",
        {"d.toml": b'schema = 1\nkind = "cmake"\ndrop_env = "FOO"\n'},
        "d",
        "'drop_env' must be a list of strings, not a string (\"FOO\")",
    ),
    ("kind-bad", {"k.toml": b'schema = 1\nkind = "make"\n'}, "k", "'kind' must be \"cmake\" or"),
    ("env-int", {"e.toml": b'schema = 1\nkind = "cmake"\n[env]\nA = 1\n'}, "e", "'env.A' must be a string"),
    ("empty", {"z.toml": b""}, "z", "the recipe is empty"),
    ("no-schema", {"s.toml": b'kind = "cmake"\n'}, "s", "no 'schema' key"),
    ("unknown-key", {"u.toml": b'schema = 1\nkind = "cmake"\ncmake_arg = []\n'}, "u", "unknown key 'cmake_arg'"),
    (
        "env-nul",
        {"envnul.toml": b'schema = 1\nkind = "cmake"\nname = "envnul"\nenv = { X = "a\\u0000b" }\n'},
        "envnul",
        "'env.X': a value cannot hold U+0000 (NUL)",
    ),
    (
        "env-eq-name",
        {"enveq.toml": b'schema = 1\nkind = "cmake"\nname = "enveq"\nenv = { "A=B" = "x" }\n'},
        "enveq",
        "'env' holds \"A=B\": a variable name cannot hold U+003D",
    ),
    (
        "drop-env-empty",
        {"dropempty.toml": b'schema = 1\nkind = "cmake"\ndrop_env = [""]\n'},
        "dropempty",
        "'drop_env' holds a variable with an empty name",
    ),
    (
        "deep",
        {"evil.toml": b'schema = 1\nname = "evil"\ndescription = ' + b"[" * 1000 + b"]" * 1000 + b"\n"},
        "evil",
        "nested too deeply",
    ),
]


@pytest.mark.parametrize("row", RECIPE_ROWS, ids=[r[0] for r in RECIPE_ROWS])
def test_bad_user_recipe(row, bad):
    _, files, stem, text = row
    env = {**_env(bad), "ENVMGR_CONFIG_DIR": str(_recipes(bad, files))}
    listing = run_cli("recipes", env=env)
    _assert_row(listing.code, listing.stdout, listing.stderr, 0, "")
    assert "llama-cpp-python" in listing.stdout and text in listing.stderr
    used = run_cli("--machine", M, "export", "--recipe", "llama-cpp-python", env=env)
    _assert_row(used.code, used.stdout, used.stderr, 0, "")
    named = run_cli("--machine", M, "export", "--recipe", stem, env=env)
    _assert_row(named.code, named.stdout, named.stderr, 2, text)


def test_user_recipe_in_utf16_is_read(bad):
    body = 'schema = 1\nname = "mine"\nkind = "cmake"\n'
    env = {
        **_env(bad),
        "ENVMGR_CONFIG_DIR": str(_recipes(bad, {"mine.toml": codecs.BOM_UTF16_LE + body.encode("utf-16-le")})),
    }
    res = run_cli("recipes", env=env)
    assert res.code == 0 and "mine" in res.stdout and "skipped" not in res.stderr


def test_install_with_the_cache_folder_a_file(bad):
    env = {**_env(bad), "ENVMGR_CACHE_DIR": str(bad / "cache-file")}
    res = run_cli("--machine", M, "install", "--recipe", "llama-cpp-python", "--no-index", "nosuchpkg==1.0", env=env)
    _assert_row(res.code, res.stdout, res.stderr, 2, "cannot be written: Not a directory")
    assert "[Errno" not in res.stderr  # the snapshot cache's warning too: no Python words


def test_install_with_the_cache_folder_unwritable(bad):
    env = {**_env(bad), "ENVMGR_CACHE_DIR": "/proc/envmgr-cache"}  # unwritable even for root
    res = run_cli("--machine", M, "install", "--recipe", "llama-cpp-python", "--no-index", "nosuchpkg==1.0", env=env)
    _assert_row(res.code, res.stdout, res.stderr, 2, "the wheel cache /proc/envmgr-cache/wheels cannot be written")
    assert "[Errno" not in res.stderr


def test_the_matrix_covers_every_command():
    rows = len(ROWS) + len(RECIPE_ROWS) * 3 + len(HANG_ROWS)
    assert rows >= 60
    commands = {
        next(a for a in r[1] if not a.startswith("-") and a not in (M, W) and "{d}" not in a and not a.startswith("/"))
        for r in ROWS
    }
    assert {"list", "export", "doctor", "record", "run", "install", "fix-msbuild", "init"} <= commands


# ---- rows that need a real process: hangs (with a timeout) and a closed stdin ---------------------
HANG_ROWS = [
    ("dll-dev-zero", ["doctor", "--dll", "/dev/zero"], 2, "not a regular file"),
    ("dll-fifo", ["doctor", "--dll", "{d}/fifo.toml"], 2, "not a regular file"),
    ("log-dev-zero", ["doctor", "--log", "/dev/zero"], 2, "not a regular file"),
    ("machine-dev-zero", ["--machine", "/dev/zero", "list"], 2, "not a regular file"),
    ("machine-fifo", ["--machine", "{d}/fifo.toml", "list"], 2, "not a regular file"),
    ("from-dev-zero", ["--machine", M, "export", "--from", "/dev/zero"], 2, "not a regular file"),
    ("from-fifo", ["--machine", M, "export", "--from", "{d}/fifo.toml"], 2, "not a regular file"),
    ("record-o-fifo", ["--machine", M, "record", "-o", "{d}/fifo.toml"], 2, "{d}/fifo.toml: cannot write: "),
    ("machine-from-fifo", ["--machine", "{d}/m-from-fifo.toml", "list"], 2, "not a regular file"),
    ("machine-from-dev-zero", ["--machine", "{d}/m-from-zero.toml", "list"], 2, "leaves its folder"),
]


def _envmgr(args, d: Path, env_extra: dict | None = None, text: bool = True, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, **_env(d), "NO_COLOR": "1", **(env_extra or {})}
    env.pop("ENVMGR_MACHINE", None)
    env.pop("ENVMGR_WINEPREFIX", None)
    return subprocess.run(
        [sys.executable, "-m", "envmgr", *args],
        capture_output=True,
        text=text,
        env=env,
        cwd=ROOT,
        timeout=60,
        errors="surrogateescape" if text else None,
        **kw,
    )


@pytest.mark.parametrize("row", HANG_ROWS, ids=[r[0] for r in HANG_ROWS])
def test_bad_input_that_could_hang(row, bad):
    _, args, want_code, want_text = row
    done = _envmgr(_fill(args, bad), bad)
    _assert_row(done.returncode, done.stdout, done.stderr, want_code, want_text.replace("{d}", str(bad)))
    assert ": None" not in done.stderr  # an OSError without strerror is still words (M5)


def test_run_log_with_stdin_closed(bad, tmp_path):
    log = tmp_path / "x.log"
    script = f'exec <&-; exec "{sys.executable}" -m envmgr run --log "{log}" -- echo hi'
    done = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={**os.environ, **_env(bad), "NO_COLOR": "1"},
    )
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == 0, done.stderr
    assert "hi" in log.read_text()


def test_snapshot_cache_warning_has_no_python_words(bad, monkeypatch):
    from envmgr.cache.resolve import resolve
    from envmgr.host.recorded import load_machine
    from envmgr.snapshot.selectors import Selectors

    monkeypatch.setenv("ENVMGR_CACHE_DIR", str(bad / "cache-file"))
    said: list[str] = []
    snap, how = resolve(load_machine(M), Selectors(cuda="13.0"), use_cache=True, warn=said.append)
    assert how == "captured" and any("could not write the snapshot cache" in s for s in said)
    assert not any("[Errno" in s for s in said), said


# ---- nesting that ends a parser's recursion (audit C4): one line, or a skipped entry ------------------
def test_deep_config_toml_is_one_line(bad, tmp_path):
    (tmp_path / "config.toml").write_text("[wheels]\nindex = " + "[" * 1000 + "]" * 1000 + "\n")
    env = {**_env(bad), "ENVMGR_CONFIG_DIR": str(tmp_path), "ENVMGR_WHEEL_INDEX": None}
    res = run_cli(
        "--machine", M, "install", "--recipe", "llama-cpp-python", "--no-deps", "llama-cpp-python==0.3.36", env=env
    )
    _assert_row(res.code, res.stdout, res.stderr, 2, "config.toml: not a valid TOML file: nested too deeply")


def test_deep_entry_json_in_the_wheel_cache_is_a_broken_entry(bad, tmp_path):
    entry = tmp_path / "cache" / "wheels" / ("0" * 20)
    entry.mkdir(parents=True)
    (entry / "entry.json").write_text("[" * 100000 + "]" * 100000)
    env = {**_env(bad), "ENVMGR_CACHE_DIR": str(tmp_path / "cache")}
    for args in (["wheels", "list"], ["wheels", "list", "--json"], ["wheels", "publish", str(tmp_path / "dest")]):
        res = run_cli(*args, env=env)
        assert "Traceback" not in res.stdout + res.stderr and res.code in (0, 3), (args, res.stderr)


def test_a_bad_recipe_variable_is_refused_by_run_too(bad):
    """run applies the recipe to this process's environment: it used to end in Python's ValueError (C6)."""
    env = {
        **_env(bad),
        "ENVMGR_CONFIG_DIR": str(
            _recipes(bad, {"envnul.toml": b'schema = 1\nkind = "cmake"\nname = "envnul"\nenv = { X = "a\\u0000b" }\n'})
        ),
    }
    res = run_cli("run", "--recipe", "envnul", "--", "true", env=env)
    _assert_row(res.code, res.stdout, res.stderr, 2, "'env.X': a value cannot hold U+0000 (NUL)")


# ---- a reader that goes away (audit E1): exit 0, as main() intends, and nothing on stderr --------------
@pytest.mark.parametrize(
    "args",
    [
        ["list"],
        ["list", "--json"],
        ["recipes"],
        ["recipes", "--json"],
        ["--help"],
        ["export", "--help"],
        ["wheels", "list"],
        ["cache", "list"],
        ["init", "bash", "--script"],
    ],
    ids=" ".join,
)
def test_a_closed_stdout_is_not_a_failed_check(args, bad):
    env = {**os.environ, **_env(bad), "NO_COLOR": "1"}
    env.pop("ENVMGR_MACHINE", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "envmgr", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT
    )
    proc.stdout.close()  # the reader is gone before envmgr writes a byte
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    assert err == ""


# ---- --json: stdout holds one document or nothing (audit E3) ----------------------------------------
def test_install_json_sends_pip_output_to_stderr(bad, tmp_path):
    """pip's own lines went to stdout before the JSON report. The Python here is a wrapper that answers
    every question with the real interpreter but plays pip (its first lines, then a failure: no network)."""
    (tmp_path / "lib").mkdir()
    for name in ("libllama.so", "libggml-cuda.so"):
        (tmp_path / "lib" / name).write_bytes(b"")
    fake = tmp_path / "fakepy"
    fake.write_text(
        '#!/bin/sh\nif [ "$1" = "-m" ] && [ "$2" = "pip" ]; then\n  echo "Collecting llama-cpp-python"\n'
        f'  exit 1\nfi\nexec "{sys.executable}" "$@"\n'
    )
    fake.chmod(0o755)
    done = _envmgr(
        ["install", "--json", "--python", str(fake), "--prebuilt-lib", str(tmp_path / "lib"), "llama-cpp-python"], bad
    )
    assert "Traceback" not in done.stderr
    assert "Collecting llama-cpp-python" in done.stderr
    assert done.stdout == ""  # the flow failed: no document, and nothing else


# ---- a folder name that is not UTF-8 (audit C7): refused in snapshots and records, escaped in JSON --------
@pytest.fixture(scope="module")
def latin1_folder(tmp_path_factory) -> str:
    root = os.fsencode(tmp_path_factory.mktemp("latin1")) + b"/caf\xe9-\xff"
    os.makedirs(root + b"/bin")
    return os.fsdecode(root)  # the str Python gives such a name: lone surrogates (PEP 383)


@pytest.mark.parametrize(
    "args", [["export", "--format", "sh"], ["export", "--format", "json"], ["run", "--", "true"]], ids=" ".join
)
def test_a_snapshot_with_a_non_utf8_folder_is_one_line(args, bad, latin1_folder):
    done = _envmgr(args, bad, env_extra={"CUDA_HOME": latin1_folder})
    _assert_row(done.returncode, done.stdout, done.stderr, 2, "holds bytes that are not UTF-8")
    assert "caf\\xe9-\\xff" in done.stderr and done.stdout == ""


def test_a_record_with_a_non_utf8_path_entry_is_one_line(bad, latin1_folder, tmp_path):
    done = _envmgr(
        ["record", "-o", str(tmp_path / "r.toml")], bad, env_extra={"PATH": f"{latin1_folder}/bin:{os.environ['PATH']}"}
    )
    _assert_row(done.returncode, done.stdout, done.stderr, 2, "cannot record this machine")
    assert not (tmp_path / "r.toml").exists()


@pytest.mark.parametrize(
    "args,var",
    [(["list", "--json"], "CUDA_HOME"), (["doctor", "--json"], "CUDA_HOME"), (["doctor", "--json"], "CMAKE_ARGS")],
    ids=lambda v: " ".join(v) if isinstance(v, list) else v,
)
def test_json_output_is_valid_utf8_with_a_non_utf8_value(args, var, bad, latin1_folder):
    value = latin1_folder if var == "CUDA_HOME" else "-DX=" + latin1_folder
    done = _envmgr(args, bad, env_extra={var: value}, text=False)
    assert b"Traceback" not in done.stderr
    doc = json.loads(done.stdout.decode("utf-8"))  # strict UTF-8, one document
    assert doc and b"\\udcff" in done.stdout  # the byte is carried, as JSON's escape


def test_a_config_folder_name_too_long_is_no_config(bad):
    env = {**_env(bad), "ENVMGR_CONFIG_DIR": str(bad / ("n" * 300))}
    res = run_cli("recipes", env=env)
    _assert_row(res.code, res.stdout, res.stderr, 0, "")
    assert "llama-cpp-python" in res.stdout


def test_a_wheel_index_folder_name_too_long_is_building_instead(bad, monkeypatch):
    from envmgr.wheels import remote
    from envmgr.wheels.store import WheelKey

    monkeypatch.setenv("ENVMGR_CONFIG_DIR", str(bad / ("n" * 300)))
    monkeypatch.delenv("ENVMGR_WHEEL_INDEX", raising=False)
    assert remote.configured_index(None) is None  # config.toml under a name too long: none
    said: list[str] = []
    key = WheelKey("llama-cpp-python", "0.3.36", "index", "13.0", "90", "Ninja", "", "cp311", "linux_x86_64")
    assert remote.fetch("n" * 300, key, True, said.append) is None
    assert said and "building instead" in said[0]


@pytest.mark.parametrize(
    "args,out",
    [
        (["--", "echo", "--cuad"], "--cuad\n"),
        (["echo", "--version", "x"], "--version x\n"),
        (["--refresh", "--", "echo", "-n", "ok"], "ok"),
    ],
    ids=str,
)
def test_run_passes_the_commands_own_options_through(args, out, bad):
    """The typo check (M6) stops at the command: its options are its own."""
    done = _envmgr(["run", *args], bad)
    assert done.returncode == 0 and done.stdout == out, done.stderr
