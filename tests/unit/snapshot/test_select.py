"""Selection on recorded machines: --vs/--cuda/--toolset matching, compatibility picks, no-match errors."""

from __future__ import annotations

import pytest

from envmgr.discover.limits import parse_host_config, read_limits
from envmgr.knowledge import HostLimits
from envmgr.knowledge import host_limits as table_limits
from envmgr.knowledge import stl_min_cuda as table_stl_min_cuda
from envmgr.discover import discover
from envmgr.errors import NoMatchError, UsageError
from envmgr.host.recorded import load_machine
from envmgr.snapshot.select import Selectors, choose
from tests.conftest import MACHINES


def inventory(name):
    host = load_machine(str(MACHINES / name))
    inv = discover(host)
    return inv, read_limits(host, inv)


CLASSIC = "community-buildtools-cuda124.toml"


def test_default_pick_is_the_newest_vs_and_cuda_with_a_reason():
    inv, limits = inventory(CLASSIC)
    choice = choose(inv, Selectors(), limits)
    assert choice.vs.edition == "BuildTools" and choice.toolset.version == "14.44.35207"
    assert choice.cuda.version == "12.4.99"
    assert any("using the newest, 12.4.99" in n for n in choice.notes)
    assert choice.arch == "x64"


@pytest.mark.parametrize(
    "query,edition",
    [
        ("community", "Community"),
        ("buildtools", "BuildTools"),
        ("491ec752", "Community"),
        ("17.5", "Community"),
        ("C:\\Program Files\\Microsoft Visual Studio\\2022\\Community", "Community"),
    ],
)
def test_vs_selectors(query, edition):
    inv, limits = inventory(CLASSIC)
    assert choose(inv, Selectors(vs=query), limits).vs.edition == edition


def test_cuda_11_8_skips_the_toolset_nvcc_refuses_and_says_why():
    inv, limits = inventory(CLASSIC)
    choice = choose(inv, Selectors(cuda="11.8"), limits)
    # BuildTools only has 14.44 (_MSC_VER 1944): CUDA 11.8 accepts < 1940, so Community's 14.35 is used.
    assert choice.vs.edition == "Community" and choice.toolset.version == "14.35.32215"
    assert any("skipping VS 2022 BuildTools" in n and "1910..1939" in n for n in choice.notes)


def test_pinned_incompatible_vs_says_what_to_install():
    inv, limits = inventory(CLASSIC)
    with pytest.raises(NoMatchError) as err:
        choose(inv, Selectors(vs="buildtools", cuda="11.8"), limits)
    assert "no MSVC toolset of VS 2022 BuildTools" in err.value.message
    assert "--toolset 14.39" in err.value.remedy
    assert err.value.exit_code == 3


def test_no_match_lists_the_candidates():
    inv, limits = inventory(CLASSIC)
    with pytest.raises(NoMatchError) as err:
        choose(inv, Selectors(cuda="12.9"), limits)
    assert any("CUDA 12.4.99" in d for d in err.value.details)
    with pytest.raises(NoMatchError) as err:
        choose(inv, Selectors(vs="enterprise"), limits)
    assert len(err.value.details) == 2


def test_unknown_arch_is_a_usage_error():
    inv, limits = inventory(CLASSIC)
    with pytest.raises(UsageError, match="unknown --arch"):
        choose(inv, Selectors(arch="mips"), limits)


def test_toolset_prefix_and_missing_toolset():
    inv, limits = inventory(CLASSIC)
    assert choose(inv, Selectors(vs="community", toolset="14.35"), limits).toolset.version == "14.35.32215"
    with pytest.raises(NoMatchError, match="no MSVC toolset 14.29"):
        choose(inv, Selectors(vs="community", toolset="14.29"), limits)


def test_no_vc_tools_machine_explains():
    inv, limits = inventory("buildtools-only.toml")
    with pytest.raises(NoMatchError, match="no Visual Studio instance with C\\+\\+ tools"):
        choose(inv, Selectors(), limits)


def test_linux_pins_an_older_gcc_when_the_default_is_too_new():
    inv, _ = inventory("linux-two-toolkits.toml")
    gxx = {c.name: c for c in inv.host_compilers}
    assert "g++" in gxx
    kit = next(k for k in inv.cuda if k.short == "12.4")
    from envmgr.snapshot.select import Limits

    limits = Limits({kit.path: HostLimits(None, None, gxx["g++"].major - 1, "test")}, {})
    choice = choose(inv, Selectors(cuda="12.4"), limits)
    assert choice.host_compiler is not None and choice.host_compiler.major <= gxx["g++"].major - 1
    assert any("pinning" in n for n in choice.notes)


def test_table_fallbacks_match_the_facts():
    assert table_limits("11.8").msc_max_excl == 1940
    assert table_limits("12.4").msc_max_excl == 1950
    assert table_limits("13.0").msc_min == 1920
    assert table_limits("13.2").msc_max_excl == 1960
    assert table_stl_min_cuda("14.39.33519") is None
    assert table_stl_min_cuda("14.40.33807") == "12.4"
    assert parse_host_config("#if _MSC_VER < 1920 || _MSC_VER >= 1960\n#if __GNUC__ > 15\n").gcc_max == 15
