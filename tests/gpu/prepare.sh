#!/usr/bin/env bash
# Prepare, on a machine with network, what the GPU proof carries to the GPU machine (no network there).
# Everything lands in .device/ (ignored by git, carried with the device tool's `carry`):
#   .device/sdist/llama_cpp_python-0.3.36.tar.gz   the PyPI sdist, stripped from 76 MB to about 6 MB
#   .device/wheels/*.whl                           Python 3.12 manylinux wheels for the fresh venvs
# Run from the repository root:  bash tests/gpu/prepare.sh
set -euo pipefail
VERSION=0.3.36
D=.device
mkdir -p $D/sdist $D/wheels
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -f $D/sdist/.stripped-$VERSION ]; then
    python3 -m pip download --no-binary :all: --no-deps -d "$tmp" "llama-cpp-python==$VERSION"
    tar xzf "$tmp/llama_cpp_python-$VERSION.tar.gz" -C "$tmp"
    src=$tmp/llama_cpp_python-$VERSION
    V=$src/vendor/llama.cpp
    # Not needed to build the Python package (LLAMA_BUILD_TESTS/TOOLS/EXAMPLES are off when llama.cpp
    # is a subproject; only tools/mtmd is built, for LLAVA_BUILD): documentation, vocab models (75 MB),
    # the git history (39 MB), other GPU backends' sources. The build still configures with CUDA.
    rm -rf "$src"/{.git,.github,docs,examples,tests,docker} \
        "$V"/{.github,.devops,docs,models,media,benches,tests,examples,pocs,app,conversion,skills,scripts} \
        "$V"/tools/{ui,server} "$V"/ggml/src/{ggml-hexagon,ggml-sycl,ggml-opencl,ggml-vulkan}
    (cd "$tmp" && tar czf "llama_cpp_python-$VERSION.stripped.tar.gz" "llama_cpp_python-$VERSION")
    mv "$tmp/llama_cpp_python-$VERSION.stripped.tar.gz" "$D/sdist/llama_cpp_python-$VERSION.tar.gz"
    touch $D/sdist/.stripped-$VERSION
fi

platforms=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64
           --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
# envmgr's dependencies; the isolated build of llama-cpp-python (scikit-build-core and its needs; cmake
# and ninja come from the machine); llama-cpp-python's runtime dependencies; gguf-py's (+ poetry-core
# to build it); pip itself (the venvs are made --without-pip).
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${platforms[@]}" -d $D/wheels \
    pip click tomlkit platformdirs colorama packaging psutil pefile pyelftools \
    scikit-build-core pathspec \
    typing-extensions numpy diskcache jinja2 MarkupSafe \
    pyyaml tqdm poetry-core
rm -f $D/wheels/envmgr-*.whl
python3 -m build -w -n -o $D/wheels . 2>/dev/null || python3 -m pip wheel -q --no-deps -w $D/wheels .
du -sh $D
