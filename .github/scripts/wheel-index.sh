#!/usr/bin/env bash
# The index job of .github/workflows/cuda-wheels.yml: the build jobs' cache entries, downloaded
# into CACHES/wheels/<digest>/, published into SITE (a PEP 503 index; one that exists, e.g. the
# previous run's, is updated in place), then every envmgr link of SITE checked against its file
# and key file. Runs locally on Linux as it runs in CI: tests/linux/test_wheel_workflow.py.
#
# Environment: CACHES SITE [PYTHON=python] [ENVMGR=envmgr]
set -euo pipefail
: "${CACHES:?}" "${SITE:?}"
PYTHON=${PYTHON:-python}
read -r -a envmgr <<<"${ENVMGR:-envmgr}"

ENVMGR_CACHE_DIR="$CACHES" "${envmgr[@]}" wheels publish "$SITE"

"$PYTHON" - "$SITE" <<'PY'
import json, sys
from pathlib import Path
from envmgr.wheels import index as wheelindex
from envmgr.wheels import store as wheels
site = Path(sys.argv[1])
projects = [link.href.rstrip("/") for link in wheelindex.parse_links((site / "index.html").read_text("utf-8"))]
count = 0
for project in projects:
    for link in wheelindex.parse_links((site / project / "index.html").read_text("utf-8")):
        digest = link.attr("data-envmgr-digest")
        if digest is None:
            continue
        path, _, sha = link.href.partition("#sha256=")
        entry = json.loads((site / project / digest / "entry.json").read_text("utf-8"))
        if wheels.file_sha256(site / project / path) != sha or entry["sha256"] != sha:
            sys.exit(f"{project}/{path}: sha256 does not match the link or the key file")
        if entry["key"] != json.loads(link.attr("data-envmgr-key")):
            sys.exit(f"{project}/{path}: the key file and the page disagree")
        count += 1
print(f"index {site}: {len(projects)} project(s), {count} envmgr wheel(s), every hash and key file checked")
PY
