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
# Wine 8's pseudo-console now and then refuses every PTY of a Wine session ("Invalid handle" from
# ConPTY; once it happens, every later PTY of that process and of its children fails too, so a retry
# inside the test cannot help). Where that happened, the files of the failed tests run once more in a
# fresh Wine session, keeping only the tests marked `conpty`; the run passes only if every failed test
# passes there, so any failure of a test that drives no pseudo-console stands as it is.
failed=$({ grep -E '^(FAILED|ERROR) tests/' "$log" || true; } | sed 's/ - .*//' | awk '{print $2}' | sort -u)
if [ "$rc" -ne 0 ] && [ -n "$failed" ] && grep -q 'Invalid handle' "$log"; then
    echo "win32 tier: Wine's ConPTY refused a PTY (Invalid handle) in this run; running the conpty tests of $(wc -l <<<"$failed") failed test(s) again in a fresh Wine session"
    /usr/lib/wine/wineserver -k >/dev/null 2>&1 || true
    /usr/lib/wine/wineserver -w >/dev/null 2>&1 || true
    /usr/lib/wine/wineserver -p
    # Wine's services start here, outside the pipe below (as wineboot does above), so that none of them
    # holds tee's input open after python.exe ends.
    /usr/lib/wine/wine64 wineboot </dev/null >/dev/null 2>&1
    again=$work/again.log
    # Whole files: a parametrized node id ("...[cmd]") does not reach pytest whole through Wine.
    mapfile -t files < <(sed 's/::.*//' <<<"$failed" | sort -u)
    set +e
    xvfb-run -a /usr/lib/wine/wine64 "$PYDIR/python.exe" -X utf8 -m pytest -m "($SELECTION) and conpty" \
        -p no:cacheprovider -q -rA "${files[@]}" </dev/null 2>&1 | tee "$again"
    again_rc=${PIPESTATUS[0]}
    set -e
    passed_again=$({ grep -E '^PASSED tests/' "$again" || true; } | awk '{print $2}' | sort -u)
    missing=$(comm -23 <(printf '%s\n' "$failed") <(printf '%s\n' "$passed_again"))
    if [ "$again_rc" -eq 0 ] && [ -z "$missing" ]; then
        rc=0
        summary="$summary; the ConPTY tests passed when run again in a fresh Wine session ($(grep -E '[0-9]+ passed' "$again" | tail -n1 | tr -d '='))"
    else
        echo "win32 tier: not passed in the fresh session either: ${missing:-(see above)}"
    fi
fi
pyver=$(/usr/lib/wine/wine64 "$PYDIR/python.exe" -c 'import sys; print(sys.version.split()[0], sys.platform)' </dev/null 2>&1 | cat)
echo "win32 tier: Windows CPython $pyver under $(/usr/lib/wine/wine64 --version 2>/dev/null | cat): ${summary:-no summary}"
exit "$rc"
