#!/usr/bin/env bash
# The GPU proof of issue 15 (`envmgr install llama-cpp-python` and `envmgr verify`), on the GPU machine:
#
#     bash tests/gpu/verify_proof.sh [RESULTS_DIR]
#
# Carried (never in git): .device/sdist/llama_cpp_python-0.3.36.tar.gz and .device/wheels/ (Python 3.12
# wheels incl. envmgr's own, built from this tree): see tests/gpu/prepare.sh. No network.
# Steps, each timed: fresh venv -> `envmgr install llama-cpp-python SDIST` (doctor, build, cache,
# install, verify: must exit 0 with the offload counted) -> `envmgr verify --json` -> a CPU-only build
# installed over it (CMAKE_ARGS=-DGGML_CUDA=off) -> `envmgr verify` must exit 1 with F18 and the fix
# -> `envmgr install llama-cpp-python SDIST` again: a cache hit, verify passes -> the prebuilt route:
# the CUDA wheel's lib folder as --prebuilt-lib over the CPU install (passes), and a CPU lib folder
# (refused, exit 1).
set -uo pipefail
ROOT=$(pwd)
RESULTS=${1:-${OUT:-/tmp/verify-proof-out}}
WORK=${VERIFY_PROOF_WORK:-/tmp/verify-proof}
WHEELS=$ROOT/.device/wheels
SDIST=$ROOT/.device/sdist/llama_cpp_python-0.3.36.tar.gz
PY=${VERIFY_PROOF_PYTHON:-python3}
mkdir -p "$RESULTS"; rm -rf "$WORK"; mkdir -p "$WORK"
LOG=$RESULTS/verify_proof.log; TIMES=$RESULTS/times.txt
: > "$LOG"; : > "$TIMES"
export PYTHONUNBUFFERED=1 CCACHE_DISABLE=1 PIP_DISABLE_PIP_VERSION_CHECK=1 NO_COLOR=1
export ENVMGR_CACHE_DIR=$WORK/envmgr-cache ENVMGR_CONFIG_DIR=$WORK/envmgr-config
FIND=(--no-index --find-links "$WHEELS")
V=$WORK/venv
FAILED=""

say() { echo "$*" | tee -a "$LOG"; }
# step NAME EXPECTED_RC CMD...: output in $RESULTS/NAME.log, "NAME SECONDS RC EXPECTED" in times.txt
step() {
    local name=$1 want=$2; shift 2
    say "=== step $name (expect exit $want): $*"
    local t0 t1 rc secs
    t0=$(date +%s.%N); "$@" > "$RESULTS/$name.log" 2>&1; rc=$?; t1=$(date +%s.%N)
    secs=$(awk "BEGIN{printf \"%.1f\", $t1 - $t0}")
    echo "$name $secs $rc $want" >> "$TIMES"
    tail -n 25 "$RESULTS/$name.log" >> "$LOG"
    if [ "$rc" != "$want" ]; then say "=== step $name: exit $rc, expected $want (${secs}s)"; FAILED="$FAILED $name"
    else say "=== step $name ok: exit $rc in ${secs}s"; fi
}

preflight() {
    date -u +%Y-%m-%dT%H:%M:%SZ; uname -a; echo "cores: $(nproc)"
    nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader || return 1
    nvcc --version | tail -2; cmake --version | head -1; ninja --version; "$PY" --version
    ls -la "$SDIST" "$WHEELS"/envmgr-*.whl
}
make_venv() {
    "$PY" -m venv --without-pip "$V" &&
    "$V/bin/python" "$(ls "$WHEELS"/pip-*.whl)/pip" install -q "${FIND[@]}" pip &&
    "$V/bin/python" -m pip install -q "${FIND[@]}" envmgr && "$V/bin/envmgr" --version
}
# The CPU-only wheel is built once (pip wheel) and installed over the CUDA one twice.
cpu_over() {
    if [ ! -d "$WORK/cpu-wheel" ]; then
        CMAKE_ARGS="-DGGML_CUDA=off -DLLAVA_BUILD=off -DGGML_NATIVE=off" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
            "$V/bin/python" -m pip wheel --no-deps --no-cache-dir "${FIND[@]}" -w "$WORK/cpu-wheel" "$SDIST" || return 1
    fi
    "$V/bin/python" -m pip install --no-deps --force-reinstall "$WORK"/cpu-wheel/*.whl &&
    ls "$V"/lib/python3*/site-packages/llama_cpp/lib/
}
verify_f18() {
    "$V/bin/envmgr" verify --json --save-output "$RESULTS/child-cpu.txt" > "$RESULTS/verify_cpu.json"; local rc=$?
    cat "$RESULTS/verify_cpu.json"
    "$V/bin/envmgr" verify; "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d['failure']=='F18' else 9)" \
        "$RESULTS/verify_cpu.json" || return 9
    return $rc
}
prebuilt_dirs() {
    local whl; whl=$(ls "$ENVMGR_CACHE_DIR"/wheels/*/*.whl | head -1)
    mkdir -p "$WORK/cuda-lib" "$WORK/cpu-lib" && cd "$WORK/cuda-lib" &&
    "$PY" -c "import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); [z.extract(n) for n in z.namelist() if '/lib/' in n]" "$whl" &&
    mv llama_cpp/lib/* . && rmdir -p llama_cpp/lib 2>/dev/null; ls -la "$WORK/cuda-lib" &&
    cd "$WORK/cpu-lib" && "$PY" -c "import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); [z.extract(n) for n in z.namelist() if '/lib/' in n]" "$WORK"/cpu-wheel/*.whl &&
    mv llama_cpp/lib/* . && rmdir -p llama_cpp/lib 2>/dev/null; ls -la "$WORK/cpu-lib"
}

step preflight 0 preflight
step venv 0 make_venv
step install_build 0 "$V/bin/envmgr" install llama-cpp-python "${FIND[@]}" "$SDIST"
step verify_json 0 "$V/bin/envmgr" verify --json --save-output "$RESULTS/child-gpu.txt"
step cpu_build_over 0 cpu_over
step verify_cpu 1 verify_f18
step install_again 0 "$V/bin/envmgr" install llama-cpp-python "${FIND[@]}" "$SDIST"
step cache_hit 0 grep -q "reusing the cached wheel" "$RESULTS/install_again.log"
step prebuilt_dirs 0 prebuilt_dirs
step cpu_over_2 0 cpu_over
step prebuilt_cuda 0 "$V/bin/envmgr" install --prebuilt-lib "$WORK/cuda-lib" llama-cpp-python
step prebuilt_cpu 1 "$V/bin/envmgr" install --prebuilt-lib "$WORK/cpu-lib" llama-cpp-python
cat "$TIMES" | tee -a "$LOG"
if [ -n "$FAILED" ]; then say "=== verify proof FAILED at:$FAILED"; rc=1
else touch "$RESULTS/PASSED"; say "=== verify proof passed"; rc=0; fi
# The device tool brings back a few files only: everything in one archive.
(cd "$RESULTS" && tar czf /tmp/verify-proof-results.tgz --exclude='*.tgz' . && mv /tmp/verify-proof-results.tgz .)
exit $rc
