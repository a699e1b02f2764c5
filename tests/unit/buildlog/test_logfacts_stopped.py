"""F18's rules that rest on what a run was given or what the reporter says (no layer count, a 0 layer count, "it runs
on the CPU") do not name F18 where the program then stopped on an error of its own (issue 23, precision, round 10):
a run left on the CPU is a run that went on, so the stop is what the log reports. The runtime's own CPU-run words are
not such rules and keep F18. The lines are the tools' own, in the shapes users paste them (koboldcpp's frozen app,
llama.cpp's CLI), named beside them."""

from __future__ import annotations

from envmgr.buildlog.facts import stopped_after
from tests.logtext import decisive, facts

# koboldcpp's Linux binary started with --usecublas and no layer count, its CUDA library failing to load on an older
# glibc (LostRuins/koboldcpp#705: 'undefined symbol: getcpu', the earlier release runs)
_KOBOLD_RUN = (
    "$ ./koboldcpp-linux-x64-1.58 model.Q5_K_M.gguf --usecublas\n"
    "Welcome to KoboldCpp - Version 1.58\n"
    "Initializing dynamic library: koboldcpp_cublas.so\n"
)
_KOBOLD_STOP = (
    "Traceback (most recent call last):\n"
    '  File "ctypes/__init__.py", line 373, in __init__\n'
    "OSError: /tmp/_MEIx/koboldcpp_cublas.so: undefined symbol: getcpu\n"
    "[2060] Failed to execute script 'koboldcpp' due to unhandled exception!\n"
)
# the same command line with the run going on: every layer on the CPU (koboldcpp's load log)
_KOBOLD_WENT_ON = "Loading model: /models/model.Q5_K_M.gguf\nllm_load_tensors: offloaded 0/33 layers to GPU\n"


def test_a_run_given_no_layers_that_then_stops_on_its_own_error_is_not_f18(tmp_path):
    assert decisive(_KOBOLD_RUN, tmp_path)[0] == "F18"
    assert decisive(_KOBOLD_RUN + _KOBOLD_STOP, tmp_path)[0] is None


def test_the_runtimes_own_cpu_run_words_keep_f18_whatever_follows(tmp_path):
    # "offloaded 0/33 layers" is the runtime's report of a CPU run, not a rule on what it was given
    assert decisive(_KOBOLD_RUN + _KOBOLD_WENT_ON + _KOBOLD_STOP, tmp_path)[0] == "F18"


def test_a_stop_before_the_ask_is_not_after_it():
    text = _KOBOLD_STOP + _KOBOLD_RUN
    fs = facts(text)
    run = fs.first("ggml_run")
    assert run is not None and stopped_after(fs.last, run.line_no) is None
    assert stopped_after(facts(_KOBOLD_RUN + _KOBOLD_STOP).last, 1) is not None


def test_a_warning_or_a_word_error_in_prose_is_no_stop():
    for line in (
        "UserWarning: TypedStorage is deprecated",
        "error: no such option -ngl (a typo of mine)",
        "ggml_cuda_init: found 1 CUDA devices:",
        "the Error: field was empty in the UI",
    ):
        assert stopped_after(facts("main -m model.gguf\n" + line + "\n").last, 1) is None, line
