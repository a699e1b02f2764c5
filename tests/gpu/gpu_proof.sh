#!/usr/bin/env bash
# The GPU proof (issue 7), run on the GPU machine from the repository root:
#
#     bash tests/gpu/gpu_proof.sh [RESULTS_DIR]        (default: $OUT, else /tmp/gpu-proof-out)
#
# Needs what tests/gpu/prepare.sh put under .device/ (carried to the machine, never in git): the
# stripped llama-cpp-python 0.3.36 sdist and Python 3.12 wheels of everything the fresh venvs need.
# No network is used: every pip call is --no-index --find-links .device/wheels.
#
# Steps: preflight (GPU, nvcc, cmake, ninja, carried files) -> venv A with envmgr -> `envmgr install
# --recipe llama-cpp-python SDIST` (build with CUDA for this GPU's architecture, cache, install; timed)
# -> tiny random llama model: every layer offloaded, tokens generated -> venv B: the same `envmgr
# install` from the wheel cache (timed) and the same model check -> the naive build
# (CMAKE_ARGS=-DGGML_CUDA=on pip wheel ..., timed) -> summary.json + summary.md.
# Any failing step stops the run: exit 1, the step's name and the tail of its log.
set -uo pipefail

ROOT=$(pwd)
RESULTS=${1:-${OUT:-/tmp/gpu-proof-out}}
WORK=${GPU_PROOF_WORK:-/tmp/gpu-proof}
WHEELS=$ROOT/.device/wheels
SDIST=$ROOT/.device/sdist/llama_cpp_python-0.3.36.tar.gz
PY=${GPU_PROOF_PYTHON:-python3}
SKIP_NAIVE=${GPU_PROOF_SKIP_NAIVE:-0}
mkdir -p "$RESULTS"
rm -rf "$WORK" && mkdir -p "$WORK"
LOG=$RESULTS/gpu_proof.log
TIMES=$WORK/times.txt
: > "$LOG"; : > "$TIMES"
export PYTHONUNBUFFERED=1 CCACHE_DISABLE=1 PIP_DISABLE_PIP_VERSION_CHECK=1 NO_COLOR=1
export ENVMGR_CACHE_DIR=$WORK/envmgr-cache ENVMGR_CONFIG_DIR=$WORK/envmgr-config
FIND=(--no-index --find-links "$WHEELS")

say() { echo "$*" | tee -a "$LOG"; }

# step NAME CMD...: runs CMD with its output in $WORK/NAME.log (appended to the main log), records
# its wall time; on failure prints the step, its exit code and the log's tail, and stops the run.
step() {
    local name=$1; shift
    say "=== step $name: $*"
    local t0 t1 rc
    t0=$(date +%s.%N)
    "$@" > "$WORK/$name.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    local secs; secs=$(awk "BEGIN{printf \"%.1f\", $t1 - $t0}")
    cat "$WORK/$name.log" >> "$LOG"
    echo "$name $secs $rc" >> "$TIMES"
    if [ $rc -ne 0 ]; then
        say "=== FAILED step $name (exit $rc) after ${secs}s; last 40 lines of its log:"
        tail -n 40 "$WORK/$name.log" | tee -a "$LOG"
        FAILED="$FAILED $name"
        if [ "${SOFT:-0}" != 1 ]; then
            summarize
            say "=== gpu proof FAILED at step $name"
            exit 1
        fi
        return $rc
    fi
    say "=== step $name ok in ${secs}s"
}
FAILED=""

# The model check with the wheel as installed; if that fails, once more inside the envmgr environment
# (LD_LIBRARY_PATH etc.), so the log tells a loader problem (F23) from a CPU build (F18).
model_check() {
    local v=$1; shift
    "$v/bin/python" "$GPU/tiny_llama.py" "$@" && return 0
    echo "--- plain run failed; again inside \`envmgr run\`:"
    "$v/bin/envmgr" run -- "$v/bin/python" "$GPU/tiny_llama.py" "$@"
    return 2
}

summarize() {
    "$PY" "${GPU:-$ROOT/tests/gpu}/summarize.py" --work "$WORK" --out "$RESULTS" >> "$LOG" 2>&1 || true
}

preflight() {
    local ok=0
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"; echo "host: $(uname -a)"; echo "cores: $(nproc)"
    if ! command -v nvidia-smi >/dev/null; then echo "MISSING: nvidia-smi (no NVIDIA driver)"; ok=1
    elif ! nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader; then
        echo "MISSING: no GPU answers nvidia-smi"; ok=1
    fi
    if command -v nvcc >/dev/null; then nvcc --version | tail -2; else echo "MISSING: nvcc on PATH"; ok=1; fi
    for tool in cmake ninja gcc; do
        if command -v $tool >/dev/null; then echo "$tool: $($tool --version 2>&1 | head -1)"
        else echo "MISSING: $tool on PATH"; ok=1; fi
    done
    echo "ccache: $(command -v ccache || echo 'not installed') (CCACHE_DISABLE=1 for both builds anyway)"
    "$PY" --version || { echo "MISSING: $PY"; ok=1; }
    [ -f "$SDIST" ] && echo "sdist: $SDIST ($(stat -c %s "$SDIST") bytes)" || { echo "MISSING carried file: $SDIST"; ok=1; }
    for w in pip envmgr click tomlkit platformdirs colorama packaging psutil pefile pyelftools scikit_build_core \
             pathspec typing_extensions numpy diskcache jinja2 markupsafe pyyaml tqdm poetry_core; do
        ls "$WHEELS"/${w}-*.whl >/dev/null 2>&1 || { echo "MISSING carried wheel: $WHEELS/${w}-*.whl"; ok=1; }
    done
    return $ok
}

# A fresh venv with nothing but carried wheels: pip itself comes from its wheel (no ensurepip needed).
make_venv() {
    local v=$1
    "$PY" -m venv --without-pip "$v" &&
    "$v/bin/python" "$(ls "$WHEELS"/pip-*.whl)/pip" install -q "${FIND[@]}" pip &&
    "$v/bin/python" -m pip install -q "${FIND[@]}" envmgr &&
    "$v/bin/envmgr" --version && "$v/bin/python" -m pip list
}

install_gguf() {
    local v=$1
    tar xzf "$SDIST" -C "$WORK" llama_cpp_python-0.3.36/vendor/llama.cpp/gguf-py &&
    "$v/bin/python" -m pip install -q "${FIND[@]}" pyyaml tqdm numpy &&
    "$v/bin/python" -m pip install -q "${FIND[@]}" --no-deps "$WORK/llama_cpp_python-0.3.36/vendor/llama.cpp/gguf-py" &&
    "$v/bin/python" -c "import gguf, llama_cpp; print('gguf', gguf.__file__); print('llama_cpp', llama_cpp.__version__, llama_cpp.__file__)"
}

wheel_contents() {
    local whl; whl=$(ls "$1"/*.whl | head -1)
    echo "$whl ($(stat -c %s "$whl") bytes)"
    "$PY" -c "import sys, zipfile; [print(i.file_size, i.filename) for i in zipfile.ZipFile(sys.argv[1]).infolist() if '/lib/' in i.filename]" "$whl"
    "$PY" -c "import sys, zipfile; n = zipfile.ZipFile(sys.argv[1]).namelist(); sys.exit(0 if any(x.endswith('lib/libggml-cuda.so') for x in n) else 1)" "$whl" \
        || { echo "no lib/libggml-cuda.so in the wheel"; return 1; }
}

copy_inputs() {
    mkdir -p "$WORK/in" && cp -r "$WHEELS" "$WORK/in/wheels" && cp "$SDIST" "$WORK/in/" &&
    cp -r "$ROOT/tests/gpu" "$WORK/in/gpu" && ls -la "$WORK/in" "$WORK/in/wheels"
}

naive_build() {
    mkdir -p "$WORK/naive" &&
    CMAKE_ARGS=-DGGML_CUDA=on "$WORK/venvA/bin/python" -m pip wheel -v --no-deps --no-cache-dir "${FIND[@]}" \
        -w "$WORK/naive" "$SDIST"
}

step preflight preflight
step copy_inputs copy_inputs
WHEELS=$WORK/in/wheels; SDIST=$WORK/in/llama_cpp_python-0.3.36.tar.gz; GPU=$WORK/in/gpu
FIND=(--no-index --find-links "$WHEELS")
step venv_a make_venv "$WORK/venvA"
step envmgr_list "$WORK/venvA/bin/envmgr" list
# doctor on a real GPU machine; its findings are informative here, so its exit code is only logged
step envmgr_doctor sh -c '"$0" doctor; echo "envmgr doctor exit code: $?"' "$WORK/venvA/bin/envmgr"
step recipe_env "$WORK/venvA/bin/envmgr" export --recipe llama-cpp-python --format sh
step recipe_build "$WORK/venvA/bin/envmgr" install --recipe llama-cpp-python -v "${FIND[@]}" "$SDIST"
step cache_list "$WORK/venvA/bin/envmgr" wheels list --json
step cached_wheel wheel_contents "$(dirname "$(ls "$ENVMGR_CACHE_DIR"/wheels/*/*.whl | head -1)")"
step gguf_a install_gguf "$WORK/venvA"
SOFT=1 step model_a model_check "$WORK/venvA" --model "$WORK/tiny.gguf" --json "$WORK/model_a.json"
step venv_b make_venv "$WORK/venvB"
step reinstall_b "$WORK/venvB/bin/envmgr" install --recipe llama-cpp-python "${FIND[@]}" "$SDIST"
SOFT=1 step reuse_check grep "reusing the cached wheel" "$WORK/reinstall_b.log"
step gguf_b install_gguf "$WORK/venvB"
SOFT=1 step model_b model_check "$WORK/venvB" --model "$WORK/tiny.gguf" --skip-write --json "$WORK/model_b.json"
if [ "$SKIP_NAIVE" != 1 ]; then
    SOFT=1 step naive_build naive_build && SOFT=1 step naive_wheel wheel_contents "$WORK/naive"
fi
if [ -n "$FAILED" ]; then
    summarize
    say "=== gpu proof FAILED at:$FAILED; results in $RESULTS"
    exit 1
fi
touch "$WORK/PASSED"
summarize
say "=== gpu proof passed; results in $RESULTS"
