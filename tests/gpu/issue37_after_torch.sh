#!/usr/bin/env bash
# Issue 37's GPU result, on the device machine (no network), from the repository root:
#     OUT=/some/dir bash tests/gpu/issue37_after_torch.sh
# Needs tests/gpu/prepare.sh's .device/sdist (llama-cpp-python 0.3.36, stripped) and .device/wheels.
# 1. envmgr builds llama-cpp-python with CUDA into the machine's torch environment (/opt/torch/.venv: an app's
#    environment where torch is imported first), the user's Python given by --python.
# 2. verify in a plain process, then verify --after torch (torch imported first in the same process).
# 3. The same by hand: torch on the GPU, then import llama_cpp, and the runtimes the process mapped
#    (/proc/self/maps: OpenMP and CUDA runtime copies), so the verdict can be checked against the process.
# 4. --after torch again with the child's faulthandler on (PYTHONFAULTHANDLER: the Python stack of a crash) and
#    ld.so's trace (LD_DEBUG=files,libs into files), filtered to what llama_cpp's libraries needed and got; the
#    reuse finding (envmgr/binaries/reuse.py) out of the JSON; then the package ALONE with the app's copies first on
#    LD_LIBRARY_PATH (the check the reuse step's fix names): does the same crash follow the app's copies?
# 5. with I37_PROBE=1, the crash narrowed (see there).
# Lines "STEP name rc seconds" go to $OUT/steps.txt; each step's output to $OUT/steps.log; everything ends in
# $OUT/i37-out.tgz.
set -uo pipefail
ROOT=$(pwd)
OUT=${OUT:-/tmp/i37-out}; mkdir -p "$OUT"
W=/tmp/i37; rm -rf $W; mkdir -p $W
WH=$ROOT/.device/wheels
TORCHPY=${TORCHPY:-/opt/torch/.venv/bin/python}
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1 NO_COLOR=1
export ENVMGR_CACHE_DIR=$W/cache ENVMGR_CONFIG_DIR=$W/config ENVMGR_DATA_DIR=$W/data ENVMGR_PREBUILT_INDEX= ENVMGR_WHEEL_INDEX=
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
    tail -n 8 "$W/$name.log"
    return $rc
}

{ date -u; nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader; nproc
  nvcc --version | tail -2; cmake --version | head -1; python3 --version; "$TORCHPY" --version
  "$TORCHPY" -c 'import torch; print("torch", torch.__version__, torch.version.cuda, torch.cuda.is_available())'
  echo "envmgr $(python3 -m envmgr --version 2>&1)"; } | tee "$OUT/machine.txt"

# The machine's only cmake is the torch venv's `cmake` script (the cmake wheel): inside pip's isolated build env its
# module is not importable (pip's build env hides the venv's site-packages from any Python started there), so
# scikit-build-core reads no version and asks for cmake>=3.21 from the unreachable index. A wrapper first on PATH
# runs it without the build env's PYTHONPATH (said in steps.txt).
if [ -f "${TORCHPY%/python}/cmake" ]; then
    mkdir -p $W/bin && printf '#!/bin/sh\nexec env -u PYTHONPATH -u PYTHONNOUSERSITE %s "$@"\n' "${TORCHPY%/python}/cmake" >$W/bin/cmake
    chmod +x $W/bin/cmake && export PATH=$W/bin:$PATH && echo "NOTE cmake through $W/bin/cmake (the torch venv's, outside pip's build env)" | tee -a "$OUT/steps.txt"
fi
# 1. the build, into the torch environment (pip's own options after --)
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) step install "${E[@]}" install --python "$TORCHPY" --no-prebuilt \
    llama-cpp-python -- --no-index --find-links "$WH" --find-links "$ROOT/.device/sdist"
# 2. verify, plain and after torch
step verify "${E[@]}" verify llama-cpp-python --python "$TORCHPY"
"${E[@]}" verify llama-cpp-python --python "$TORCHPY" --json >"$OUT/verify.json" 2>>"$OUT/steps.log"
step verify_after_torch "${E[@]}" verify llama-cpp-python --python "$TORCHPY" --after torch
"${E[@]}" verify llama-cpp-python --python "$TORCHPY" --after torch --json >"$OUT/verify-after-torch.json" 2>>"$OUT/steps.log"
# 4. the after-torch case under the fault handler and ld.so's trace; the reuse finding; the package alone with
#    the app's copies
mkdir -p $W/ld-after $W/ld-plain
if [ "${I37_PROBE:-0}" != 1 ]; then   # the second run's traces (bench/results/...-run2); the probe skips them for time
step verify_after_torch_debug env PYTHONFAULTHANDLER=1 LD_DEBUG=files,libs LD_DEBUG_OUTPUT=$W/ld-after/ld \
    "${E[@]}" verify llama-cpp-python --python "$TORCHPY" --after torch --save-output "$OUT/after-torch-child.txt"
step verify_plain_debug env PYTHONFAULTHANDLER=1 LD_DEBUG=files,libs LD_DEBUG_OUTPUT=$W/ld-plain/ld \
    "${E[@]}" verify llama-cpp-python --python "$TORCHPY" --save-output "$OUT/plain-child.txt"
lddebug() {   # the trace of the process that loaded llama_cpp: its libraries and the runtimes they needed
    for f in "$1"/ld.*; do
        grep -q 'llama_cpp/lib' "$f" 2>/dev/null || continue
        echo "==== $f"
        grep -E 'llama_cpp|ggml|gomp|cudart|cublas|libcuda\.so' "$f" | grep -vE 'symbol=|binding file' | head -n 400
    done
}
lddebug $W/ld-after >"$OUT/ld-debug-after-torch.txt"
lddebug $W/ld-plain >"$OUT/ld-debug-plain.txt"
fi
grep -n -A40 'Fatal Python error' "$OUT/after-torch-child.txt" >"$OUT/faulthandler-after-torch.txt" || echo "no fault" >"$OUT/faulthandler-after-torch.txt"
python3 - "$OUT/verify-after-torch.json" >"$OUT/reuse.txt" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for s in doc["steps"]:
    if s["name"] in ("runtimes", "reuse", "alone"):
        print(s["status"].upper(), s["name"] + ":", s["summary"])
        print("\n".join("  - " + e for e in s["evidence"]))
        print("  fix:", s["fix"])
print(json.dumps(doc.get("reused_libraries"), indent=1))
dirs = sorted({r["mapped"].rsplit("/", 1)[0] for r in doc.get("reused_libraries") or []})
open("/tmp/i37/app-dirs", "w").write(":".join(dirs))
PY
cat "$OUT/reuse.txt"
if [ -s $W/app-dirs ]; then
    step verify_alone_with_apps_copies env LD_LIBRARY_PATH="$(cat $W/app-dirs)" PYTHONFAULTHANDLER=1 \
        "${E[@]}" verify llama-cpp-python --python "$TORCHPY" --save-output "$OUT/alone-apps-copies-child.txt"
fi
# 3. by hand: one process, torch first
step coload "$TORCHPY" -c '
import re, torch
x = torch.ones(4, device="cuda") * 2
import llama_cpp
print("torch", torch.__version__, "on", torch.cuda.get_device_name(0), "sum", float(x.sum()))
print("llama_cpp", llama_cpp.__version__, "gpu offload", llama_cpp.llama_supports_gpu_offload())
libs = sorted({l.split()[-1] for l in open("/proc/self/maps") if re.search(r"(gomp|iomp|libomp|cudart|cublas)[^/]*\.so", l)})
print("\n".join(libs))
'
# 5. The crash after torch, narrowed (I37_PROBE=1): each variant loads the same tiny model in a process of its own,
#    so the verdict can be checked against which of torch's effects the crash follows: the order of the imports, the
#    GPU (n_gpu_layers 0), OpenMP's threads; and ld.so's symbol bindings (LD_DEBUG=bindings) from llama.cpp's
#    libraries into objects outside llama_cpp/lib and the system's library folders (a symbol torch's libraries
#    interpose), plus gdb's backtrace where the machine has gdb.
if [ "${I37_PROBE:-0}" = 1 ]; then
    python3 -c "from envmgr.verify.gguf import write_tiny_llama; write_tiny_llama('$W/tiny.gguf')"
    cat >$W/probe.py <<'PY'
import faulthandler, sys
faulthandler.enable()
order, ngl = sys.argv[1], int(sys.argv[2])
for name in order.split(","):
    __import__(name)
    print("imported", name, flush=True)
import llama_cpp
llm = llama_cpp.Llama(model_path=sys.argv[3], n_gpu_layers=ngl, n_ctx=128, n_batch=64, seed=1, verbose=False)
print("loaded; first token", next(iter(llm.generate(llm.tokenize(b"hello"), temp=0.0))), flush=True)
PY
    step probe_torch_first "$TORCHPY" $W/probe.py torch,llama_cpp -1 $W/tiny.gguf
    step probe_llama_first "$TORCHPY" $W/probe.py llama_cpp,torch -1 $W/tiny.gguf
    step probe_torch_first_cpu "$TORCHPY" $W/probe.py torch,llama_cpp 0 $W/tiny.gguf
    step probe_torch_first_omp1 env OMP_NUM_THREADS=1 "$TORCHPY" $W/probe.py torch,llama_cpp -1 $W/tiny.gguf
    step probe_numpy_first "$TORCHPY" $W/probe.py numpy,llama_cpp -1 $W/tiny.gguf
    mkdir -p $W/ld-bind
    step probe_bindings timeout 120 env LD_DEBUG=bindings LD_DEBUG_OUTPUT=$W/ld-bind/ld "$TORCHPY" $W/probe.py torch,llama_cpp -1 $W/tiny.gguf
    for f in $W/ld-bind/ld.*; do
        grep -E 'binding file [^ ]*llama_cpp/lib/' "$f" | grep -vE " to [^ ]*(llama_cpp/lib/|/lib/x86_64-linux-gnu/|/usr/lib/)" \
            | sed -E 's/^ *[0-9]+: *//' | sort | uniq -c | sort -rn | head -n 200
    done >"$OUT/probe-bindings-into-app.txt"
    if command -v gdb >/dev/null; then
        step probe_gdb timeout 120 gdb -q -batch -ex run -ex bt -ex 'info sharedlibrary' --args "$TORCHPY" $W/probe.py torch,llama_cpp -1 $W/tiny.gguf
    else
        echo "NOTE no gdb on this machine" | tee -a "$OUT/steps.txt"
    fi
fi
cp "$W"/*.log "$OUT"/ 2>/dev/null
# one archive: the device tool returns a handful of files at most
(cd "$OUT" && tar czf ../i37-out.tgz . && rm -rf ./* && mv ../i37-out.tgz .)
exit 0
