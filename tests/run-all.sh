#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh Debian machine, then run the whole suite.
#   bash tests/run-all.sh [pytest args...]
# Installs: wine64, mingw-w64, zsh, fish (apt, via tests/setup/install-system.sh), a virtual
# environment in .venv with envmgr and its test dependencies, Windows CPython 3.10/3.11/3.13 builds in
# .cache/winpy, NVIDIA's cuobjdump in .cache/cuobjdump-venv. Runs every tier except `gpu` (device tool only), then the Windows-CPython tier
# (tests/run-win32.sh: the workflow's selection, `windows` tier included, under Wine).
# Exit code: the first failing run's.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tests/setup/install-system.sh

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]' -r tests/requirements.txt

# A second, pip-installed CUDA toolkit (13.2) for the Linux tests, kept between runs.
CUDA_VENV=.cache/cuda-13.2-venv
if [ ! -x "$CUDA_VENV/bin/nvcc-ok" ]; then
    "$PY" -m venv "$CUDA_VENV"
    "$CUDA_VENV/bin/python" -m pip install -q --disable-pip-version-check \
        'nvidia-cuda-nvcc==13.2.*' 'nvidia-nvvm==13.2.*' 'nvidia-cuda-crt==13.2.*' \
        'nvidia-cuda-runtime==13.2.*' 'nvidia-cuda-cccl==13.2.*'
    touch "$CUDA_VENV/bin/nvcc-ok"
fi
export ENVMGR_TEST_CUDA_VENV=$PWD/$CUDA_VENV

# NVIDIA's cuobjdump (PyPI, Linux build): the oracle the device-code reader is checked against
# (tests/linux/test_devicecode_oracle.py), kept between runs.
CUOBJDUMP_VENV=.cache/cuobjdump-venv
if [ ! -f "$CUOBJDUMP_VENV/cuobjdump-ok" ]; then
    "$PY" -m venv "$CUOBJDUMP_VENV"
    "$CUOBJDUMP_VENV/bin/python" -m pip install -q --disable-pip-version-check 'nvidia-cuda-cuobjdump==13.*'
    touch "$CUOBJDUMP_VENV/cuobjdump-ok"
fi
export ENVMGR_TEST_CUOBJDUMP_VENV=$PWD/$CUOBJDUMP_VENV

set +e
# Lint and types first (configured in pyproject.toml): either failing fails the run.
lint_rc=0
.venv/bin/ruff check envmgr || lint_rc=$?
.venv/bin/ruff format --check envmgr tests bench || lint_rc=$?   # the formatter (pyproject.toml's line length)
.venv/bin/mypy || lint_rc=$?
.venv/bin/python -m pytest -m "not gpu and not windows" "$@"
rc=$?
[ "$rc" -eq 0 ] && rc=$lint_rc

# The Windows-CPython tier: the GitHub workflow's selection (the `windows` tier included) run by real
# Windows CPython under Wine: all of it on 3.11; on 3.13 and 3.10 (the workflow's versions) the
# Windows-specific part, to keep CI within its time. ENVMGR_WIN32_VERSIONS picks the versions that
# run everything ("" skips the tier).
WIN32_SUBSET="tests/windows tests/machines tests/unit/cache/test_cache.py tests/unit/msbuild/test_msbuild_apply.py tests/unit/snapshot/test_snapshot.py"
win_rc=0
for v in ${ENVMGR_WIN32_VERSIONS-3.11} ${ENVMGR_WIN32_SUBSET_VERSIONS-3.13 3.10}; do
    log=$(mktemp)
    what=()
    case " ${ENVMGR_WIN32_VERSIONS-3.11} " in *" $v "*) ;; *) read -r -a what <<<"$WIN32_SUBSET" ;; esac
    PYTHON=$PY bash tests/run-win32.sh "$v" "$@" "${what[@]}" >"$log" 2>&1
    r=$?
    if [ "$r" -ne 0 ]; then tail -n 200 "$log"; win_rc=$r; fi
    grep -E '^(win32 tier:|XFAIL|SKIPPED)' "$log"
    rm -f "$log"
done
set -e
[ "$rc" -ne 0 ] && exit "$rc"
exit "$win_rc"
