"""The environment family: arguments a shell or a wrapper mangled on the way to CMake (F10), an old flag name removed
in the version being built (F09), a path too long for Windows (F11), a CI or scheduler time limit (F20).
"""

from __future__ import annotations

import re

from envmgr.buildlog.rules.base import NOT_RECOGNIZED, Add, FactRx, Facts, fx
from envmgr.buildlog.signatures import NAMED_GENERATOR, Details, Signature, generator_cut, sig, words
from envmgr.catalog import FailureId

IDS: tuple[FailureId, ...] = ("F09", "F10", "F11", "F20")

FACTS: tuple[FactRx, ...] = (
    # CMAKE_ARGS in another shell's syntax: cmd keeps the quotes of set X="..." in the value and does not know
    # $env:X; PowerShell's `set X=...` sets no environment variable; a POSIX shell expands PowerShell's `$env` to
    # nothing and runs `:CMAKE_ARGS=...` as a command (bash/sh "<word>: command not found", zsh "command not found:
    # <word>")
    fx(
        "shell_syntax",
        r"(?<!PS )(?<![\w:\\])[A-Z]:\\[^>\n]*>\s*(?:set\s+\"?CMAKE_ARGS=\"|\$env:CMAKE_ARGS)|"
        r"PS [A-Z]:\\[^>\n]*>\s*set\s+CMAKE_ARGS=|'\$env:CMAKE_ARGS[^'\n]*' is not recognized|"
        r"(?<![\w$]):CMAKE_ARGS=[^\n]*?: (?:command )?not found|command not found: :CMAKE_ARGS=",
        ("CMAKE_ARGS",),
    ),
    fx("cmake_args", r"CMAKE_ARGS|cmake\.args|-D[A-Z][A-Z0-9_]+=", ("CMAKE_ARGS", "cmake.args", "-D")),
    # (CMake's own: a -D, -G, -T or -A split from its value, Kitware/CMake Source/cmake.cxx)
    fx(
        "cmake_parse",
        r"Parse error in command line argument|(?i:unrecognized arguments?):|no such option: -C|"
        r"Unknown argument -?D?\w*CUDA\w*|-D must be followed with VAR=VALUE|"
        r"No (?:generator|toolset|platform) specified for -[GTA]\b",
        (
            "Parse error",
            "nrecognized argument",
            "no such option",
            "Unknown argument",
            "must be followed",
            "specified for -",
        ),
    ),
    # quotes kept inside a CMake value (cmd's `set X="..."`, a quoted CMAKE_ARGS item): CMake's check of an
    # architecture list (Kitware/CMake Modules/Internal/CMakeCUDAArchitecturesValidate.cmake); an unbalanced quote
    # in CMAKE_ARGS, which scikit-build-core splits with shlex (CPython Lib/shlex.py's errors)
    fx("quoted_value", r"CMAKE_\w+_ARCHITECTURES contains literal quotes", "contains literal quotes"),
    fx("shlex_error", r"ValueError: No (?:closing quotation|escaped character)", "ValueError: No "),
    # a CMake -D setting run as a command or taken for a variable name (an unquoted or space-split CMAKE_ARGS value:
    # `$env:CMAKE_ARGS = -DX=on`, `CMAKE_ARGS= -DX=on pip ...`, `export CMAKE_ARGS= -DX=on`), in the shells' words
    fx(
        "flag_as_command",
        r"'(-D[A-Z]\w*(?:=[^'\n]*)?)'\s+(?:" + NOT_RECOGNIZED + r")|"
        r"(?:^|\s)(-D[A-Z]\w*=\S*): (?:command )?not found|"
        r"`(-D[A-Z]\w*=[^'\n]*)': not a valid identifier",
        ("'-D", "-D", "`-D"),
    ),
    # a whole list of CMake settings passed as ONE argument (conda's compiler activation sets CMAKE_ARGS to
    # -DCMAKE_AR=... -DCMAKE_RANLIB=...; a script that quotes it makes the first setting's value hold the rest):
    # a program that is not cmake, quoted together with -DCMAKE_ settings (Morpheus #906, fixed by dropping quotes);
    # CMAKE_INTDIR is a define CMake's multi-config generators give the compiler, not a setting
    fx(
        "args_in_one_value",
        r"[\"'](?:[A-Za-z]:)?[\\/][^\"'\s]*?[\w.+-]+(?<![\\/]cmake)(?<![\\/]cmake\.exe)"
        r" -DCMAKE_(?!INTDIR=)[A-Z_]+=",
        "-DCMAKE_",
    ),
    # a Windows path whose backslashes a POSIX split (shlex, as scikit-build-core splits CMAKE_ARGS; bash) ate: the
    # drive runs into the folder name (C:Program FilesNVIDIA...); or CMake taking for its source folder a setting
    # (-D NAME=value split from its -D: pvpgn-server #125) or the tail of a path split at its space
    # (...\GPU Computing Toolkit\CUDA\v8.0 unquoted: caffe #5876)
    fx(
        "args_mangled",
        r"(?<![\w\\/])[A-Za-z]:(?:Program Files(?: \(x86\))?|ProgramData|Users)[A-Za-z]|"
        r"The source directory \"[^\"\n]*?(?:[\\/](?:-D)?[A-Z][A-Z0-9_]*=|"
        r"[\\/]Toolkit[\\/]CUDA[\\/]v\d|[\\/]Files(?: \(x86\))?[\\/])",
        (":Program", ":Users", "source directory"),
    ),
    # llama.cpp made LLAMA_CUBLAS a FATAL_ERROR when it moved to GGML_CUDA (mid 2024); llama-cpp-python 0.2.80 and
    # later vendor that CMake (0.2.79 still builds with it: llama-cpp-python #1616, "Build fail for version from
    # 0.2.80 to 0.2.83"): the old flag given to one of them fails the configure (a version pair decides)
    fx("cublas_flag", r"(?:\b|(?<=-D))LLAMA_CUBLAS=(?:on|ON|1|true|TRUE)\b", "LLAMA_CUBLAS="),
    fx(
        "llama_cpp_python",
        r"(?i:llama[_-]cpp[_-]python)(?:-|==)(\d+\.\d+\.\d+)\b",
        ("llama_cpp_python", "llama-cpp-python", "Llama-cpp-python", "LLAMA_CPP_PYTHON"),
    ),
    fx(
        "semicolon_cmd",
        r"\b\d{2,3}(?:-real|-virtual)?: (?:command )?not found|'\d{2,3}' is not recognized|"
        r"unrecognized arguments: \d{2,3}(?:-real|-virtual)?\b",
        ("not found", "not recognized", "unrecognized arguments"),
    ),
    fx(
        "path_long",
        r"(?i:path(?:, file name, or both)? (?:is |are )?too long)|less than 260 characters|"
        r"MAX_PATH|输入行太长|The input line is too long|命令行太长",
        ("too long", "260 characters", "MAX_PATH", "太长", "too Long"),
    ),
    # CI services and batch schedulers stopping a job at their limit, in their own words: GitHub Actions, Travis,
    # Azure Pipelines ("ran longer than the maximum time of"), gitlab-runner ("Job failed: execution took longer
    # than 1h0m0s") and GitLab's failure reason ("There has been a timeout failure or the job got stuck"), Jenkins'
    # build-timeout plugin ("Build timed out (after N minutes)") and Pipeline timeout step ("Cancelling nested steps
    # due to timeout", "Timeout has been exceeded"), AppVeyor ("Build execution time has reached the maximum
    # allowed time for your plan"), Bitbucket ("Exceeded build time limit"), CircleCI ("... longer max job
    # runtimes"), Read the Docs ("Build exited due to time out"), Slurm ("DUE TO TIME LIMIT"), LSF ("run time
    # limit"), PBS/Torque ("job killed: walltime 3610 exceeded limit 3600"), coreutils' timeout --verbose
    # ("timeout: sending signal TERM to command"), Travis' and CircleCI's no-output limits
    fx(
        "time_limit",
        r"(?i:exceeded the maximum (?:execution )?time|timed out after|time limit|has timed out|"
        r"The operation was canceled\.|ran longer than the maximum time|"
        r"Job failed: execution took longer than|Build timed out \(after|"
        r"No output has been received in the last|Too long with no output|"
        r"timeout failure or the job got stuck|Cancelling nested steps due to timeout|"
        r"Timeout has been exceeded|reached the maximum allowed time|longer max job runtimes?|"
        r"exited due to time ?out|walltime \d+ exceeded limit|\btimeout: sending signal)",
        (
            "ime limit",
            "TIME LIMIT",
            "maximum",
            "timed out",
            "was canceled",
            "took longer than",
            "No output has been received",
            "Too long with no output",
            "job got stuck",
            "due to time",
            "has been exceeded",
            "max job runtime",
            "walltime",
            "sending signal",
        ),
    ),
)


def decide(fs: Facts, add: Add) -> None:
    parse = fs.first("cmake_parse")
    if parse and (re.search(r"-D|CMAKE", parse.line) or fs.first("cmake_args")):
        add("F10", "cmake-arguments", parse)
    add("F10", "cmake-args-shell-syntax", fs.first("shell_syntax"))
    add("F10", "quotes-in-cmake-value", fs.first("quoted_value"))
    add("F10", "cmake-args-unbalanced-quote", fs.first("shlex_error") if fs.first("cmake_args") else None)
    add("F10", "semicolon-split-list", fs.first("semicolon_cmd"))
    add("F10", "cmake-flag-run-as-command", fs.first("flag_as_command"))
    add("F10", "arguments-mangled", fs.first("args_mangled"))
    add("F10", "cmake-args-in-one-value", fs.first("args_in_one_value"))
    flag, pkg = fs.first("cublas_flag"), fs.first("llama_cpp_python")
    if flag and pkg and fs.first("build_failed") and tuple(map(int, pkg.value.split("."))) >= (0, 2, 80):
        add("F09", "removed-flag-for-version", flag, llama_cpp_python=pkg.value)
    add("F11", "path-too-long", fs.first("path_long"))
    # (not a limit the line says a test run hit: tests that hang are not a long build)
    limit = fs.first("time_limit")
    add("F20", "time-limit", limit if limit and not _TESTS_STOPPED.search(limit.line) else None)


# a time limit hit by a test run (the tests named on the limit's own line: "140 of 142 tests complete", a pytest or
# ctest step, "test_x timed out after 300 s"): F20 is a build that takes too long, a test that hangs is not one
_TESTS_STOPPED = re.compile(
    r"(?i:\b\d+\W{0,3}tests?\b|\b(?:py|c)test\b|\btest_\w+|"
    r"\btests? (?:hang|hung|stuck|never|complete))"
)


# ---------------------------------------------------------------- signatures: the tools' own sentences


def _unused_vars(m: re.Match[str]) -> Details:
    return {"unused": [n.strip() for n in m.group("names").splitlines() if n.strip()]}


def _flag_unused(m: re.Match[str]) -> bool:
    """An unused variable that names a GPU build flag (LLAMA_CUDA, GGML_CUBLAS, ...): CMake lists every unused -D,
    and a harmless one (CUDNN_HOME, a toolchain hint) is no F09 (clean train logs)."""
    return re.search(r"\b(?:LLAMA|GGML|WHISPER)_|CUBLAS|CUDA", m.group("names")) is not None


SIGNATURES: tuple[Signature, ...] = (
    # F09: old flag names (the CMake message wraps "Use GGML_CUDA instead" onto its own line).
    # ggml's CMake and Makefile say deprecated (a warning, or FATAL_ERROR for LLAMA_CUBLAS) or removed
    sig(
        "F09",
        "deprecated-flag",
        r"\b(?P<flag>(?:LLAMA|GGML|WHISPER)_\w+)\s+(?:is|has\s+been)\s+(?:deprecated|removed)\b",
        needle=("deprecated", "removed"),
    ),
    sig(
        "F09",
        "unused-variables",
        words("Manually-specified variables were not used by the project:")
        + r"[ \t]*\n(?:[ \t]*\n)*(?P<names>(?:[ \t]+[A-Za-z_]\w*[ \t]*\n)+)",
        extract=_unused_vars,
        needle="Manually-specified",
        span=40,
        check=_flag_unused,
    ),
    # F10: CMAKE_ARGS quoting.
    # Not when the extra path is a source file: CMake was run as the compiler (CC/CXX set to cmake), a
    # failure of its own (train log onnxruntime #17517).
    sig(
        "F10",
        "extra-path",
        r"Ignoring extra path from command line:\s*(?P<arg>[^\n]*)",
        needle="extra path",
        check=lambda m: not re.search(r"\.(?:c|cc|cpp|cxx|cu|o|obj)\"?\s*$", m.group("arg")),
    ),
    sig("F10", "skbuild-ignored", r"Unsupported CMAKE_ARGS ignored:\s*(?P<arg>[^\n]*)", needle="CMAKE_ARGS"),
    # the generator name reached CMake cut at a space or with the shell's quotes in it (F03 keeps a whole name)
    sig("F10", "generator-name-cut", NAMED_GENERATOR, needle="ould not", key="named generator", check=generator_cut),
    sig(
        "F10",
        "cmd-syntax",
        words("'CMAKE_ARGS' is not recognized as an internal or external command"),
        needle="CMAKE_ARGS",
    ),
    # an architecture list CMake cannot read (8.6, sm_86, 86,89, "86 89": a format from another tool or a split
    # value): the same validation as "contains literal quotes" (Modules/Internal/CMakeCUDAArchitecturesValidate.cmake)
    sig(
        "F10",
        "cmake-arch-list-format",
        r"CMAKE_CUDA_ARCHITECTURES:\s+\S[^\n]*\s+is\s+not\s+one\s+of\s+the\s+following",
        needle="not one of the following",
    ),
    # F11: long paths and long command lines (MSBuild codes survive localisation).
    sig("F11", "object-path-max", r"CMAKE_OBJECT_PATH_MAX", needle="CMAKE_OBJECT_PATH_MAX"),
    sig("F11", "msb3491", r"\bMSB3491\b", needle="MSB3491"),
    sig("F11", "filename-too-long", words("The filename or extension is too long"), needle="too long"),
    sig("F11", "ninja-260", words("Filename longer than 260 characters"), needle="260 characters"),
    sig("F11", "input-line-too-long", words("The input line is too long"), needle="too long"),
)
