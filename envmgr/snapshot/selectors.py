"""The selectors every command takes; kept apart from snapshot/select.py so a cached `export` imports nothing heavy."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, overload

if TYPE_CHECKING:
    from envmgr.host.base import Host


class Selectors(NamedTuple):
    vs: str | None = None
    toolset: str | None = None
    arch: str = "x64"
    cuda: str | None = None


@overload
def real_cuda_query(host: Host, query: str) -> str: ...
@overload
def real_cuda_query(host: Host, query: None) -> None: ...
def real_cuda_query(host: Host, query: str | None) -> str | None:
    """`--cuda` naming a folder (or nvcc) that exists: the path it really is, so a symlink such as
    /usr/local/cuda, a Windows junction, a relative path or a trailing slash selects the toolkit
    discovery found behind it (discovery records real paths). Versions pass through unchanged."""
    if not query or not any(c in query for c in "\\/:") or not host.exists(query):
        return query
    return host.realpath(query)


def with_real_paths(host: Host, sel: Selectors) -> Selectors:
    real = real_cuda_query(host, sel.cuda)
    return sel if real == sel.cuda else sel._replace(cuda=real)
