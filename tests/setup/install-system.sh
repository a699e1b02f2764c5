#!/usr/bin/env bash
# Install the Debian packages the envmgr test-suite needs:
#   wine / wine64 (run real Windows reg.exe, cmd.exe, nvcc.exe),
#   gcc-mingw-w64-x86-64 (build tiny fake Windows exes), zsh, fish (shell hooks),
#   xvfb, xauth (a display for ConPTY under Wine: the Windows-CPython tier).
# Idempotent: the apt-get call is skipped entirely when everything is installed.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

PKGS=(wine wine64 gcc-mingw-w64-x86-64 zsh fish xvfb xauth)

now() { date +%s.%N; }
dt() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

t0=$(now)
missing=()
for p in "${PKGS[@]}"; do
    if ! dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed'; then
        missing+=("$p")
    fi
done

SUDO=
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi

if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-system: all present (${PKGS[*]}), skipping apt-get"
else
    echo "install-system: installing ${missing[*]}"
    $SUDO apt-get update -qq
    t1=$(now)
    $SUDO apt-get install -y -qq --no-install-recommends \
        -o Dpkg::Use-Pty=0 "${missing[@]}" >/dev/null
    t2=$(now)
    echo "install-system: apt-get update $(dt "$t0" "$t1")s, install $(dt "$t1" "$t2")s"
fi

# Sanity check: the 64-bit loader must exist.
if [ ! -x /usr/lib/wine/wine64 ]; then
    echo "install-system: /usr/lib/wine/wine64 missing" >&2
    exit 1
fi
t3=$(now)
echo "install-system: total $(dt "$t0" "$t3")s"
