#!/usr/bin/env bash
# Fetch Windows (win_amd64) CUDA wheels from PyPI and unpack them into TARGET_DIR.
#
#   tests/setup/fetch-windows-cuda.sh TARGET_DIR
#
# Wheels are cached in ${XDG_CACHE_HOME:-~/.cache}/envmgr-test-downloads, so a
# rerun with a warm cache does no network I/O.  Each spec NAME==X.Y.* is
# unpacked to TARGET_DIR/NAME-X.Y/ (skipped when that wheel is already unpacked).
# Override the spec list with ENVMGR_CUDA_WHEELS="spec1 spec2 ..." (specs must be
# NAME==X.Y.* or NAME==X.Y.Z).
#
# What the default wheels contain (paths inside the wheel / unpack dir):
#   nvidia-cuda-nvcc==13.2.*          nvidia/cu13/bin/nvcc.exe  (imports only KERNEL32.dll;
#                                     runs under wine on its own for --version)
#   nvidia-cuda-crt==13.2.*           nvidia/cu13/include/crt/host_config.h  (_MSC_VER 1920..1959)
#   nvidia-cuda-nvcc-cu12==12.9.*     nvidia/cuda_nvcc/include/crt/host_config.h (_MSC_VER 1910..1949)
#                                     nvidia/cuda_nvcc/bin/ptxas.exe  (NO nvcc.exe in any cu12 win wheel)
#   nvidia-cuda-nvcc-cu12==12.3.*     same layout, host_config.h _MSC_VER 1910..1939 (12.0-12.3)
#   nvidia-cuda-nvcc-cu11==11.8.*     nvidia/cuda_nvcc/include/crt/host_config.h (_MSC_VER 1910..1939)
#                                     nvidia/cuda_nvcc/bin/ptxas.exe  (no nvcc.exe)
#   nvidia-cuda-runtime-cu12==12.9.*  nvidia/cuda_runtime/bin/cudart64_12.dll
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 TARGET_DIR" >&2
    exit 2
fi
TARGET=$1
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/envmgr-test-downloads
mkdir -p "$CACHE" "$TARGET"

DEFAULT_SPECS="nvidia-cuda-nvcc==13.2.* nvidia-cuda-crt==13.2.* nvidia-cuda-nvcc-cu12==12.9.* nvidia-cuda-nvcc-cu12==12.3.* nvidia-cuda-nvcc-cu11==11.8.* nvidia-cuda-runtime-cu12==12.9.*"
read -r -a SPECS <<<"${ENVMGR_CUDA_WHEELS:-$DEFAULT_SPECS}"

now() { date +%s.%N; }
dt() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# Newest cached wheel satisfying SPEC, or empty.
cached_wheel() {
    local spec=$1 name ver dist pat
    name=${spec%%==*}
    ver=${spec#*==}
    dist=${name//-/_}
    case $ver in
        *.\*) pat="$dist-${ver%.\*}.[0-9]*-*win_amd64.whl" ;;
        *)    pat="$dist-$ver-*win_amd64.whl" ;;
    esac
    { ls -1 "$CACHE"/$pat 2>/dev/null || true; } | sort -V | tail -n1
}

t_all=$(now)
for spec in "${SPECS[@]}"; do
    case $spec in
        *==*) ;;
        *) echo "fetch-windows-cuda: spec must be NAME==VERSION: $spec" >&2; exit 2 ;;
    esac
    t0=$(now)
    whl=$(cached_wheel "$spec")
    how=cached
    if [ -z "$whl" ]; then
        log=$(mktemp)
        if ! python3 -m pip download -q --disable-pip-version-check \
                --platform win_amd64 --only-binary=:all: --no-deps \
                -d "$CACHE" "$spec" >"$log" 2>&1; then
            cat "$log" >&2; rm -f "$log"
            echo "fetch-windows-cuda: pip download failed for $spec" >&2
            exit 1
        fi
        rm -f "$log"
        whl=$(cached_wheel "$spec")
        [ -n "$whl" ] || { echo "fetch-windows-cuda: no wheel for $spec" >&2; exit 1; }
        how=downloaded
    fi
    ver=${spec#*==}
    dest=$TARGET/${spec%%==*}-${ver%.\*}
    stamp=$dest/.unpacked-$(basename "$whl")
    if [ ! -f "$stamp" ]; then
        rm -rf "$dest"
        mkdir -p "$dest"
        python3 -m zipfile -e "$whl" "$dest"
        touch "$stamp"
    fi
    echo "fetch-windows-cuda: $(basename "$whl") ($how, $(stat -c %s "$whl") bytes) -> $dest [$(dt "$t0" "$(now)")s]"
done
echo "fetch-windows-cuda: done in $(dt "$t_all" "$(now)")s"
