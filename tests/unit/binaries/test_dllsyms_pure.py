"""The pure part of the symbol-level closure (envmgr/binaries/dllsyms.py, elfsyms.py): forwarders followed
across DLLs, ordinals, the version families; no binaries, so it runs in every tier (Windows CPython too).
Hand-made export tables: the real ones come from mingw/gcc builds in test_dll_entry_points.py and
test_elf_versions.py."""

from __future__ import annotations

from envmgr.binaries.dllsyms import Exports, Imported, lacks, split_forwarder
from envmgr.binaries.elfsyms import newest

OLD = Exports(frozenset({"foo_old"}), frozenset({1}), (), "1.0.0.0")
NEW = Exports(frozenset({"foo_old", "foo_new"}), frozenset({1, 2, 7}), (), "1.2.0.0")
FWD = Exports(frozenset({"fwd_func"}), frozenset({1}), (("fwd_func", "libfoo.foo_new"), ("#1", "libfoo.foo_new")))


def test_by_name_and_by_ordinal():
    assert lacks(OLD, Imported("foo_new"), lambda n: None, lambda p: None) == "not exported"
    assert lacks(NEW, Imported("foo_new"), lambda n: None, lambda p: None) == ""
    assert lacks(OLD, Imported(ordinal=7), lambda n: None, lambda p: None) == "not exported"
    assert lacks(NEW, Imported(ordinal=7), lambda n: None, lambda p: None) == ""
    assert Imported(ordinal=7).label == "ordinal 7" and Imported("f").label == "f"


def test_a_forwarder_is_followed_into_the_copy_the_search_order_finds():
    tables = {"C:\\old\\libfoo.dll": OLD, "C:\\new\\libfoo.dll": NEW}
    for where, why in (
        ("C:\\old", "forwarded to libfoo.foo_new, not exported in C:\\old\\libfoo.dll"),
        ("C:\\new", ""),
    ):

        def find(name: str, where: str = where) -> str:
            return f"{where}\\{name}"

        assert lacks(FWD, Imported("fwd_func"), find, tables.get) == why
        assert lacks(FWD, Imported(ordinal=1), find, tables.get) == why
    assert lacks(FWD, Imported("fwd_func"), lambda n: None, tables.get) == (
        "forwarded to libfoo.foo_new, module libfoo.dll not found"
    )
    api = Exports(frozenset({"f"}), frozenset({1}), (("f", "api-ms-win-core-heap-l1-1-0.HeapAlloc"),))
    assert lacks(api, Imported("f"), lambda n: None, tables.get) == ""


def test_forwarder_names_and_version_families():
    assert split_forwarder("NTDLL.RtlAllocateHeap") == ("NTDLL.dll", Imported("RtlAllocateHeap"))
    assert split_forwarder("libomp140.x86_64.foo_new") == ("libomp140.x86_64", Imported("foo_new"))
    assert split_forwarder("libfoo.#7") == ("libfoo.dll", Imported(ordinal=7))
    assert newest({"CUDA_12.0", "CUDA_12.4", "CUDA_11.8", "GLIBC_2.35"}, "CUDA_12.8") == "CUDA_12.4"
    assert newest({"GLIBC_2.35"}, "GLIBCXX_3.4.32") == ""
