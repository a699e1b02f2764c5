@if not defined VSCMD_DEBUG echo off
:: HAND-MADE stand-in for Visual Studio 2022's VC\Auxiliary\Build\vcvarsall.bat (envmgr's Wine tests).
:: Not Microsoft's file: it mimics the behaviour documented in shared/facts/windows.md section 3 and
:: seen in tests/corpus (banner: vcvarsall-x64-vs2022-17.14.30-community-cl19.44.35225.txt; variables
:: and their order: set-after-vsdevcmd-vs2022-community-17.8.2-x86-msvc-14.38.txt; usage error:
:: vcvarsall-error-no-arguments-usage.txt). Like the real one it prepends to INCLUDE/LIB/LIBPATH/PATH
:: on every call (so calling it twice duplicates entries), reads the Windows SDK folder from the
:: registry with reg.exe inside `for /f`, and exits 0 even after printing [ERROR:...] lines.
:: Test-only switches (environment): ENVMGR_FAKE_VCVARS_HANG=1 never returns (for the timeout);
:: ENVMGR_FAKE_VCVARS_CHILD=1 runs programs whose 8-bit output lands in cmd /u's UTF-16 stream.
:: Kept ASCII on purpose: cmd reads batch files in the OEM code page (see test_wine_capture.py).

set "__VCVARSALL_TARGET_ARCH="
set "__VCVARSALL_HOST_ARCH="
set "__VCVARSALL_VER="
set "__VCVARSALL_ERR="
set "__VCVARSALL_ARGS_LIST=%*"
if "%~1"=="" goto usage

:parse_loop
for /f "tokens=1,* delims= " %%a in ("%__VCVARSALL_ARGS_LIST%") do (
    call :parse_argument "%%a"
    set "__VCVARSALL_ARGS_LIST=%%b"
)
if defined __VCVARSALL_ERR goto usage
if defined __VCVARSALL_ARGS_LIST goto parse_loop
if not defined __VCVARSALL_TARGET_ARCH goto usage

if defined ENVMGR_FAKE_VCVARS_HANG goto hang

:: ---- VsDevCmd.bat part: the banner, instance variables --------------------------------------
for %%i in ("%~dp0..\..\..") do set "VSINSTALLDIR=%%~fi\"
set "VCINSTALLDIR=%VSINSTALLDIR%VC\"
set "VSCMD_VER=17.14.30"
set "VisualStudioVersion=17.0"
set "VS170COMNTOOLS=%VSINSTALLDIR%Common7\Tools\"
set "DevEnvDir=%VSINSTALLDIR%Common7\IDE\"
set "VCIDEInstallDir=%VSINSTALLDIR%Common7\IDE\VC\"
set "VSCMD_ARG_HOST_ARCH=%__VCVARSALL_HOST_ARCH%"
set "VSCMD_ARG_TGT_ARCH=%__VCVARSALL_TARGET_ARCH%"
set "VSCMD_ARG_app_plat=Desktop"
if not defined __VSCMD_PREINIT_PATH set "__VSCMD_PREINIT_PATH=%PATH%"
echo **********************************************************************
echo ** Visual Studio 2022 Developer Command Prompt v%VSCMD_VER%
echo ** Copyright (c) 2025 Microsoft Corporation
echo **********************************************************************
if defined ENVMGR_FAKE_VCVARS_CHILD "%SystemRoot%\system32\hostname.exe"

:: ---- winsdk.bat part: the SDK folder from the registry, the newest version with winsdkver.h --
set "WindowsSdkDir="
for /f "tokens=1,2*" %%i in ('reg query "HKLM\SOFTWARE\Microsoft\Microsoft SDKs\Windows\v10.0" /v "InstallationFolder" 2^>nul') do (
    if "%%i"=="InstallationFolder" set "WindowsSdkDir=%%~k"
)
if defined ENVMGR_FAKE_VCVARS_CHILD reg query "HKLM\SOFTWARE\Microsoft\Microsoft SDKs\Windows\v10.0"
if not defined WindowsSdkDir goto no_sdk
set "WindowsSDKVersion="
for /f %%i in ('dir "%WindowsSdkDir%include" /b /ad /on') do (
    if exist "%WindowsSdkDir%include\%%i\um\winsdkver.h" set "WindowsSDKVersion=%%i\"
)
if not defined WindowsSDKVersion goto no_sdk
set "WindowsSDKLibVersion=%WindowsSDKVersion%"
set "UCRTVersion=%WindowsSDKVersion:~0,-1%"
set "UniversalCRTSdkDir=%WindowsSdkDir%"
set "WindowsSdkBinPath=%WindowsSdkDir%bin\"
set "WindowsSdkVerBinPath=%WindowsSdkDir%bin\%WindowsSDKVersion%"
set "WindowsLibPath=%WindowsSdkDir%UnionMetadata\%UCRTVersion%;%WindowsSdkDir%References\%UCRTVersion%"
:: The doubled backslashes (`10\\include\...\\um`) are the real winsdk.bat's, kept as they are.
set "INCLUDE=%WindowsSdkDir%include\%UCRTVersion%\ucrt;%WindowsSdkDir%\include\%WindowsSDKVersion%\um;%WindowsSdkDir%\include\%WindowsSDKVersion%\shared;%INCLUDE%"
set "LIB=%WindowsSdkDir%lib\%UCRTVersion%\ucrt\%__VCVARSALL_TARGET_ARCH%;%WindowsSdkDir%\lib\%WindowsSDKVersion%\um\%__VCVARSALL_TARGET_ARCH%;%LIB%"
set "LIBPATH=%WindowsSdkDir%UnionMetadata\%UCRTVersion%;%WindowsSdkDir%References\%UCRTVersion%;%LIBPATH%"
set "PATH=%WindowsSdkDir%bin\%WindowsSDKVersion%%__VCVARSALL_HOST_ARCH%;%WindowsSdkDir%bin\%__VCVARSALL_HOST_ARCH%;%PATH%"
:no_sdk

:: ---- ext\vcvars.bat part: the MSVC toolset ---------------------------------------------------
if defined __VCVARSALL_VER goto pinned
for /f "usebackq tokens=1" %%v in ("%VCINSTALLDIR%Auxiliary\Build\Microsoft.VCToolsVersion.default.txt") do set "VCToolsVersion=%%v"
goto have_version
:pinned
set "VCToolsVersion="
if exist "%VCINSTALLDIR%Tools\MSVC\%__VCVARSALL_VER%\include" set "VCToolsVersion=%__VCVARSALL_VER%"
if not defined VCToolsVersion for /f %%v in ('dir "%VCINSTALLDIR%Tools\MSVC\%__VCVARSALL_VER%.*" /b /ad /on 2^>nul') do set "VCToolsVersion=%%v"
if defined VCToolsVersion goto have_version
echo [ERROR:vcvars.bat] Toolset directory for version '%__VCVARSALL_VER%' was not found.
echo [ERROR:VsDevCmd.bat] *** VsDevCmd.bat encountered errors. Environment may be incomplete and/or incorrect. ***
echo [ERROR:VsDevCmd.bat] In an uninitialized command prompt, please 'set VSCMD_DEBUG=[value]' and then re-run
echo [ERROR:VsDevCmd.bat]   vsdevcmd.bat [args] for additional details.
echo [ERROR:VsDevCmd.bat]   Where [value] is:
echo [ERROR:VsDevCmd.bat]      1 : basic debug logging
goto end

:have_version
set "VCToolsInstallDir=%VCINSTALLDIR%Tools\MSVC\%VCToolsVersion%\"
set "VCToolsRedistDir=%VCINSTALLDIR%Redist\MSVC\%VCToolsVersion%\"
set "INCLUDE=%VCToolsInstallDir%include;%VCToolsInstallDir%ATLMFC\include;%VCINSTALLDIR%Auxiliary\VS\include;%INCLUDE%"
set "EXTERNAL_INCLUDE=%INCLUDE%"
set "LIB=%VCToolsInstallDir%ATLMFC\lib\%__VCVARSALL_TARGET_ARCH%;%VCToolsInstallDir%lib\%__VCVARSALL_TARGET_ARCH%;%LIB%"
set "LIBPATH=%VCToolsInstallDir%ATLMFC\lib\%__VCVARSALL_TARGET_ARCH%;%VCToolsInstallDir%lib\%__VCVARSALL_TARGET_ARCH%;%LIBPATH%"
set "PATH=%VCToolsInstallDir%bin\Host%__VCVARSALL_HOST_ARCH%\%__VCVARSALL_TARGET_ARCH%;%VSINSTALLDIR%Common7\IDE\VC\VCPackages;%VSINSTALLDIR%MSBuild\Current\bin\Roslyn;%PATH%;%VSINSTALLDIR%Common7\IDE\CommonExtensions\Microsoft\CMake\CMake\bin"
set "Platform=%__VCVARSALL_TARGET_ARCH%"
set "CommandPromptType=Native"
if not "%__VCVARSALL_HOST_ARCH%"=="%__VCVARSALL_TARGET_ARCH%" set "CommandPromptType=Cross"
echo [vcvarsall.bat] Environment initialized for: '%__VCVARSALL_ARCH_ARG%'

:end
set "__VCVARSALL_TARGET_ARCH="
set "__VCVARSALL_HOST_ARCH="
set "__VCVARSALL_VER="
set "__VCVARSALL_ARGS_LIST="
set "__VCVARSALL_ARCH_ARG="
set "__VCVARSALL_ERR="
set "__VCVARSALL_HANDLED="
set "__arg="
exit /b 0

:parse_argument
set "__arg=%~1"
set "__VCVARSALL_HANDLED="
if /i "%__arg%"=="x86" set "__VCVARSALL_HOST_ARCH=x86" & set "__VCVARSALL_TARGET_ARCH=x86" & set "__VCVARSALL_HANDLED=1"
if /i "%__arg%"=="x64" set "__VCVARSALL_HOST_ARCH=x64" & set "__VCVARSALL_TARGET_ARCH=x64" & set "__VCVARSALL_HANDLED=1"
if /i "%__arg%"=="amd64" set "__VCVARSALL_HOST_ARCH=x64" & set "__VCVARSALL_TARGET_ARCH=x64" & set "__VCVARSALL_HANDLED=1"
if /i "%__arg%"=="x64_x86" set "__VCVARSALL_HOST_ARCH=x64" & set "__VCVARSALL_TARGET_ARCH=x86" & set "__VCVARSALL_HANDLED=1"
if /i "%__arg%"=="amd64_x86" set "__VCVARSALL_HOST_ARCH=x64" & set "__VCVARSALL_TARGET_ARCH=x86" & set "__VCVARSALL_HANDLED=1"
if /i "%__arg%"=="x86_x64" set "__VCVARSALL_HOST_ARCH=x86" & set "__VCVARSALL_TARGET_ARCH=x64" & set "__VCVARSALL_HANDLED=1"
if /i "%__arg%"=="x86_amd64" set "__VCVARSALL_HOST_ARCH=x86" & set "__VCVARSALL_TARGET_ARCH=x64" & set "__VCVARSALL_HANDLED=1"
if /i "%__arg%"=="x64_arm64" set "__VCVARSALL_HOST_ARCH=x64" & set "__VCVARSALL_TARGET_ARCH=arm64" & set "__VCVARSALL_HANDLED=1"
if defined __VCVARSALL_HANDLED set "__VCVARSALL_ARCH_ARG=%__arg%" & goto :eof
if /i "%__arg:~0,12%"=="-vcvars_ver=" set "__VCVARSALL_VER=%__arg:~12%" & goto :eof
echo [ERROR:vcvarsall.bat] Invalid argument found : %__arg%
set "__VCVARSALL_ERR=1"
goto :eof

:usage
echo [ERROR:vcvarsall.bat] Error in script usage. The correct usage is:
echo Syntax:
echo     vcvarsall.bat [arch] [platform_type] [winsdk_version] [-vcvars_ver=vc_version] [-vcvars_spectre_libs=spectre_mode]
echo where :
echo     [arch]: x86 ^| amd64 ^| x86_amd64 ^| x86_arm ^| x86_arm64 ^| amd64_x86 ^| amd64_arm ^| amd64_arm64
goto end

:hang
:: What a stuck vcvars looks like from outside: no output, never returns. (`pause` would not do:
:: the capture's stdin is the null device, so it returns at once.)
"%SystemRoot%\system32\ping.exe" -n 3600 127.0.0.1 >nul
goto hang
