#!/usr/bin/env bash
# Issue 24's GPU proof, on the device machine (no network), from the repository root:
#     bash tests/gpu/issue24_proof.sh            results in $OUT (default /tmp/i24-out)
# Needs tests/gpu/prepare.sh's .device/sdist (llama-cpp-python 0.3.36, stripped) and .device/wheels.
#
# 1. Three llama-cpp-python wheels built here by plain `pip wheel` with CMAKE_ARGS, as the official CUDA
#    workflow builds them, each with one architecture set: A `90-real` (0.3.36), B `80-virtual` (PTX
#    only; the same source labelled 0.3.36.post1, because an official folder holds one wheel per version
#    and tag: so B is the NEWER one and the pick must still prefer A's native code), C `75-real`.
#    All three with -DGGML_CUDA_FA=OFF in CMAKE_ARGS. It saves no build time: in llama.cpp 0.3.36's ggml
#    it only defines GGML_CUDA_NO_FA, and every fattn template instance is still compiled (each build
#    took 248-291 s). Kind of device code, not build time, is what this proves.
# C alone needs two calls of 600 s: `I24_ONLY=c I24_BUILD_IF_BELOW=0` builds C (keep /tmp/i24/wheels-C),
# then `I24_ONLY=c I24_WHEELS_FROM=<folder holding wheels-C>` on the same warm machine runs the rest.
# 2. A loopback (127.0.0.1) copy of the official layout (tests/official_index.py): folder cu130 with A
#    and B; a second server root whose cu130 holds B only; a third with C only.
# 3. In fresh venvs, each with a fresh envmgr cache: `install --dry-run --json`, then `install`, then
#    `verify` (a tiny llama model, every layer on the GPU) for A+B and for B; for C the plan (refused,
#    build) and, when time is left, the build route itself (the user recipe adds -DGGML_CUDA_FA=OFF).
# I24_ONLY=c: only the third case (C built, its plan, the build route), for a call of its own.
# Rehearsal without a GPU: I24_WHEELS_FROM=DIR takes DIR/wheels-{A,B,C}/*.whl instead of building.
# Lines "STEP name rc seconds" go to $OUT/steps.txt; each step's output to $OUT/steps.log.
set -uo pipefail
ROOT=$(pwd)
OUT=${OUT:-/tmp/i24-out}; mkdir -p "$OUT"
W=/tmp/i24; rm -rf $W; mkdir -p $W
START=$(date +%s)
SDIST=$ROOT/.device/sdist/llama_cpp_python-0.3.36.tar.gz
WH=$ROOT/.device/wheels
FL=(--no-index --find-links "$WH")
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1 NO_COLOR=1 CCACHE_DISABLE=1
python3 -m pip install -q --no-index --no-deps --target $W/site $WH/{click,colorama,packaging,pefile,platformdirs,psutil,pyelftools,tomlkit}-*.whl
export PYTHONPATH=$ROOT:$W/site
E=(python3 -m envmgr)

step() {   # step NAME COMMAND...
    local name=$1; shift
    local t0 t1 rc
    t0=$(date +%s%N)
    "$@" >"$W/$name.log" 2>&1; rc=$?
    t1=$(date +%s%N)
    printf 'STEP %s %s %s\n' "$name" "$rc" "$(( (t1 - t0) / 100000000 ))e-1" | tee -a "$OUT/steps.txt"
    { echo "==== $name (exit $rc): $*"; cat "$W/$name.log"; } >>"$OUT/steps.log"
    tail -n 6 "$W/$name.log"
    return $rc
}

MACHINE_SITE=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
venv() {   # a fresh venv with pip, and the machine's packages (gguf's numpy) through a .pth
    python3 -m venv --without-pip "$1"
    local site; site=$("$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    echo "$MACHINE_SITE" >"$site/machine-packages.pth"
    echo "$1/bin/python"
}

{ date -u; nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader; nproc
  nvcc --version | tail -2; cmake --version | head -1; python3 --version; } | tee "$OUT/machine.txt"

# 1. the three wheels
mkdir -p $W/src && tar xzf "$SDIST" -C $W/src
SRC=$W/src/llama_cpp_python-0.3.36
cp -a $SRC $W/src-post1
sed -i 's/^__version__ = "0.3.36"/__version__ = "0.3.36.post1"/' $W/src-post1/llama_cpp/__init__.py
grep -n "__version__" $W/src-post1/llama_cpp/__init__.py | tee -a "$OUT/machine.txt"
build() {   # build NAME ARCHS SOURCE  (I24_WHEELS_FROM=DIR: take DIR/wheels-NAME instead: a rehearsal elsewhere)
    if [ -n "${I24_WHEELS_FROM:-}" ]; then cp -r "$I24_WHEELS_FROM/wheels-$1" "$W/"; return; fi
    CMAKE_ARGS="-DGGML_CUDA=on -DGGML_CUDA_FA=OFF -DCMAKE_CUDA_ARCHITECTURES=$2" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
        step "build_$1" python3 -m pip wheel --no-deps "${FL[@]}" -w "$W/wheels-$1" "$3"
}
# 2. the loopback servers, one per scenario
serve() {   # serve NAME PORT WHEEL...: the official layout under $W/www-NAME, on 127.0.0.1:PORT
    local name=$1 port=$2; shift 2
    python3 "$ROOT/tests/official_index.py" "$W/www-$name" "http://127.0.0.1:$port" cu130 "$@" >/dev/null
    (cd "$W/www-$name" && exec python3 -m http.server --bind 127.0.0.1 "$port" >/dev/null 2>&1) &
}
if [ "${I24_ONLY:-}" != c ]; then
build A 90-real "$SDIST"
build B 80-virtual "$W/src-post1"
A=$(ls $W/wheels-A/*.whl); B=$(ls $W/wheels-B/*.whl)
ls -la $W/wheels-*/ | tee -a "$OUT/machine.txt"

serve ab 8724 "$A" "$B"
serve b 8725 "$B"
sleep 1
find $W/www-ab -type f | sed "s|$W/||" | tee -a "$OUT/machine.txt"

scenario() {   # scenario NAME PORT
    local name=$1 port=$2
    local py; py=$(venv "$W/venv-$name")
    export ENVMGR_CACHE_DIR=$W/cache-$name ENVMGR_CONFIG_DIR=$W/config-$name ENVMGR_WHEEL_INDEX=""
    local idx="http://127.0.0.1:$port/llama-cpp-python/whl/cu130/"
    step "${name}_plan" "${E[@]}" install --python "$py" --prebuilt-index "$idx" --dry-run --json llama-cpp-python
    cp "$W/${name}_plan.log" "$OUT/${name}-plan.json.txt"
    step "${name}_install" "${E[@]}" install --python "$py" --prebuilt-index "$idx" llama-cpp-python "${FL[@]}"
    step "${name}_verify" "${E[@]}" verify llama-cpp-python --python "$py"
    "${E[@]}" verify llama-cpp-python --python "$py" --json >"$OUT/${name}-verify.json" 2>/dev/null
    "${E[@]}" wheels list --json >"$OUT/${name}-wheels.json" 2>/dev/null
}
scenario ab 8724
scenario b 8725
fi

# 3. C (75-real): refused, then the build route
build C 75-real "$SDIST"
C=$(ls $W/wheels-C/*.whl)
serve c 8726 "$C"
sleep 1
export ENVMGR_CACHE_DIR=$W/cache-c ENVMGR_CONFIG_DIR=$W/config-c ENVMGR_WHEEL_INDEX=""
PYC=$(venv "$W/venv-c")
IDX=http://127.0.0.1:8726/llama-cpp-python/whl/cu130/
step c_plan "${E[@]}" install --python "$PYC" --prebuilt-index "$IDX" --dry-run --json llama-cpp-python
cp "$W/c_plan.log" "$OUT/c-plan.json.txt"
ELAPSED=$(( $(date +%s) - START ))
echo "elapsed before the C build route: ${ELAPSED}s" | tee -a "$OUT/steps.txt"
if [ "$ELAPSED" -lt "${I24_BUILD_IF_BELOW:-420}" ]; then
    mkdir -p "$ENVMGR_CONFIG_DIR/recipes"
    sed 's/^cmake_args = \["-DGGML_CUDA=on"\]/cmake_args = ["-DGGML_CUDA=on", "-DGGML_CUDA_FA=OFF"]/' \
        "$ROOT/templates/recipes/llama-cpp-python.toml" >"$ENVMGR_CONFIG_DIR/recipes/llama-cpp-python.toml"
    # no network: pip finds the sdist in a find-links folder, so the spec stays the package's name
    step c_install_builds "${E[@]}" install --python "$PYC" --prebuilt-index "$IDX" llama-cpp-python "${FL[@]}" \
        --find-links "$ROOT/.device/sdist"
    step c_verify "${E[@]}" verify llama-cpp-python --python "$PYC"
    "${E[@]}" verify llama-cpp-python --python "$PYC" --json >"$OUT/c-verify.json" 2>/dev/null
else
    echo "C build route not run: ${ELAPSED}s used" | tee -a "$OUT/steps.txt"
fi
cat "$OUT/steps.txt"
