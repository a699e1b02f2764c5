#!/usr/bin/env bash
# The Windows-CPython tier: the GitHub workflow's test selection, run by a real Windows CPython
# (python.org's embeddable build) under Wine, in a fresh Wine prefix, under Xvfb (ConPTY needs a
# display under Wine).
#
#   bash tests/run-win32.sh [VERSION] [pytest args...]     VERSION: 3.10, 3.11 (default), 3.13
#
# Prints how many tests ran under win32 and exits with pytest's code. Tests that need what Wine
# lacks (a real Visual Studio, a real PowerShell) say so as xfail(strict) or skip with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=3.11
case ${1:-} in 3.1[0-3]) VERSION=$1; shift ;; esac
PYDIR=$(bash tests/setup/windows-python.sh "$VERSION")

work=$(mktemp -d "${TMPDIR:-/tmp}/envmgr-win32.XXXXXX")
export WINEPREFIX=$work/pfx WINEDEBUG=-all WINEDLLOVERRIDES='mscoree,mshtml=;winemenubuilder.exe=d'
# Bytecode of the checkout compiled by Windows Python goes into the prefix, not into __pycache__.
export PYTHONPYCACHEPREFIX='C:\pycache' NO_COLOR=1
unset DISPLAY WAYLAND_DISPLAY
cleanup() { /usr/lib/wine/wineserver -k >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$WINEPREFIX"
/usr/lib/wine/wineserver -p
/usr/lib/wine/wine64 wineboot -i </dev/null >/dev/null 2>&1
# A machine shaped like a GitHub Windows runner: Visual Studio 2022 with C++ tools (vcvarsall.bat is
# tests/wine/vsfake's stand-in, run by the real cmd.exe), a Windows SDK in the registry.
"${PYTHON:-python3}" -m tests.wine.layout "$WINEPREFIX"

# The workflow's own selection (.github/workflows/windows.yml), so this run and a real Windows runner
# run the same tests. Wine 8's python.exe dies if stdout/stderr is a regular file: always a pipe.
SELECTION="not wine and not linux and not gpu"
log=$work/pytest.log
set +e
xvfb-run -a /usr/lib/wine/wine64 "$PYDIR/python.exe" -X utf8 -m pytest -m "$SELECTION" \
    -p no:cacheprovider "$@" </dev/null 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
summary=$({ grep -E '^(=+ )?[0-9]+ (passed|failed|error|skipped|deselected|xfailed).* in [0-9.]+s' "$log" || true; } \
          | tail -n1 | tr -d '=' | sed 's/^ *//; s/ *$//')
pyver=$(/usr/lib/wine/wine64 "$PYDIR/python.exe" -c 'import sys; print(sys.version.split()[0], sys.platform)' </dev/null 2>&1 | cat)
echo "win32 tier: Windows CPython $pyver under $(/usr/lib/wine/wine64 --version 2>/dev/null | cat): ${summary:-no summary}"
exit "$rc"
