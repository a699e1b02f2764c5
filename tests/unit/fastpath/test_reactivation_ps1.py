"""Python-free re-activation for PowerShell (envmgr/fastpath/slot_ps1.py + shells/Envmgr.psm1), without
PowerShell: there is none on this machine, so nothing here runs the module's code.

What is proven here: the slot envmgr writes (through the real fast path, and through the full CLI
that answers on Windows) and the static module parse with tree-sitter-powershell without an ERROR or
MISSING node; the slot is data only (one hashtable of literals, what Import-PowerShellDataFile
accepts) and its values, read back from the parse tree, equal the real stats (.NET ticks from
os.stat) and the environment; the module reads exactly the slot's keys. `holds` and `applied` below
are this test's transcription of Use-EnvmgrSlot's checks and computation, statement by statement:
each key input changed in turn makes `holds` false, and `applied` (the slot's answer) equals the
environment envmgr's own `export --activate --format ps1` output leaves, evaluated by
test_export_idempotent's model of that PowerShell. That the module's PowerShell does what `holds` and
`applied` do is shown only by the Windows workflow (.github/workflows/windows.yml), which runs it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from envmgr import __file__ as VERSION_FILE
from envmgr.snapshot.activation import activation_delta
from envmgr.snapshot.envdelta import EnvDelta, VarOp
from envmgr.fastpath.slot_ps1 import TICKS_AT_UNIX_EPOCH, env_names, ps1_slot, write_ps1_slot
from envmgr.shellkit.init import shells_dir
from envmgr.shellkit import render
from envmgr.winenv import WindowsEnv, env_get
from tests.conftest import need_module

posix = pytest.mark.skipif(sys.platform == "win32", reason="the fast path and these file modes are POSIX")
REAL = Path(sys.executable).with_name("envmgr")
FULL = [sys.executable, "-c", "from envmgr.cli.main import main; main()"]
KEYS = {"Format", "Windows", "Args", "Env", "Versioned", "Paths", "Ops", "Marker"}
ARGS = ["--cuda", "13.0"]


# ---- reading PowerShell with tree-sitter ----------------------------------------------------------


def parse(text: str):
    ts, ts_ps = need_module("tree_sitter"), need_module("tree_sitter_powershell")
    src = text.encode("utf-8")
    tree = ts.Parser(ts.Language(ts_ps.language())).parse(src)
    bad, stack = [], [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            bad.append(f"{node.type} at {node.start_point}: {src[node.start_byte : node.end_byte][:60]!r}")
        stack.extend(node.children)
    assert not bad, bad
    return tree, src


def _down(node):
    """Skip tree-sitter-powershell's one-child precedence levels."""
    while node.named_child_count == 1 and node.type not in (
        "string_literal",
        "integer_literal",
        "variable",
        "array_expression",
        "hash_literal_expression",
    ):
        node = node.named_children[0]
    return node


def _literal(node, src: bytes):
    from tests.unit.shellkit.test_shellkit_ps1 import decode_verbatim

    node = _down(node)
    text = src[node.start_byte : node.end_byte].decode("utf-8")
    if node.type == "string_literal":
        assert node.named_children[0].type == "verbatim_string_characters", text  # expands nothing
        return decode_verbatim(text)
    if node.type == "integer_literal":
        assert node.named_children[0].type == "decimal_integer_literal", text
        return int(text)
    if node.type == "variable":
        assert text in ("$true", "$false"), text
        return text == "$true"
    if node.type == "array_expression":
        body = [c for c in node.named_children if c.type == "statement_list"]
        if not body:
            return []
        assert body[0].named_child_count == 1, text  # one expression: a comma list
        items = _down(body[0])
        if items.type == "array_literal_expression":
            return [_literal(c, src) for c in items.named_children]
        return [_literal(items, src)]
    raise AssertionError(f"not a literal the slot may hold: {node.type} {text!r}")


def slot_data(text: str) -> dict:
    """The slot's one hashtable, every value a literal (else the test fails): what the module reads."""
    tree, src = parse(text)
    statements = [c for c in tree.root_node.named_children if c.type != "comment"]
    assert len(statements) == 1
    table = _down(statements[0])
    assert table.type == "hash_literal_expression", table.type
    out = {}
    for entry in table.named_children[0].named_children:
        assert entry.type == "hash_entry"
        key, value = entry.named_children
        out[src[key.start_byte : key.end_byte].decode()] = _literal(value, src)
    return out


def _groups(items: list, size: int) -> list:
    assert len(items) % size == 0
    return [items[i : i + size] for i in range(0, len(items), size)]


def _ops(items: list) -> list:
    out, i = [], 0
    while i < len(items):
        n = items[i + 2]
        out.append((items[i], items[i + 1], items[i + 3 : i + 3 + n]))
        i += 3 + n
    return out


# ---- Use-EnvmgrSlot, transcribed ------------------------------------------------------------------


def _ascii(text: str) -> bool:
    return all(" " <= c <= "~" for c in text)


def stamp_holds(path: str, kind: str, ticks: int, length: int) -> bool:
    """Test-EnvmgrStamp: .NET's FileInfo/DirectoryInfo (a link is reported as itself)."""
    try:
        link = os.lstat(path)
    except OSError:
        return kind == "A"
    if os.path.islink(path):
        return False
    st = os.stat(path)
    if st.st_mtime_ns // 100 + TICKS_AT_UNIX_EPOCH != ticks:
        return False
    if kind == "F":
        return os.path.isfile(path) and link.st_size == length
    return kind == "D" and os.path.isdir(path)


def holds(d: dict, args: list[str], env, windows: bool = False) -> bool:
    if d["Format"] != 1 or d["Windows"] != windows or list(args) != d["Args"]:
        return False
    for name, value in _groups(d["Env"], 2):
        if (env_get(env, name, windows) or "") != value:
            return False
    recorded, count = _groups(d["Versioned"], 2), 0
    for name, value in list(env.items()):
        head = name[:11]
        if not _ascii(head):
            return False
        if head.upper() != "CUDA_PATH_V":
            continue
        if not _ascii(name):
            return False
        key = name.upper() if windows else name
        found = next((v == value for n, v in recorded if n == key), False)
        if not found:
            return False
        count += 2
    if count != len(d["Versioned"]):
        return False
    return all(stamp_holds(*quad) for quad in _groups(d["Paths"], 4))


def _key(entry: str, fold: bool) -> str:
    key = entry.rstrip("\\/") or entry
    return key.lower() if fold else key


def _join(current, entries: list, prepend: bool, fold: bool) -> str:
    sep = ";" if fold else ":"
    added = {_key(e, fold) for e in entries}
    rest = [
        e for e in (current.split(sep) if current is not None else []) if e.strip(" ") and _key(e, fold) not in added
    ]
    seen, out = set(), []
    for e in entries + rest if prepend else rest + entries:
        if _key(e, fold) not in seen:
            seen.add(_key(e, fold))
            out.append(e)
    return sep.join(out)


def applied(d: dict, env, windows: bool = False) -> dict | None:
    """The environment after the slot's apply section, or None where it answers 'stale'."""
    from tests.unit.shellkit.test_export_idempotent import Ps1Model

    names, final, restore = [], {}, []
    for name, op, values in _ops(d["Ops"]):
        if name.upper() not in {n.upper() for n in final}:
            now = env_get(env, name, windows)
            if now is None:
                restore.append(f'"{name}": null')
            else:
                if not _ascii(now):
                    return None
                restore.append(f'"{name}": "' + now.replace("\\", "\\\\").replace('"', '\\"') + '"')
            names.append(name)
            final[name] = now
        if op == "set":
            final[name] = values[0]
        elif op == "unset":
            final[name] = None
        else:
            final[name] = _join(final[name], values, op == "prepend", windows)
    if any(v is not None and not 0 < len(v) <= 32766 for v in final.values()):
        return None
    model = Ps1Model(dict(env), windows)  # SetEnvironmentVariable, as $env:X = and Remove-Item Env:X
    for name in names:
        model.set_env(name, final[name])
    model.set_env("ENVMGR_ACTIVE", d["Marker"])
    model.set_env("ENVMGR_RESTORE", "{" + ", ".join(restore) + "}")
    return model.env


def by_envmgr(ops: list, marker: str, env, windows: bool = False) -> dict:
    """What Enter-Envmgr's Invoke-Expression of envmgr's answer leaves (the full path's result)."""
    from tests.unit.shellkit.test_export_idempotent import Ps1Model

    delta = EnvDelta("windows" if windows else "linux", tuple(VarOp(*op) for op in ops))
    script = render(activation_delta(delta, env, marker), "ps1", dict(env))
    return Ps1Model(dict(env), windows).run(script)


# ---- the static module ----------------------------------------------------------------------------


def test_the_module_parses_and_reads_exactly_the_slots_keys():
    text = (shells_dir() / "Envmgr.psm1").read_text(encoding="utf-8")
    tree, src = parse(text)
    read, literals, commands = set(), set(), {}
    stack = [(tree.root_node, None)]
    while stack:
        node, function = stack.pop()
        body = src[node.start_byte : node.end_byte].decode("utf-8")
        if node.type == "function_statement":
            function = next(src[c.start_byte : c.end_byte].decode() for c in node.children if c.type == "function_name")
        if node.type == "member_access" and body.startswith("$d."):
            read.add(body[3:])
        if node.type == "string_literal":
            literals.add(body)
        if node.type == "command":
            first = node.children[0]
            commands.setdefault(function, []).append(
                (
                    node.start_byte,
                    src[first.start_byte : first.end_byte].decode() if first.type == "command_name" else first.type,
                )
            )
        stack.extend((c, function) for c in node.children)
    assert read == KEYS
    # The kinds and operations the writer emits are the ones the module compares with.
    assert {"'A'", "'F'", "'D'", "'set'", "'unset'", "'prepend'", "'append'", "'CUDA_PATH_V'"} <= literals
    # No process between the slot and the answer: the checker's only commands are PowerShell's data
    # reader and its own functions (no `&`, no native command, no Start-Process).
    checker = ("Get-EnvmgrSlotPath", "Test-EnvmgrStamp", "Get-EnvmgrKey", "Join-EnvmgrList", "Use-EnvmgrSlot")
    commands = {f: [c for _, c in sorted(found)] for f, found in commands.items()}
    used = {c for f in checker for c in commands.get(f, [])}
    assert used == {"Import-PowerShellDataFile", "Get-EnvmgrKey", "Test-EnvmgrStamp", "Join-EnvmgrList"}
    assert commands["Enter-Envmgr"][:3] == ["Get-EnvmgrSlotPath", "Use-EnvmgrSlot", "Get-EnvmgrScript"]
    assert commands["Get-EnvmgrScript"] == ["New-Object", "command_invokation_operator", "Out-String"]  # & envmgr
    enter = text[text.index("function Enter-Envmgr") : text.index("function Exit-Envmgr")]
    assert enter.index("-eq 'applied') { return }") < enter.index("Get-EnvmgrScript (@('export'")


# ---- the slot envmgr writes (Linux: the fast path; everywhere: the full CLI) -----------------------

# test_fast_path's PLAIN without its non-ASCII value (a slot refuses those: see the refusal tests).
PLAIN = EnvDelta(
    "linux",
    (
        VarOp("CUDA_PATH", "set", "/opt/cuda-13.0"),
        VarOp("QUOTED", "set", 'it\'s "$HOME" \\ `x` $(x) ;:'),
        VarOp("PATH", "prepend", ("/opt/cuda-13.0/bin", "/opt/with space")),
        VarOp("LD_LIBRARY_PATH", "append", ("/opt/cuda-13.0/lib64",)),
        VarOp("GONE", "unset"),
    ),
)


@pytest.fixture
def setup(tmp_path):
    from tests.unit.fastpath.test_fast_path import store

    watched, absent, folder = tmp_path / "vcvarsall.bat", tmp_path / "later", tmp_path / "kits"
    watched.write_text("x")
    folder.mkdir()
    env = {
        "HOME": str(tmp_path),
        "ENVMGR_CACHE_DIR": str(tmp_path / "cache"),
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        "PATH": "/usr/bin:/bin:/usr/bin/",
        "LD_LIBRARY_PATH": "/lib/a::/lib/b/:/lib/a",
        "QUOTED": 'was "quoted" \\ here',
        "GONE": "here",
        "CUDA_PATH_V12_4": "/opt/cuda-12.4",
    }
    store(env, PLAIN, watched, absent, folder, cuda="13.0")
    slot = tmp_path / "cache" / "reactivate" / "ps1---cuda_13.0.psd1"
    return env, slot, watched, absent, folder


def export(argv: list, env: dict, slot: Path, *, full: bool = False) -> subprocess.CompletedProcess:
    cmd = [*FULL] if full else [str(REAL)]
    return subprocess.run(
        [*cmd, "export", "--activate", "--format", "ps1", *argv],
        env={**env, "ENVMGR_SLOT": str(slot)},
        capture_output=True,
    )


def fast_file(env: dict) -> Path:
    return next((Path(env["ENVMGR_CACHE_DIR"]) / "snapshots").glob("*.fast"))


def assert_recorded_reality(d: dict, env: dict, args: list) -> None:
    assert set(d) == KEYS and d["Format"] == 1 and d["Windows"] is False and d["Args"] == args
    assert _groups(d["Env"], 2) == [[n, env.get(n, "")] for n in env_names(False)]
    assert _groups(d["Versioned"], 2) == [["CUDA_PATH_V12_4", "/opt/cuda-12.4"]]
    for path, kind, ticks, length in _groups(d["Paths"], 4):
        if kind == "A":
            assert not os.path.lexists(path)
            continue
        st = os.stat(path)  # PowerShell's (Get-Item X).LastWriteTimeUtc.Ticks, from os.stat
        assert ticks == st.st_mtime_ns // 100 + 621355968000000000
        assert (kind, length) == (("D", 0) if os.path.isdir(path) else ("F", st.st_size))


@posix
@pytest.mark.parametrize("full", [False, True], ids=["fast path", "full CLI"])
def test_the_slot_records_the_real_stats_and_environment(full, setup):
    env, slot, watched, absent, folder = setup
    if full:
        fast_file(env).unlink()  # the fast path has no answer: the full CLI writes the slot
    done = export(ARGS, env, slot, full=full)
    assert done.returncode == 0, done.stderr
    d = slot_data(slot.read_bytes().decode("utf-8-sig"))
    assert_recorded_reality(d, env, ARGS)
    paths = {p: kind for p, kind, _, _ in _groups(d["Paths"], 4)}
    entry = next((Path(env["ENVMGR_CACHE_DIR"]) / "snapshots").glob("*.toml"))
    assert paths[str(watched)] == "F" and paths[str(folder)] == "D" and paths[str(absent)] == "A"
    assert paths[str(entry)] == "F" and paths[VERSION_FILE] == "F"
    assert paths[str(entry.with_suffix(".fast"))] == ("A" if full else "F")
    assert holds(d, ARGS, env)
    assert slot.read_bytes().startswith(b"\xef\xbb\xbf") and b"\r\n" in slot.read_bytes()


@posix
@pytest.mark.parametrize(
    "state", ["as stored", "trailing slashes, blanks, duplicates", "GONE unset", "PATH unset", "QUOTED unset"]
)
def test_the_slots_answer_is_envmgrs(state, setup):
    env, slot, *_ = setup
    env = dict(env)
    if state == "trailing slashes, blanks, duplicates":
        env["PATH"] = "/opt/cuda-13.0/bin//:/usr/bin: :/opt/with space\\:/usr/bin/::/bin"
        env["LD_LIBRARY_PATH"] = "/opt/cuda-13.0/lib64/:/x:/x/"
    elif state != "as stored":
        env.pop(state.split()[0])
    done = export(ARGS, env, slot)
    assert done.returncode == 0, done.stderr
    d = slot_data(slot.read_bytes().decode("utf-8-sig"))
    assert holds(d, ARGS, env)
    from tests.unit.shellkit.test_export_idempotent import Ps1Model

    printed = Ps1Model(dict(env), False).run(done.stdout.decode("utf-8"))  # envmgr's own answer
    ops = [(op.name, op.op, op.value) for op in PLAIN.ops]
    assert printed == by_envmgr(ops, "cuda-13.0", env)
    assert applied(d, env) == printed


def _touch(path, ns: int = 100) -> None:
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + ns))


def _clear(s) -> None:
    done = subprocess.run([str(REAL), "cache", "clear"], env=s[0], capture_output=True)
    assert done.returncode == 0, done.stderr


def _refresh(s) -> None:
    from tests.unit.fastpath.test_fast_path import store

    _touch(next((Path(s[0]["ENVMGR_CACHE_DIR"]) / "snapshots").glob("*.toml")), -(10**9))  # an old entry
    store(s[0], PLAIN, s[2], s[3], s[4], cuda="13.0")  # what --refresh does: capture and store again


CHANGES = {
    "watched file mtime": lambda s: _touch(s[2]),
    "watched file length": lambda s: (
        lambda st: (s[2].write_text("longer"), os.utime(s[2], ns=(st.st_atime_ns, st.st_mtime_ns)))
    )(os.stat(s[2])),
    "watched file removed": lambda s: s[2].unlink(),
    "watched folder mtime": lambda s: (s[4] / "new").mkdir(),
    "absent path appeared": lambda s: s[3].write_text("new"),
    "absent path appeared as a folder": lambda s: s[3].mkdir(),
    "cache clear": _clear,
    "--refresh": _refresh,
    "entry's .fast removed": lambda s: fast_file(s[0]).unlink(),
}
VARIABLES = [
    *env_names(False),
    "CUDA_PATH_V12_4",
    "CUDA_PATH_V13_0",
    "cuda_path_v13_0",
    "CUDA_PATH_V12_4 removed",
    "CUDA_PATH_V12_4 renamed cuda_path_V12_4",
]
ARGUMENTS = {
    "other": ["--cuda", "12.4"],
    "more": ["--cuda", "13.0", "--arch", "x64"],
    "fewer": ["--cuda"],
    "none": [],
    "case": ["--CUDA", "13.0"],
    "joined": ["--cuda=13.0"],
}


@posix
@pytest.mark.parametrize(
    "change",
    sorted(CHANGES)
    + ["version file"]
    + [f"variable {v}" for v in VARIABLES]
    + [f"arguments {a}" for a in sorted(ARGUMENTS)],
)
def test_each_changed_key_input_makes_the_slot_stale(change, setup):
    env, slot, *_ = setup
    assert export(ARGS, env, slot).returncode == 0
    d = slot_data(slot.read_bytes().decode("utf-8-sig"))
    assert holds(d, ARGS, env)  # the slot holds before the change
    after, args = dict(env), ARGS
    if change in CHANGES:
        CHANGES[change](setup)
    elif change.startswith("variable "):
        name = change.split()[1]
        if change.endswith(" removed"):
            after.pop(name)
        elif " renamed " in change:
            after[change.split()[-1]] = after.pop(name)
        else:
            after[name] = after.get(name, "") + "/elsewhere"
    elif change.startswith("arguments "):
        args = ARGUMENTS[change.split()[1]]
    if change == "version file":
        _touch(VERSION_FILE)
        try:
            assert not holds(d, args, after), change
        finally:
            _touch(VERSION_FILE, -100)
        return
    assert not holds(d, args, after), change


@posix
def test_a_change_inside_one_tick_is_not_seen(setup):
    # The documented limit off Windows: .NET's ticks are 100 ns, Linux keeps nanoseconds (NTFS keeps
    # 100 ns units, so on Windows the ticks are the whole mtime). Here the length is unchanged too.
    env, slot, watched, *_ = setup
    st = os.stat(watched)
    os.utime(watched, ns=(st.st_atime_ns, st.st_mtime_ns - st.st_mtime_ns % 100))
    _refresh(setup)  # the entry watches the file as it is now
    assert export(ARGS, env, slot).returncode == 0
    d = slot_data(slot.read_bytes().decode("utf-8-sig"))
    _touch(watched, 1)
    assert holds(d, ARGS, env)
    _touch(watched, 99)
    assert not holds(d, ARGS, env)


# ---- what the slot leaves to envmgr ---------------------------------------------------------------

REFUSED_STATES = {
    "non-ASCII in a list": ("PATH", "/usr/bin:/opt/ü"),
    "a tab in a saved value": ("QUOTED", "a\tb"),
    "a no-break space entry": ("PATH", "/usr/bin:\u00a0"),
}


@posix
@pytest.mark.parametrize("state", sorted(REFUSED_STATES))
def test_values_beyond_printable_ascii_go_to_envmgr(state, setup):
    env, slot, *_ = setup
    assert export(ARGS, env, slot).returncode == 0
    d = slot_data(slot.read_bytes().decode("utf-8-sig"))
    name, value = REFUSED_STATES[state]
    after = {**env, name: value}
    assert holds(d, ARGS, after) and applied(d, after) is None


def _data(ops, platform="linux", validity=None, marker="m"):
    return {"platform": platform, "ops": ops, "validity": validity or {}, "marker": marker}


@pytest.mark.parametrize(
    "why,data,args,env",
    [
        ("non-ASCII static value", _data([("A", "set", "ü")]), [], {}),
        ("a remove operation", _data([("PATH", "remove", ("/x",))]), [], {}),
        ("two spellings of a name", _data([("Path", "prepend", ("/x",)), ("PATH", "append", ("/y",))]), [], {}),
        ("an empty set", _data([("A", "set", "")]), [], {}),
        ("a list entry holding the separator", _data([("PATH", "prepend", ("/a:/b",))]), [], {}),
        ("a blank list entry", _data([("PATH", "prepend", (" ",))]), [], {}),
        ("ENVMGR_ACTIVE among the operations", _data([("ENVMGR_ACTIVE", "set", "x")]), [], {}),
        ("a non-ASCII marker", _data([], marker="cuda-ü"), [], {}),
        ("an argument with a space", _data([]), ["--vs", "Visual Studio"], {}),
        ("an empty argument", _data([]), [""], {}),
        ("an active environment", _data([]), [], {"ENVMGR_RESTORE": "{}"}),
        ("a key variable with a control character", _data([]), [], {"CUDA_HOME": "/a\nb"}),
        ("a CUDA_PATH_V name beyond ASCII", _data([]), [], {"CUDA_PATH_V1ü": "/x"}),
        ("a relative watched path", _data([], validity={"rel/x": "absent"}), [], {}),
        ("a watched path changed since the entry", _data([], validity={VERSION_FILE: "1:1"}), [], {}),
    ],
)
def test_the_writer_refuses_what_the_module_could_not_hold(why, data, args, env, tmp_path):
    assert ps1_slot(data, args, env, "", [str(tmp_path / "K.fast")]) is None, why


@posix
def test_a_symlink_among_the_watched_paths_gets_no_slot(tmp_path):
    from envmgr.cache.key import stat_token

    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    link = str(tmp_path / "link")
    assert ps1_slot(_data([], validity={link: stat_token(link)}), [], {}, "", [str(tmp_path / "K.fast")]) is None


def test_a_snapshot_of_another_os_removes_the_slot(tmp_path):
    slot = tmp_path / "slot.psd1"
    slot.write_text("stale")
    other = "linux" if sys.platform == "win32" else "windows"
    write_ps1_slot(str(slot), _data([("A", "set", "x")], platform=other), [], {}, str(tmp_path / "K.fast"))
    assert not slot.exists()


# ---- a Windows snapshot (written on Windows only; its data checked here) ---------------------------

WIN_ENV = {
    "Path": r"C:\Windows\system32;C:\Windows;C:\Tools\;c:\tools",
    "SystemRoot": r"C:\Windows",
    "ProgramFiles": r"C:\Program Files",
    "ProgramFiles(x86)": r"C:\Program Files (x86)",
    "LOCALAPPDATA": r"C:\Users\me\AppData\Local",
    "USERNAME": "me",
    "Cuda_Path_V12_4": r"C:\CUDA\v12.4",
    "INCLUDE": r"C:\old\include",
    "ENVMGR_CACHE_DIR": r"C:\cache",
}
WIN_OPS = [
    ("CUDA_PATH", "set", r"C:\CUDA\v12.9"),
    ("PATH", "prepend", (r"C:\CUDA\v12.9\bin", "C:\\TOOLS\\\\")),
    ("INCLUDE", "append", (r"C:\VC\include",)),
    ("VSCMD_ARG_TGT_ARCH", "set", "x64"),
    ("LIBPATH", "unset", ""),
]


def test_a_windows_slot_checks_the_base_environment_and_folds_as_windows(tmp_path):
    env = WindowsEnv(WIN_ENV)
    (tmp_path / "K.fast").write_text("f")
    d = slot_data(
        ps1_slot(_data(WIN_OPS, "windows", marker="cuda-12.9 vs2022"), ARGS, env, "", [str(tmp_path / "K.fast")])
    )
    assert d["Windows"] is True
    names = [n for n, _ in _groups(d["Env"], 2)]
    assert {"USERNAME", "LOCALAPPDATA", "COMPUTERNAME", "SystemRoot", "ProgramFiles(x86)"} <= set(names)
    assert _groups(d["Versioned"], 2) == [["CUDA_PATH_V12_4", r"C:\CUDA\v12.4"]]  # os.environ's upper case
    # A watched path is never a PureWindowsPath here; the environment checks are what this test is for.
    d["Paths"] = []
    assert holds(d, ARGS, env, windows=True)
    assert not holds(d, ARGS, WindowsEnv({**WIN_ENV, "USERNAME": "you"}), windows=True)  # vcvars' base
    assert not holds(d, ARGS, WindowsEnv({**WIN_ENV, "CUDA_PATH_V12_9": r"C:\CUDA\v12.9"}), windows=True)
    assert holds(d, ARGS, WindowsEnv({**WIN_ENV, "programfiles": r"C:\Program Files"}), windows=True)
    assert applied(d, env, windows=True) == by_envmgr(WIN_OPS, "cuda-12.9 vs2022", env, windows=True)
    state = applied(d, env, windows=True)
    assert state["Path"] == r"C:\CUDA\v12.9\bin;C:\TOOLS\\;C:\Windows\system32;C:\Windows"


@pytest.mark.skipif(sys.platform != "win32", reason="the full CLI writes a Windows snapshot's slot on Windows only")
def test_on_windows_the_full_cli_writes_the_slot(tmp_path):
    # What Enter-Envmgr's first call does on Windows (the fast path never answers there): the full CLI
    # answers from the cache and writes the slot. Runs on the workflow's Windows runners and in the
    # Windows-CPython tier (tests/run-win32.sh).
    from envmgr import __version__
    from envmgr.cache import store as cache
    from envmgr.snapshot.form import Snapshot, to_toml
    from tests.unit.shellkit.test_export_idempotent import Ps1Model

    watched = tmp_path / "vcvarsall.bat"
    watched.write_text("x")
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(("ENVMGR_", "CUDA", "_ENVMGR"))}
    env.update(
        ENVMGR_CACHE_DIR=str(tmp_path / "cache"),
        NO_COLOR="1",
        CUDA_PATH_V12_4=r"C:\CUDA\v12.4",
        INCLUDE=r"C:\old\include",
    )
    sel = {"vs": None, "toolset": None, "arch": "x64", "cuda": "12.9", "python": []}
    delta = EnvDelta("windows", tuple(VarOp(*op) for op in WIN_OPS))
    text = to_toml(
        Snapshot(
            "windows",
            delta,
            (("cuda", "12.9.1"), ("cuda_short", "12.9"), ("arch", "x64")),
            (("cuda", r"C:\CUDA\v12.9"),),
            (),
            __version__,
            "2026-11-23",
        )
    )
    old = os.environ.get("ENVMGR_CACHE_DIR")
    os.environ["ENVMGR_CACHE_DIR"] = env["ENVMGR_CACHE_DIR"]
    try:
        cache.store(cache.cache_key("windows", sel, WindowsEnv(env)), text, [str(watched), str(tmp_path / "later")])
    finally:
        os.environ.pop("ENVMGR_CACHE_DIR") if old is None else os.environ.__setitem__("ENVMGR_CACHE_DIR", old)
    slot = tmp_path / "cache" / "reactivate" / "ps1---cuda_12.9.psd1"
    args = ["--cuda", "12.9"]
    done = subprocess.run(
        [*FULL, "export", "--activate", "--format", "ps1", *args],
        env={**env, "ENVMGR_SLOT": str(slot)},
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    d = slot_data(slot.read_bytes().decode("utf-8-sig"))
    windows_env = WindowsEnv(env)
    assert d["Windows"] is True and d["Args"] == args
    assert _groups(d["Versioned"], 2) == [["CUDA_PATH_V12_4", r"C:\CUDA\v12.4"]]
    assert _groups(d["Env"], 2) == [[n, env_get(windows_env, n, True) or ""] for n in env_names(True)]
    for path, kind, ticks, length in _groups(d["Paths"], 4):
        if kind != "A":
            assert ticks == os.stat(path).st_mtime_ns // 100 + 621355968000000000, path
    assert {p for p, k, _, _ in _groups(d["Paths"], 4) if k == "A"} >= {str(tmp_path / "later")}
    assert holds(d, args, windows_env, windows=True)
    printed = Ps1Model(dict(windows_env), True).run(done.stdout.decode("utf-8"))
    assert applied(d, windows_env, windows=True) == printed
    watched.write_text("changed")
    assert not holds(d, args, windows_env, windows=True)
