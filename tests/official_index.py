"""A copy of llama-cpp-python's published CUDA wheel indexes, laid out as its generator writes them
(abetlen/llama-cpp-python at 3691546f: .github/workflows/generate-index-from-release.yaml runs
scripts/releases-to-pep-503.sh once per folder). Used by the loopback tier
(tests/linux/test_prebuilt_loopback.py) and the GPU proof (tests/gpu/issue24_proof.sh).

`whl/cuXYZ/index.html` links `llama-cpp-python/`; `whl/cuXYZ/llama-cpp-python/index.html` has an
`<h1>Links for llama-cpp-python</h1>`, an `<h2>vX.Y.Z</h2>` per release and `<a href="URL">URL</a><br>`
per wheel, URL being the GitHub release asset `…/releases/download/vX.Y.Z-cuXYZ/<wheel>` (no hash).

    python tests/official_index.py ROOT BASE_URL CUXYZ WHEEL...     place WHEELs as release assets of
                                                                     their version and write cuXYZ's pages
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def official_pages(root: Path, cu: str, releases: dict[str, list[str]]) -> None:
    """whl/<cu>/index.html and whl/<cu>/llama-cpp-python/index.html as releases-to-pep-503.sh lays them out."""
    top = root / "llama-cpp-python" / "whl" / cu
    (top / "llama-cpp-python").mkdir(parents=True, exist_ok=True)
    (top / "index.html").write_text(
        "<!DOCTYPE html>\n<html>\n  <head></head>\n  <body>\n"
        '    <a href="llama-cpp-python/">llama-cpp-python</a>\n    <br>\n'
        "  </body>\n</html>\n\n"
    )
    body = ["<!DOCTYPE html>", "<html>", "  <body>", "    <h1>Links for llama-cpp-python</h1>"]
    for release, urls in releases.items():
        body.append(f"    <h2>{release}</h2>")
        for url in urls:
            body += [f'    <a href="{url}">{url}</a>', "    <br>"]
    body += ["  </body>", "</html>", ""]
    (top / "llama-cpp-python" / "index.html").write_text("\n".join(body) + "\n")


def asset_dir(root: Path, cu: str, version: str) -> Path:
    """Where a release asset lives: GitHub's `abetlen/llama-cpp-python/releases/download/vX.Y.Z-cuXYZ/`."""
    return root / "abetlen" / "llama-cpp-python" / "releases" / "download" / f"v{version}-{cu}"


def asset_url(base: str, cu: str, version: str, wheel_name: str) -> str:
    return f"{base}/abetlen/llama-cpp-python/releases/download/v{version}-{cu}/{wheel_name}"


def main(argv: list[str]) -> int:
    root, base, cu, wheels = Path(argv[1]), argv[2].rstrip("/"), argv[3], [Path(w) for w in argv[4:]]
    releases: dict[str, list[str]] = {}
    for wheel in wheels:
        version = wheel.name.split("-")[1]
        folder = asset_dir(root, cu, version)
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy2(wheel, folder / wheel.name)
        releases.setdefault(f"v{version}", []).append(asset_url(base, cu, version, wheel.name))
    official_pages(root, cu, dict(sorted(releases.items(), reverse=True)))
    print(f"{base}/llama-cpp-python/whl/{cu}/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
