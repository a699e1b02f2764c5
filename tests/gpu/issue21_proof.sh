#!/usr/bin/env bash
# Issue 21's GPU proof, run on the device machine (no network) in parts (each under 10 minutes):
#   bash tests/gpu/issue21_proof.sh BUNDLE sd      stable-diffusion-cpp-python: recipe build + verify,
#                                                  plain `pip wheel` of the same sdist, that wheel caught
#   bash tests/gpu/issue21_proof.sh BUNDLE pw      pywhispercpp the same way
#   bash tests/gpu/issue21_proof.sh BUNDLE te      torch-extension on a tiny CUDAExtension against the
#                                                  machine's torch, beside plain `pip wheel`
#   (BUNDLE rest: te then pw, as the first runs did; BUNDLE pwsd: the recipe install and verify of pw,
#   then of sd, without the plain builds, for a second verify run)
# BUNDLE (made by tests/gpu/issue21_prepare.sh): tree.tar.gz (this branch's envmgr), sdist/, wheels/.
# Every step is timed; lines "STEP name rc seconds" go to stdout and $OUT/steps-PART.txt.
set -uo pipefail
B=$(cd "$1" && pwd); PART=$2
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=/tmp/i21; mkdir -p $W/src
if [ -f "$B/tree.tar.gz" ]; then tar xzf "$B/tree.tar.gz" -C $W/src   # else: this checkout (run from its root)
else cp -r envmgr templates shells tests pyproject.toml README.md $W/src/; fi
python3 -m pip install -q --no-index --no-deps --target $W/site "$B"/wheels/*.whl >/dev/null 2>&1
export PYTHONPATH=$W/src:$W/site PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
export ENVMGR_CACHE_DIR=$W/cache ENVMGR_CONFIG_DIR=$W/config
E="python3 -m envmgr"
cd $W   # not the repository root: `python3 -m envmgr` would import the checkout's envmgr, not this bundle's
FL=(--no-index --find-links "$B/wheels")

step() {   # step NAME COMMAND...: run, time, record
    local name=$1; shift
    local t0 t1 rc
    t0=$(date +%s%N)
    "$@" >"$W/$name.log" 2>&1; rc=$?
    t1=$(date +%s%N)
    printf 'STEP %s %s %s\n' "$name" "$rc" "$(( (t1 - t0) / 100000000 ))e-1" | tee -a "$OUT/steps-$PART.txt"
    { echo "==== $name (exit $rc)"; cat "$W/$name.log"; } >>"$OUT/$PART.log"
    tail -n 12 "$W/$name.log"
}

# A fresh venv that sees the machine's own Python packages (torch, numpy, pillow, pip: the GPU machine's
# python3 is a venv, /opt/torch/.venv, that --system-site-packages would not show) through a .pth file.
MACHINE_SITE=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
venv() {
    python3 -m venv --without-pip "$1"
    local site; site=$("$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    echo "$MACHINE_SITE" >"$site/machine-packages.pth"
    echo "$1/bin/python"
}

{ nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader; nproc; nvcc --version | tail -2
  cmake --version | head -1; python3 -c 'import envmgr, torch; print(envmgr.__file__, torch.__version__)'; } \
    | tee -a "$OUT/$PART.log"

if [ "$PART" = sd ]; then
    SD=$(ls "$B"/sdist/stable_diffusion_cpp_python-*.tar.gz)
    PY=$(venv $W/vsd)
    step sd_recipe_install $E install --recipe stable-diffusion-cpp-python --python "$PY" --no-deps "${FL[@]}" "$SD"
    step sd_verify $E verify stable-diffusion-cpp-python --python "$PY"
    $E verify stable-diffusion-cpp-python --python "$PY" --json >"$OUT/sd-verify.json" 2>/dev/null
    $E wheels list --json >"$OUT/sd-wheels.json" 2>/dev/null
    step sd_plain_pip_wheel timeout 300 "$PY" -m pip wheel --no-deps "${FL[@]}" -w $W/plain "$SD"
    PY2=$(venv $W/vsd2)
    step sd_plain_wheel_caught $E install --recipe stable-diffusion-cpp-python --python "$PY2" --no-deps \
        "${FL[@]}" "$(ls $W/plain/*.whl | head -1)"
fi
if [ "$PART" = te ] || [ "$PART" = rest ]; then
    PT=$(venv $W/vpt)
    step te_recipe_install $E install --recipe torch-extension --python "$PT" --no-deps --no-build-isolation \
        "${FL[@]}" $W/src/tests/gpu/tinyext
    step te_verify $E verify tinyext --python "$PT"
    $E verify tinyext --python "$PT" --json >"$OUT/te-verify.json" 2>/dev/null
    step te_kernel "$PT" -c "import torch, tinyext_cuda; x = torch.arange(4., device='cuda'); print(tinyext_cuda.add_one(x).tolist())"
    step te_plain_pip_wheel "$PT" -m pip wheel --no-deps --no-build-isolation "${FL[@]}" -w $W/plain-te $W/src/tests/gpu/tinyext
fi
if [ "$PART" = pw ] || [ "$PART" = rest ]; then
    PW=$(ls "$B"/sdist/pywhispercpp-*.tar.gz)
    PY=$(venv $W/vpw)
    step pw_recipe_install timeout 480 $E install --recipe pywhispercpp --python "$PY" --no-deps --no-build-isolation \
        "${FL[@]}" "$PW"
    step pw_verify $E verify pywhispercpp --python "$PY"
    $E verify pywhispercpp --python "$PY" --json >"$OUT/pw-verify.json" 2>/dev/null
    $E wheels list --json >"$OUT/rest-wheels.json" 2>/dev/null
    step pw_plain_pip_wheel timeout 120 "$PY" -m pip wheel --no-deps --no-build-isolation "${FL[@]}" -w $W/plain "$PW"
    PY3=$(venv $W/vpw3)
    step pw_plain_wheel_caught $E install --recipe pywhispercpp --python "$PY3" --no-deps "${FL[@]}" \
        "$(ls $W/plain/*.whl | head -1)"
fi
if [ "$PART" = pwsd ]; then
    for pkg in pywhispercpp stable-diffusion-cpp-python; do
        short=${pkg%%-*}; sdist=$(ls "$B"/sdist/${pkg//-/_}-*.tar.gz "$B"/sdist/$pkg-*.tar.gz 2>/dev/null | head -1)
        PY=$(venv $W/v2$short)
        iso=(); [ $pkg = pywhispercpp ] && iso=(--no-build-isolation)
        step "${short}_recipe_install" timeout 330 $E install --recipe $pkg --python "$PY" --no-deps "${iso[@]}" \
            "${FL[@]}" "$sdist"
        step "${short}_verify" $E verify $pkg --python "$PY"
        $E verify $pkg --python "$PY" --json >"$OUT/$short-verify2.json" 2>/dev/null
    done
    $E wheels list --json >"$OUT/pwsd-wheels.json" 2>/dev/null
fi
cat "$OUT/steps-$PART.txt"
