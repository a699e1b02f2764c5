#!/usr/bin/env bash
# One build job of .github/workflows/cuda-wheels.yml (Windows runners through Git Bash, and Linux):
# envmgr selects Visual Studio and the CUDA toolkit, wires that environment into the later steps
# (export --format github), installs SPEC with RECIPE into a fresh venv (a key already in
# WHEEL_INDEX is downloaded, not built), and checks the cached wheel: its sha256 and, for a CUDA
# key, the CUDA backend inside. The job's cache, OUT/cache/wheels/<digest>/, is its artifact.
# Runs locally on Linux as it runs in CI: tests/linux/test_wheel_workflow.py.
#
# Environment: SPEC RECIPE CUDA (X.Y or X.Y.Z) ARCHS (e.g. "86;89") [WHEEL_INDEX] [PIP_OPTIONS]
#              [OUT=wheel-job] [PYTHON=python] [ENVMGR=envmgr] [IMPORT: a module to import afterwards]
set -euo pipefail
: "${SPEC:?}" "${RECIPE:?}" "${CUDA:?}" "${ARCHS:?}"
OUT=${OUT:-wheel-job}
PYTHON=${PYTHON:-python}
read -r -a envmgr <<<"${ENVMGR:-envmgr}"
read -r -a pip_options <<<"${PIP_OPTIONS:-}"
cuda_short=$(cut -d. -f1-2 <<<"$CUDA")
export ENVMGR_CACHE_DIR="$OUT/cache"
mkdir -p "$OUT"
selectors=(--cuda "$cuda_short" --recipe "$RECIPE" --cuda-arch "$ARCHS")

"${envmgr[@]}" list
if [[ -n "${GITHUB_ENV:-}" && -n "${GITHUB_PATH:-}" ]]; then
  "${envmgr[@]}" export --format github "${selectors[@]}"   # appends to $GITHUB_ENV and $GITHUB_PATH
fi

"$PYTHON" -m venv "$OUT/venv"
venv_python="$OUT/venv/bin/python"
[[ -x "$venv_python" ]] || venv_python="$OUT/venv/Scripts/python.exe"
index=()
[[ -n "${WHEEL_INDEX:-}" ]] && index=(--wheel-index "$WHEEL_INDEX")
"${envmgr[@]}" install "${selectors[@]}" --python "$venv_python" "${index[@]}" "$SPEC" -- "${pip_options[@]}"

# The wheel that was installed is the job's one cache entry: intact, and CUDA inside for a CUDA key.
"${envmgr[@]}" wheels list --json >"$OUT/wheels.json"
"$PYTHON" - "$OUT/wheels.json" <<'PY'
import json, sys
from pathlib import Path
from envmgr.wheels import store as wheels
rows = json.loads(Path(sys.argv[1]).read_text("utf-8"))["wheels"]
if len(rows) != 1 or rows[0].get("broken"):
    sys.exit(f"expected one intact cached wheel, found: {rows}")
row, key = rows[0], rows[0]["key"]
if wheels.file_sha256(row["path"]) != row["sha256"]:
    sys.exit(f"{row['path']}: sha256 does not match entry.json")
problems = wheels.check_wheel(Path(row["path"]), key["package"], bool(key["cuda"]))
if problems:
    sys.exit(f"{row['wheel']}: " + "; ".join(problems))
code, _ = wheels.inspect_wheel(Path(row["path"]))
inside = (", ".join(b.name for b in code.binaries if b.is_cuda) + f" ({code.summary()})"
          if key["cuda"] and code is not None else "not a CUDA key")
print(f"verified {row['wheel']}: key {row['digest']}, CUDA {key['cuda'] or 'none'}, archs {key['archs'] or '-'}, "
      f"{key['python_tag']} {key['platform']}; CUDA inside: {inside}")
PY
if [[ -n "${IMPORT:-}" ]]; then
  "$venv_python" -c "import ${IMPORT}; print('imported ${IMPORT}')"
fi
