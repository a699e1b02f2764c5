"""The host compiler family: no usable Visual Studio or Windows SDK (F03), an MSVC that nvcc's host_config.h refuses
(F04) or the MSVC STL's own CUDA minimum (F05), nvcc unable to use cl.exe (F06), a GCC or clang too new for nvcc
(F21). Its patterns are the compilers' and MSBuild's codes and words; `decide` reads them.
"""

from __future__ import annotations

import re

from envmgr.buildlog.rules.base import NOT_RECOGNIZED, Add, FactRx, Facts, fx
from envmgr.buildlog.signatures import (
    NAMED_GENERATOR,
    Details,
    Signature,
    generator_cut,
    line_before,
    named,
    sig,
    words,
)
from envmgr.catalog import FailureId

IDS: tuple[FailureId, ...] = ("F03", "F04", "F05", "F06", "F21")

FACTS: tuple[FactRx, ...] = (
    fx("c1189", r"\bC1189\b", "C1189"),
    fx("stl", r"\bSTL(1002)\b", "STL1002"),
    fx("host_config", r"host_config\.h", "host_config.h"),
    # host_config.h's #error on a Windows toolkit path: only its MSVC version check fires under cl
    fx("host_config_win", r"[A-Za-z]:[\\/][^\n]*?[\\/]host_config\.h\(\d+\)\s*:\s*fatal", "host_config.h"),
    fx(
        "host_compiler",
        r"(?i:unsupported (GNU|clang|Microsoft Visual Studio) version)|"
        r"The version \('[\d.]+'\) of the host compiler \('(\w+)'\) is not supported|"
        r"Visual Studio \d+(?: Update [^\n]*)? is not supported|host compiler targets unsupported OS|"
        r"'-allow-unsupported-compiler' can be used to override this version check|"
        r"cannot find a supported version of Microsoft Visual Studio",
        ("upported",),
    ),
    # ... or no VS environment script to be found by a tool looking for a Visual Studio (vcvars*.bat ships with the
    # VC tools: distutils, vcpkg, build scripts; nvcc's own "configuration file 'vcvars64.bat' could not be found"
    # is a VS it was given that lacks the x64 setup: cl_missing, F06), a CI action finding no VS at all, or the
    # shell not knowing VS's own build programs (not a developer prompt). Needles shared with other facts: a new
    # needle is a pass over every log (the 200 MiB bench), so VS's "Cannot determine the location of the VS
    # installation" is read through the msbuild/nmake line that follows it, not by a needle of its own.
    fx(
        "no_vs",
        r"(?i:could not find (?:any|specified) instance\s+of\s+visual studio)|Make command was:\s*\"?nmake\b|"
        r"(?i:unable to find|could not (?:detect|find)|cannot find)\s+vcvars\w*\.bat|"
        r"Microsoft Visual Studio not found|"
        # setuptools' own distutils (2024+) where vcvarsall gives it no environment
        r"Unable to find a compatible Visual Studio installation|"
        r"['\"](?:nmake|msbuild)(?:\.exe)?['\"]\s*(?:" + NOT_RECOGNIZED + r")",
        ("instance", "nmake", "vcvars", "VCVARS", "isual Studio", "not recognized"),
    ),
    # other build tools finding no Visual C++ tools, in their own words: rustc's MSVC targets without link.exe,
    # node-gyp's Visual Studio search, classic scikit-build's generator search, MSBuild's C++ targets missing
    # (MSB4019 on Microsoft.Cpp.*.props: VCTargetsPath empty, no C++ workload), CMake failing to ask MSBuild for it,
    # Meson (and meson-python) probing its Windows compiler list, which starts with cl, and finding none
    # (mesonbuild/compilers/detect.py's "Unknown compiler(s)")
    fx(
        "no_vc_tools",
        r"linker `link\.exe` not found|`link\.exe` was not found|"
        r"gyp ERR! find VS|could not find any Visual Studio installation|"
        r"could not get a working generator for your system|to get the value of VCTargetsPath|"
        r"MSB4019[^\n]*?Microsoft\.Cpp\.[\w.]*?(?:props|targets)|"
        r"Unknown compiler\(s\): [^\n]*?'cl'",
        ("link.exe", "find VS", "Visual Studio installation", "working generator", "VCTargetsPath", "MSB4019", "'cl'"),
    ),
    # setuptools/distutils finding no MSVC (any Python package with C code on Windows), in its own words: 14.0 (or
    # greater) for Python 3.5+, and setuptools' msvc.py's older forms, 9.0 (Python 2.7, VC for Python) and 10.0
    fx("msvc_required", r"Microsoft Visual C\+\+ \d{1,2}\.\d(?: or greater)? is required", "Visual C++"),
    # CMake enabling C or C++ without a compiler; on Windows with CMake's `cl` named but not on PATH (no vcvars)
    fx(
        "no_compiler",
        r"No CMAKE_(?:C|CXX)_COMPILER could be found|"
        r"CMAKE_(?:C|CXX)_COMPILER not set, after EnableLanguage|"
        r"(?<![\w-])cl(?:\.exe)?(?:\s|\[\w+\])*is not a full path",
        ("_COMPILER could be found", "not set, after EnableLanguage", "not a full path"),
    ),
    # the build was about Visual Studio (a generator named, its tools, its prompt): a missing compiler is then MSVC's
    fx(
        "vs_context",
        r"(?i:visual studio|vcvars\w*\.bat|developer command prompt)|\bMSVC\b",
        (
            "isual Studio",
            "isual studio",
            "ISUAL STUDIO",
            "vcvars",
            "VCVARS",
            "eveloper Command",
            "eveloper command",
            "MSVC",
        ),
    ),
    # the Windows SDK (UCRT headers) missing: MSVC's C1083 or a compiler's "No such file" on its headers
    fx(
        "sdk_missing",
        r"\b(corecrt(?:_\w+)?\.h|winsdkver\.h|sdkddkver\.h|windows\.h)\b[^\n]*?"
        r"(?:No such file|file not found|cannot open|Cannot open)|"
        r"\bC1083\b[^\n]*?\b(corecrt(?:_\w+)?\.h|winsdkver\.h|sdkddkver\.h|windows\.h)\b|"
        # CMake's Visual Studio generators finding no Windows 10 SDK to target (its own words,
        # Source/cmGlobalVisualStudio14Generator.cxx; older CMake ran "SDK" and "installed" together)
        r"Could not find an appropriate version of the Windows 10 SDK",
        ("corecrt", "winsdkver", "sdkddkver", "windows.h", "C1083", "appropriate version of the Windows"),
    ),
    fx("host_os", r"(?i:host compiler targets unsupported OS)", ("unsupported OS", "Unsupported OS")),
    fx(
        "cl_missing",
        r"Cannot find compiler 'cl\.exe'|['\"]cl(?:\.exe)?['\"]\s*(?:" + NOT_RECOGNIZED + r")|"
        r"cl\.exe: (?:command )?not found|"
        # torch's cpp_extension warns when `cl` does not run ([WinError 2]); its other reasons (cl's output in a
        # non-UTF-8 locale: "'utf-8' codec can't decode") are a warning about the version check, not cl missing
        r"Error checking compiler version for\s+cl\b:?\s*(?:\[WinError 2\]|[^\n]*?(?i:not found|not recognized|"
        r"No such file|cannot find))|\['cl'\]|"
        r"(?i:vcvars(?:all|64)\.bat)[^\n]{0,40}?(?i:could not be found|not found)",
        ("cl.exe", "'cl'", '"cl"', "compiler version for", "vcvars", "VCVARS"),
    ),
    fx(
        "ccbin_conflict",
        r"cl\.exe[^\n]{0,80}?(?:different|differs)[^\n]{0,80}?-ccbin|-ccbin[^\n]{0,80}?(?:different|differs)",
        "-ccbin",
    ),
)


def decide(fs: Facts, add: Add) -> None:
    add("F05", "stl1002", fs.first("stl"))
    for f in fs.facts.get("host_compiler", ()):
        text = f.line
        if "can be used to override" in text:  # the #error's tail alone: which compiler, from the log's platform
            text = "MSVC" if fs.first("windows") and not fs.first("linux") else "GNU"
        if re.search(r"Microsoft|Visual Studio|\('cl'\)|MSVC", text):
            add("F04", "host-compiler-msvc", f)
        elif re.search(r"GNU|gcc|g\+\+|clang", text, re.I):
            add("F21", "host-compiler-gcc-clang", f)
    c1189 = fs.first("c1189")
    if c1189 and (fs.first("host_config") or "Visual Studio" in c1189.line):
        add("F04", "c1189-host-config", c1189)
    add("F03", "no-visual-studio", fs.first("no_vs"))
    add("F03", "no-vc-tools", fs.first("no_vc_tools"))
    # MSBuild's codes (every locale): the platform toolset or the Windows SDK the project asks for is not installed
    # (MSB8037: the SDK version "for Desktop C++ <platform> Apps", VS 2019+'s Microsoft.Cpp.WindowsSDK.targets:
    # ni/VireoSDK pull 705's log), or MSBuild without Visual C++ at all (MSB3428: its VCBuild task "could not load the
    # Visual C++ component", what node-gyp met before VS 2015's tools)
    add(
        "F03",
        "msbuild-toolset-or-sdk-missing",
        next((f for f in fs.facts.get("msb", ()) if f.value in ("MSB8020", "MSB8036", "MSB8037", "MSB3428")), None),
    )
    add("F03", "setuptools-no-msvc", fs.first("msvc_required"))
    windows = fs.first("windows") is not None and fs.first("linux") is None
    nocc = fs.first("no_compiler")
    add("F03", "no-compiler-windows", nocc if nocc and (fs.first("vs_context") or windows) else None)
    add("F03", "windows-sdk-missing", fs.first("sdk_missing"))
    add("F04", "host-config-windows", fs.first("host_config_win"))
    add("F06", "host-compiler-target-os", fs.first("host_os"))
    add("F06", "cl-not-found", fs.first("cl_missing"))
    add("F06", "ccbin-conflict", fs.first("ccbin_conflict"))


# ---------------------------------------------------------------- signatures: the tools' own sentences

_PATH_CUDA = r"CUDA[\\/]+v(?P<cuda>\d+\.\d+)[\\/]"  # a toolkit folder: ...\CUDA\v12.4\...


def _host_config(m: re.Match[str]) -> Details:
    """`...\\CUDA\\v11.8\\include\\crt/host_config.h(153): fatal error C1189: #error:  -- unsupported ...`
    A console that wrapped the line at 120 columns (fewer than three such lines: not re-joined) leaves the
    header on the line above; a lower-case install path (`...\\cuda\\v9.1\\include`) is the same folder."""
    d, before = named(m), line_before(m)
    if "host_config" not in before:
        above = m.string.rfind("\n", 0, max(0, m.start() - len(before) - 1))
        before = m.string[above + 1 : m.start()]
    cuda, header = re.search(_PATH_CUDA, before, re.I), re.search(r"host_config\.h\((\d+)\)", before)
    if cuda:
        d["cuda"] = cuda.group("cuda")
    if header:
        d["header_line"] = header.group(1)
    lo, hi = d.pop("lo", None) or d.pop("lo2", None), d.pop("hi", None) or d.pop("hi2", None)
    if lo and hi:
        d["supported"] = f"{lo}-{hi}"
    return d


def _stl(m: re.Match[str]) -> Details:
    """`...\\MSVC\\14.42.34433\\include\\yvals_core.h(892): error: ... STL1002: ...`"""
    d = named(m)
    msvc = re.search(r"MSVC[\\/]+(14\.\d+)\.\d+[\\/]+include", line_before(m))
    if msvc:
        d["msvc"] = msvc.group(1)
    return d


SIGNATURES: tuple[Signature, ...] = (
    # F03: no VS with the C++ tools, or a generator CMake cannot use.
    sig("F03", "nmake-fallback", r"-- Building for: NMake Makefiles", needle="NMake"),
    sig("F03", "nmake-missing", r"'nmake'\s+'-\?'", needle="'nmake'"),
    sig(
        "F03",
        "no-vs-instance",
        r"Generator\s+(?P<generator>Visual Studio \d+ \d{4}(?: (?:Win64|ARM|IA64))?)"
        r"\s+could not find any instance\s+of\s+Visual\s+Studio",
        needle="ould not",
        key="any instance",
    ),
    # CMAKE_GENERATOR_INSTANCE (or the cache) names a folder that holds no usable Visual Studio.
    sig(
        "F03",
        "no-specified-instance",
        r"Generator\s+(?P<generator>Visual Studio \d+ \d{4}[^\n]*?)\s+could not find"
        r"\s+specified\s+instance\s+of\s+Visual\s+Studio",
        needle="ould not",
        key="specified instance",
    ),
    # A generator name that carries its platform (Win64, ARM) together with -A / CMAKE_GENERATOR_PLATFORM.
    sig(
        "F03",
        "generator-platform-twice",
        r"Generator\s+(?P<generator>Visual Studio \d+ \d{4}[^\n]*?)\s+does not support platform specification,"
        r"\s+but\s+platform\s+(?P<platform>\S+)\s+was specified",
        needle="does not support platform",
    ),
    sig(
        "F03",
        "no-build-program",
        words("unable to find a build program corresponding to") + r"\s+\"(?P<generator>[^\"]+)\"",
        needle="build program",
    ),
    sig(
        "F03",
        "unknown-generator",
        NAMED_GENERATOR,
        needle="ould not",
        key="named generator",
        check=lambda m: not generator_cut(m),
    ),
    # CMAKE_GENERATOR_TOOLSET version=14.xx names an MSVC toolset this Visual Studio does not have installed
    # (Kitware/CMake Source/cmGlobalVisualStudio10Generator.cxx, AuxToolset::PropsMissing)
    sig(
        "F03",
        "toolset-version-not-installed",
        words("given toolset and version specification")
        + r"\s+(?P<toolset>\S+)\s+"
        + words("does not seem to be installed at"),
        needle="does not seem to be installed",
        span=4,
    ),
    # F04: nvcc's host_config.h rejects the MSVC version (the #error text is English in every locale).
    sig(
        "F04",
        "host-config-msvc",
        words("unsupported Microsoft Visual Studio version!")
        + r"(?:\s+Only\s+the\s+versions\s+(?:between\s+(?P<lo>\d{4})\s+and\s+(?P<hi>\d{4})"
        r"|(?P<lo2>\d{4})(?:,\s+\d{4})*,?\s+and\s+(?P<hi2>\d{4})))?",  # CUDA <= 10: "2012, 2013, 2015 and 2017"
        extract=_host_config,
        needle="unsupported",
        key="Microsoft",
    ),
    # F05: the MSVC STL's own CUDA minimum (clang prints "10.1 Update 2"; nvcc wraps it in a static assert).
    sig(
        "F05",
        "stl1002",
        r"STL1002:\s+"
        + words("Unexpected compiler version, expected CUDA")
        + r"\s+(?P<cuda_min>\d+\.\d+)(?:\s+Update\s+\d+)?\s+or\s+newer",
        extract=_stl,
        needle="STL1002",
    ),
    # F06: nvcc and cl.exe.
    sig(
        "F06",
        "cl-not-in-path",
        r"nvcc fatal\s*:\s*Cannot find compiler 'cl\.exe' in PATH",
        needle="Cannot ",
        key="cl.exe",
    ),
    sig(
        "F06",
        "ccbin-conflict",
        words("Compiler 'cl.exe' in PATH different than the one specified with -ccbin"),
        needle="-ccbin",
    ),
    sig(
        "F06",
        "vcvars-setup-failed",
        words("Could not set up the environment for Microsoft Visual Studio") + r"(?:\s+using\s+'(?P<path>[^'\n]+)')?",
        needle="ould not",
        key="environment",
    ),
    sig("F06", "cudafe-crash", r"'cudafe\+\+' died with status 0xC0000005", needle="cudafe++"),
    # F21: host compiler too new on Linux.
    sig(
        "F21",
        "gcc-too-new",
        words("unsupported GNU version! gcc versions later than") + r"\s+(?P<gcc_max>\d+)\s+are\s+not\s+supported",
        needle="unsupported",
        key="GNU",
    ),
    # torch.utils.cpp_extension checks the host compiler against its own table for the CUDA torch sees, before
    # nvcc runs (the compiler is named as found: g++, x86_64-linux-gnu-g++, a conda c++, clang++).
    sig(
        "F21",
        "torch-compiler-too-new",
        r"The current installed version of (?P<compiler>\S+) \((?P<gcc>\d+(?:\.\d+)*)\) is greater than the"
        r"\s+maximum required version by CUDA (?P<cuda>\d+\.\d+)",
        needle="maximum required version",
    ),
    sig(
        "F21",
        "clang-too-new",
        words("unsupported clang version! clang version must be less than") + r"\s+(?P<clang_max_excl>\d+)",
        needle="unsupported",
        key="clang",
    ),
)
