#!/usr/bin/env bash
# Make the bundle tests/gpu/issue21_proof.sh carries to the GPU machine (no network there):
#   bash tests/gpu/issue21_prepare.sh DEST SD_SDIST PYWHISPERCPP_SDIST
# (run 4 of 2026-11-25 carried both sdists and these wheels, without tree.tar.gz: DEST = .device/i21b)
# DEST/tree.tar.gz: this checkout's envmgr (git archive HEAD); DEST/sdist: the two PyPI sdists as
# downloaded (stable-diffusion-cpp-python 0.4.7, 20 MB; pywhispercpp 1.5.1, 10 MB); DEST/wheels:
# Python 3.12 manylinux wheels of envmgr's dependencies and the builds' (scikit-build-core for the
# isolated stable-diffusion build, with PyPI's cmake and ninja, which its isolated build asks pip for; setuptools and setuptools-scm (<9: 10 needs vcs-versioning) for pywhispercpp's --no-build-isolation).
set -euo pipefail
D=$1; mkdir -p "$D/sdist" "$D/wheels"
git archive --format=tar.gz -o "$D/tree.tar.gz" HEAD envmgr templates shells tests/gpu pyproject.toml README.md
cp "$2" "$3" "$D/sdist/"
# pywhispercpp's sdist (9.8 MB) without what its build does not read (whisper.cpp's models, examples,
# bindings, samples, tests; other GPU backends' sources): 2.4 MB, so a bundle fits the device tool's 64 MiB
for pw in "$D"/sdist/pywhispercpp-*.tar.gz; do
    [ -f "$pw" ] || continue
    t=$(mktemp -d); tar xzf "$pw" -C "$t"; src=$(ls -d "$t"/pywhispercpp-*)
    rm -rf "$src"/whisper.cpp/{models,examples,bindings,samples,media,tests} "$src"/{docs,tests} \
        "$src"/whisper.cpp/ggml/src/ggml-{vulkan,sycl,opencl,hexagon,cann,musa,kompute,webgpu,zdnn}
    (cd "$t" && tar czf "$(basename "$pw")" "$(basename "$src")") && mv "$t/$(basename "$pw")" "$pw"; rm -rf "$t"
done
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$D/wheels" click tomlkit platformdirs colorama packaging psutil pefile pyelftools \
    scikit-build-core pathspec setuptools "setuptools-scm<9" wheel "cmake>=3.21" ninja
du -sh "$D"
