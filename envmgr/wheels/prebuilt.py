"""Published CUDA wheels: llama-cpp-python's per-CUDA indexes (or any PEP 503 index or wheel folder),
read into pick.py's candidates, and a candidate's wheel downloaded and its device code read.

The official layout (llama-cpp-python's .github/workflows/generate-index-from-release.yaml and
scripts/releases-to-pep-503.sh, read at commit 3691546f of abetlen/llama-cpp-python, 2026-08-17; its
README names the folders): GitHub Pages serves `https://abetlen.github.io/llama-cpp-python/whl/cuXYZ/`
for cu118 cu121 cu122 cu123 cu124 cu125 cu130 cu132; each folder has `index.html` linking
`llama-cpp-python/`, and `llama-cpp-python/index.html` has `<h1>Links for llama-cpp-python</h1>`, one
`<h2>vX.Y.Z</h2>` per release and one `<a href="URL">URL</a><br>` per wheel, URL being the release
asset `https://github.com/abetlen/llama-cpp-python/releases/download/vX.Y.Z-cuXYZ/<wheel>`. No link
carries a `#sha256=`; a hash is checked where an index gives one. The same wheel file name appears in
several folders (the CUDA is the folder's, not the name's), so a candidate is its URL.

Everything read is hostile: pages and wheels have size caps, link targets must be wheel basenames, a
zip member is read only below a size cap. Fetching is remote.py's (Missing / Unreachable).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from envmgr.binaries import devicecode
from envmgr.errors import InputFileError, NotAUrl
from envmgr.files.atomic import atomic_write
from envmgr.files.jsondoc import dumps, read_json_file
from envmgr.files.tomlread import read_toml_file
from envmgr.files.wheelzip import BadWheel, open_wheel
from envmgr.host import dirs
from envmgr.wheels import cpucode, downloads, pages, remote
from envmgr.wheels import store as wheels
from envmgr.wheels.downloads import FACTS, downloads_dir
from envmgr.wheels.pick import Candidate, Unusable, cuda_of_url
from envmgr.wheels.url import IndexUrl

OFFICIAL = "https://abetlen.github.io/llama-cpp-python/whl/"
OFFICIAL_CUDA = ("cu132", "cu130", "cu125", "cu124", "cu123", "cu122", "cu121", "cu118")
MAX_PAGE = 8 << 20
MAX_WHEEL = 2 << 30
PLAN_DEADLINE_S = 120.0  # every page and wheel of one plan together (N12)


@dataclass(frozen=True)
class Listing:
    index: IndexUrl
    candidates: tuple[Candidate, ...] = ()
    problem: str = ""  # why nothing was listed (404, unreachable, not a PEP 503 page)
    unreachable: bool = False


def default_indexes() -> tuple[str, ...]:
    return tuple(f"{OFFICIAL}{folder}/" for folder in OFFICIAL_CUDA)


def configured(flags: tuple[str, ...], off: bool) -> tuple[tuple[str, ...], str]:
    """(the prebuilt indexes, where they came from): --prebuilt-index, else [wheels] prebuilt, else the official."""
    if off:
        return (), "--no-prebuilt"
    if flags:
        return tuple(flags), "--prebuilt-index"
    path = dirs.config_dir() / "config.toml"
    remedy = 'fix it: [wheels] prebuilt = ["https://…/whl/cu124/"]'
    data = read_toml_file(path, "TOML file", remedy) or {}  # size and depth caps, read once (N7); too long: none (N8)
    table = data.get("wheels")
    value = table.get("prebuilt") if isinstance(table, dict) else None
    if value is not None:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InputFileError(
                f"{path}: [wheels] prebuilt must be a list of URLs or folders",
                'e.g. [wheels] prebuilt = ["https://abetlen.github.io/llama-cpp-python/whl/cu124/"]',
            )
        return tuple(v for v in value if v), f"[wheels] prebuilt in {path}"
    return default_indexes(), "llama-cpp-python's published cuXYZ indexes"


# ---- listing ------------------------------------------------------------------------------------


def parse_page(page: bytes, page_url: IndexUrl | str, index: IndexUrl | str) -> tuple[Candidate, ...]:
    """The wheel links of a PEP 503 project page (absolute release URLs or relative ones)."""
    index = IndexUrl.of(index)
    try:  # the folder's cuXYZ from its URL form: `C:\\whl\\cu124` has no '/' around it
        cuda = cuda_of_url(index.base().key())
    except NotAUrl:
        cuda = ""
    return tuple(
        Candidate(link.url, link.filename, index, cuda or cuda_of_url(link.url.key()), link.hashes, link.problem)
        for link in pages.links(page, IndexUrl.of(page_url), MAX_PAGE)
        if pages.WHEEL_NAME.match(link.filename)
    )


def list_index(given: IndexUrl | str, package: str, deadline: remote.Deadline | None = None) -> Listing:
    """One index's candidates for package: a PEP 503 root (URL or folder), or a plain folder of wheels."""
    index = IndexUrl.of(given)
    if not index.fetched:
        folder = index.folder()
        if not folder.is_dir():
            return Listing(index, problem=f"no such folder {index}")
        if not (folder / package / "index.html").is_file():
            return _flat_folder(folder, index)
    try:
        page_url = pages.page_url(index, package)
    except ValueError as exc:
        return Listing(index, problem=f"not a URL ({exc})")
    try:
        page = remote.read(page_url, limit=MAX_PAGE, deadline=deadline)
    except remote.Missing as exc:
        return Listing(index, problem=f"no page for {package} ({exc})")
    except remote.Unreachable as exc:
        return Listing(index, problem=f"cannot be reached ({exc})", unreachable=True)
    if len(page) > MAX_PAGE:
        return Listing(index, problem=f"its page for {package} is over {MAX_PAGE >> 20} MiB: not read")
    found = parse_page(page, page_url, index)
    if not found:
        return Listing(index, problem=f"{page_url} lists no wheels (not a PEP 503 project page, or an empty one)")
    return Listing(index, found)


def _flat_folder(folder: Path, index: IndexUrl) -> Listing:
    links = pages.folder_wheels(folder)
    if not links:
        return Listing(index, problem=f"{index} holds no wheels and no {{package}}/index.html")
    cuda = cuda_of_url(folder.resolve().as_uri())  # a URI: '/' before the folder name on Windows too
    return Listing(index, tuple(Candidate(link.url, link.filename, index, cuda) for link in links))


def list_all(
    indexes: Iterable[IndexUrl | str], package: str, say: Callable[[str], None], deadline: remote.Deadline | None = None
) -> list[Listing]:
    """Every index's listing, said in one line each; an unreachable host is asked once."""
    out: list[Listing] = []
    dead: dict[str, str] = {}
    for index in map(IndexUrl.of, indexes):
        host = index.host
        if host and host in dead:
            out.append(Listing(index, problem=f"not asked: {dead[host]}", unreachable=True))
            continue  # said once, for the first folder of that host
        listing = list_index(index, package, deadline)
        if listing.unreachable and host:
            dead[host] = f"{host} could not be reached"
        say(f"prebuilt index {index}: " + (listing.problem or f"{len(listing.candidates)} wheel(s)"))
        out.append(listing)
    return out


# ---- a candidate's wheel ------------------------------------------------------------------------


def _where(cand: Candidate) -> str:
    """The candidate's URL as the download cache records it: without credentials (N2)."""
    return IndexUrl.of(cand.url).key()


def _slot(cand: Candidate) -> Path:
    return downloads_dir() / hashlib.sha256(_where(cand).encode("utf-8")).hexdigest()[:24]


def code_reader(deadline: remote.Deadline | None) -> Callable[[Candidate], devicecode.DeviceCode]:
    """read_code for pick.plan, every download within the plan's one deadline (N12)."""
    return lambda cand: read_code(cand, deadline)


def read_cpu(cand: Candidate) -> cpucode.CpuCode:
    """The CPU code of a candidate's wheel, after read_code kept it in the download cache (pick.plan's read_cpu)."""
    try:
        with open_wheel(_slot(cand) / cand.filename) as wheel:
            return cpucode.read_wheel(wheel)
    except BadWheel as exc:
        raise Unusable(exc.reason) from None


def read_code(cand: Candidate, deadline: remote.Deadline | None = None) -> devicecode.DeviceCode:
    """The wheel's device code, from the download cache or a fresh download; Unusable says why not."""
    slot = _slot(cand)
    facts = _cached_facts(slot, cand)
    if facts is not None:
        downloads.used(slot)
        return facts
    root = downloads_dir()
    downloads.prune()  # downloads no plan used for MAX_AGE_DAYS (audit N16: the folder only grew)
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".download-", dir=root))
    except OSError as exc:
        raise Unusable(f"the download cache {root} cannot be written ({exc.strerror or exc})") from None
    try:
        path = tmp / cand.filename
        digests = _download(cand, path, deadline)
        code = wheel_code(path)
        data = {
            "url": _where(cand),
            "wheel": cand.filename,
            "sha256": digests.sha256(),
            "hashes": dict(cand.hashes),
            "size": path.stat().st_size,
            "device_code": code.to_json(),
        }
        atomic_write(tmp / FACTS, dumps(data, indent=1).encode("utf-8"), backup=False)
        _keep(tmp, slot, cand)
    except OSError as exc:
        raise Unusable(f"could not keep the download ({exc.strerror or exc})") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return code


def _keep(tmp: Path, slot: Path, cand: Candidate) -> None:
    """Rename the download into its slot. Another install sharing the cache may have filled the slot with the
    same wheel meanwhile: its entry is used, never refused (audit N17: "Directory not empty"; on Windows
    "Access denied" while another process reads the slot)."""
    for attempt in range(wheels.PLACE_TRIES):
        if os.path.lexists(slot):
            if _cached_facts(slot, cand) is not None:
                return
            wheels.discard(slot, attempt)  # seen stale: renamed aside, never another install's fresh slot
        try:
            os.replace(tmp, slot)
            return
        except OSError:
            if attempt == wheels.PLACE_TRIES - 1:
                raise
            time.sleep(0.02 * (attempt + 1))


def downloaded(cand: Candidate) -> tuple[Path, str]:
    """(the downloaded wheel's path, its sha256) after read_code."""
    data = read_json_file(_slot(cand) / FACTS, "download record", "run the command again")
    return _slot(cand) / cand.filename, str(data.get("sha256", "")) if isinstance(data, dict) else ""


def _cached_facts(slot: Path, cand: Candidate) -> devicecode.DeviceCode | None:
    try:
        data = read_json_file(slot / FACTS, "download record", "")
        size = (slot / cand.filename).stat().st_size
    except (OSError, InputFileError):
        return None
    if not isinstance(data, dict) or data.get("url") != _where(cand) or data.get("size") != size:
        return None
    known = data["hashes"] if isinstance(data.get("hashes"), dict) else {}
    if cand.sha256 and data.get("sha256") != cand.sha256 or any(known.get(n) != v for n, v in cand.hashes):
        return None
    return devicecode.from_json(data.get("device_code"))


def _download(cand: Candidate, path: Path, deadline: remote.Deadline | None) -> pages.Digests:
    digest, size = pages.Digests(cand.hashes), [0]
    with open(path, "wb") as fh:

        def sink(block: bytes) -> None:
            size[0] += len(block)  # remote.read stops at MAX_WHEEL (limit=)
            digest.update(block)
            fh.write(block)

        try:
            data = remote.read(cand.url, sink, limit=MAX_WHEEL, deadline=deadline)
            if data:
                sink(data)
        except remote.Missing as exc:
            raise Unusable(f"the wheel is missing on the server ({exc})") from None
        except remote.Unreachable as exc:
            raise Unusable(f"the wheel cannot be downloaded ({exc})") from None
    name = digest.mismatch()
    if name:
        want, got = dict(cand.hashes)[name], digest.hexdigest(name)
        raise Unusable(
            f"the downloaded wheel ({size[0]} bytes) does not match the index's {name} "
            f"({want[:12]}…; got {got[:12]}…): corrupted or replaced"
        )
    return digest


def wheel_code(path: Path) -> devicecode.DeviceCode:
    """The device code of every native library in the wheel (wheels/store.py's reader, issue 21);
    Unusable for a broken zip or a CPU-only wheel."""
    code, problems = wheels.inspect_wheel(path)
    if code is None:
        raise Unusable(f"not a readable wheel: {'; '.join(problems)}")
    problems = wheels.cuda_problems(code)
    if problems:
        raise Unusable(problems[0])
    return code
