"""The pure plan: facts in, frozen dataclasses out (hand-made facts: each test names the case it builds)."""

from __future__ import annotations

import pytest

from envmgr.knowledge import host_limits as table_limits
from envmgr.discover.model import BuildCustomizations, CudaToolkit, Toolset, VsInstance
from envmgr.errors import NoMatchError
from envmgr.msbuild.names import expected_names, integration_version, support_problem
from envmgr.msbuild.plan import (
    DONE,
    INCOMPLETE,
    LINKED,
    MISSING,
    NO_FOLDER,
    NO_SOURCE,
    OK,
    ORPHAN,
    STALE,
    UNKNOWN,
    UNSUPPORTED,
    WORK,
    Facts,
    FileFact,
    FolderFacts,
    make_plan,
)

CUDA = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA"


def vs(major: int, toolset: str, path: str = "C:\\VS", iid: str = "aaaa0001", edition: str = "Community") -> VsInstance:
    year = {15: "2017", 16: "2019", 17: "2022", 18: "2026"}[major]
    folder = (
        f"{path}\\Common7\\IDE\\VC\\VCTargets\\BuildCustomizations"
        if major == 15
        else f"{path}\\MSBuild\\Microsoft\\VC\\v{major}0\\BuildCustomizations"
    )
    ts = Toolset(toolset, f"{path}\\VC\\Tools\\MSVC\\{toolset}", 1900 + int(toolset.split(".")[1]), True, True)
    return VsInstance(
        iid,
        edition,
        "",
        f"Visual Studio {edition} {year}",
        f"{major}.0.1",
        major,
        year,
        path,
        True,
        True,
        False,
        "Release",
        "",
        "",
        "vswhere",
        (ts,),
        toolset,
        f"{path}\\vcvarsall.bat",
        BuildCustomizations(folder, True),
        (),
    )


def kit(short: str) -> CudaToolkit:
    path = f"{CUDA}\\v{short}"
    return CudaToolkit(
        f"{short}.0", short, path, f"{path}\\bin\\nvcc.exe", ("registry",), "nvcc --version", (f"{path}\\bin",), (), ()
    )


def ext(short: str) -> str:
    return f"{CUDA}\\v{short}\\extras\\visual_studio_integration\\MSBuildExtensions"


def files(short: str, digest: str = "s") -> tuple[FileFact, ...]:
    return tuple(FileFact(n, f"{digest}-{n}") for n in expected_names(short))


def facts(instances, kits, folders) -> Facts:
    return Facts(
        "windows", tuple(instances), tuple(kits), tuple(folders), tuple((k.path, table_limits(k.short)) for k in kits)
    )


def bc(v: VsInstance, content=(), *, exists=True, linked=False) -> FolderFacts:
    return FolderFacts(v.build_customizations.dir, exists, linked, tuple(content))


def test_names_of_12x_and_13x():
    assert expected_names("12.4") == (
        "CUDA 12.4.props",
        "CUDA 12.4.targets",
        "CUDA 12.4.xml",
        "Nvda.Build.CudaTasks.v12.4.dll",
    )
    assert "CUDA 13.1.Version.props" in expected_names("13.1") and len(expected_names("13.1")) == 5
    assert integration_version("CUDA 13.0.Version.props") == "13.0"
    assert integration_version("nvda.build.cudatasks.v11.8.dll") == "11.8"
    assert integration_version("masm.props") is None
    assert integration_version("CUDA 12.4.props.bak") is None


@pytest.mark.parametrize(
    "major,toolset,short,ok",
    [
        (18, "14.50.35717", "13.0", False),  # VS 2026 only from CUDA 13.2
        (18, "14.50.35717", "13.2", True),
        (18, "14.44.35207", "13.1", False),  # even with an older toolset beside it
        (15, "14.16.27023", "13.0", False),  # CUDA 13 dropped VS 2017
        (15, "14.16.27023", "12.4", True),
        (17, "14.44.35207", "11.8", False),  # nvcc 11.8 rejects _MSC_VER 1944
        (17, "14.35.32215", "11.8", True),
        (16, "14.29.30133", "13.2", True),
    ],
)
def test_supported_pairs(major, toolset, short, ok):
    problem = support_problem(vs(major, toolset), kit(short), table_limits(short))
    assert (problem is None) == ok, problem


def test_missing_ok_stale_orphan_and_unknown():
    v = vs(17, "14.44.35207")
    k = kit("12.4")
    dest = list(files("12.4"))
    dest[0] = FileFact(dest[0].name, "edited")  # stale
    dest[1] = FileFact(dest[1].name, None, "cannot read")  # unknown
    del dest[3]  # missing
    dest.append(FileFact("CUDA 11.0.props", "x"))  # orphan: 11.0 is not installed
    plan = make_plan(facts([v], [k], [bc(v, dest), FolderFacts(ext("12.4"), True, False, files("12.4"))]))
    (pair,) = plan.pairs
    assert pair.status == WORK
    assert [(f.name, f.status) for f in pair.files] == [
        ("CUDA 12.4.props", STALE),
        ("CUDA 12.4.targets", UNKNOWN),
        ("CUDA 12.4.xml", OK),
        ("Nvda.Build.CudaTasks.v12.4.dll", MISSING),
    ]
    assert [c.name for c in plan.copies] == ["CUDA 12.4.props", "Nvda.Build.CudaTasks.v12.4.dll"]
    assert plan.copies[0].dest == v.build_customizations.dir + "\\CUDA 12.4.props"
    assert plan.copies[0].source == ext("12.4") + "\\CUDA 12.4.props"
    assert plan.copies[0].dest_sha256 == "edited" and plan.copies[1].dest_sha256 is None
    assert [(o.name, o.status) for o in plan.orphans] == [("CUDA 11.0.props", ORPHAN)]


def test_identical_files_are_nothing_to_do():
    v, k = vs(17, "14.44.35207"), kit("13.2")
    plan = make_plan(facts([v], [k], [bc(v, files("13.2")), FolderFacts(ext("13.2"), True, False, files("13.2"))]))
    assert plan.pairs[0].status == DONE and plan.copies == () and len(plan.pairs[0].files) == 5


@pytest.mark.parametrize(
    "case,status",
    [
        ("unsupported", UNSUPPORTED),
        ("no-source", NO_SOURCE),
        ("incomplete", INCOMPLETE),
        ("no-folder", NO_FOLDER),
        ("linked", LINKED),
    ],
)
def test_pairs_that_are_never_copied(case, status):
    v = vs(18 if case == "unsupported" else 17, "14.50.35717" if case == "unsupported" else "14.44.35207")
    k = kit("13.0")
    src = files("13.0")[:-1] if case == "incomplete" else () if case == "no-source" else files("13.0")
    folders = [
        bc(v, exists=case != "no-folder", linked=case == "linked"),
        FolderFacts(ext("13.0"), case != "no-source", False, src),
    ]
    plan = make_plan(facts([v], [k], folders))
    assert plan.pairs[0].status == status and plan.pairs[0].reason
    assert plan.copies == ()


def test_selectors_and_what_is_missing():
    a = vs(17, "14.44.35207", "C:\\BT", "b0000001", "BuildTools")
    b = vs(17, "14.35.32215", "C:\\CO", "c0000001", "Community")
    k1, k2 = kit("12.4"), kit("11.8")
    f = facts(
        [a, b],
        [k1, k2],
        [
            bc(a),
            bc(b),
            FolderFacts(ext("12.4"), True, False, files("12.4")),
            FolderFacts(ext("11.8"), True, False, files("11.8")),
        ],
    )
    plan = make_plan(f, ("buildtools",), ("12.4",))
    assert [(p.vs_id, p.cuda) for p in plan.pairs] == [("b0000001", "12.4")]
    assert len(plan.copies) == 4
    with pytest.raises(NoMatchError, match="--vs nothing"):
        make_plan(f, ("nothing",))
    with pytest.raises(NoMatchError, match="no CUDA toolkit matches --cuda 9.9"):
        make_plan(f, (), ("9.9",))
    with pytest.raises(NoMatchError, match="no CUDA toolkit found"):
        make_plan(facts([a], [], [bc(a)]))
    with pytest.raises(NoMatchError, match="no Visual Studio instance with C\\+\\+ tools"):
        make_plan(facts([], [k1], []))


def test_plan_is_frozen():
    v, k = vs(17, "14.44.35207"), kit("12.4")
    plan = make_plan(facts([v], [k], [bc(v), FolderFacts(ext("12.4"), True, False, files("12.4"))]))
    with pytest.raises(Exception):
        plan.pairs = ()  # type: ignore[misc]
    assert isinstance(plan.pairs, tuple) and isinstance(plan.pairs[0].files, tuple)
