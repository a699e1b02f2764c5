#!/usr/bin/env bash
# Make what the bitsandbytes recipe's GPU proof carries to the device machine (no network there):
#   bash tests/gpu/bnb_prepare.sh DEST [BNB_GIT_DIR] [REF]
# PyPI has no bitsandbytes sdist after 0.42.0 (a Makefile build), so the source comes from a git
# checkout or mirror of github.com/bitsandbytes-foundation/bitsandbytes (default: the session's mirror,
# fetched with `fetch github:bitsandbytes-foundation/bitsandbytes`), at a release tag (default 0.50.1).
# DEST/sdist/bitsandbytes-REF.tar.gz: `git archive` of the tag without tests, docs, benchmarks,
# examples and agent notes (what the build reads: CMakeLists.txt, csrc/, bitsandbytes/, setup.py,
# pyproject.toml, README.md, LICENSE; about 0.4 MB). DEST/wheels: the isolated build's requirements
# (scikit-build-core, setuptools >= 77.0.3, trove-classifiers, and PyPI's cmake and ninja in case
# scikit-build-core asks for them) as Python 3.12 manylinux wheels, for --no-index --find-links.
set -euo pipefail
D=$1
G=${2:-/work/.mirror/bitsandbytes-foundation+bitsandbytes/repo}
REF=${3:-0.50.1}
mkdir -p "$D/sdist" "$D/wheels"
git -C "$G" archive --format=tar.gz --prefix="bitsandbytes-$REF/" -o "$D/sdist/bitsandbytes-$REF.tar.gz" "$REF" -- . \
    ':(exclude)tests' ':(exclude)docs' ':(exclude)benchmarking' ':(exclude)examples' ':(exclude)agents' \
    ':(exclude).github' ':(exclude)scripts'
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$D/wheels" scikit-build-core pathspec packaging "setuptools>=77.0.3" "trove-classifiers>=2025.8.6.13" \
    "cmake>=3.22.1" ninja
ls -la "$D/sdist"; du -sh "$D"
