"""envmgr/version.py: the one version type, lenient on the forms discovery meets."""

from __future__ import annotations

from envmgr.version import Version, mm


def test_the_first_dotted_run_of_digits_is_the_version():
    # The forms discovery reads: a CUDA folder name, version.json's "13.0.Version"-like text, nvcc's release tag.
    assert Version.parse("v12.4") == (12, 4)
    assert Version.parse("13.0.Version") == (13, 0)
    assert Version.parse("V12.4.r12.4") == (12, 4)
    assert Version.parse("17.14.36310.24") == (17, 14, 36310, 24)
    assert Version.parse("Cuda compilation tools, release 12.4, V12.4.99") == (12, 4)


def test_text_without_digits_has_no_version_and_of_sorts_it_first():
    assert Version.parse("preview") is None and Version.parse(None) is None
    assert Version.of("preview") == () and Version.of(None) == Version()
    found = ["12.4", "", "11.8", "12.10", "v13.0"]
    assert [str(v) for v in sorted(map(Version.of, found))] == ["", "11.8", "12.4", "12.10", "13.0"]


def test_parts_compare_as_integers_not_text():
    assert Version.of("12.10") > Version.of("12.9")
    assert Version.of("14.44.35207") >= (14, 44)
    assert Version.of("10.0.22621.0") > Version.of("10.0.19041.0")


def test_major_minor_and_mm():
    v = Version.of("580.65.06")
    assert (v.major, v.minor) == (580, 65) and v.mm == (580, 65) and isinstance(v.mm, Version)
    assert Version.of("13").minor == 0 and Version().major == 0
    assert mm("12.4.99") == (12, 4) and mm(None) == (0, 0)
    assert str(Version.of("8.9")) == "8.9" and repr(Version.of("8.9")) == "Version('8.9')"
